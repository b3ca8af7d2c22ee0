// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Command line of sroce-integrity (see options.h).
 */
#include "options.h"

#include "modes.h"
#include "number.h"
#include "plan.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>

namespace integ
{

using sroce_tools::parse_uint;
using sroce_tools::parse_uint_into;

namespace
{

const char usage_text[] =
    "usage: sroce-integrity run|errors|flush|order|exchange|vanish [SERVER] -d DEV [OPTIONS]\n"
    "       sroce-integrity selfcheck\n"
    "\n"
    "Without SERVER it waits for a client on --port; with SERVER (an IPv4 or\n"
    "IPv6 address or a name) it connects to it. The client's run parameters\n"
    "(seed, rounds, sizes, opcodes, cases) are used by both sides.\n"
    "\n"
    "  run      random traffic, both sides taking turns as requester; every\n"
    "           byte and every atomic result is checked\n"
    "  errors   error-path cases, each on fresh QPs:\n"
    "           %s\n"
    "  flush    RDMA FLUSH from the client to the server, good and bad cases,\n"
    "           each on fresh QPs; exit status 4 (SKIP) when the client cannot\n"
    "           post FLUSH or the server's device does not offer it\n"
    "  order    a 1 MiB READ and, posted with it, atomics, a SEND, a WRITE,\n"
    "           more READs, each case on fresh QPs: every completion in order,\n"
    "           every byte and atomic value checked, no retransmission counted\n"
    "  exchange ping-pong, symmetric and one-way SENDs, each on fresh QPs: every\n"
    "           byte checked; on sroce also which ACKs waited for a reply\n"
    "  vanish   the responder's host vanishes in the middle of a transfer (its\n"
    "           link is taken down when it prints \"vanishing\"): the\n"
    "           requester's QPs, one per opcode, must fail with\n"
    "           IBV_WC_RETRY_EXC_ERR after (retry_cnt + 1) local ACK timeouts,\n"
    "           the rest of their WRs flushed; needs --requester client|server\n"
    "  selfcheck  the parts that need no device (plans, layouts, checks)\n"
    "\n"
    "  -d, --device DEV        RDMA device (required)\n"
    "  -g, --gid-index N       local GID index (default: first RoCEv2 GID of an\n"
    "                          IPv4 address, with --ipv6 of a global IPv6 address)\n"
    "  -6, --ipv6              choose the GID of an IPv6 address\n"
    "  -p, --port N            TCP port of the control connection (default 18600)\n"
    "  -n, --rounds N          rounds per direction (default 16)\n"
    "  -D, --duration SEC      run for SEC seconds instead of --rounds\n"
    "      --stop-file PATH    client: end the run at the first round that\n"
    "                          starts after PATH exists (--duration: at the latest)\n"
    "  -S, --seed N            PRNG seed (default: random, printed)\n"
    "  -m, --mtu BYTES         path MTU 256..4096 (default: the active MTU of both)\n"
    "  -s, --max-size BYTES    largest message (default 3 x path MTU, max 8 MiB)\n"
    "  -l, --max-sge N         SGEs per work request, at most (default 8)\n"
    "  -q, --depth N           work requests in flight, at most (default 8)\n"
    "  -b, --batch N           operations per round, at most (default 16)\n"
    "  -o, --ops LIST          opcodes: send,send_imm,write,write_imm,read,cmp_swap,\n"
    "                          fetch_add (or all, atomic; default all)\n"
    "      --client-ops LIST   opcodes when the client is the requester\n"
    "      --server-ops LIST   opcodes when the server is the requester\n"
    "  -u, --uc                unreliable connection (SEND and WRITE only)\n"
    "  -i, --inline BYTES      inline data to ask for (default 128, 0: none)\n"
    "  -c, --cases LIST        error cases to run (default: all but rnr_limit and\n"
    "                          rnr_stream, which take a second each; or all)\n"
    "  -r, --requester WHO     who issues the work requests: client, server or\n"
    "                          both, taking turns (default both)\n"
    "      --ack-timeout N     vanish: QP timeout attribute, 4.096 us x 2^N (1..31,\n"
    "                          default 15: 134 ms)\n"
    "      --retry-cnt N       vanish: QP retry_cnt (0..7, default 5)\n"
    "      --min-held PCT      exchange: the share of pingpong's ACKs that must wait\n"
    "                          for the reply (1..100, default 25; turn: half of it)\n"
    "  -L, --lenient-recv-flush  errors: a receive posted after the QP went to\n"
    "                          ERR may stay pending (rdma_rxe on Linux 6.1)\n"
    "      --srq               run: this side's receives come from a shared receive\n"
    "                          queue (ibv_post_srq_recv) instead of the QP's own\n"
    "      --odp               run: this side registers its memory on demand\n"
    "                          (IBV_ACCESS_ON_DEMAND: the device faults pages in)\n"
    "      --odp-churn MS      run, --odp: fork every MS ms while the traffic runs\n"
    "                          (1..10000): each fork write-protects this side's\n"
    "                          pages, so the device's mappings are invalidated\n"
    "                          and its next access faults again; data is kept\n"
    "      --corrupt WHAT      damage one byte before checking it, to show the\n"
    "                          check fails: recv, write, guard, read, atomic\n"
    "  -t, --timeout SEC       limit of every single wait (default 15)\n"
    "  -T, --connect-timeout SEC  limit for the control connection (default 60)\n"
    "  -v, --verbose           log every work request\n"
    "  -h, --help\n"
    "\n"
    "Prints one summary line (PASS/FAIL, ops, bytes, errors, time). Exit\n"
    "status: 0 when both sides found nothing wrong, 1 otherwise, 2 usage.\n";

/* The usage text, with the error cases' names wrapped into it. */
void print_usage()
{
	const std::string all = case_names();
	std::string names, line;
	size_t pos = 0;

	while (pos < all.size()) {
		const size_t comma = std::min(all.find(',', pos), all.size());
		const std::string name = all.substr(pos, comma - pos + (comma < all.size()));

		if (line.size() + name.size() > 62) {
			names += line + "\n           ";
			line.clear();
		}
		line += name;
		pos = comma + 1;
	}
	names += line;
	std::printf(usage_text, names.c_str());
}

} // namespace

int parse_options(int argc, char **argv, Options *opt)
{
	static const option longopts[] = {
	    {"device", required_argument, nullptr, 'd'},
	    {"gid-index", required_argument, nullptr, 'g'},
	    {"ipv6", no_argument, nullptr, '6'},
	    {"port", required_argument, nullptr, 'p'},
	    {"rounds", required_argument, nullptr, 'n'},
	    {"duration", required_argument, nullptr, 'D'},
	    {"seed", required_argument, nullptr, 'S'},
	    {"mtu", required_argument, nullptr, 'm'},
	    {"max-size", required_argument, nullptr, 's'},
	    {"max-sge", required_argument, nullptr, 'l'},
	    {"depth", required_argument, nullptr, 'q'},
	    {"batch", required_argument, nullptr, 'b'},
	    {"ops", required_argument, nullptr, 'o'},
	    {"client-ops", required_argument, nullptr, 1001},
	    {"server-ops", required_argument, nullptr, 1002},
	    {"uc", no_argument, nullptr, 'u'},
	    {"inline", required_argument, nullptr, 'i'},
	    {"cases", required_argument, nullptr, 'c'},
	    {"requester", required_argument, nullptr, 'r'},
	    {"lenient-recv-flush", no_argument, nullptr, 'L'},
	    {"corrupt", required_argument, nullptr, 1003},
	    {"srq", no_argument, nullptr, 1006},
	    {"odp", no_argument, nullptr, 1009},
	    {"odp-churn", required_argument, nullptr, 1010},
	    {"ack-timeout", required_argument, nullptr, 1004},
	    {"retry-cnt", required_argument, nullptr, 1005},
	    {"min-held", required_argument, nullptr, 1007},
	    {"stop-file", required_argument, nullptr, 1008},
	    {"timeout", required_argument, nullptr, 't'},
	    {"connect-timeout", required_argument, nullptr, 'T'},
	    {"verbose", no_argument, nullptr, 'v'},
	    {"help", no_argument, nullptr, 'h'},
	    {nullptr, 0, nullptr, 0},
	};
	const char *bad = nullptr;
	int c;

	if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
		print_usage();
		return argc < 2 ? 2 : 1;
	}
	if (std::strcmp(argv[1], "run") == 0) {
		opt->mode = Mode::run;
	} else if (std::strcmp(argv[1], "errors") == 0) {
		opt->mode = Mode::errors;
	} else if (std::strcmp(argv[1], "vanish") == 0) {
		opt->mode = Mode::vanish;
	} else if (std::strcmp(argv[1], "flush") == 0) {
		opt->mode = Mode::flush;
	} else if (std::strcmp(argv[1], "order") == 0) {
		opt->mode = Mode::order;
	} else if (std::strcmp(argv[1], "exchange") == 0) {
		opt->mode = Mode::exchange;
	} else if (std::strcmp(argv[1], "selfcheck") == 0) {
		opt->mode = Mode::selfcheck;
		return argc == 2 ? 0 : 2;
	} else {
		std::fprintf(stderr,
		             "sroce-integrity: unknown mode '%s' (run, errors, flush, order, "
		             "exchange, vanish or "
		             "selfcheck)\n",
		             argv[1]);
		return 2;
	}
	argc--;
	argv++;
	optind = 1;
	while (!bad && (c = getopt_long(argc, argv, "d:g:6p:n:D:S:m:s:l:q:b:o:ui:c:r:Lt:T:vh",
	                                longopts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			opt->device = optarg;
			break;
		case 'g':
			if (!parse_uint_into(optarg, 0, 65535, &opt->gid_index))
				bad = "--gid-index";
			break;
		case '6':
			opt->ipv6 = true;
			break;
		case 'p':
			if (!parse_uint_into(optarg, 1, 65535, &opt->port))
				bad = "--port";
			break;
		case 'n':
			if (!parse_uint_into(optarg, 1, 1000000, &opt->rounds))
				bad = "--rounds";
			break;
		case 'D':
			if (!parse_uint_into(optarg, 1, 86400, &opt->duration))
				bad = "--duration";
			break;
		case 'S':
			if (!parse_uint(optarg, 0, UINT64_MAX, &opt->seed))
				bad = "--seed";
			opt->seed_set = true;
			break;
		case 'm':
			if (!parse_uint_into(optarg, 256, 4096, &opt->mtu))
				bad = "--mtu";
			break;
		case 's':
			if (!parse_uint_into(optarg, 1, kMaxMessage, &opt->max_size))
				bad = "--max-size";
			break;
		case 'l':
			if (!parse_uint_into(optarg, 1, 32, &opt->max_sge))
				bad = "--max-sge";
			break;
		case 'q':
			if (!parse_uint_into(optarg, 1, 1024, &opt->depth))
				bad = "--depth";
			break;
		case 'b':
			if (!parse_uint_into(optarg, 1, 1024, &opt->batch))
				bad = "--batch";
			break;
		case 'o':
			if (!parse_ops(optarg, &opt->ops_mask))
				bad = "--ops";
			break;
		case 1001:
			if (!parse_ops(optarg, &opt->client_ops))
				bad = "--client-ops";
			break;
		case 1002:
			if (!parse_ops(optarg, &opt->server_ops))
				bad = "--server-ops";
			break;
		case 'u':
			opt->uc = true;
			break;
		case 'i':
			if (!parse_uint_into(optarg, 0, 4096, &opt->max_inline))
				bad = "--inline";
			break;
		case 'c':
			if (!parse_cases(optarg, &opt->cases_mask))
				bad = "--cases";
			break;
		case 'r':
			if (std::strcmp(optarg, "client") == 0)
				opt->directions = kClientRequests;
			else if (std::strcmp(optarg, "server") == 0)
				opt->directions = kServerRequests;
			else if (std::strcmp(optarg, "both") == 0)
				opt->directions = kBothDirections;
			else
				bad = "--requester";
			break;
		case 1003: {
			static const char *const names[] = {"none",  "recv", "write",
			                                    "guard", "read", "atomic"};
			unsigned k = 0;

			while (k < 6 && std::strcmp(optarg, names[k]) != 0)
				k++;
			if (k == 6)
				bad = "--corrupt";
			else
				opt->corrupt = Corrupt(k);
			break;
		}
		case 1004:
			if (!parse_uint_into(optarg, 1, 31, &opt->ack_timeout))
				bad = "--ack-timeout";
			break;
		case 1005:
			if (!parse_uint_into(optarg, 0, 7, &opt->retry_cnt))
				bad = "--retry-cnt";
			break;
		case 'L':
			opt->lenient_recv_flush = true;
			break;
		case 1006:
			opt->srq = true;
			break;
		case 1009:
			opt->odp = true;
			break;
		case 1010:
			if (!parse_uint_into(optarg, 1, 10000, &opt->odp_churn_ms))
				bad = "--odp-churn";
			break;
		case 1007:
			if (!parse_uint_into(optarg, 1, 100, &opt->min_held_pct))
				bad = "--min-held";
			break;
		case 1008:
			opt->stop_file = optarg;
			break;
		case 't':
			if (!parse_uint_into(optarg, 1, 3600, &opt->timeout))
				bad = "--timeout";
			break;
		case 'T':
			if (!parse_uint_into(optarg, 1, 3600, &opt->connect_timeout))
				bad = "--connect-timeout";
			break;
		case 'v':
			opt->verbose = true;
			break;
		case 'h':
			print_usage();
			return 1;
		default:
			return 2;
		}
	}
	if (bad) {
		std::fprintf(stderr, "sroce-integrity: bad value for %s: '%s'\n", bad, optarg);
		return 2;
	}
	if (optind < argc)
		opt->server = argv[optind++];
	if (optind < argc) {
		std::fprintf(stderr, "sroce-integrity: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (opt->device.empty()) {
		std::fprintf(stderr, "sroce-integrity: --device is required\n");
		return 2;
	}
	if ((opt->odp || opt->odp_churn_ms) && opt->mode != Mode::run) {
		std::fprintf(stderr, "sroce-integrity: --odp and --odp-churn are for run\n");
		return 2;
	}
	if (opt->odp_churn_ms && !opt->odp) {
		std::fprintf(stderr, "sroce-integrity: --odp-churn needs --odp\n");
		return 2;
	}
	if (opt->mode == Mode::vanish && opt->directions == kBothDirections) {
		std::fprintf(stderr,
		             "sroce-integrity: vanish needs --requester client or server\n");
		return 2;
	}
	return 0;
}

} // namespace integ
