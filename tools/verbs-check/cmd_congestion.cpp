// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check congestion --target TDEV --inject IFACE --peer-ip ADDR:
 * congestion signals reach TDEV's counters. A forged peer (forged_peer.h)
 * sends a victim QP of TDEV
 *
 *   cnp      a CNP (BTH opcode 0x81, IBA A17.9.3): cnp_rcvd grows by 1
 *            and no drop counter moves (sroce has no rate control; the
 *            packet is counted and consumed)
 *   ce       the same CNP with the IP ECN field at "congestion
 *            experienced" (the ICRC masks that byte): cnp_rcvd and
 *            ecn_ce_rcvd grow by 1
 */
#include "commands.h"
#include "forged_peer.h"
#include "report.h"
#include "verbs_util.h"

#include "proto/sroce_opcode.h"

#include <linux/if_ether.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace vc
{
namespace
{

/* The drop counters a valid CNP must not move. */
const char *const kDrops[] = {"drop_bad_opcode", "drop_bad_qp_type", "drop_bad_icrc", "drop_no_qp",
                              "drop_short"};

long drops(const std::string &dev)
{
	long sum = 0;

	for (const char *d : kDrops)
		sum += read_counter(dev, d);
	return sum;
}

/* Sets @f's IPv4 ECN field to CE (3) and its header checksum again. */
void mark_ce(std::vector<uint8_t> *f)
{
	uint8_t *ip = f->data() + ETH_HLEN;
	uint32_t sum = 0;

	ip[1] |= 0x3;
	ip[10] = ip[11] = 0;
	for (unsigned i = 0; i < SROCE_IPV4_HDR_BYTES; i += 2)
		sum += uint32_t(ip[i]) << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = uint8_t(~sum >> 8);
	ip[11] = uint8_t(~sum);
}

int run(const PeerTarget &t)
{
	Report r("congestion");
	ForgedPeer fp;
	std::string why;

	if (!r.check(fp.open(t, 16, &why), "open", "%s", why.empty() ? "ok" : why.c_str()))
		return r.finish();
	QpPtr qp = fp.victim(ForgedPeer::Victim(), &why);
	if (!r.check(qp != nullptr, "victim", "an RC QP connected to the forged peer (%s)",
	             why.empty() ? "ok" : why.c_str()))
		return r.finish();
	r.info("%s", fp.describe().c_str());
	const std::string &dev = fp.dev();
	const long cnp0 = read_counter(dev, "cnp_rcvd");
	const long ce0 = read_counter(dev, "ecn_ce_rcvd");
	const long drop0 = drops(dev);
	if (!r.check(cnp0 >= 0 && ce0 >= 0, "counters", "%s has cnp_rcvd and ecn_ce_rcvd",
	             dev.c_str()))
		return r.finish();

	std::vector<uint8_t> f = fp.inj().frame(fp.request(SROCE_OP_CNP, qp.get(), 0), 0u, 0);
	if (!r.check(fp.inj().send(f), "cnp.send", "a CNP to QP %u", qp->qp_num))
		return r.finish();
	long cnp = wait_counter(dev, "cnp_rcvd", cnp0 + 1);
	r.check(cnp == cnp0 + 1, "cnp", "cnp_rcvd %ld -> %ld", cnp0, cnp);

	mark_ce(&f);
	if (!r.check(fp.inj().send(f), "ce.send", "a CNP with ECN CE to QP %u", qp->qp_num))
		return r.finish();
	long ce = wait_counter(dev, "ecn_ce_rcvd", ce0 + 1);
	cnp = wait_counter(dev, "cnp_rcvd", cnp0 + 2);
	r.check(ce == ce0 + 1 && cnp == cnp0 + 2, "ce", "ecn_ce_rcvd %ld -> %ld, cnp_rcvd %ld", ce0,
	        ce, cnp);
	const long drop = drops(dev);
	r.check(drop == drop0, "no_drop",
	        "drop counters (opcode, QP type, ICRC, QP, short) %ld -> %ld", drop0, drop);
	return r.finish();
}

} /* namespace */

int cmd_congestion(int argc, char **argv)
{
	Args args;
	std::string why;
	PeerTarget t;

	if (!args.parse(argc, argv, {{"target", true}, {"inject", true}, {"peer-ip", true}}, &why))
		return usage_error("congestion", why);
	if (args.num_positional() != 0 || !parse_peer_target(args, &t, &why))
		return usage_error("congestion", why.empty() ? "takes no device name" : why);
	if (t.dev.empty())
		return usage_error("congestion", "needs --target, --inject and --peer-ip");
	return run(t);
}

} /* namespace vc */
