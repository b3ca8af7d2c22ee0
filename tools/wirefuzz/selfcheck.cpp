// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-wirefuzz --selfcheck: device-free checks of the crafter, run by
 * ctest. Every crafted payload is wrapped into the IP/UDP datagram Linux
 * would send (frame_of()) and given to the protocol core's whole-frame
 * parser, sroce_parse_roce_frame(), which computes the ICRC over the real
 * frame, not over the crafter's pseudo header:
 *   - packets the crafter calls ICRC-correct pass the ICRC check, and the
 *     bad_icrc class fails it, over IPv4 and IPv6;
 *   - the crafter's verdict (judge()) agrees with the frame parser;
 *   - no packet the receiver would accept lands in a live window (the
 *     safety rule), and the rule did change some packets;
 *   - all 256 opcode values and every class were sent;
 *   - the same seed gives the same bytes, another seed other bytes.
 */
#include "wirefuzz.h"

#include <cstdarg>
#include <cstdio>
#include <set>

namespace wirefuzz
{

namespace
{

const unsigned kPackets = 8000;

struct Tally {
	unsigned icrc_wrong = 0;  /* ICRC-correct but the frame parser disagrees */
	unsigned bad_not_bad = 0; /* bad_icrc class that passed */
	unsigned judge_diff = 0;  /* judge() vs the frame parser */
	unsigned unsafe = 0;      /* accepted and in a live window */
	unsigned accepted = 0;
	std::set<unsigned> opcodes;
	std::set<int> classes;
	uint64_t digest = 0xcbf29ce484222325ull;
};

Config test_config(bool ipv6, uint64_t seed)
{
	Config cfg;
	Target t;

	cfg.seed = seed;
	cfg.ep.ipv6 = ipv6;
	cfg.ep.sport = 0xc123;
	if (ipv6) {
		cfg.ep.src[0] = cfg.ep.dst[0] = 0xfd;
		cfg.ep.src[1] = cfg.ep.dst[1] = 0x77;
		cfg.ep.src[15] = 2;
		cfg.ep.dst[15] = 1;
	} else {
		const uint8_t src[4] = {192, 168, 77, 2}, dst[4] = {192, 168, 77, 1};

		std::copy(src, src + 4, cfg.ep.src);
		std::copy(dst, dst + 4, cfg.ep.dst);
	}
	/* An RC QP near the PSN wrap, one without PSNs, a UC, the GSI QP. */
	parse_qp_spec("17:rc:0xfffff0:0x000100", &t);
	cfg.targets.push_back(t);
	parse_qp_spec("18:rc", &t);
	cfg.targets.push_back(t);
	parse_qp_spec("19:uc:5:6", &t);
	cfg.targets.push_back(t);
	parse_qp_spec("1:gsi", &t);
	cfg.targets.push_back(t);
	cfg.rkeys.push_back(0x1234);
	return cfg;
}

Tally run_crafter(const Config &cfg, uint64_t *moved)
{
	Crafter cr(cfg);
	Tally t;
	struct sroce_pkt pkt;
	const size_t l3 = cfg.ep.ipv6 ? SROCE_IPV6_HDR_BYTES : SROCE_IPV4_HDR_BYTES;

	for (unsigned i = 0; i < kPackets; i++) {
		const Datagram d = cr.next();
		const std::vector<uint8_t> &b = d.bytes;
		const std::vector<uint8_t> f = frame_of(cfg.ep, b.data(), b.size());
		const int r = -sroce_parse_roce_frame(f.data(), f.size(), &pkt);
		const Verdict v = cr.judge(b);
		const bool long_enough = b.size() >= SROCE_BTH_BYTES + SROCE_ICRC_BYTES;
		const bool icrc_pass = long_enough && sroce_icrc_calc(f.data(), l3, b.size()) ==
		                                          sroce_icrc_get(f.data() + f.size() - 4);
		int expect = r;

		for (uint8_t byte : b)
			t.digest = (t.digest ^ byte) * 0x100000001b3ull;
		t.digest = (t.digest ^ b.size()) * 0x100000001b3ull;
		t.classes.insert(d.cls);
		if (b.size() >= SROCE_BTH_BYTES)
			t.opcodes.insert(b[0]);
		if (d.cls == C_BAD_ICRC && icrc_pass)
			t.bad_not_bad++;
		/* judge() says BAD_ICRC exactly when the real frame's ICRC fails
		 * (for packets long enough to reach that check).
		 */
		if (v.reason == SROCE_DROP_BAD_ICRC && icrc_pass)
			t.icrc_wrong++;
		if (v.reason != SROCE_DROP_BAD_ICRC && v.reason != SROCE_DROP_SHORT &&
		    v.reason != SROCE_DROP_BAD_UDP && v.reason != SROCE_DROP_BAD_OPCODE &&
		    !icrc_pass)
			t.icrc_wrong++;
		/* Same verdict as the frame parser, which checks the ICRC before
		 * the opcode and has no P_Key check: compare where both apply.
		 */
		if (!r && !sroce_pkey_match(pkt.pkey, SROCE_DEFAULT_PKEY))
			expect = SROCE_DROP_BAD_PKEY;
		if (icrc_pass && v.reason != SROCE_DROP_SHORT && v.reason != SROCE_DROP_BAD_UDP &&
		    v.reason != SROCE_DROP_BAD_OPCODE && v.reason != expect)
			t.judge_diff++;
		if (!v.reason)
			t.accepted++;
		if (cr.in_live_window(v))
			t.unsafe++;
	}
	*moved = cr.moved() + cr.retargeted();
	return t;
}

int n_test;
int n_fail;

__attribute__((format(printf, 3, 4))) void check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	if (!ok)
		n_fail++;
	std::printf("%s %d %s\n# ", ok ? "ok" : "not ok", n_test, name);
	va_start(ap, fmt);
	std::vprintf(fmt, ap);
	va_end(ap);
	std::printf("\n");
}

} // namespace

int selfcheck()
{
	std::printf("TAP version 13\n1..11\n");
	for (int fam = 0; fam < 2; fam++) {
		const bool v6 = fam == 1;
		uint64_t moved = 0;
		const Tally t = run_crafter(test_config(v6, 7), &moved);
		char name[64];

		std::snprintf(name, sizeof(name), "icrc_matches_frame_%s", v6 ? "ipv6" : "ipv4");
		check(!t.icrc_wrong && !t.bad_not_bad, name,
		      "%u packets whose ICRC verdict differs, %u bad_icrc packets that pass",
		      t.icrc_wrong, t.bad_not_bad);
		std::snprintf(name, sizeof(name), "verdict_matches_parser_%s",
		              v6 ? "ipv6" : "ipv4");
		check(!t.judge_diff && t.accepted > kPackets / 10, name,
		      "%u verdicts differ; %u packets acceptable", t.judge_diff, t.accepted);
		std::snprintf(name, sizeof(name), "safety_rule_%s", v6 ? "ipv6" : "ipv4");
		check(!t.unsafe && moved > 0, name,
		      "%u acceptable packets in a live window; %llu moved out", t.unsafe,
		      (unsigned long long)moved);
		if (!v6) {
			check(t.opcodes.size() == 256, "every_opcode", "%zu opcode values sent",
			      t.opcodes.size());
			check(t.classes.size() == C_NUM, "every_class", "%zu of %d classes",
			      t.classes.size(), int(C_NUM));
		}
	}
	uint64_t m;
	const Tally a = run_crafter(test_config(false, 42), &m);
	const Tally b = run_crafter(test_config(false, 42), &m);
	const Tally c = run_crafter(test_config(false, 43), &m);

	check(a.digest == b.digest, "same_seed_same_bytes", "digest %016llx, again %016llx",
	      (unsigned long long)a.digest, (unsigned long long)b.digest);
	check(a.digest != c.digest, "other_seed_other_bytes", "digest %016llx, seed 43 %016llx",
	      (unsigned long long)a.digest, (unsigned long long)c.digest);

	Config hit = test_config(false, 7);
	uint64_t moved_hit = 0;

	hit.hit_window = true;
	const Tally h = run_crafter(hit, &moved_hit);

	check(h.unsafe > 0 && moved_hit == 0, "hit_window_sends_in_window",
	      "%u acceptable packets in a live window, %llu moved", h.unsafe,
	      (unsigned long long)moved_hit);
	std::printf("# totals: pass:%d fail:%d\n", n_test - n_fail, n_fail);
	return n_fail ? 1 : 0;
}

} // namespace wirefuzz
