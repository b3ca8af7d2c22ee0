/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libibverbs plumbing of sroce-integrity: owning pointers, the device and
 * its GID, registered buffers, completion queues whose waits are bounded,
 * and RC/UC queue pairs brought up to RTS against a peer.
 */
#pragma once

#include "mapping.h"
#include "verbs_helpers.h"

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

namespace integ
{

struct Options;

/* The shared helpers of tools/common/verbs_helpers.h. */
using namespace sroce_tools;

/* The opened device, its protection domain and the GID we talk from. */
struct Device {
	std::string name;
	ContextPtr ctx;
	PdPtr pd;
	ibv_device_attr attr{};
	ibv_port_attr port{};
	int gid_index = -1;
	ibv_gid gid{};

	bool open(const Options &opt, std::string *why);
};

/* Page-aligned anonymous memory, zero-filled. */
class Buffer : public Mapping
{
      public:
	/* @len rounded up to whole pages, readable and writable. */
	bool alloc(size_t len, std::string *why);
};

MrPtr reg_mr(ibv_pd *pd, const Buffer &buf, unsigned access, std::string *why);

/*
 * A CQ with its own completion channel. wait() polls, and when the CQ is
 * empty arms it and sleeps on the channel (at most 20 ms at a time, so a
 * lost event costs latency, not a hang) until @deadline_ms.
 */
class Cq
{
      public:
	bool create(ibv_context *ctx, int cqe, std::string *why);
	/* Completions polled (0: deadline passed), or -1 when polling failed. */
	int wait(ibv_wc *wc, int n, int64_t deadline_ms);
	int poll(ibv_wc *wc, int n) { return ibv_poll_cq(cq_.get(), n, wc); }
	ibv_cq *get() const { return cq_.get(); }
	void reset()
	{
		cq_.reset();
		channel_.reset();
	}

      private:
	ChannelPtr channel_;
	CqPtr cq_;
};

/* What one side tells the other about its QP. */
struct QpEnd {
	uint32_t qpn = 0;
	uint32_t psn = 0;
	ibv_gid gid{};
};

/* Connection attributes; the defaults are those of the traffic run. */
struct QpParams {
	ibv_qp_type type = IBV_QPT_RC;
	uint32_t path_mtu = 1024; /* bytes */
	unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	/*
	 * 4.096 us << 16 = 268 ms: with retry_cnt 7, 2.1 s without progress
	 * before IBV_WC_RETRY_EXC_ERR. 67 ms (ibv_rc_pingpong's 14) failed
	 * under loss when a TCG guest on a loaded 2-core host stalled for
	 * half a second (an rdma_rxe peer ACKing late).
	 */
	uint8_t timeout = 16;
	uint8_t retry_cnt = 7;
	uint8_t rnr_retry = 7;      /* 7: retry for ever */
	uint8_t min_rnr_timer = 12; /* 0.64 ms */
	uint8_t max_rd_atomic = 16;
	uint8_t max_dest_rd_atomic = 16;
};

/* @srq: receives come from it (want.max_recv_* are then ignored). */
QpPtr create_qp(Device &dev, Cq &send_cq, Cq &recv_cq, ibv_qp_type type, const ibv_qp_cap &want,
                ibv_qp_cap *granted, std::string *why, ibv_srq *srq = nullptr);
/* An SRQ of at least @max_wr receives of @max_sge SGEs; *granted_sge set. */
SrqPtr create_srq(Device &dev, uint32_t max_wr, uint32_t max_sge, uint32_t *granted_sge,
                  std::string *why);
/* RESET -> INIT -> RTR -> RTS towards @remote. */
bool connect_qp(ibv_qp *qp, const Device &dev, const QpParams &p, const QpEnd &local,
                const QpEnd &remote, std::string *why);

const char *wc_status_name(int status);
const char *wc_opcode_name(int opcode);

} // namespace integ
