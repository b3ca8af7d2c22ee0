/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The data path in testable pieces: WQE builders, the CQE translator, ring
 * posting and polling. Nothing here issues a system call except
 * qp_kernel_entry(), and nothing allocates; all of it works on any
 * struct Ring, so the unit tests run it against rings in plain memory.
 */
#ifndef SROCE_DATAPATH_H
#define SROCE_DATAPATH_H

#include <sroce/sroce_ext.h>
#include "objects.h"

#include <cstdint>
#include <cstring>

namespace sroce
{

/* ---- Send work requests ------------------------------------------------ */

enum class SendKind : uint8_t {
	invalid, /* rejected with EINVAL */
	send,
	rdma_write,
	rdma_read,
	atomic,
	atomic_write, /* 8 bytes from the WR itself: ibv_wr_atomic_write() */
	flush,        /* no data: sroce_wr_flush() (see flush_wr_* below) */
	local_inv,
	bind_mw,
};

enum : uint8_t {
	SEND_OP_SGES = 1 << 0,    /* carries a gather (or scatter) list */
	SEND_OP_INLINE = 1 << 1,  /* IBV_SEND_INLINE allowed */
	SEND_OP_IMM = 1 << 2,     /* ex.imm_data from wr->imm_data */
	SEND_OP_INV = 1 << 3,     /* ex.invalidate_rkey from wr->invalidate_rkey */
	SEND_OP_EX_ONLY = 1 << 4, /* only through the ibv_wr_* API, never ibv_post_send */
};

struct SendOpInfo {
	SendKind kind;
	uint16_t qp_types; /* bit (1 << ibv_qp_type) per QP type allowed */
	uint8_t flags;     /* SEND_OP_* */
};

/* Entries of the opcode table: ibv_wr_opcode values 0 .. 15. */
constexpr unsigned SEND_OPCODE_COUNT = 16;

/* The table entry for @opcode; an invalid entry for any out-of-range value. */
const SendOpInfo &send_op_info(uint32_t opcode);

/*
 * The opcode exactly as the user stored it. C callers may store any int in
 * the enum field; in C++ an out-of-range enum value must not be loaded.
 */
inline uint32_t wr_opcode(const ibv_send_wr &wr)
{
	uint32_t v;

	static_assert(sizeof(wr.opcode) == sizeof(v));
	memcpy(&v, &wr.opcode, sizeof(v));
	return v;
}

/* Stores a raw opcode value, for the same reason. */
inline void set_wr_opcode(ibv_send_wr *wr, uint32_t opcode)
{
	memcpy(&wr->opcode, &opcode, sizeof(opcode));
}

/*
 * Validates one send WR for a QP of @qp_type posting into @sq. Returns 0 or
 * EINVAL; on success *inline_len is the number of inline bytes to gather.
 */
int send_wr_check(const WorkQueue &sq, ibv_qp_type qp_type, const ibv_send_wr &wr,
                  uint32_t *inline_len);

/* Fills the WQE at @wqe for a WR that passed send_wr_check(). */
void send_wqe_build(sroce_send_wqe *wqe, const ibv_send_wr &wr, ibv_qp_type qp_type,
                    uint32_t inline_len, bool sq_sig_all);

struct SqPostResult {
	int err;            /* 0, or the positive errno for *bad_wr */
	bool ring_doorbell; /* the kernel's send engine asked for a wakeup */
};

/*
 * Posts a WR list into @sq: validates and builds each WQE, publishes the new
 * prod once with a release store, then (full barrier) reads kflags to decide
 * whether the caller must ring the doorbell. On error, the WRs before
 * *bad_wr are posted and published, and *bad_wr is the first one that is not.
 */
SqPostResult sq_post(WorkQueue &sq, ibv_qp_type qp_type, bool sq_sig_all, ibv_send_wr *wr,
                     ibv_send_wr **bad_wr);

/*
 * The data path's kernel entry, an empty post command on the QP handle:
 * POST_SEND (@recv false) is the SQ doorbell; POST_RECV (@recv true) makes
 * the kernel flush the RQ of a QP in the error state.
 */
int qp_kernel_entry(int cmd_fd, uint32_t qp_handle, bool recv);

/* The ibv_wr_* operations sroce executes (post_send_ex.cpp). */
constexpr uint64_t QP_EX_SUPPORTED_OPS =
    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE | SROCE_QP_EX_WITH_FLUSH;

/*
 * A FLUSH work request in the ibv_send_wr the ibv_wr_* builders fill (it
 * never comes from ibv_post_send, which has no fields for it):
 * wr.atomic.remote_addr and rkey name the range, compare_add holds its
 * length and swap the placement type | selectivity level << 8.
 */
inline uint64_t flush_wr_swap(uint8_t type, uint8_t level)
{
	return uint64_t(type) | uint64_t(level) << 8;
}
inline uint8_t flush_wr_type(const ibv_send_wr &wr)
{
	return uint8_t(wr.wr.atomic.swap);
}
inline uint8_t flush_wr_level(const ibv_send_wr &wr)
{
	return uint8_t(wr.wr.atomic.swap >> 8);
}

/* Fills the ibv_qp_ex builders of a QP created with send_ops_flags. */
int qp_ex_setup(Qp &qp, uint64_t send_ops_flags);

/* ---- Receive work requests -------------------------------------------- */

int recv_wr_check(const WorkQueue &rq, const ibv_recv_wr &wr);
void recv_wqe_build(sroce_recv_wqe *wqe, const ibv_recv_wr &wr);
/* Posts a WR list into an RQ or SRQ ring; never enters the kernel. */
int rq_post(WorkQueue &rq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);

/* ---- Completions -------------------------------------------------------- */

/* CQE opcode -> ibv_wc_opcode; false for values sroce never produces. */
bool wc_opcode_from_cqe(uint8_t opcode, ibv_wc_opcode *out);
/* CQE status -> ibv_wc_status; unknown values become IBV_WC_GENERAL_ERR. */
ibv_wc_status wc_status_from_cqe(const sroce_cqe &cqe);
/* SROCE_CQE_F_* -> IBV_WC_* flags. */
unsigned int wc_flags_from_cqe(uint16_t flags);
/* A private copy of a CQE -> ibv_wc. */
void cqe_to_wc(const sroce_cqe &cqe, ibv_wc *wc);

/*
 * Reads up to @num_entries completions, frees their slots with one release
 * store of cons. Returns the number read, or -1 if the kernel's prod index
 * is impossible, the CQ has no ring, or it overflowed and is empty.
 */
int cq_poll(Cq &cq, int num_entries, ibv_wc *wc);

/*
 * Busy polling (sroce-abi.h): while the kernel offers it, counts an empty
 * poll of @cq and, on every CQ_BUSY_POLL_AFTER-th one, has the kernel
 * poll the network for @cq (IB_USER_VERBS_CMD_POLL_CQ). True when it did:
 * the caller then reads the ring again. After a failed command it never
 * tries again for this CQ.
 */
constexpr uint32_t CQ_BUSY_POLL_AFTER = 16;
bool cq_empty_poll(Cq &cq);

/*
 * Drops the completions of QP @qpn from @cq, keeping the others in order:
 * a QP that goes to RESET leaves nothing behind in its CQs (what hardware
 * providers do, and what rdma-core's tests expect of a QP restarted after
 * an error).
 */
void cq_clean(Cq &cq, uint32_t qpn);

/* The uflags value after a request: ARM_NEXT is never weakened to SOLICITED. */
uint32_t cq_arm_value(uint32_t current, bool solicited_only);
/* Arms the CQ of @ring: stores the new uflags value, then a full barrier. */
void cq_arm(const Ring &ring, bool solicited_only);

} /* namespace sroce */

#endif /* SROCE_DATAPATH_H */
