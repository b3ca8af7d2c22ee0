// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check: control-path checks of an RDMA device through
 * libibverbs, written for sroce's guest tests (selftests/sroce_ctrl_*.sh)
 * and runnable against any RoCE device (rxe) for comparison.
 */
#include "commands.h"
#include "verbs_util.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vc
{

static const char usage_text[] =
    "usage: sroce-verbs-check COMMAND DEV [OPTIONS]\n"
    "\n"
    "  devinfo DEV [--state active|down] [--mtu BYTES] [--min-qp-wr N]\n"
    "      device, port, GID and P_Key queries against the limits sroce promises\n"
    "  objects DEV [--loops N] [--gid-index I] [--verbose]\n"
    "      create and destroy every object type, walk QPs through their states\n"
    "  invalid DEV [--gid-index I]\n"
    "      invalid arguments fail with the expected errno\n"
    "  hold DEV SECONDS [--expect-removal]\n"
    "      keep a context with PD, MR, CQ and QP open; report device removal\n"
    "  qkey DEV [--gid-index I] [--no-own-qkey]\n"
    "      UD Q_Key checks, the QP's own Q_Key, controlled Q_Keys (loopback)\n"
    "  cqex DEV [--gid-index I]\n"
    "      extended CQ completion timestamps, raw and wall clock (loopback)\n"
    "  dm DEV [--gid-index I]\n"
    "      device memory: allocation, copies, regions, traffic (loopback)\n"
    "  odp DEV [--gid-index I]\n"
    "      on-demand paging: first touches, pages taken away, churn, advise (loopback)\n"
    "  xrc DEV [--gid-index I]\n"
    "      XRC domains, SRQs, initiator and target QPs: traffic and errors (loopback)\n"
    "  domains DEV [--gid-index I]\n"
    "      thread and parent domains: errors, allocators, traffic (loopback)\n"
    "  ring DEV [--gid-index I] [--quick]\n"
    "      forged WQEs and ring indices in sroce's mapped rings (loopback); --quick:\n"
    "      without the two long flushes (2^17 and 2 x 2^20 WQEs)\n"
    "  bound DEV [--gid-index I] [--cases LIST] [--srq-sge N]\n"
    "      SRQ/CQ resize, a full SQ of memory operations and its ACK, a huge ring\n"
    "      mapping: the work is done right and never keeps the CPU for long\n"
    "  srq DEV [--gid-index I]\n"
    "      SRQ limit event, resize with receives posted, SRQ rules (loopback)\n"
    "  isolation DEV [--gid-index I] [--publish FILE [--hold S] | --foreign FILE]\n"
    "      keys of other PDs, dead, invalidated or guessed keys fail (loopback)\n"
    "  fuzz DEV [--seed S] [--iters N] [--seconds S] [--verbose]\n"
    "      random verbs calls with partly invalid arguments; results tallied\n"
    "  msgsize DEV [--gid-index I] [--target TDEV --inject IFACE --peer-ip ADDR\n"
    "              [--send-bytes N]]\n"
    "      work requests over max_msg_sz fail locally (loopback); with --target,\n"
    "      forged requests over it from a veth peer are refused by TDEV\n"
    "  resporder --target TDEV --inject IFACE --peer-ip ADDR [--read-mib N]\n"
    "            [--reset-rounds N]\n"
    "      TDEV's answers and executions behind a long READ from a forged veth peer\n"
    "  stress DEV [--seconds S] [--churn N] [--gid-index I] [--until-removed]\n"
    "      threads create and destroy objects, verify traffic and race window\n"
    "      binds against deregistration, all at once (loopback)\n"
    "  memcg DEV (--expect-enomem-above B | --expect-success-up-to B) [--cgroup DIR]\n"
    "        [--kinds cq,srq,rq,sq]\n"
    "      ring memory is charged to the memory cgroup of the process (run in one)\n"
    "  resdetails DEV [--gid-index I]\n"
    "      the driver details of rdma resource show -dd for objects in known states\n"
    "  congestion --target TDEV --inject IFACE --peer-ip ADDR\n"
    "      a forged CNP, and one with ECN CE, reach TDEV's cnp_rcvd and ecn_ce_rcvd\n"
    "  cqrace DEV [--rounds N]\n"
    "      a CQ resized under a POLL_CQ held by fault/poll_delay_ms (debugfs, set by\n"
    "      the caller): both succeed, the CQ works after\n"
    "  odpcharge DEV --limit BYTES\n"
    "      ODP page tables count in VmPin against a memlock limit of BYTES (run\n"
    "      without CAP_IPC_LOCK): big regions and implicit children are refused\n"
    "  spoof --target TDEV --inject IFACE --peer-ip ADDR --spoof-ip SADDR --other-ip DADDR\n"
    "      a connected QP of TDEV drops SENDs from SADDR or to DADDR, takes its peer's\n"
    "  mwreuse DEV --qpn-knob PATH\n"
    "      a type 2 window of a destroyed QP stays closed to QPs given its number\n"
    "  odpstall DEV (--knob PATH | --file F --server-pid P) [--exit]\n"
    "      ODP faults held by the debugfs knob odp_stall (PATH), or by a FUSE\n"
    "      server P that never answers (F its file), do not hold up destroy,\n"
    "      deregistration or close; they end when it is cleared (P killed)\n"
    "  fusehang MOUNTPOINT\n"
    "      a FUSE file system (file \"data\", 1 MiB) that never answers a read\n"
    "\n"
    "Lines: PASS/FAIL/SKIP NAME: ..., info: ..., then one summary line.\n"
    "Exit status: 0 all checks passed, 1 a check failed, 2 usage error.\n";

bool Args::parse(int argc, char **argv, std::initializer_list<OptionSpec> specs, std::string *why)
{
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const OptionSpec *spec = nullptr;

		if (std::strncmp(arg, "--", 2) != 0) {
			positional_.push_back(arg);
			continue;
		}
		for (const OptionSpec &s : specs)
			if (std::strcmp(arg + 2, s.name) == 0)
				spec = &s;
		if (!spec) {
			*why = std::string("unknown option ") + arg;
			return false;
		}
		if (!spec->has_value) {
			values_[spec->name] = "1";
			continue;
		}
		if (i + 1 >= argc) {
			*why = std::string("option ") + arg + " needs a value";
			return false;
		}
		values_[spec->name] = argv[++i];
	}
	return true;
}

const char *Args::positional(size_t n) const
{
	return n < positional_.size() ? positional_[n] : nullptr;
}

const char *Args::value(const char *name, const char *def) const
{
	auto it = values_.find(name);

	return it == values_.end() ? def : it->second.c_str();
}

bool Args::number(const char *name, long def, long min, long max, long *out, std::string *why) const
{
	const char *text = value(name);
	char *end = nullptr;
	long v;

	if (!text) {
		*out = def;
		return true;
	}
	errno = 0;
	v = std::strtol(text, &end, 0);
	if (errno || end == text || *end || v < min || v > max) {
		*why = std::string("--") + name + " " + text + ": want a number from " +
		       std::to_string(min) + " to " + std::to_string(max);
		return false;
	}
	*out = v;
	return true;
}

int usage_error(const char *command, const std::string &message)
{
	std::fprintf(stderr, "sroce-verbs-check %s: %s\n\n%s", command, message.c_str(),
	             usage_text);
	return 2;
}

} /* namespace vc */

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} commands[] = {
	    {"devinfo", vc::cmd_devinfo},
	    {"objects", vc::cmd_objects},
	    {"invalid", vc::cmd_invalid},
	    {"hold", vc::cmd_hold},
	    {"srq", vc::cmd_srq},
	    {"qkey", vc::cmd_qkey},
	    {"ring", vc::cmd_ring},
	    {"cqex", vc::cmd_cqex},
	    {"domains", vc::cmd_domains},
	    {"dm", vc::cmd_dm},
	    {"odp", vc::cmd_odp},
	    {"xrc", vc::cmd_xrc},
	    {"isolation", vc::cmd_isolation},
	    {"fuzz", vc::cmd_fuzz},
	    {"msgsize", vc::cmd_msgsize},
	    {"resporder", vc::cmd_resporder},
	    {"stress", vc::cmd_stress},
	    {"memcg", vc::cmd_memcg},
	    {"bound", vc::cmd_bound},
	    {"resdetails", vc::cmd_resdetails},
	    {"congestion", vc::cmd_congestion},
	    {"cqrace", vc::cmd_cqrace},
	    {"odpcharge", vc::cmd_odpcharge},
	    {"odpstall", vc::cmd_odpstall},
	    {"fusehang", vc::cmd_fusehang},
	    {"spoof", vc::cmd_spoof},
	    {"mwreuse", vc::cmd_mwreuse},
	};

	/* Results go to a pipe or file in the tests: keep lines in order. */
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	/* An owning pointer whose destroy verb fails says so. */
	sroce_tools::set_destroy_failure_handler(vc::destroy_logged);
	if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
		std::fputs(vc::usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (const auto &c : commands)
		if (!std::strcmp(argv[1], c.name))
			return c.run(argc - 2, argv + 2);
	return vc::usage_error(argv[1], "unknown command");
}
