// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Round plans, payloads and SGE layouts (see plan.h).
 */
#include "plan.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace integ
{

namespace
{

constexpr const char *kOpNames[kOpKinds] = {
    "send", "send_imm", "write", "write_imm", "read", "cmp_swap", "fetch_add",
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kOpKinds, "one name per OpKind");

/*
 * Message length: a quarter small (0..64 bytes), a quarter within two bytes
 * of a multiple of the path MTU (the packet boundaries), the rest uniform.
 */
uint32_t pick_len(Rng &rng, uint32_t max, uint32_t mtu)
{
	switch (rng.below(8)) {
	case 0:
	case 1:
		return rng.below(std::min<uint32_t>(max, 64) + 1);
	case 2:
	case 3: {
		const int64_t base = int64_t(rng.below(max / mtu + 1)) * mtu;
		const int64_t v = base + int64_t(rng.below(5)) - 2;

		return uint32_t(std::clamp<int64_t>(v, 0, max));
	}
	default:
		return rng.below(max + 1);
	}
}

void plan_atomic(Rng &rng, Op &op, std::array<uint64_t, kAtomicWords> &words)
{
	uint64_t &w = words[rng.below(kAtomicWords)];

	op.word = uint32_t(&w - words.data());
	op.orig = w;
	if (op.kind == OpKind::cmp_swap) {
		/* Half of them match, so the swap happens. */
		op.compare = rng.chance(50) ? w : rng.next();
		op.swap_add = rng.next();
		if (w == op.compare)
			w = op.swap_add;
	} else {
		/* Some small addends, most of them carry across words. */
		op.swap_add = rng.chance(25) ? rng.below(1000) : rng.next();
		w += op.swap_add;
	}
}

} // namespace

const char *op_name(OpKind k)
{
	return unsigned(k) < kOpKinds ? kOpNames[unsigned(k)] : "?";
}

bool parse_ops(const char *list, uint32_t *mask)
{
	std::string s(list);
	size_t pos = 0;

	*mask = 0;
	while (pos <= s.size()) {
		const size_t comma = std::min(s.find(',', pos), s.size());
		const std::string name = s.substr(pos, comma - pos);
		bool found = false;

		if (name == "all") {
			*mask |= kAllOps;
			found = true;
		} else if (name == "atomic") {
			*mask |= kAtomicOps;
			found = true;
		}
		for (unsigned k = 0; k < kOpKinds && !found; k++) {
			if (name == kOpNames[k]) {
				*mask |= 1u << k;
				found = true;
			}
		}
		if (!found)
			return false;
		pos = comma + 1;
	}
	return *mask != 0;
}

RoundPlan make_plan(const PlanConfig &cfg, uint64_t seed, uint32_t round)
{
	Rng rng(stream_key(seed, Stream::plan, round));
	Rng wrng(stream_key(seed, Stream::words, round));
	std::vector<OpKind> kinds;
	RoundPlan p;

	p.round = round;
	p.client_requests = cfg.client_only || (!cfg.server_only && round % 2 == 0);
	for (unsigned k = 0; k < kOpKinds; k++)
		if (cfg.ops_mask[p.client_requests ? 0 : 1] & (1u << k))
			kinds.push_back(OpKind(k));
	for (uint64_t &w : p.words_before)
		w = wrng.next();
	p.words_after = p.words_before;

	const uint32_t n = rng.range(1, cfg.batch);

	p.ops.resize(n);
	for (uint32_t i = 0; i < n; i++) {
		Op &op = p.ops[i];

		op.kind = kinds[rng.below(uint32_t(kinds.size()))];
		/*
		 * UC has no acknowledgements: a round ends with a SEND with
		 * immediate, whose arrival tells the responder that all the
		 * writes before it have been placed.
		 */
		if (cfg.uc && i == n - 1)
			op.kind = OpKind::send_imm;
		op.len = is_atomic(op.kind) ? 8 : pick_len(rng, cfg.max_size, cfg.mtu);
		op.remote_off = rng.below(kMaxStartOffset + 1);
		op.imm = uint32_t(rng.next());
		op.fence = rng.chance(10);
		if (is_atomic(op.kind))
			plan_atomic(rng, op, p.words_after);
	}
	return p;
}

void op_payload(uint64_t seed, uint32_t round, uint32_t index, uint8_t *out, uint32_t len)
{
	Rng(stream_key(seed, Stream::data, round, index)).fill(out, len);
}

uint32_t slot_size(uint32_t max_size, uint32_t max_sge)
{
	/* front guard, start offset, payload, receive slack, gaps, back guard */
	const uint64_t bytes = uint64_t(kGuard) + kMaxStartOffset + max_size + 64 +
	                       uint64_t(max_sge) * kMaxSgeGap + kGuard;

	return uint32_t((bytes + 63) & ~uint64_t(63));
}

Layout make_layout(Rng &rng, uint32_t bytes, uint32_t max_sge, unsigned nr_mrs)
{
	std::vector<uint32_t> cuts;
	uint32_t n, off;
	Layout l;

	if (bytes == 0)
		n = std::min<uint32_t>(rng.below(2), max_sge);
	else
		n = rng.range(1, std::min(max_sge, bytes));
	/* n - 1 distinct cut points inside [1, bytes - 1] */
	while (cuts.size() + 1 < n) {
		const uint32_t c = rng.range(1, bytes - 1);

		if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
			cuts.push_back(c);
	}
	std::sort(cuts.begin(), cuts.end());
	cuts.push_back(bytes);

	off = kGuard + rng.below(kMaxStartOffset + 1);
	uint32_t prev = 0;

	for (uint32_t i = 0; i < n; i++) {
		Piece pc;

		pc.off = off;
		pc.len = cuts[i] - prev;
		pc.mr = uint8_t(rng.below(nr_mrs));
		prev = cuts[i];
		off += pc.len + rng.below(kMaxSgeGap + 1);
		l.pieces.push_back(pc);
	}
	l.end = off + kGuard;
	return l;
}

} // namespace integ
