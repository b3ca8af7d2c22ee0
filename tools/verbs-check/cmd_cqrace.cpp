// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check cqrace DEV [--rounds N]: a CQ resized while a POLL_CQ
 * command on it stands between loading the ring's header and using it.
 * uverbs runs both commands with the CQ read-locked, so they run at once;
 * the resize must not free the ring the poll still uses. The window is
 * widened by sroce's debugfs knob fault/poll_delay_ms, which the caller
 * sets (selftests/cq_resize_race.sh); a wait counts in the port counter
 * faults_injected as it begins.
 *
 * Each round: a CQ of 64 entries; a thread sends POLL_CQ for it (raw
 * command: the provider polls the mapped ring and never enters the
 * kernel); once faults_injected shows the poll's wait began, the CQ is
 * resized to 4096 entries, which replaces the ring and unmaps the old one
 * (the provider's resize), so the kernel frees it unless the poll still
 * holds it. Checked: the poll's wait began within 10 s; the resize and the
 * poll succeed (the poll returns no completion: a user CQ's CQEs stay in
 * the ring); the poll's wait had not ended when the resize was issued
 * (else the window was missed); afterwards the CQ is empty and resizes
 * back to 64. The kernel's side (no use-after-free: KASAN on the debug
 * kernel) is judged by the rig from the guest's log.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace vc
{
namespace
{

constexpr int kSmall = 64;
constexpr int kLarge = 4096;

/* The port counter faults_injected of @dev, or -1. */
long long faults_injected(const std::string &dev)
{
	std::ifstream f("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/faults_injected");
	long long v = -1;

	if (!(f >> v))
		return -1;
	return v;
}

/* POLL_CQ through the write() command; the completion count or -errno. */
int raw_poll_cq(ibv_cq *cq)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_poll_cq cmd;
	} req{};
	/* The response: a count, then up to ne work completions. */
	alignas(ib_uverbs_poll_cq_resp)
	    uint8_t out[sizeof(ib_uverbs_poll_cq_resp) + sizeof(ib_uverbs_wc)] = {};
	ib_uverbs_poll_cq_resp head{};

	req.hdr.command = IB_USER_VERBS_CMD_POLL_CQ;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(out) / 4;
	req.cmd.response = reinterpret_cast<uintptr_t>(out);
	req.cmd.cq_handle = cq->handle;
	req.cmd.ne = 1;
	if (write(cq->context->cmd_fd, &req, sizeof(req)) != ssize_t(sizeof(req)))
		return -errno;
	std::memcpy(&head, out, sizeof(head));
	return int(head.count);
}

int64_t now_ms()
{
	timespec ts{};

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool one_round(Report &r, ibv_context *ctx, const std::string &dev, int round)
{
	const std::string name = "cqrace.round" + std::to_string(round);
	CqPtr cq(ibv_create_cq(ctx, kSmall, nullptr, nullptr, 0));

	if (!cq)
		return r.check(false, name, "ibv_create_cq: %s", errno_name(null_errno()).c_str());
	long long before = faults_injected(dev);
	if (before < 0)
		return r.check(false, name, "no faults_injected counter for %s", dev.c_str());

	int poll_ret = 0;
	int64_t poll_end = 0;
	std::thread poller([&] {
		poll_ret = raw_poll_cq(cq.get());
		poll_end = now_ms();
	});
	int64_t deadline = now_ms() + 10000;
	while (faults_injected(dev) <= before && now_ms() < deadline)
		usleep(2000);
	bool began = faults_injected(dev) > before;
	int64_t t0 = now_ms();
	int rz = began ? ibv_resize_cq(cq.get(), kLarge) : -1;
	int64_t t1 = now_ms();
	poller.join();

	if (!r.check(began, name + ".window",
	             "the POLL_CQ's wait began (faults_injected %lld -> %lld)", before,
	             faults_injected(dev)))
		return false;
	r.info("round %d: resize took %lld ms; the poll ended %lld ms after the resize was issued",
	       round, (long long)(t1 - t0), (long long)(poll_end - t0));
	bool ok = r.check(poll_end > t0, name + ".inside",
	                  "the resize was issued while the poll waited (poll ended %+lld ms after)",
	                  (long long)(poll_end - t0));
	ok &= r.expect_ok(name + ".resize", rz, "ibv_resize_cq to 4096 under a POLL_CQ");
	ok &= r.check(poll_ret == 0, name + ".poll", "POLL_CQ returned %d (want 0: no completion)",
	              poll_ret);
	ibv_wc wc{};
	int n = ibv_poll_cq(cq.get(), 1, &wc);
	ok &= r.check(n == 0, name + ".after", "the resized CQ polls empty (%d)", n);
	ok &= r.expect_ok(name + ".shrink", ibv_resize_cq(cq.get(), kSmall),
	                  "ibv_resize_cq back to 64");
	return ok;
}

} /* namespace */

int cmd_cqrace(int argc, char **argv)
{
	std::string why;
	Args args;
	Report r("cqrace");
	long rounds;

	if (!args.parse(argc, argv, {{"rounds", true}}, &why))
		return usage_error("cqrace", why);
	if (args.num_positional() != 1)
		return usage_error("cqrace", "want a device name");
	if (!args.number("rounds", 3, 1, 100, &rounds, &why))
		return usage_error("cqrace", why);
	const std::string dev = args.positional(0);
	ContextPtr ctx = open_device(dev.c_str(), &why);
	if (!ctx) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	for (long i = 1; i <= rounds; i++)
		if (!one_round(r, ctx.get(), dev, int(i)))
			break;
	return r.finish();
}

} /* namespace vc */
