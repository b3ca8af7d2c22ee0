// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-integrity: end-to-end checks between two RDMA devices on two
 * hosts over libibverbs, with a TCP connection on the side for the
 * exchange of QP numbers, PSNs, GIDs and memory regions. Written for
 * sroce's guest tests (selftests/rc_integrity*.sh, selftests/rc_errors*.sh,
 * selftests/rc_rnr.sh, selftests/rc_vanish.sh, selftests/rc_order.sh)
 * and runnable between any two RoCE devices (rxe) for comparison.
 */
#include "modes.h"
#include "options.h"

#include <csignal>

int main(int argc, char **argv)
{
	integ::Options opt;
	const int rc = integ::parse_options(argc, argv, &opt);

	if (rc)
		return rc == 1 ? 0 : 2;
	std::signal(SIGPIPE, SIG_IGN);
	switch (opt.mode) {
	case integ::Mode::run:
		return integ::run_traffic(opt);
	case integ::Mode::errors:
		return integ::run_errors(opt);
	case integ::Mode::vanish:
		return integ::run_vanish(opt);
	case integ::Mode::flush:
		return integ::run_flush(opt);
	case integ::Mode::order:
		return integ::run_order(opt);
	case integ::Mode::exchange:
		return integ::run_exchange(opt);
	default:
		return integ::run_selfcheck();
	}
}
