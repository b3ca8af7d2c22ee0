// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * hold: keep a user context busy (PD, MR, CQ with a completion channel, an
 * RC QP in INIT with a receive posted, and on a device that has it, device
 * memory with a region on it, mapped and filled) for SECONDS, watching the
 * async event fd. When the device goes away under us (rmmod, rdma link delete,
 * netdev removal) the kernel disassociates the context and delivers
 * IBV_EVENT_DEVICE_FATAL; we then touch the dead objects once (poll the
 * CQ, post a receive, query the port), destroy them and close the context,
 * none of which may crash. Prints "holding" when set up, "device removed"
 * on the fatal event and "released" at the end.
 *
 * Exit status: 0 when the time ran out or the removal was handled; 1 when
 * setup failed, or with --expect-removal when no removal came.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <utility>
#include <vector>

namespace vc
{

namespace
{

volatile sig_atomic_t hold_stop;

void on_signal(int)
{
	hold_stop = 1;
}

struct Held {
	ChannelPtr channel;
	PdPtr pd;
	std::vector<uint8_t> buf = std::vector<uint8_t>(1 << 16);
	MrPtr mr;
	CqPtr cq;
	QpPtr qp;
	ibv_dm *dm = nullptr; /* released by release() */
	MrPtr dm_mr;
};

constexpr size_t kDmLen = 1 << 16;

/* Device memory with a region on it, filled, when the device offers it. */
bool hold_dm(Report &r, ibv_context *ctx, Held &h)
{
	ibv_device_attr_ex dx{};
	ibv_alloc_dm_attr da{};

	if (ibv_query_device_ex(ctx, nullptr, &dx) || dx.max_dm_size < kDmLen)
		return true;
	da.length = kDmLen;
	h.dm = ibv_alloc_dm(ctx, &da);
	if (h.dm)
		h.dm_mr.reset(ibv_reg_dm_mr(h.pd.get(), h.dm, 0, kDmLen,
		                            IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
		                                IBV_ACCESS_REMOTE_WRITE));
	if (!h.dm_mr)
		return r.check(false, "hold.setup", "device memory: %s",
		               errno_name(null_errno()).c_str());
	std::vector<uint8_t> fill(kDmLen);
	for (size_t i = 0; i < kDmLen; i++)
		fill[i] = uint8_t(i * 13 + 5);
	if (int ret = ibv_memcpy_to_dm(h.dm, 0, fill.data(), kDmLen))
		return r.check(false, "hold.setup", "ibv_memcpy_to_dm: %s",
		               errno_name(ret).c_str());
	return true;
}

bool hold_setup(Report &r, ibv_context *ctx, Held &h)
{
	ibv_qp_init_attr ia{};

	errno = 0;
	h.channel.reset(ibv_create_comp_channel(ctx));
	h.pd.reset(ibv_alloc_pd(ctx));
	if (!h.channel || !h.pd)
		return r.check(false, "hold.setup", "channel/PD: %s",
		               errno_name(null_errno()).c_str());
	h.mr.reset(ibv_reg_mr(h.pd.get(), h.buf.data(), h.buf.size(),
	                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	h.cq.reset(ibv_create_cq(ctx, 64, nullptr, h.channel.get(), 0));
	if (!h.mr || !h.cq)
		return r.check(false, "hold.setup", "MR/CQ: %s", errno_name(null_errno()).c_str());
	ia.send_cq = h.cq.get();
	ia.recv_cq = h.cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap = {16, 16, 1, 1, 0};
	h.qp.reset(ibv_create_qp(h.pd.get(), &ia));
	if (!h.qp)
		return r.check(false, "hold.setup", "QP: %s", errno_name(null_errno()).c_str());

	QpTransition t = to_init(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (int ret = ibv_modify_qp(h.qp.get(), &t.attr, t.mask))
		return r.check(false, "hold.setup", "RESET -> INIT: %s", errno_name(ret).c_str());

	ibv_sge sge = {reinterpret_cast<uintptr_t>(h.buf.data()), 64, h.mr->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (int ret = ibv_post_recv(h.qp.get(), &wr, &bad))
		return r.check(false, "hold.setup", "ibv_post_recv: %s", errno_name(ret).c_str());
	if (int ret = ibv_req_notify_cq(h.cq.get(), 0))
		return r.check(false, "hold.setup", "ibv_req_notify_cq: %s",
		               errno_name(ret).c_str());
	if (!hold_dm(r, ctx, h))
		return false;
	return r.check(true, "hold.setup",
	               "PD, MR, CQ (with channel, armed), RC QP in INIT "
	               "with a receive posted%s",
	               h.dm ? ", 64 KiB of device memory with a region" : "");
}

/* The device is gone: every verb may fail, none may crash. */
void touch_dead_objects(Report &r, ibv_context *ctx, Held &h)
{
	ibv_wc wc[4];
	ibv_port_attr port{};
	ibv_sge sge = {reinterpret_cast<uintptr_t>(h.buf.data()), 64, h.mr->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;

	int n = ibv_poll_cq(h.cq.get(), 4, wc);
	r.info("after removal: ibv_poll_cq returned %d", n);
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	r.info("after removal: ibv_post_recv: %s",
	       errno_name(ibv_post_recv(h.qp.get(), &wr, &bad)).c_str());
	r.info("after removal: ibv_query_port: %s",
	       errno_name(ibv_query_port(ctx, 1, &port)).c_str());
	errno = 0;
	PdPtr pd(ibv_alloc_pd(ctx));
	r.info("after removal: ibv_alloc_pd: %s",
	       pd ? "succeeded" : errno_name(null_errno()).c_str());
	if (h.dm) {
		/*
		 * The kernel's DM is gone with the device, but the process's
		 * mapping keeps its pages (sroce maps them page by page): the
		 * copies still work and read what was written.
		 */
		std::vector<uint8_t> back(kDmLen);
		int ret = ibv_memcpy_from_dm(back.data(), h.dm, 0, kDmLen);
		int ret2 = ibv_memcpy_to_dm(h.dm, 4096, back.data(), 4096);
		bool same = true;

		for (size_t i = 0; i < kDmLen && same; i++)
			same = back[i] == uint8_t(i * 13 + 5);
		r.check(!ret && !ret2 && same, "hold.dm_after_removal",
		        "device memory after removal: copy out %s, in %s, contents %s",
		        errno_name(ret).c_str(), errno_name(ret2).c_str(),
		        same ? "as written" : "changed");
	}
}

void release(Report &r, Held &h, const char *when)
{
	/* ibv_destroy_*() succeed on a disassociated context (libibverbs maps EIO to 0). */
	int qp = ibv_destroy_qp(h.qp.release());
	int cq = ibv_destroy_cq(h.cq.release());
	int mr = ibv_dereg_mr(h.mr.release());
	int dm_mr = h.dm_mr ? ibv_dereg_mr(h.dm_mr.release()) : 0;
	int dm = h.dm ? ibv_free_dm(std::exchange(h.dm, nullptr)) : 0;
	int pd = ibv_dealloc_pd(h.pd.release());
	int ch = ibv_destroy_comp_channel(h.channel.release());

	r.check(!qp && !cq && !mr && !dm_mr && !dm && !pd && !ch, "hold.destroy",
	        "destroy %s: QP %s, CQ %s, MR %s, DM region %s, DM %s, PD %s, channel %s", when,
	        errno_name(qp).c_str(), errno_name(cq).c_str(), errno_name(mr).c_str(),
	        errno_name(dm_mr).c_str(), errno_name(dm).c_str(), errno_name(pd).c_str(),
	        errno_name(ch).c_str());
}

} /* namespace */

int cmd_hold(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("hold");
	Held h;
	long seconds;
	bool removed = false;

	if (!args.parse(argc, argv, {{"expect-removal", false}}, &why))
		return usage_error("hold", why);
	if (args.num_positional() != 2)
		return usage_error("hold", "want a device name and a number of seconds");
	const char *device = args.positional(0);
	{
		char *end = nullptr;

		seconds = std::strtol(args.positional(1), &end, 10);
		if (!end || *end || seconds < 1 || seconds > 86400)
			return usage_error("hold", "SECONDS: 1 to 86400");
	}
	std::signal(SIGTERM, on_signal);
	std::signal(SIGINT, on_signal);

	ContextPtr ctx = open_device(device, &why);
	if (!ctx) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	if (!hold_setup(r, ctx.get(), h))
		return r.finish();
	std::printf("holding %s for %ld s (pid %d)\n", device, seconds, int(getpid()));
	std::fflush(stdout);

	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	while (!hold_stop && !removed && std::chrono::steady_clock::now() < end) {
		ibv_async_event ev{};
		int n = wait_async_event(ctx.get(), 200, &ev);

		if (n < 0 && errno != EINTR) {
			r.info("reading the async fd failed: %s", errno_name(errno).c_str());
			break;
		}
		if (n <= 0)
			continue;
		ibv_event_type type = ev.event_type;
		ibv_ack_async_event(&ev);
		r.info("async event %s", ibv_event_type_str(type));
		if (type == IBV_EVENT_DEVICE_FATAL) {
			removed = true;
			std::printf("device removed (IBV_EVENT_DEVICE_FATAL)\n");
		}
	}
	if (removed)
		touch_dead_objects(r, ctx.get(), h);
	release(r, h, removed ? "after removal" : "at the end");
	int ret = ibv_close_device(ctx.release());
	r.expect_ok("hold.close", ret, "ibv_close_device");
	if (args.has("expect-removal"))
		r.check(removed, "hold.removal", "the device was removed while held (%s)",
		        removed ? "IBV_EVENT_DEVICE_FATAL" : "no fatal event");
	std::printf("released\n");
	return r.finish();
}

} /* namespace vc */
