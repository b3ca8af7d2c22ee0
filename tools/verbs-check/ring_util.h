/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers of the checks that reach into sroce's mapped rings and time what
 * the kernel does with them (cmd_ring.cpp, cmd_bound.cpp): finding a ring
 * in this process's address space, ringing a QP's doorbell without the
 * provider, a monotonic clock, and a thread that measures how long the
 * process was kept from running.
 */
#ifndef SROCE_VERBS_CHECK_RING_UTIL_H
#define SROCE_VERBS_CHECK_RING_UTIL_H

#include "verbs_util.h"

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace vc
{

using MapRange = std::pair<uintptr_t, uintptr_t>; /* [start, end) */

/* The uverbs mappings of this process (the rings). */
std::set<MapRange> uverbs_mappings();

/* The mapping of @bytes that appeared between @before and now; null if none. */
sroce_ring_hdr *new_ring(const std::set<MapRange> &before, size_t bytes);

/* The file offset of the uverbs mapping at @start (an mmap offset); -1 if none. */
long mapping_offset(const void *start);

/* Bytes of the mapping of a ring of @entries entries of @stride bytes. */
size_t ring_bytes(uint32_t entries, uint32_t stride);

/* An empty POST_SEND: the doorbell the provider rings when the kernel sleeps. */
int doorbell(ibv_qp *qp);

/* CLOCK_MONOTONIC in ns. */
int64_t now_ns();

/*
 * An RC QP on @scq and @rcq with rings of @send_wr send and @recv_wr
 * receive WQEs (one SGE each), its rings found in *sq and *rq. Null, with
 * the reason in @why, when any of them could not be had.
 */
QpPtr ring_qp(ibv_pd *pd, ibv_cq *scq, ibv_cq *rcq, uint32_t send_wr, uint32_t recv_wr,
              sroce_ring_hdr **sq, sroce_ring_hdr **rq, std::string *why);

/*
 * A thread that sleeps 1 ms at a time and records the longest it was kept
 * from running beyond that: on a single CPU, a system call or kernel work
 * that runs for long without letting the scheduler in shows up here. An
 * ordinary thread also waits while the scheduler gives the CPU to other
 * work by weight (a busy nice -20 worker gets 98% of it); a @realtime one
 * (SCHED_FIFO, as cyclictest measures) preempts any such work at once, so
 * only code that cannot be preempted keeps it waiting.
 */
class Sleeper
{
      public:
	explicit Sleeper(bool realtime = false) : realtime_(realtime), thread_([this] { loop(); })
	{
	}
	~Sleeper() { stop(); }
	Sleeper(const Sleeper &) = delete;
	Sleeper &operator=(const Sleeper &) = delete;

	double max_gap_ms() const { return double(max_ns_.load()) / 1e6; }
	/* A realtime sleeper that could not get SCHED_FIFO (not root). */
	bool demoted() const { return demoted_; }
	void reset() { max_ns_ = 0; }
	/* Its longest wait in 300 ms of an idle run, then a fresh start. */
	double baseline_ms();
	void stop();

      private:
	void loop();

	const bool realtime_;
	std::atomic<bool> demoted_{false};
	std::atomic<bool> stop_{false};
	std::atomic<int64_t> max_ns_{0};
	std::thread thread_; /* last: starts once the fields above exist */
};

/*
 * The longest a Sleeper may be kept waiting while the kernel works through
 * what user space sized: 100 ms, or 4 times its longest wait before the
 * work on a slower guest. Work of 2^17 to 2^20 entries done in one go with
 * the scheduler kept out shows up as 200 ms or more in a TCG guest.
 */
double sleeper_limit_ms(double baseline_ms);

} /* namespace vc */

#endif /* SROCE_VERBS_CHECK_RING_UTIL_H */
