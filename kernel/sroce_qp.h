/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: queue pairs: the QP and the state of its engines, and what
 * every layer of the data path may do with a QP (sroce_qp.c):
 * look it up, kick its work item, move it to the error state.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include "sroce_queue.h"
#include "sroce_mem.h"

/* Responder/requester addressing of a connected QP, resolved at RTR. */
struct sroce_path {
	struct sroce_av av;
	u8 sgid[16];
	u8 smac[6];
	u16 vlan_id;
	u16 udp_sport;
	int oif;	/* ifindex of the source GID's netdev (a VLAN's own) */
};

/*
 * A send WQE as the requester keeps it: the validated copy of the ring slot
 * (header and SGEs or inline data) plus its transmission state. Slots are
 * indexed like the SQ ring; a WQE's slot is live from fetch to completion.
 */
enum sroce_swqe_kind {
	SROCE_SWQE_SEND,
	SROCE_SWQE_WRITE,
	SROCE_SWQE_READ,
	SROCE_SWQE_ATOMIC,	/* also ATOMIC WRITE: one PSN, one answer */
	SROCE_SWQE_LOCAL,	/* LOCAL_INV, REG_MR: no packet */
};

struct sroce_swqe {
	u32 first_psn;
	u32 npsn;		/* PSNs consumed: packets, or READ responses */
	u32 length;		/* message length in bytes */
	u32 sent;		/* bytes sent (READ: bytes requested) */
	u32 done;		/* READ: response bytes placed */
	u8 kind;		/* enum sroce_swqe_kind */
	u8 wc_opcode;
	bool signaled;
	bool ud;
	bool failed;		/* complete with status when flushed */
	bool local_done;	/* SROCE_SWQE_LOCAL: executed */
	u8 flush_sent;		/* FLUSH: ICRCs sent, SROCE_FLUSH_SENT_* */
	u8 status;
	struct sroce_send_wqe w;	/* validated copy; data[] follows */
};

struct sroce_swqe_ring {
	u8 *slots;
	u32 slot_size;
};

/* Requester state; indices are SQ ring indices. */
struct sroce_req {
	u32 psn;		/* next PSN to send */
	u32 psn_max;		/* PSN after the highest ever sent */
	u32 idx;		/* WQE being sent or next to send */
	u32 fetch_end;		/* slots [sq.idx, fetch_end) are valid */
	u32 started_end;	/* WQEs [sq.idx, started_end) have PSNs */
	bool fetched;		/* WQE idx has been started */
	u32 rd_atomic;		/* outstanding READ/atomic WQEs */
	u32 noack_pkts;		/* packets since the last AckReq */
	u32 pkts;		/* packets built (wraps; sroce_retry_stopped()) */
	bool blocked;		/* stopped until an answer arrives */
	bool run_on_ack;	/* look for new WQEs on the next answer */
	bool flush_rxe;		/* FLUSH with rdma_rxe's ICRC (sroce_req.c) */
	bool flush_known;	/* a FLUSH was answered: keep that ICRC */
	bool nomem;		/* stopped: no packet buffer (sroce_retry_nomem()) */
};

#define SROCE_FLUSH_SENT_IBA	BIT(0)
#define SROCE_FLUSH_SENT_RXE	BIT(1)

/* Completer state (the SQ's published cons is sq.idx = oldest WQE). */
struct sroce_comp {
	u32 psn;		/* oldest unacknowledged PSN */
	u8 retry_left;
	u8 rnr_retry_left;
	bool rnr_wait;
	bool implied_nak;	/* rewound for a lost READ/atomic response */
	bool rewound;		/* went back to comp.psn, no progress since */
	bool odp_resend;	/* an answer dropped for an ODP fault */
	bool stale_answers;	/* answers came that moved nothing */
	bool probe;		/* after an ACK timeout: one packet, then wait */
	u32 probe_end;		/* req.psn_max at the timeout */
	bool wake_req;		/* an answer unblocked the requester */
	u8 tlp_sent;		/* tail probes sent in this stall */
	bool rtt_timing;	/* rtt_start/rtt_psn hold a sample under way */
	bool rtt_hold;		/* a loss is being recovered: no sample until */
	u32 rtt_hold_psn;	/* ...this PSN is answered */
	u32 tlp_psn;		/* comp.psn when the tail probe was armed */
	u32 rtt_psn;		/* the sample ends when this PSN is answered */
	u32 stop_pkts;		/* req.pkts at the requester's last stop */
	u32 stop_psn_max;	/* req.psn_max at the requester's last stop */
	u64 rtt_start;		/* ns: the requester stopped with rtt_psn out */
	u64 srtt;		/* ns: smoothed stop-to-answer time, 0: none yet */
	struct timer_list rto;		/* local ACK timeout */
	struct timer_list rnr_timer;
	struct timer_list tlp;		/* tail probe (sroce_retry_tlp_fire()) */
	struct timer_list nomem;	/* the requester tries again */
};

/*
 * A READ, atomic, ATOMIC WRITE or FLUSH request the responder has accepted
 * (IBA 9.7.5.1.2): its answer goes out in its turn, and is kept so that a
 * duplicate is answered again. CMP_SWAP and FETCH_ADD are executed in
 * their turn too, after every earlier READ has been read.
 */
struct sroce_res {
	bool valid;
	bool atomic;		/* CMP_SWAP or FETCH_ADD: an atomic ACK */
	bool cmp_swap;
	bool executed;		/* atomic: done, @orig holds the result */
	bool failed;		/* atomic: executing it failed (NAK in its turn) */
	u32 first_psn;
	u32 npsn;
	u32 msn;		/* the MSN its answers carry */
	u64 va;
	u32 rkey;
	u32 length;
	u32 sent;		/* READ response bytes sent */
	u64 compare;		/* atomic operands */
	u64 swap_add;
	u64 orig;		/* atomic: value before the operation */
	u32 xrc_srqn;		/* XRC target: whose PD checks the rkey */
};

struct sroce_resp {
	u32 epsn;		/* next expected PSN */
	u32 msn;
	bool in_send;		/* a multi-packet SEND is in progress */
	bool in_write;		/* a multi-packet WRITE is in progress */
	bool have_wqe;
	u32 wqe_srqn;		/* XRC target: the SRQ the held WQE came from */
	u32 write_srqn;		/* ...and the one a WRITE in progress names */
	bool odp_wait;		/* answers wait for an ODP fault's kick */
	bool nak_sent;		/* one sequence NAK per gap... */
	u32 oos_max;		/* ...highest PSN dropped behind it */
	unsigned long nak_at;	/* jiffies when it (or its repeat) was sent */
	bool last_wqe_sent;	/* SRQ: IB_EVENT_QP_LAST_WQE_REACHED raised */
	struct sroce_rwqe rwqe;
	u64 write_va;		/* next byte of an RDMA WRITE */
	u32 write_left;
	u32 write_rkey;
	u32 write_len;		/* total length (for WRITE_WITH_IMM's CQE) */
	struct sroce_res *res;	/* max_dest_rd_atomic entries */
	u32 res_n;
	u32 res_head;		/* next entry to use, below res_n */
	u32 res_pending;	/* entries before res_head still to answer */
	struct sroce_res *replay;	/* duplicate READ being answered again */
	/*
	 * An ACK, NAK or RNR NAK held back behind answers still to go out
	 * (responses leave in PSN order, IBA 9.7.5.1); with ans_fatal the
	 * QP fails once the NAK is out, and takes no request meanwhile.
	 */
	bool ans_owed;
	bool ans_fatal;
	u8 ans_syndrome;
	u32 ans_psn;
	u32 ans_msn;
	/* Built, to be sent in this order (sroce_ack_tx_claim()). */
	struct sk_buff_head txq;
	bool tx_busy;		/* a context is sending from txq */
	/* Delayed ACK (sroce_ack_hold()); the flags are read unlocked. */
	bool ack_delayed;	/* an ACK of epsn - 1 waits for our requests */
	bool pingpong;		/* requests are answered by requests */
	bool rx_idle;		/* the last request came with our SQ idle */
	u8 pp_credit;		/* exchanges seen that look like ping-pong */
	u8 pp_need;		/* ...needed to enter it: doubles on each exit */
	struct timer_list dack;	/* ends a delay (sroce_ack_dack_fire()) */
};

struct sroce_srq;

/*
 * What a lookup by QP number reaches before it holds a reference: the QP's
 * reference count, apart from the QP. The RDMA core frees the QP itself
 * (kfree, no grace period) as soon as sroce_destroy_qp() returns, and a
 * lookup under RCU (a packet from a peer, the debugfs listing) may have
 * loaded the pointer just before the QP left qp_xa. This part is freed an
 * RCU grace period after destroy (kfree_rcu: destroy does not wait for
 * it), so such a lookup finds the count at zero and lets go without
 * touching the QP (qp_lookup_race.sh: with the count in the QP, KASAN
 * reported a use-after-free there). A grace period per destroy
 * (synchronize_rcu) would avoid it too, at some milliseconds per QP of a
 * teardown of thousands.
 */
struct sroce_qp_life {
	refcount_t refs;		/* lookups + 1 while the QP lives */
	struct completion released;	/* refs reached zero */
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

/* A reference more, on a QP the caller holds one on or found in a list. */
static inline bool sroce_qp_tryget(struct sroce_qp_life *life)
{
	return refcount_inc_not_zero(&life->refs);
}

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_dev *sdev;
	bool is_user;
	struct sroce_qp_life *life;	/* its references; in qp_xa */

	struct mutex modify_lock;	/* serialises modify/query/destroy */
	spinlock_t state_lock;		/* state as seen by the data path */
	enum ib_qp_state state;
	spinlock_t sq_lock;		/* requester + completer state */
	spinlock_t rq_lock;		/* kernel post_recv (producer) */
	spinlock_t sq_post_lock;	/* kernel post_send (producer) */

	bool sig_all;			/* IB_SIGNAL_ALL_WR: every WR completes */
	struct sroce_queue sq;
	struct sroce_queue rq;		/* absent when attached to an SRQ */
	u32 max_inline;
	u32 max_send_sge;
	u32 max_recv_sge;

	/* Attributes (struct ib_qp_attr subset the transport uses). */
	u32 qkey;
	u16 pkey_index;
	u32 dest_qpn;
	u64 serial;	/* unique per device, never reused (QP numbers are) */
	u32 sq_psn;
	u32 rq_psn;
	enum ib_mtu path_mtu;
	u32 conn_mtu;	/* RC/UC/XRC: bytes per packet, fixed at modify */
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sq_draining;
	int access_flags;
	struct sroce_path path;

	/* Data path (sroce_req.c, sroce_resp.c, sroce_comp.c). */
	struct work_struct work;	/* send engine, read responses, flush */
	struct sroce_swqe_ring shadow;	/* validated copies of sent WQEs */
	struct sroce_req req;		/* under sq_lock */
	unsigned long req_run;		/* SROCE_REQ_RUNNING, SROCE_REQ_AGAIN */
	struct sroce_comp comp;		/* under sq_lock */
	struct sroce_resp resp;		/* under resp_lock */
	spinlock_t resp_lock;
	struct dst_cache dst_cache;
	bool dst_cache_ready;
	/* The counter set of the rdma_counter the QP is bound to, if any. */
	struct sroce_counter_set __rcu *counter;
	/*
	 * XRC target: the SRQ named by the request being executed (a
	 * reference held meanwhile) and its PD, by which the request's keys
	 * are checked (IBA A14); NULL between requests. Under resp_lock.
	 */
	struct sroce_srq *xrc_srq;
	struct ib_pd *xrc_pd;
	/* ODP faults of the requester and the responder (sroce_sgl.c). */
	struct sroce_odp_fault odp_fault[SROCE_ODP_SIDES];
};

static inline struct sroce_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct sroce_qp, ibqp);
}

/* The reliable connected service: RC, XRC initiator and XRC target. */
static inline bool sroce_qp_rc(const struct sroce_qp *qp)
{
	enum ib_qp_type t = qp->ibqp.qp_type;

	return t == IB_QPT_RC || t == IB_QPT_XRC_INI || t == IB_QPT_XRC_TGT;
}

/* Connected (a path, a destination QP): reliable or UC. */
static inline bool sroce_qp_connected(const struct sroce_qp *qp)
{
	return sroce_qp_rc(qp) || qp->ibqp.qp_type == IB_QPT_UC;
}

/*
 * The PD that keys and receive buffers are checked against: an XRC
 * target has none of its own and uses the one of the SRQ the request
 * names (qp->xrc_pd, NULL outside a request: every check fails).
 */
static inline struct ib_pd *sroce_qp_pd(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT ? qp->xrc_pd : qp->ibqp.pd;
}

/* A per-QP counter set: one rdma_counter's values (sroce_stats.c). */
struct sroce_counter_set {
	struct sroce_stats stats;
	struct rcu_head rcu;
};

/*
 * Count @n events of counter @c for @qp: in the set of the counter it is
 * bound to ("rdma statistic qp ..."), else in the device's. The core shows
 * the port's totals as the device's values plus every counter's, so an
 * event is counted once, in one place. Any context.
 */
static inline void sroce_qp_count(struct sroce_qp *qp, enum sroce_counter c,
				  s64 n)
{
	struct sroce_counter_set *cnt;

	rcu_read_lock();
	cnt = rcu_dereference(qp->counter);
	atomic64_add(n, cnt ? &cnt->stats.v[c] : &qp->sdev->stats.v[c]);
	rcu_read_unlock();
}

void sroce_qp_count_err_nak(struct sroce_qp *qp, u8 code, bool sent);

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);
bool sroce_qp_to_error(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state next);
const char *sroce_qp_state_str(enum ib_qp_state s);

/* The state as the data path sees it. */
static inline enum ib_qp_state sroce_qp_state(struct sroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

void sroce_qp_ring_error(struct sroce_qp *qp);

/* The QP as the data path sees it (sroce_qp.c). */
extern struct workqueue_struct *sroce_wq;

void sroce_qp_kick(struct sroce_qp *qp);
void sroce_qp_fatal(struct sroce_qp *qp);

/*
 * The MTU in bytes packets of @qp are cut to. A connected QP's (RC, UC,
 * XRC) is fixed when its path MTU is set (capped by the port's active MTU
 * then): both ends must agree on it for the whole connection, since every
 * packet but a message's last must be exactly that long, and a duplicate
 * READ's offset is counted in it. It once followed the port, and a netdev
 * MTU change under a live QP made the two ends disagree (the peer NAKed
 * the first packet cut to the new size, sroce_ctrl_bond.sh); XRC QPs
 * followed the port for longer, ignoring their path MTU (xrc.sh,
 * path_mtu). A UD message fits the port's MTU of the moment.
 */
static inline u32 sroce_qp_mtu(struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return ib_mtu_enum_to_int(READ_ONCE(qp->sdev->active_mtu));
	return qp->conn_mtu;
}

/* Fix @qp's connected MTU from @path_mtu and the port's MTU now. */
static inline void sroce_qp_set_conn_mtu(struct sroce_qp *qp,
					 enum ib_mtu path_mtu)
{
	qp->path_mtu = path_mtu;
	qp->conn_mtu = ib_mtu_enum_to_int(min(READ_ONCE(qp->sdev->active_mtu),
					      path_mtu));
}

/*
 * WQEs completed per hold of sq_lock or resp_lock when a QP in Error is
 * flushed (sroce_sq_flush(), sroce_rwqe_flush()); the CPU is given up
 * between batches.
 */
#define SROCE_FLUSH_BATCH	64

#endif /* SROCE_QP_H */
