// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Ring, doorbell and timing helpers of sroce-verbs-check (see ring_util.h).
 */
#include "ring_util.h"

#include "report.h"

#include <rdma/ib_user_verbs.h>
#include <sroce/sroce_ring.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace vc
{

std::set<MapRange> uverbs_mappings()
{
	std::ifstream maps("/proc/self/maps");
	std::set<MapRange> out;
	std::string line;

	while (std::getline(maps, line)) {
		unsigned long start, end;

		if (line.find("uverbs") == std::string::npos ||
		    std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2)
			continue;
		out.insert({start, end});
	}
	return out;
}

long mapping_offset(const void *start)
{
	std::ifstream maps("/proc/self/maps");
	std::string line;

	while (std::getline(maps, line)) {
		unsigned long from, to, offset;

		if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx", &from, &to, &offset) == 3 &&
		    from == reinterpret_cast<uintptr_t>(start) &&
		    line.find("uverbs") != std::string::npos)
			return long(offset);
	}
	return -1;
}

sroce_ring_hdr *new_ring(const std::set<MapRange> &before, size_t bytes)
{
	for (const MapRange &m : uverbs_mappings())
		if (!before.count(m) && m.second - m.first == bytes)
			return reinterpret_cast<sroce_ring_hdr *>(m.first);
	return nullptr;
}

size_t ring_bytes(uint32_t entries, uint32_t stride)
{
	return sroce_ring_bytes(entries, stride, size_t(sysconf(_SC_PAGESIZE)));
}

int doorbell(ibv_qp *qp)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_post_send cmd;
	} req{};
	ib_uverbs_post_send_resp resp{};

	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = reinterpret_cast<uintptr_t>(&resp);
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &req, sizeof(req)) == ssize_t(sizeof(req)) ? 0 : errno;
}

int64_t now_ns()
{
	timespec ts{};

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

QpPtr ring_qp(ibv_pd *pd, ibv_cq *scq, ibv_cq *rcq, uint32_t send_wr, uint32_t recv_wr,
              sroce_ring_hdr **sq, sroce_ring_hdr **rq, std::string *why)
{
	ibv_qp_init_attr ia = rc_qp_init(scq, send_wr, recv_wr);

	ia.recv_cq = rcq;
	const std::set<MapRange> before = uverbs_mappings();
	QpPtr qp(ibv_create_qp(pd, &ia));
	if (!qp) {
		*why = "ibv_create_qp: " + errno_name(null_errno());
		return nullptr;
	}
	*sq = new_ring(before, ring_bytes(sroce_ring_entries_for(send_wr, SROCE_RING_MAX_ENTRIES),
	                                  sroce_send_wqe_stride(1, 0)));
	*rq = new_ring(before, ring_bytes(sroce_ring_entries_for(recv_wr, SROCE_RING_MAX_ENTRIES),
	                                  sroce_recv_wqe_stride(1)));
	if (!*sq || !*rq) {
		*why = std::string("its rings not found (SQ ") + (*sq ? "found" : "missing") +
		       ", RQ " + (*rq ? "found" : "missing") + ")";
		return nullptr;
	}
	return qp;
}

double Sleeper::baseline_ms()
{
	usleep(300000);
	const double gap = max_gap_ms();
	reset();
	return gap;
}

void Sleeper::stop()
{
	if (thread_.joinable()) {
		stop_ = true;
		thread_.join();
	}
}

void Sleeper::loop()
{
	const timespec ms{0, 1000000};
	sched_param sp{};

	sp.sched_priority = 50;
	if (realtime_ && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		demoted_ = true;
	int64_t last = now_ns();

	while (!stop_) {
		nanosleep(&ms, nullptr);
		const int64_t t = now_ns();
		const int64_t gap = t - last - 1000000;

		if (gap > max_ns_)
			max_ns_ = gap;
		last = t;
	}
}

double sleeper_limit_ms(double baseline_ms)
{
	return std::max(100.0, 4 * baseline_ms);
}

} /* namespace vc */
