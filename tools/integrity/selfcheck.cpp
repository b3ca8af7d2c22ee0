// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * selfcheck mode: the parts of sroce-integrity that need no device, checked
 * on the host (ctest runs it): both sides must compute the same plans and
 * payloads, plans must keep to their configuration, the atomic words must
 * follow from the operations, SGE layouts must fit their slots, and the
 * poison checks must see a single damaged byte. Prints KTAP.
 */
#include "modes.h"
#include "plan.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace integ
{

namespace
{

class Checks
{
      public:
	void check(bool ok, const char *name) { checkf(ok, name, "%s", ""); }
	void checkf(bool ok, const char *name, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)))
	{
		va_list ap;
		char detail[256];

		va_start(ap, fmt);
		std::vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
		n_++;
		failed_ += !ok;
		std::printf("%sok %u %s%s%s\n", ok ? "" : "not ", n_, name,
		            !ok && *detail ? " # " : "", ok ? "" : detail);
	}
	int finish()
	{
		std::printf("1..%u\n# %u checks, %u failed\n", n_, n_, failed_);
		return failed_ ? 1 : 0;
	}

      private:
	unsigned n_ = 0, failed_ = 0;
};

PlanConfig random_config(Rng &rng)
{
	PlanConfig cfg{};

	cfg.uc = rng.chance(25);
	for (uint32_t &mask : cfg.ops_mask) {
		mask = rng.range(1, kAllOps);
		if (cfg.uc)
			mask = (mask & kUcOps) ? mask & kUcOps : op_bit(OpKind::write);
	}
	cfg.mtu = 256u << rng.below(5);
	cfg.max_size = rng.chance(20) ? rng.range(1, 1u << 20) : rng.range(1, 3 * cfg.mtu);
	cfg.batch = rng.range(1, 64);
	cfg.client_only = rng.chance(10);
	cfg.server_only = !cfg.client_only && rng.chance(10);
	return cfg;
}

bool same_plan(const RoundPlan &a, const RoundPlan &b)
{
	if (a.ops.size() != b.ops.size() || a.words_before != b.words_before ||
	    a.words_after != b.words_after || a.client_requests != b.client_requests)
		return false;
	for (size_t i = 0; i < a.ops.size(); i++) {
		const Op &x = a.ops[i], &y = b.ops[i];

		if (x.kind != y.kind || x.len != y.len || x.remote_off != y.remote_off ||
		    x.imm != y.imm || x.word != y.word || x.compare != y.compare ||
		    x.swap_add != y.swap_add || x.orig != y.orig || x.fence != y.fence)
			return false;
	}
	return true;
}

void plans_are_deterministic(Checks &c)
{
	Rng rng(1);
	unsigned bad = 0;

	for (unsigned i = 0; i < 2000; i++) {
		const PlanConfig cfg = random_config(rng);
		const uint64_t seed = rng.next();
		const uint32_t round = rng.below(100000);

		bad += !same_plan(make_plan(cfg, seed, round), make_plan(cfg, seed, round));
	}
	c.checkf(bad == 0, "plan_same_seed_same_plan", "%u of 2000 plans differ", bad);
}

/* What an op may be: in the requester's mask, or UC's closing SEND. */
bool op_allowed(const PlanConfig &cfg, const RoundPlan &p, size_t i)
{
	const Op &op = p.ops[i];
	const uint32_t mask = cfg.ops_mask[p.client_requests ? 0 : 1];

	if (cfg.uc && i + 1 == p.ops.size())
		return op.kind == OpKind::send_imm;
	return mask & op_bit(op.kind);
}

void plans_keep_to_config(Checks &c)
{
	Rng rng(2);
	std::string why;

	for (unsigned i = 0; i < 2000 && why.empty(); i++) {
		const PlanConfig cfg = random_config(rng);
		const uint32_t round = rng.below(1000);
		const RoundPlan p = make_plan(cfg, rng.next(), round);
		const bool client = cfg.client_only || (!cfg.server_only && round % 2 == 0);

		if (p.ops.empty() || p.ops.size() > cfg.batch)
			why = "op count " + std::to_string(p.ops.size());
		else if (p.client_requests != client)
			why = "requester of round " + std::to_string(round);
		for (size_t k = 0; k < p.ops.size() && why.empty(); k++) {
			const Op &op = p.ops[k];

			if (!op_allowed(cfg, p, k))
				why = std::string("opcode ") + op_name(op.kind) + " not allowed";
			else if (is_atomic(op.kind) ? op.len != 8 : op.len > cfg.max_size)
				why = std::string(op_name(op.kind)) + " of " +
				      std::to_string(op.len) + " bytes, max " +
				      std::to_string(cfg.max_size);
			else if (op.remote_off > kMaxStartOffset || op.word >= kAtomicWords)
				why = "remote offset or atomic word out of range";
		}
	}
	c.checkf(why.empty(), "plan_keeps_to_config", "%s", why.c_str());
}

void atomic_words_follow_ops(Checks &c)
{
	Rng rng(3);
	unsigned bad = 0, swaps = 0, misses = 0;

	for (unsigned i = 0; i < 2000; i++) {
		PlanConfig cfg = random_config(rng);

		cfg.uc = false;
		cfg.ops_mask[0] = cfg.ops_mask[1] = kAtomicOps;
		const RoundPlan p = make_plan(cfg, rng.next(), i);
		auto words = p.words_before;

		for (const Op &op : p.ops) {
			uint64_t &w = words[op.word];

			bad += op.orig != w;
			if (op.kind == OpKind::fetch_add) {
				w += op.swap_add;
			} else if (w == op.compare) {
				w = op.swap_add;
				swaps++;
			} else {
				misses++;
			}
		}
		bad += words != p.words_after;
	}
	c.checkf(bad == 0, "atomic_words_follow_ops", "%u mismatches", bad);
	c.checkf(swaps > 100 && misses > 100, "cmp_swap_both_outcomes", "%u swaps, %u misses",
	         swaps, misses);
}

std::string layout_problem(const Layout &l, uint32_t bytes, uint32_t max_sge, uint32_t slot)
{
	uint32_t sum = 0, pos = kGuard;

	if (l.pieces.size() > max_sge || (bytes && l.pieces.empty()))
		return std::to_string(l.pieces.size()) + " SGEs";
	for (const Piece &pc : l.pieces) {
		if (pc.off < pos)
			return "SGEs overlap or start in the front guard";
		if (!pc.len && bytes)
			return "empty SGE";
		if (pc.mr >= 2)
			return "MR index";
		sum += pc.len;
		pos = pc.off + pc.len;
	}
	if (sum != bytes)
		return "SGEs hold " + std::to_string(sum) + " of " + std::to_string(bytes) +
		       " bytes";
	if (l.end < pos + kGuard || l.end > slot)
		return "end " + std::to_string(l.end) + ", slot " + std::to_string(slot);
	return "";
}

void layouts_fit_slots(Checks &c)
{
	Rng rng(4);
	std::string why;

	for (unsigned i = 0; i < 100000 && why.empty(); i++) {
		const uint32_t max = rng.chance(10) ? rng.range(1, 1u << 20) : rng.range(1, 12288);
		const uint32_t max_sge = rng.range(1, 32);
		/* receives get up to 64 bytes more than the message */
		const uint32_t bytes = rng.chance(5) ? 0 : rng.below(max + 65);
		const Layout l = make_layout(rng, bytes, max_sge, 2);

		why = layout_problem(l, bytes, max_sge, slot_size(max, 32));
		if (!why.empty())
			why += " (" + std::to_string(bytes) + " bytes, max_sge " +
			       std::to_string(max_sge) + ")";
	}
	c.checkf(why.empty(), "layout_fits_slot", "%s", why.c_str());
}

void payloads(Checks &c)
{
	std::vector<uint8_t> a(4099), b(4099), d(4099);

	op_payload(7, 3, 5, a.data(), 4099);
	op_payload(7, 3, 5, b.data(), 4099);
	op_payload(7, 3, 6, d.data(), 4099);
	c.check(a == b, "payload_same_op_same_bytes");
	c.check(a != d, "payload_differs_per_op");
	op_payload(7, 3, 5, d.data(), 13);
	c.check(std::memcmp(a.data(), d.data(), 13) == 0, "payload_prefix_stable");
}

void poison(Checks &c)
{
	std::vector<uint8_t> buf(8192);
	unsigned distinct = 0;
	bool seen[256] = {};

	fill_poison(buf.data(), 0, buf.size(), 42);
	for (uint8_t v : buf)
		if (!seen[v]) {
			seen[v] = true;
			distinct++;
		}
	c.check(find_unpoisoned(buf.data(), 0, buf.size(), 42) == buf.size(), "poison_fill_checks");
	c.checkf(distinct > 200, "poison_varies", "%u distinct bytes", distinct);
	buf[5000] ^= 1;
	c.check(find_unpoisoned(buf.data(), 0, buf.size(), 42) == 5000, "poison_finds_one_byte");
	c.check(find_unpoisoned(buf.data(), 0, buf.size(), 43) < 16, "poison_depends_on_salt");
}

void names(Checks &c)
{
	uint32_t mask = 0;

	c.check(parse_ops("send,send_imm,write,write_imm,read,cmp_swap,fetch_add", &mask) &&
	            mask == kAllOps,
	        "ops_all_names");
	c.check(parse_ops("atomic", &mask) && mask == kAtomicOps, "ops_atomic");
	c.check(!parse_ops("send,bogus", &mask) && !parse_ops("", &mask), "ops_unknown_refused");
	c.check(parse_cases(case_names(), &mask) && parse_cases("rnr_late", &mask) && mask,
	        "cases_names");
	c.check(!parse_cases("bad_rkey,nope", &mask), "cases_unknown_refused");
	c.check(parse_cases("rnr_limit,rnr_stream", &mask) && mask, "cases_rnr_by_name");
}

/* vanish mode's options reach Options (errors are printed, so not tried). */
void vanish_options(Checks &c)
{
	char a0[] = "sroce-integrity", a1[] = "vanish", a2[] = "-d", a3[] = "dev0";
	char a4[] = "--requester", a5[] = "server", a6[] = "--ack-timeout", a7[] = "12";
	char a8[] = "--retry-cnt", a9[] = "2";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, nullptr};
	Options o;

	c.check(parse_options(10, argv, &o) == 0 && o.mode == Mode::vanish &&
	            o.directions == kServerRequests && o.ack_timeout == 12 && o.retry_cnt == 2,
	        "vanish_options");
}

} // namespace

int run_selfcheck()
{
	Checks c;

	std::printf("TAP version 13\n");
	plans_are_deterministic(c);
	plans_keep_to_config(c);
	atomic_words_follow_ops(c);
	layouts_fit_slots(c);
	payloads(c);
	poison(c);
	names(c);
	vanish_options(c);
	return c.finish();
}

} // namespace integ
