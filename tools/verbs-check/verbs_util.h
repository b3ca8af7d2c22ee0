/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libibverbs helpers for sroce-verbs-check: owning pointers for every verbs
 * object (destroyed in reverse order of declaration, so a failed check
 * never leaks), device and GID lookup, and the attribute sets that walk an
 * RC/UC/UD QP through its states.
 */
#ifndef SROCE_VERBS_CHECK_VERBS_UTIL_H
#define SROCE_VERBS_CHECK_VERBS_UTIL_H

#include "mapping.h"
#include "verbs_helpers.h"

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace vc
{

class Report;

/* Logs a failed destroy verb of an owning pointer on stderr (main() makes
 * it the handler of tools/common/verbs_helpers.h); checks that care destroy
 * explicitly and assert the result.
 */
void destroy_logged(int ret, const char *what);

/* The running kernel is MAJOR.MINOR or newer (uname's release). */
bool kernel_at_least(int major, int minor);

/* The shared helpers of tools/common/verbs_helpers.h. */
using namespace sroce_tools;

/* errno after a verb returned NULL; -1 if it left errno at 0. */
int null_errno();

/*
 * Opens device @name into @ctx and queries its attributes into @attr; a
 * failure of either is FAIL "open" or "query_device" in @r, and false.
 */
bool open_and_query(const char *name, Report &r, ContextPtr *ctx, ibv_device_attr *attr);

struct GidChoice {
	int index = -1;
	ibv_gid gid{};
	bool ipv4 = false;
};

/*
 * The source GID for loopback paths on port 1: @wanted if >= 0, else the
 * first RoCE v2 GID of an IPv4 address, else the first RoCE v2 GID.
 */
bool pick_gid(ibv_context *ctx, int wanted, GidChoice *out, std::string *why);

const char *qp_type_name(ibv_qp_type type);

/* The device and source GID of a loopback command. */
struct LoopbackTarget {
	const char *dev = nullptr;
	ContextPtr ctx;
	GidChoice gid;
	bool quick = false; /* --quick given (commands that take it) */
};

/*
 * The command line "@command DEV [--gid-index I]" of a loopback command:
 * opens DEV and picks its GID (pick_gid()). False when it could not, with
 * the exit status in *@status (2: usage error; 1: FAIL "open" reported).
 * With @takes_quick the command also accepts --quick (t->quick).
 */
bool open_loopback(const char *command, int argc, char **argv, LoopbackTarget *t, int *status,
                   bool takes_quick = false);

/*
 * Waits up to @timeout_ms for an async event of @ctx (the async fd is made
 * non-blocking). Returns 1 and fills @event (to be acked), 0 on timeout,
 * -1 on error (errno set).
 */
int wait_async_event(ibv_context *ctx, int timeout_ms, ibv_async_event *event);

/*
 * Waits up to @timeout_ms for a completion event on @channel. Returns the CQ
 * or null (timeout or error). The caller acks the event.
 */
ibv_cq *wait_cq_event(ibv_comp_channel *channel, int timeout_ms);

/* Creation attributes of an RC QP on @cq: @send_wr and @recv_wr WQEs of one SGE. */
ibv_qp_init_attr rc_qp_init(ibv_cq *cq, uint32_t send_wr, uint32_t recv_wr);

/* Polls @cq until @want completions arrived or @timeout_ms passed. */
int poll_cq_for(ibv_cq *cq, ibv_wc *wc, int want, int timeout_ms);

/* Attribute sets for the state walk of a QP (IBA 10.3.1, table 91). */
QpTransition to_init(ibv_qp_type type, unsigned int access);
/* RTR towards QP @dest_qpn at GID @gid (a loopback path when it is ours). */
QpTransition to_rtr(ibv_qp_type type, const GidChoice &gid, uint32_t dest_qpn);
QpTransition to_rts(ibv_qp_type type);

/*
 * Walks RC QP @qp through INIT (with @access), RTR and RTS towards QP
 * @dest_qpn on the path to @gid (a loopback path when the GID is ours);
 * the send PSN is what the peer's to_rtr() expects, so two QPs connected
 * to each other this way form a pair. Returns 0, or the errno of the
 * transition that failed and its name in @stage.
 */
int connect_rc(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
               const char **stage = nullptr);

/*
 * A signalled IBV_WR_BIND_MW work request binding @mw as @rkey to the
 * @length bytes at @addr of @mr with @access (type 2 windows).
 */
ibv_send_wr bind_mw_wr(uint64_t wr_id, ibv_mw *mw, uint32_t rkey, ibv_mr *mr, uint64_t addr,
                       uint64_t length, unsigned int access);

/*
 * The walk of connect_rc() from @from: IBV_QPS_INIT (all of it) or
 * IBV_QPS_RTR (a QP already in INIT goes to RTR and RTS), with local ACK
 * timeout @timeout (4.096 us * 2^timeout) instead of kTimeout.
 */
int connect_rc_from(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
                    ibv_qp_state from, uint8_t timeout, const char **stage = nullptr);

/* connect_rc() with @rnr_retry RNR retries (7: without end). */
int connect_rc_rnr(ibv_qp *qp, const GidChoice &gid, uint32_t dest_qpn, unsigned int access,
                   uint8_t rnr_retry);

/* The values to_rtr() and to_rts() set, for comparing a query. */
enum : uint32_t {
	kRqPsn = 0x123456,
	kSqPsn = 0x654321,
	kQkey = 0x11111111,
	kFlowLabel = 0x12345,
};
enum : uint8_t {
	kMaxDestRdAtomic = 16,
	kMaxRdAtomic = 8,
	kMinRnrTimer = 12,
	kTimeout = 14,
	kRetryCnt = 7,
	kRnrRetry = 6,
	kHopLimit = 64,
	kTrafficClass = 0x20,
};

/* An AV on port 1 to GID @gid (ours: a loopback path). */
/*
 * A byte pattern that differs per @seed and along the buffer: fill_pattern()
 * writes it, same_pattern() checks every byte of it.
 */
void fill_pattern(uint8_t *p, uint32_t len, uint32_t seed);
bool same_pattern(const uint8_t *p, uint32_t len, uint32_t seed);

/* A pointer as the 64-bit address an SGE or a work request takes. */
inline uint64_t addr_of(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

ibv_ah_attr loopback_ah(const GidChoice &gid, uint8_t hop_limit = kHopLimit);

} /* namespace vc */

#endif /* SROCE_VERBS_CHECK_VERBS_UTIL_H */
