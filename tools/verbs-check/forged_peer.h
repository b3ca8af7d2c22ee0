/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A forged RoCEv2 peer for responder checks (msgsize, resporder): requests
 * built with the protocol core (kernel/proto/) are put on the wire with
 * AF_PACKET on IFACE, the other end of the target device's veth, from an
 * address on the target's subnet that no interface has (its neighbour
 * entry must point at IFACE); what the target sends back to that address
 * is read on IFACE, ICRC checked and parsed by the same core. The victim
 * QPs live on the target device and are connected to that address.
 */
#ifndef SROCE_VERBS_CHECK_FORGED_PEER_H
#define SROCE_VERBS_CHECK_FORGED_PEER_H

#include "verbs_util.h"

#include "proto/sroce_hdr.h"

#include <linux/if_packet.h>
#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vc
{

class Args;

constexpr uint32_t kPeerQpn = 0x0badc;  /* the forged peer's QPN */
constexpr uint16_t kPeerSport = 0xc0de; /* its UDP source port */

/* Every byte of [p, p + n) is @v. */
bool all_are(const uint8_t *p, size_t n, uint8_t v);

/*
 * Port counter @name of @dev (sysfs hw_counters) once it reached @want,
 * or its value after 2 s: what a forged packet moved.
 */
long wait_counter(const std::string &dev, const char *name, long want);

/* --target TDEV --inject IFACE --peer-ip ADDR */
struct PeerTarget {
	std::string dev, iface;
	uint8_t peer_ip[4]{};
};

/*
 * @t from --target, --inject and --peer-ip of @args. False with the reason
 * in @why when --target is there but the others are not (or malformed);
 * true with an empty @t->dev when there is no --target.
 */
bool parse_peer_target(const Args &args, PeerTarget *t, std::string *why);

/* An AF_PACKET socket for IPv4 frames, closed on destruction. */
class PacketSocket
{
      public:
	PacketSocket() = default;
	PacketSocket(const PacketSocket &) = delete;
	PacketSocket &operator=(const PacketSocket &) = delete;
	~PacketSocket();
	/* @flags: SOCK_NONBLOCK or 0. False with errno set on failure. */
	bool open(int flags);
	int fd() const { return fd_; }

      private:
	int fd_ = -1;
};

/*
 * Forged RoCEv2 frames: Ethernet, IPv4 (ID 0, DF, TTL 64), UDP from
 * kPeerSport to 4791 without checksum, the transport headers from the
 * protocol core, the payload and the ICRC.
 */
class Injector
{
      public:
	bool open(const std::string &iface, const std::string &target_netdev,
	          const uint8_t src_ip[4], const uint8_t dst_ip[4], std::string *why);
	/* A frame for @pkt with @len payload bytes of @fill. */
	std::vector<uint8_t> frame(const sroce_pkt &pkt, uint32_t len, uint8_t fill) const;
	/* A frame for @pkt with the @len payload bytes at @payload. */
	std::vector<uint8_t> frame(const sroce_pkt &pkt, const uint8_t *payload,
	                           uint32_t len) const;
	bool send(const std::vector<uint8_t> &f);

      private:
	PacketSocket sock_;
	sockaddr_ll to_{};
	uint8_t src_mac_[6]{}, dst_mac_[6]{};
	uint8_t src_ip_[4]{}, dst_ip_[4]{};
};

/* A packet the target sent to the forged peer. */
struct Captured {
	sroce_pkt pkt{};
	std::vector<uint8_t> payload;
};

/*
 * The target's packets to the forged peer, read back on IFACE with a large
 * socket buffer (a long READ answers with thousands of full frames).
 */
class Capture
{
      public:
	bool open(const std::string &iface, const uint8_t from_ip[4], const uint8_t to_ip[4],
	          std::string *why);
	/* The next packet within @timeout_ms: 1, 0 on timeout, -1 on error. */
	int next(Captured *c, int timeout_ms);
	/* Appends what has arrived so far, without waiting. */
	void drain(std::vector<Captured> *out);
	/* Appends what arrives until nothing has for @quiet_ms (at most @max_ms). */
	void until_quiet(std::vector<Captured> *out, int quiet_ms, int max_ms);
	/*
	 * Frames lost since the last call: dropped by the socket (buffer
	 * full) or by any CPU's input backlog (/proc/net/softnet_stat, on
	 * their way from the veth), or carried in a frame with others (a GSO
	 * burst: the target's netdev must split them, gso_max_segs 1).
	 */
	unsigned long drops();

      private:
	PacketSocket sock_;
	uint8_t from_[4]{}, to_[4]{};
	std::vector<uint8_t> buf_;
	unsigned long bursts_ = 0;
	unsigned long backlog_drops_ = 0;
};

/*
 * For its lifetime this process runs at real-time priority (SCHED_FIFO,
 * on the CPU it is on): the target's work items, on a high-priority
 * workqueue, do not run on this CPU until the process sleeps, so forged
 * requests sent one after the other are all taken (in the softirq of each
 * send) before the work item goes on with a READ's responses. That CPU's
 * ksoftirqd gets a higher real-time priority meanwhile: softirqs left to
 * it (a long one defers the rest) still run at once. Without the
 * privilege it changes nothing; the cases check that what they need
 * happened.
 */
class Unpreempted
{
      public:
	Unpreempted();
	Unpreempted(const Unpreempted &) = delete;
	Unpreempted &operator=(const Unpreempted &) = delete;
	~Unpreempted();
	bool on() const { return on_; }

      private:
	bool on_ = false;
	bool pinned_ = false;
	cpu_set_t cpus_{};
	pid_t softirqd_ = -1; /* boosted, with its old policy and priority */
	int softirqd_policy_ = SCHED_OTHER;
	sched_param softirqd_param_{};
};

/*
 * The target device with a PD and a CQ, the forged peer's GID, and victim
 * RC QPs connected to it.
 */
class ForgedPeer
{
      public:
	struct Victim {
		unsigned access =
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		uint32_t max_send_wr = 4;
		uint32_t max_recv_wr = 4;
		uint32_t max_recv_sge = 1;
	};

	/* Opens t.dev, its PD, a CQ of @cq_size, the injector. */
	bool open(const PeerTarget &t, int cq_size, std::string *why);
	/* "target DEV (NETDEV, path MTU N), forged peer A.B.C.D from IFACE" */
	std::string describe() const;
	/* A victim RC QP connected to the forged peer with rq_psn kRqPsn, in RTS. */
	QpPtr victim(const Victim &v, std::string *why);
	/*
	 * Walks @qp (in RESET) through INIT, RTR (expecting @rq_psn) and RTS
	 * (sending from @sq_psn) towards the forged peer; 0 or the errno.
	 */
	int connect(ibv_qp *qp, unsigned access, uint32_t rq_psn, uint32_t sq_psn);
	/* A request to @qp: @opcode at @psn, default P_Key. */
	sroce_pkt request(uint8_t opcode, const ibv_qp *qp, uint32_t psn) const;

	ibv_context *ctx() const { return ctx_.get(); }
	ibv_pd *pd() const { return pd_.get(); }
	ibv_cq *cq() const { return cq_.get(); }
	uint32_t mtu() const { return mtu_; }
	const std::string &dev() const { return t_.dev; }
	const std::string &netdev() const { return netdev_; }
	const std::string &iface() const { return t_.iface; }
	const uint8_t *ip() const { return ip_; }
	const uint8_t *peer_ip() const { return t_.peer_ip; }
	Injector &inj() { return inj_; }

      private:
	PeerTarget t_;
	std::string netdev_;
	uint8_t ip_[4]{};
	ContextPtr ctx_;
	PdPtr pd_;
	CqPtr cq_;
	GidChoice gid_, peer_gid_;
	uint32_t mtu_ = 0;
	Injector inj_;
};

} /* namespace vc */

#endif /* SROCE_VERBS_CHECK_FORGED_PEER_H */
