// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check cqex DEV [--gid-index I]: completion timestamps of the
 * extended CQ over a loopback RC pair.
 *
 *   - ibv_query_device_ex reports a completion timestamp mask and the
 *     clock rate (hca_core_clock, kHz);
 *   - a CQ created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and _WALLCLOCK
 *     gives, for a SEND and its receive, timestamps that lie between the
 *     clock read before the post and after the poll: the raw one against
 *     ibv_query_rt_values_ex's raw clock (converted with hca_core_clock),
 *     the wall clock one against CLOCK_REALTIME (1 ms of slack);
 *   - the payload arrives intact (ibv_start_poll / next_poll / end_poll).
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kMsg = 256;
constexpr uint64_t kSlackNs = 1000000;

uint64_t realtime_ns()
{
	timespec ts{};

	clock_gettime(CLOCK_REALTIME, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/* The device clock in ns, or 0 when it cannot be read. */
uint64_t device_ns(ibv_context *ctx, uint64_t khz)
{
	ibv_values_ex v{};

	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	if (ibv_query_rt_values_ex(ctx, &v) || !khz)
		return 0;
	const uint64_t ticks = uint64_t(v.raw_clock.tv_sec) * 1000000000ull + v.raw_clock.tv_nsec;
	return ticks * 1000000ull / khz;
}

bool connect(ibv_qp *qp, const GidChoice &gid, uint32_t dest)
{
	return connect_rc(qp, gid, dest, IBV_ACCESS_LOCAL_WRITE) == 0;
}

int run(ibv_context *ctx, const GidChoice &gid)
{
	Report r("cqex");
	ibv_device_attr_ex dx{};

	if (!r.expect_ok("query_device_ex", ibv_query_device_ex(ctx, nullptr, &dx),
	                 "ibv_query_device_ex"))
		return r.finish();
	r.check(dx.completion_timestamp_mask && dx.hca_core_clock, "clock",
	        "completion_timestamp_mask %#" PRIx64 ", hca_core_clock %" PRIu64 " kHz",
	        dx.completion_timestamp_mask, dx.hca_core_clock);

	ibv_cq_init_attr_ex ca{};
	ca.cqe = 16;
	ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
	              IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	if (!r.check(cqx != nullptr, "create_cq_ex", "a CQ with both completion timestamps (%s)",
	             cqx ? "ok" : errno_name(errno).c_str()))
		return r.finish();
	CqPtr cq(ibv_cq_ex_to_cq(cqx));
	PdPtr pd(ibv_alloc_pd(ctx));
	std::vector<uint8_t> buf(2 * kMsg);
	MrPtr mr(pd ? ibv_reg_mr(pd.get(), buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE)
	            : nullptr);
	ibv_qp_init_attr ia{};
	ia.send_cq = cq.get();
	ia.recv_cq = cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap = {4, 4, 1, 1, 0};
	QpPtr a(mr ? ibv_create_qp(pd.get(), &ia) : nullptr);
	QpPtr b(a ? ibv_create_qp(pd.get(), &ia) : nullptr);
	if (!r.check(b && connect(a.get(), gid, b->qp_num) && connect(b.get(), gid, a->qp_num),
	             "setup", "a loopback RC pair on the CQ"))
		return r.finish();

	for (uint32_t i = 0; i < kMsg; i++)
		buf[i] = uint8_t(i * 7 + 3);
	ibv_sge rs{reinterpret_cast<uintptr_t>(buf.data() + kMsg), kMsg, mr->lkey};
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.wr_id = 2;
	rwr.sg_list = &rs;
	rwr.num_sge = 1;
	ibv_sge ss{reinterpret_cast<uintptr_t>(buf.data()), kMsg, mr->lkey};
	ibv_send_wr swr{};
	ibv_send_wr *sbad = nullptr;
	swr.wr_id = 1;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;

	const uint64_t dev0 = device_ns(ctx, dx.hca_core_clock);
	const uint64_t wall0 = realtime_ns();
	if (ibv_post_recv(b.get(), &rwr, &rbad) || ibv_post_send(a.get(), &swr, &sbad)) {
		r.fail("post", "posting: %s", errno_name(errno).c_str());
		return r.finish();
	}
	unsigned seen = 0;
	uint64_t ts[2] = {}, wall[2] = {};
	bool ok = true;
	ibv_poll_cq_attr pa{};
	for (int spins = 0; seen < 2 && spins < 5000000; spins++) {
		if (ibv_start_poll(cqx, &pa))
			continue;
		do {
			ok = ok && cqx->status == IBV_WC_SUCCESS;
			if (cqx->wr_id == 1 || cqx->wr_id == 2) {
				ts[cqx->wr_id - 1] = ibv_wc_read_completion_ts(cqx);
				wall[cqx->wr_id - 1] = ibv_wc_read_completion_wallclock_ns(cqx);
				seen++;
			}
		} while (seen < 2 && ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	const uint64_t dev1 = device_ns(ctx, dx.hca_core_clock);
	const uint64_t wall1 = realtime_ns();
	if (!r.check(seen == 2 && ok && !memcmp(buf.data(), buf.data() + kMsg, kMsg), "traffic",
	             "SEND and receive completed through ibv_start_poll (%u of 2), bytes intact",
	             seen))
		return r.finish();
	for (int k = 0; k < 2; k++) {
		const char *what = k ? "receive" : "send";
		const uint64_t ns = ts[k] * 1000000ull / dx.hca_core_clock;

		r.check(dev0 && ns >= dev0 && ns <= dev1, std::string("ts.") + what,
		        "%s: completion time %" PRIu64 " ns within [%" PRIu64 ", %" PRIu64 "]",
		        what, ns, dev0, dev1);
		r.check(wall[k] + kSlackNs >= wall0 && wall[k] <= wall1 + kSlackNs,
		        std::string("wallclock.") + what,
		        "%s: wall clock %" PRIu64 " ns within 1 ms of [%" PRIu64 ", %" PRIu64 "]",
		        what, wall[k], wall0, wall1);
	}
	return r.finish();
}

} /* namespace */

int cmd_cqex(int argc, char **argv)
{
	LoopbackTarget t;
	int status;

	if (!open_loopback("cqex", argc, argv, &t, &status))
		return status;
	return run(t.ctx.get(), t.gid);
}

} /* namespace vc */
