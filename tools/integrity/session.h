/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What both modes share: the device, the control connection, and the hello
 * exchange that makes the client's run parameters the server's too and
 * tells each side what the other's device can do.
 */
#pragma once

#include "channel.h"
#include "log.h"
#include "options.h"
#include "plan.h"
#include "verbs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace integ
{

struct Caps {
	uint32_t active_mtu = 0; /* bytes */
	uint32_t atomic_cap = 0;
	uint32_t max_qp_rd_atom = 0;
	uint32_t max_qp_init_rd_atom = 0;
	uint32_t max_sge = 0;
	uint32_t max_sge_rd = 0;
	uint32_t flush = 0; /* kFlushCan* */
};

/*
 * RDMA FLUSH: this side can post one, its device can be the target, its
 * device is sroce (which counts FLUSHes).
 */
constexpr uint32_t kFlushCanPost = 1;
constexpr uint32_t kFlushCanTarget = 2;
constexpr uint32_t kFlushSroce = 4;
uint32_t flush_caps(ibv_context *ctx);

/* A memory region of the peer, as it is addressed remotely. */
struct RemoteMr {
	uint64_t addr = 0;
	uint32_t rkey = 0;
	uint64_t len = 0;
};

struct Session {
	Options opt; /* the run parameters are the client's */
	bool client = false;
	Device dev;
	Channel chan;
	Caps self, peer;
	uint32_t path_mtu = 0; /* bytes */
	bool atomics = false;  /* both devices do atomics */

	const char *side() const { return client ? "client" : "server"; }
	const char *peer_side() const { return client ? "server" : "client"; }
	/* How long to wait for the peer to finish its share of the work. */
	unsigned peer_timeout_ms() const { return (opt.timeout * 3 + 10) * 1000; }
	/* How long to wait for one completion. */
	int64_t deadline() const { return now_ms() + int64_t(opt.timeout) * 1000; }

	/* Open the device, connect, exchange hellos. */
	bool start(const Options &cmdline, std::string *why);
	/* Send ours and receive the peer's QP and memory regions. */
	bool exchange_qp(const QpEnd &mine, const std::vector<RemoteMr> &mrs, QpEnd *theirs,
	                 std::vector<RemoteMr> *their_mrs, std::string *why);
	/*
	 * Sends our end of @qp (its starting PSN @psn) and @mrs, receives the
	 * peer's end and at least @min_mrs of its memory regions, and brings
	 * @qp to RTS towards the peer with @qpp.
	 */
	bool connect_to_peer(ibv_qp *qp, uint32_t psn, const std::vector<RemoteMr> &mrs,
	                     size_t min_mrs, const QpParams &qpp, QpEnd *theirs,
	                     std::vector<RemoteMr> *their_mrs, std::string *why);
	/* Report a fatal error to the peer and locally; returns false. */
	bool give_up(const std::string &why);
	/*
	 * The end of case @tag on the requester: "done" to the peer, then its
	 * result; the problems the responder found are a failure here. False
	 * when the run cannot go on.
	 */
	bool requester_done(const std::string &tag);
	/* On the responder: the failures logged since @before, as the result. */
	bool responder_done(const std::string &tag, uint64_t before);
	/* The RDMA_READ/atomic depth toward the peer. */
	uint8_t rd_atomic() const;
	uint8_t dest_rd_atomic() const;
	/*
	 * RC connection attributes: the path MTU, remote WRITE, READ and (when
	 * both devices do them) atomics, the RDMA_READ/atomic depths.
	 */
	QpParams rc_params() const;
};

/* A starting PSN: half of them close to the 24-bit wrap. */
uint32_t pick_psn(Rng &rng);

/*
 * One case on a fresh QP pair: @make_pair(Pair *, std::string *why) sets it
 * up (a failure ends the run), @half(Pair &) runs this side's share (false:
 * the run cannot go on). A case that logged a failure is counted in
 * *failed, any other logs "@tag: ok".
 */
template <typename Pair, typename MakePair, typename Half>
bool run_case_on_pair(Session &s, const std::string &tag, unsigned *failed, MakePair make_pair,
                      Half half)
{
	const uint64_t before = log().failures();
	std::string why;
	Pair p;

	if (!make_pair(&p, &why))
		return s.give_up(tag + ": " + why);
	if (!half(p))
		return false;
	if (log().failures() != before)
		(*failed)++;
	else
		log().info("%s: ok", tag.c_str());
	return true;
}

} // namespace integ
