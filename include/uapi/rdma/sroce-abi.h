/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * sroce: software RoCEv2 device. User/kernel ABI.
 *
 * Every queue (send queue, receive queue, shared receive queue, completion
 * queue) is one ring in memory the kernel allocates and the provider maps
 * with mmap() on the uverbs command fd, at the offset returned in the create
 * response. A ring is a struct sroce_ring_hdr followed by a power-of-two
 * number of fixed-size entries.
 *
 * Indices are free-running 32-bit counters; the slot of index i is
 * i & (num_entries - 1). A ring is empty when prod == cons and full when
 * prod - cons == num_entries.
 *
 * Ownership and memory ordering (see Documentation/uapi.rst):
 *
 *   ring      producer (writes prod)   consumer (writes cons)
 *   SQ        user                     kernel
 *   RQ, SRQ   user                     kernel
 *   CQ        kernel                   user
 *
 * - A producer fills an entry, then publishes it with a release store of
 *   prod. A consumer reads prod with an acquire load before reading entries.
 * - A consumer finishes with an entry, then frees it with a release store of
 *   cons; the producer reads cons with an acquire load before reusing slots.
 * - The kernel keeps private copies of every index it owns and never trusts
 *   a value read from the mapped page: a user index is accepted only if
 *   0 <= prod - cons <= num_entries against the kernel's private cons (and,
 *   for a send queue, only if it does not move back over WQEs the kernel
 *   has already fetched), and every entry is copied to kernel memory and
 *   validated before use.
 * - The send queue's cons advances only when a WQE is completed (its CQE
 *   written, or its unsignalled completion passed), so a slot is free for
 *   reuse exactly when libibverbs semantics say so.
 *
 * Doorbell (send queue): the kernel sets SROCE_SQ_NEED_WAKEUP in the SQ's
 * kflags when its send engine has drained the queue and stopped, unless
 * answers it awaits will restart the engine (it then reads prod again on
 * their arrival, and the flag stays clear). After
 * publishing prod, the provider issues a full memory barrier, reads kflags
 * and, only if SROCE_SQ_NEED_WAKEUP is set, enters the kernel with an empty
 * IB_USER_VERBS_CMD_POST_SEND (wr_count 0). The engine, before stopping,
 * sets the flag, issues a full barrier and re-reads prod; so either the
 * engine sees the new WQE or the provider sees the flag.
 *
 * Completion notification (CQ): the provider arms a CQ by storing
 * SROCE_CQ_ARM_NEXT or SROCE_CQ_ARM_SOLICITED into the CQ's uflags followed
 * by a full barrier; no system call. After publishing a CQE and a full
 * barrier, the kernel reads uflags and, when the CQE satisfies the arm
 * request, clears it with a compare-and-exchange and signals the completion
 * channel.
 *
 * Busy polling (CQ): while SROCE_CQ_F_BUSY_POLL is set in a CQ's kflags, a
 * provider that keeps finding the CQ empty may enter the kernel with
 * IB_USER_VERBS_CMD_POLL_CQ for one entry; the kernel then polls the
 * netdev's receive queue itself until a CQE is published (it is read from
 * the ring as usual) or a time limit passes.
 */
#ifndef SROCE_ABI_USER_H
#define SROCE_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#define SROCE_UVERBS_ABI_VERSION	1

/* Name of the ib_device sysfs attribute that identifies an sroce device. */
#define SROCE_SYSFS_DRIVER_ATTR		"sroce_abi"

#define SROCE_CACHE_LINE		64

struct sroce_ring_hdr {
	/* Cache line 0: written by the producer only. */
	__u32 prod;
	__u32 rsvd0[15];
	/* Cache line 1: written by the consumer only. */
	__u32 cons;
	__u32 rsvd1[15];
	/* Cache line 2: flags. */
	__u32 kflags;		/* written by the kernel: SROCE_SQ_*, SROCE_CQ_F_* */
	__u32 uflags;		/* written by user space: SROCE_CQ_ARM_* */
	__u32 rsvd2[14];
};

#define SROCE_RING_HDR_SIZE		192

/* kflags of a send queue */
#define SROCE_SQ_NEED_WAKEUP		(1U << 0)
/* kflags of a completion queue */
#define SROCE_CQ_F_OVERFLOW		(1U << 0)
/*
 * The kernel busy-polls the network for this CQ: after a run of empty
 * polls the provider may enter the kernel with IB_USER_VERBS_CMD_POLL_CQ
 * (ne 1), which returns no work completion (count 0) once a CQE is in the
 * ring or the module's busy_poll time has passed. Cleared when busy
 * polling is turned off.
 */
#define SROCE_CQ_F_BUSY_POLL		(1U << 2)
/*
 * kflags of an SQ and RQ: the QP is in the error state. WQEs posted now
 * are completed with IB_WC_WR_FLUSH_ERR when user space enters the kernel
 * after posting: an empty IB_USER_VERBS_CMD_POST_SEND (SQ) or
 * IB_USER_VERBS_CMD_POST_RECV (RQ). Cleared when the QP is reset.
 */
#define SROCE_RING_F_FLUSH		(1U << 1)
/* kflags of any work queue: the kernel found a bad index or WQE */
#define SROCE_RING_F_ERROR		(1U << 31)

/* uflags of a completion queue: values, not bits */
#define SROCE_CQ_ARM_NONE		0
#define SROCE_CQ_ARM_SOLICITED		1
#define SROCE_CQ_ARM_NEXT		2

struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

#define SROCE_NETWORK_IPV4		1
#define SROCE_NETWORK_IPV6		2

/* Address vector: everything the kernel needs to address a UD packet. */
struct sroce_av {
	__u8 dgid[16];		/* IPv4-mapped (::ffff:a.b.c.d) for IPv4 */
	__u32 flow_label;
	__u8 dmac[6];
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 network_type;	/* SROCE_NETWORK_IPV4 / IPV6 */
	__u16 reserved;
};

/* Send WQE flags: the same values as enum ibv_send_flags / ib_send_flags. */
#define SROCE_WQE_FENCE			(1U << 0)
#define SROCE_WQE_SIGNALED		(1U << 1)
#define SROCE_WQE_SOLICITED		(1U << 2)
#define SROCE_WQE_INLINE		(1U << 3)
#define SROCE_WQE_FLAGS_ALL		0xfU

/*
 * A send WQE: a 96-byte header then, at data[], either num_sge struct
 * sroce_sge or inline_len bytes of inline data. opcode takes the values of
 * enum ib_uverbs_wr_opcode (which equal enum ibv_wr_opcode). The entry size
 * (stride) is given in the create QP response.
 *
 * ATOMIC WRITE (SROCE_WR_ATOMIC_WRITE, RC only): wr.atomic.remote_addr
 * and rkey name the 8-byte aligned target, wr.atomic.compare_add holds
 * the 8 bytes to store exactly as they go on the wire, num_sge is 0.
 *
 * FLUSH (SROCE_WR_FLUSH, RC only, IBA Annex A19): wr.flush names the
 * remote range (remote_addr, length of at most 2^31 bytes, rkey; ignored
 * but for the rkey at level SROCE_FLUSH_MR), type is a non-zero set of
 * SROCE_FLUSH_GLOBAL / SROCE_FLUSH_PERSISTENT (the FETH's placement type)
 * and level SROCE_FLUSH_RANGE or SROCE_FLUSH_MR (its selectivity level);
 * num_sge is 0. The values are those of the kernel's IB_FLUSH_*.
 */
#define SROCE_WR_ATOMIC_WRITE		15	/* IB_UVERBS_WR_ATOMIC_WRITE */
#define SROCE_WC_ATOMIC_WRITE		9	/* IB_UVERBS_WC_ATOMIC_WRITE */
#define SROCE_WR_FLUSH			14	/* IB_UVERBS_WR_FLUSH */
#define SROCE_WC_FLUSH			8	/* IB_UVERBS_WC_FLUSH */

#define SROCE_FLUSH_GLOBAL		(1U << 0)
#define SROCE_FLUSH_PERSISTENT		(1U << 1)
#define SROCE_FLUSH_RANGE		0
#define SROCE_FLUSH_MR			1

struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 flags;
	__u32 num_sge;
	__u32 inline_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	} ex;
	__u32 xrc_srqn;		/* XRC initiator: the receiver's SRQ number */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;
			__u32 rkey;
			__u8 type;	/* SROCE_FLUSH_GLOBAL | _PERSISTENT */
			__u8 level;	/* SROCE_FLUSH_RANGE or _MR */
			__u16 reserved;
		} flush;
		struct {
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 ah_num;	/* 0: use av below */
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;
			__u32 rkey;	/* new rkey of the window */
			__u32 access;	/* IB_ACCESS_* */
		} bind_mw;
		__u8 raw[32];
	} wr;
	struct sroce_av av;	/* UD only */
	__u8 data[];
};

#define SROCE_SEND_WQE_HDR_SIZE		96

struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct sroce_sge sge[];
};

#define SROCE_RECV_WQE_HDR_SIZE		16

/* CQE flags (our own bit values, translated to ibv_/ib_ flags by each side) */
#define SROCE_CQE_F_WITH_IMM		(1U << 0)
#define SROCE_CQE_F_WITH_INV		(1U << 1)
#define SROCE_CQE_F_GRH			(1U << 2)
#define SROCE_CQE_F_SOLICITED		(1U << 3)

/*
 * A completion queue entry. status takes the values of enum ib_wc_status
 * (equal to enum ibv_wc_status), opcode those of enum ib_wc_opcode, which
 * equal enum ib_uverbs_wc_opcode / enum ibv_wc_opcode for every completion
 * a user QP can produce.
 */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u16 flags;		/* SROCE_CQE_F_* */
	__u32 byte_len;
	union {
		__be32 imm_data;
		__u32 invalidated_rkey;
	} ex;
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u8 sl;
	__u8 network_type;	/* SROCE_NETWORK_* of a UD/GSI receive */
	__u8 smac[6];
	__u16 vlan_id;
	__u32 vendor_err;
	__u32 reserved;
	__aligned_u64 timestamp;	/* ns, CLOCK_MONOTONIC_RAW based */
	__aligned_u64 kernel_qp;	/* kernel CQs only; 0 in user CQs */
};

#define SROCE_CQE_SIZE			64

/* Where one ring lives: mmap(NULL, size, ..., cmd_fd, offset). */
struct sroce_ring_info {
	__aligned_u64 offset;
	__u32 size;		/* bytes to map, header included */
	__u32 num_entries;	/* power of two */
	__u32 stride;		/* bytes per entry */
	__u32 reserved;
};

/* udata of IB_USER_VERBS_CMD_GET_CONTEXT */
struct sroce_alloc_ucontext_resp {
	__u32 abi_version;	/* SROCE_UVERBS_ABI_VERSION */
	__u32 ring_hdr_size;	/* SROCE_RING_HDR_SIZE */
	__u32 send_wqe_hdr_size;
	__u32 recv_wqe_hdr_size;
	__u32 cqe_size;
	__u32 max_inline;
	__u32 max_send_sge;
	__u32 max_recv_sge;
};

/* udata of IB_USER_VERBS_CMD_CREATE_CQ and RESIZE_CQ */
struct sroce_create_cq_resp {
	struct sroce_ring_info cq;
};

struct sroce_resize_cq_resp {
	struct sroce_ring_info cq;
};

/* udata of IB_USER_VERBS_CMD_CREATE_QP */
struct sroce_create_qp_cmd {
	__u32 flags;		/* must be 0 */
	__u32 reserved;
};

struct sroce_create_qp_resp {
	struct sroce_ring_info sq;	/* size 0 when the QP has no SQ */
	struct sroce_ring_info rq;	/* size 0 when the QP uses an SRQ */
	__u32 max_inline;		/* granted inline bytes */
	__u32 reserved;
};

/*
 * udata of IB_USER_VERBS_CMD_CREATE_SRQ; MODIFY_SRQ writes one through
 * struct sroce_modify_srq_cmd (below).
 */
struct sroce_create_srq_resp {
	struct sroce_ring_info rq;
	__u32 srq_num;
	__u32 reserved;
};

/*
 * udata (input) of IB_USER_VERBS_CMD_MODIFY_SRQ. uverbs gives MODIFY_SRQ no
 * response buffer (UAPI_DEF_WRITE_UDATA_I), so a resize (IB_SRQ_MAX_WR)
 * reports its ring through user memory: the kernel copies a struct
 * sroce_create_srq_resp to resp_addr. rq.size 0 there means the ring was
 * kept. resp_addr is 0 when no resize is requested.
 */
struct sroce_modify_srq_cmd {
	__aligned_u64 resp_addr;
};

/* udata of IB_USER_VERBS_CMD_CREATE_AH: the resolved address vector */
struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
	struct sroce_av av;
};

/*
 * Device memory (ibv_alloc_dm(3)): kernel memory the process maps. The
 * method UVERBS_METHOD_DM_ALLOC takes one driver attribute, where the
 * kernel writes the mmap offset of the new memory (a __u64); mapping the
 * length rounded up to whole pages there gives the process its view.
 * Copies to and from it (ibv_memcpy_to_dm/from_dm) are in units of
 * SROCE_DM_UNIT bytes (offset and length), as mlx5's.
 */
#define SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET	(1U << UVERBS_ID_NS_SHIFT)
#define SROCE_DM_UNIT				4

#endif /* SROCE_ABI_USER_H */
