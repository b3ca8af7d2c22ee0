// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-verbs-check msgsize DEV [--gid-index I]
 *                   [--target TDEV --inject IFACE --peer-ip ADDR [--send-bytes N|none]]:
 * the maximum message size, 2^31 bytes (IBA 9.4.3; the port's max_msg_sz).
 *
 * Requester, on DEV (a loopback RC QP pair, fresh for each case): a work
 * request whose SGE lengths add up to more than max_msg_sz completes with
 * IBV_WC_LOC_LEN_ERR and sends nothing; the QP goes to ERR, the peer's
 * receive stays pending and its QP in RTS.
 *
 *   requester.send_over_max   SEND, SGEs of max_msg_sz and 1 bytes
 *   requester.send_wraps_u32  SEND, SGEs of 2^32 - 1 and 2 bytes (1 byte
 *                             in 32-bit arithmetic)
 *   requester.write_over_max  RDMA WRITE, SGEs of max_msg_sz and 1 bytes
 *   requester.read_over_max   RDMA READ into SGEs of max_msg_sz and 1 bytes
 *
 * The SGEs are longer than their region on purpose: the length comes first.
 *
 * Responder, on TDEV (with --target): requests longer than max_msg_sz
 * from a peer that does not keep to it (forged_peer.h), forged with the
 * protocol core and put on the wire with AF_PACKET on IFACE, the other end of TDEV's veth,
 * from ADDR (an address on TDEV's subnet that no interface has; its
 * neighbour entry must point at IFACE). The victim QP of each case is
 * connected to ADDR; path MTU: TDEV's active MTU.
 *
 *   responder.write_at_max    RDMA WRITE FIRST, DMA length max_msg_sz:
 *                             taken (its bytes land, the QP stays in RTS)
 *   responder.write_over_max  WRITE FIRST, max_msg_sz + 1 MTU: NAK, the QP
 *                             in ERR, nothing written
 *   responder.read_over_max   READ, max_msg_sz + 1 MTU: NAK, QP in ERR
 *   responder.send_over_max   (not with --send-bytes none: 512 Ki packets
 *                             take 6 minutes on a KASAN kernel)
 *                             a SEND of --send-bytes (default max_msg_sz + 2
 *                             MTUs) into a receive WQE of three SGEs, 2^31 +
 *                             2^31 + 64 KiB (more than 4 GiB): the receive
 *                             completes with IBV_WC_LOC_LEN_ERR (the IBA's
 *                             status for a message too long for the
 *                             receive), the QP goes to ERR, and the last
 *                             two packets, whose bytes differ, land
 *                             nowhere; no packet may have been lost
 *                             (seq_naks_sent unchanged)
 *   responder.read_dup_busy   READ A (64 bytes), READ B (16 MiB), then A
 *                             and B again (what a go-back-N requester sends
 *                             after it lost A's response), all at once,
 *                             while B's responses are going out: A is
 *                             answered again, its bytes intact; B's
 *                             responses start over from its first PSN and
 *                             end with its last bytes intact. The target's
 *                             answers are read on IFACE (frame by frame:
 *                             the target's netdev needs gso_max_segs 1)
 *
 * The regions the SGEs and the WRITEs point into are one 64 MiB memfd
 * mapped 33 times back to back (2 GiB + 64 MiB of addresses, 64 MiB of
 * memory), so offset X of the message lands on the same bytes as X + 64
 * MiB: the bytes at offset max_msg_sz land where the first ones did. The
 * third SGE is a region of its own. A SEND of 4 GiB + 2 MTUs shows what a
 * 32-bit receive offset does (--send-bytes 4294975488): without a limit it
 * would wrap to 0 and put the last two packets over the first ones
 * instead of into the third SGE.
 */
#include "commands.h"
#include "forged_peer.h"
#include "report.h"
#include "verbs_util.h"

#include "proto/sroce_hdr.h"
#include "proto/sroce_icrc.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <linux/if_ether.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace vc
{
namespace
{

constexpr uint32_t kChunk = 64u << 20;        /* the memfd behind the big region */
constexpr unsigned kChunks = 33;              /* 2 GiB + 64 MiB of addresses */
constexpr uint32_t kSmall = 64 * 1024;        /* the third SGE's region */
constexpr uint8_t kBulk = 0xa5, kTail = 0x5a; /* payload bytes: most, last two */
constexpr int kQuietMs = 300;
constexpr uint64_t kNoSend = ~0ull;       /* --send-bytes none */
constexpr uint32_t kDupReadA = 64;        /* read_dup_busy: READ A's bytes */
constexpr uint32_t kDupReadB = 16u << 20; /* and READ B's */
/* The core caches hw_counters for 10 ms (RDMA_HW_STATS_DEFAULT_LIFESPAN). */
constexpr int kCounterMs = 50;

/* A memfd of @chunk bytes mapped @n times back to back. */
class Aliased
{
      public:
	~Aliased()
	{
		if (base_ != MAP_FAILED)
			munmap(base_, size_);
		if (fd_ >= 0)
			close(fd_);
	}
	bool map(size_t chunk, unsigned n, std::string *why)
	{
		size_ = chunk * n;
		fd_ = memfd_create("sroce-msgsize", 0);
		if (fd_ < 0 || ftruncate(fd_, off_t(chunk))) {
			*why = std::string("memfd: ") + std::strerror(errno);
			return false;
		}
		base_ = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		             -1, 0);
		if (base_ == MAP_FAILED) {
			*why = std::string("mmap: ") + std::strerror(errno);
			return false;
		}
		for (unsigned i = 0; i < n; i++)
			if (mmap(data() + i * chunk, chunk, PROT_READ | PROT_WRITE,
			         MAP_SHARED | MAP_FIXED, fd_, 0) == MAP_FAILED) {
				*why = std::string("mmap MAP_FIXED: ") + std::strerror(errno);
				return false;
			}
		return true;
	}
	uint8_t *data() const { return static_cast<uint8_t *>(base_); }
	size_t size() const { return size_; }

      private:
	int fd_ = -1;
	void *base_ = MAP_FAILED;
	size_t size_ = 0;
};

/*
 * The frames of a long run of SEND MIDDLE packets differ in their PSN and
 * ICRC only. The CRC is affine in the bits it covers: the ICRC for any
 * PSN is the one for PSN 0 with the differences each set PSN bit makes
 * XORed in, so 25 computations serve every packet.
 */
class PsnFrames
{
      public:
	PsnFrames(const Injector &inj, const sroce_pkt &pkt, uint32_t len, uint8_t fill)
	{
		sroce_pkt p = pkt;

		p.psn = 0;
		frame_ = inj.frame(p, len, fill);
		base_ = icrc_of(frame_);
		for (unsigned i = 0; i < 24; i++) {
			p.psn = 1u << i;
			delta_[i] = icrc_of(inj.frame(p, len, fill)) ^ base_;
		}
	}
	/* The frame for @psn (valid until the next call). */
	const std::vector<uint8_t> &at(uint32_t psn)
	{
		uint8_t *bth = frame_.data() + kBthOff;
		uint32_t icrc = base_;

		for (unsigned i = 0; i < 24; i++)
			if (psn & (1u << i))
				icrc ^= delta_[i];
		bth[9] = uint8_t(psn >> 16);
		bth[10] = uint8_t(psn >> 8);
		bth[11] = uint8_t(psn);
		sroce_icrc_put(frame_.data() + frame_.size() - SROCE_ICRC_BYTES, icrc);
		return frame_;
	}

      private:
	static constexpr size_t kBthOff = ETH_HLEN + SROCE_IPV4_HDR_BYTES + SROCE_UDP_HDR_BYTES;

	static uint32_t icrc_of(const std::vector<uint8_t> &f)
	{
		return sroce_icrc_get(f.data() + f.size() - SROCE_ICRC_BYTES);
	}

	std::vector<uint8_t> frame_;
	uint32_t base_ = 0;
	uint32_t delta_[24]{};
};

class MsgSizeRun
{
      public:
	MsgSizeRun(ibv_context *ctx, const GidChoice &gid) : ctx_(ctx), gid_(gid), r_("msgsize") {}
	void requester();
	void responder(const PeerTarget &t, uint64_t send_bytes);
	int finish() { return r_.finish(); }

      private:
	struct Case {
		const char *name;
		ibv_wr_opcode opcode;
		uint32_t len0, len1;
	};
	void requester_case(const Case &c, ibv_pd *pd, ibv_mr *mr, uint8_t *buf);

	/* Responder side. */
	QpPtr forge_reth(const char *name, const char *kind, uint8_t opcode, uint64_t dma_len,
	                 uint32_t len, uint8_t fill, long *naks);
	void expect_nak(const char *name, ibv_qp *qp, long naks_before, const char *what);
	void write_case(const char *name, uint64_t dma_len, bool taken);
	void read_case(const char *name, uint64_t dma_len);
	void send_case(const char *name, uint64_t bytes);
	bool forge_read(ibv_qp *qp, uint32_t psn, uint32_t offset, uint32_t len);
	void read_dup_case(const char *name, const PeerTarget &t);

	ibv_context *ctx_;
	GidChoice gid_;
	Report r_;
	uint32_t max_msg_ = 0;

	/* The target device and the forged peer. */
	ForgedPeer peer_;
	uint32_t mtu_ = 0;
	Aliased big_;
	std::unique_ptr<Mapping> small_;
	MrPtr big_mr_, small_mr_;
};

void MsgSizeRun::requester_case(const Case &c, ibv_pd *pd, ibv_mr *mr, uint8_t *buf)
{
	const std::string name = std::string("requester.") + c.name;
	CqPtr scq(ibv_create_cq(ctx_, 8, nullptr, nullptr, 0));
	CqPtr rcq(ibv_create_cq(ctx_, 8, nullptr, nullptr, 0));
	ibv_qp_init_attr ia{};
	const char *stage = "";
	ibv_recv_wr rwr{}, *bad_r = nullptr;
	ibv_send_wr wr{}, *bad = nullptr;
	ibv_sge rsge{}, sge[2]{};
	ibv_wc wc{};
	int err;

	if (!scq || !rcq) {
		r_.fail(name, "ibv_create_cq: %s", errno_name(null_errno()).c_str());
		return;
	}
	ia.send_cq = scq.get();
	ia.recv_cq = rcq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 1;
	QpPtr a(ibv_create_qp(pd, &ia)), b(ibv_create_qp(pd, &ia));

	if (!a || !b) {
		r_.fail(name, "ibv_create_qp: %s", errno_name(null_errno()).c_str());
		return;
	}
	const unsigned access =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	err = connect_rc(a.get(), gid_, b->qp_num, access, &stage);
	if (!err)
		err = connect_rc(b.get(), gid_, a->qp_num, access, &stage);
	if (err) {
		r_.fail(name, "connecting the pair: %s failed: %s", stage, errno_name(err).c_str());
		return;
	}
	std::memset(buf, 0, 8192);
	rsge = {uintptr_t(buf), 4096, mr->lkey};
	rwr.wr_id = 2;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	if (ibv_post_recv(b.get(), &rwr, &bad_r)) {
		r_.fail(name, "ibv_post_recv failed");
		return;
	}
	std::memset(buf + 4096, 0x77, 4096);
	sge[0] = {uintptr_t(buf + 4096), c.len0, mr->lkey};
	sge[1] = {uintptr_t(buf + 4096), c.len1, mr->lkey};
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = c.opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = uintptr_t(buf);
	wr.wr.rdma.rkey = mr->rkey;
	err = ibv_post_send(a.get(), &wr, &bad);
	if (err) {
		r_.fail(name, "ibv_post_send: %s, want 0 and an error completion",
		        errno_name(err).c_str());
		return;
	}
	if (poll_cq_for(scq.get(), &wc, 1, 5000) != 1) {
		r_.fail(name, "no completion within 5 s, want IBV_WC_LOC_LEN_ERR");
		return;
	}
	const int state = wait_qp_state(a.get(), IBV_QPS_ERR, 1000);
	ibv_wc peer{};
	const int peer_got = poll_cq_for(rcq.get(), &peer, 1, kQuietMs);

	if (wc.wr_id != 1 || wc.status != IBV_WC_LOC_LEN_ERR)
		r_.fail(name, "completion wr_id %" PRIu64 " %s, want IBV_WC_LOC_LEN_ERR", wc.wr_id,
		        ibv_wc_status_str(wc.status));
	else if (state != IBV_QPS_ERR)
		r_.fail(name, "the QP is in %s after the error, want ERR", qp_state_name(state));
	else if (peer_got != 0)
		r_.fail(name, "the peer's receive completed (%s): something was sent",
		        ibv_wc_status_str(peer.status));
	else if (wait_qp_state(b.get(), IBV_QPS_RTS, 0) != IBV_QPS_RTS || !all_are(buf, 4096, 0))
		r_.fail(name, "the peer QP left RTS or its memory changed");
	else
		r_.pass(name,
		        "SGEs of %" PRIu32 " + %" PRIu32 " bytes: IBV_WC_LOC_LEN_ERR, QP in ERR, "
		        "nothing sent",
		        c.len0, c.len1);
}

void MsgSizeRun::requester()
{
	ibv_port_attr port{};

	if (ibv_query_port(ctx_, 1, &port)) {
		r_.fail("requester.max_msg_sz", "ibv_query_port failed");
		return;
	}
	max_msg_ = port.max_msg_sz;
	r_.check(max_msg_ == 1u << 31, "requester.max_msg_sz",
	         "port max_msg_sz %" PRIu32 ", the IBA's 2^31", max_msg_);
	PdPtr pd(ibv_alloc_pd(ctx_));
	Mapping buf(8192, PROT_READ | PROT_WRITE);
	MrPtr mr(pd && buf.ok() ? ibv_reg_mr(pd.get(), buf.data(), buf.size(),
	                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                                         IBV_ACCESS_REMOTE_READ)
	                        : nullptr);

	if (!mr) {
		r_.fail("requester.setup", "PD, buffer or MR: %s",
		        errno_name(null_errno()).c_str());
		return;
	}
	const Case cases[] = {
	    {"send_over_max", IBV_WR_SEND, max_msg_, 1},
	    {"send_wraps_u32", IBV_WR_SEND, 0xffffffffu, 2},
	    {"write_over_max", IBV_WR_RDMA_WRITE, max_msg_, 1},
	    {"read_over_max", IBV_WR_RDMA_READ, max_msg_, 1},
	};
	for (const Case &c : cases)
		requester_case(c, pd.get(), mr.get(), buf.data());
}

void MsgSizeRun::expect_nak(const char *name, ibv_qp *qp, long naks_before, const char *what)
{
	const int state = wait_qp_state(qp, IBV_QPS_ERR, 2000);
	long naks;

	usleep(kCounterMs * 1000);
	naks = read_counter(peer_.dev(), "err_naks_sent");

	if (state != IBV_QPS_ERR)
		r_.fail(name, "%s: the QP is in %s, want ERR (NAK invalid request)", what,
		        qp_state_name(state));
	else if (naks_before >= 0 && naks != naks_before + 1)
		r_.fail(name, "%s: err_naks_sent went from %ld to %ld, want +1", what, naks_before,
		        naks);
	else
		r_.pass(name, "%s: NAKed, the QP in ERR", what);
}

/*
 * To a fresh victim QP, the forged peer's @opcode packet with a RETH for
 * the big region and @dma_len, and @len payload bytes of @fill; *naks: the
 * target's err_naks_sent before it. The QP, or null when the case failed
 * (@kind names the request: "WRITE", "READ").
 */
QpPtr MsgSizeRun::forge_reth(const char *name, const char *kind, uint8_t opcode, uint64_t dma_len,
                             uint32_t len, uint8_t fill, long *naks)
{
	std::string why;
	QpPtr qp = peer_.victim(ForgedPeer::Victim{}, &why);

	if (!qp) {
		r_.fail(name, "%s", why.c_str());
		return nullptr;
	}
	*naks = read_counter(peer_.dev(), "err_naks_sent");
	sroce_pkt p = peer_.request(opcode, qp.get(), kRqPsn);

	p.reth.va = uintptr_t(big_.data());
	p.reth.rkey = big_mr_->rkey;
	p.reth.dma_len = uint32_t(dma_len);
	if (!peer_.inj().send(peer_.inj().frame(p, len, fill))) {
		r_.fail(name, "sending the forged %s: %s", kind, std::strerror(errno));
		return nullptr;
	}
	return qp;
}

void MsgSizeRun::write_case(const char *name, uint64_t dma_len, bool taken)
{
	long naks;

	std::memset(big_.data(), 0, mtu_);
	QpPtr qp =
	    forge_reth(name, "WRITE", SROCE_OP_RC_RDMA_WRITE_FIRST, dma_len, mtu_, kTail, &naks);
	if (!qp)
		return;
	char what[96];

	std::snprintf(what, sizeof(what), "RDMA WRITE FIRST of a %" PRIu64 "-byte WRITE", dma_len);
	if (!taken) {
		expect_nak(name, qp.get(), naks, what);
		if (!all_are(big_.data(), mtu_, 0))
			r_.fail(name, "%s: its payload was written", what);
		return;
	}
	usleep(kQuietMs * 1000);
	const int state = wait_qp_state(qp.get(), IBV_QPS_RTS, 0);

	if (state != IBV_QPS_RTS || !all_are(big_.data(), mtu_, kTail))
		r_.fail(name, "%s: QP in %s, payload %s; want it taken", what, qp_state_name(state),
		        all_are(big_.data(), mtu_, kTail) ? "written" : "not written");
	else
		r_.pass(name, "%s: taken, its payload written, the QP in RTS", what);
}

void MsgSizeRun::read_case(const char *name, uint64_t dma_len)
{
	long naks;
	QpPtr qp = forge_reth(name, "READ", SROCE_OP_RC_RDMA_READ_REQUEST, dma_len, 0, 0, &naks);

	if (!qp)
		return;
	char what[64];

	std::snprintf(what, sizeof(what), "RDMA READ of %" PRIu64 " bytes", dma_len);
	expect_nak(name, qp.get(), naks, what);
}

void MsgSizeRun::send_case(const char *name, uint64_t bytes)
{
	const uint64_t npkts = (bytes + mtu_ - 1) / mtu_;
	ForgedPeer::Victim v;
	std::string why;

	v.max_recv_sge = 3;
	QpPtr qp = peer_.victim(v, &why);
	ibv_sge sge[3] = {{uintptr_t(big_.data()), 1u << 31, big_mr_->lkey},
	                  {uintptr_t(big_.data()), 1u << 31, big_mr_->lkey},
	                  {uintptr_t(small_->data()), kSmall, small_mr_->lkey}};
	ibv_recv_wr rwr{}, *bad = nullptr;
	sroce_pkt p{};
	ibv_wc wc{};

	if (!qp) {
		r_.fail(name, "%s", why.c_str());
		return;
	}
	if (npkts < 4 || bytes % mtu_) {
		r_.fail(name, "--send-bytes %" PRIu64 ": want a multiple of the MTU, 4 or more",
		        bytes);
		return;
	}
	std::memset(big_.data(), 0, kChunk);
	std::memset(small_->data(), 0, kSmall);
	rwr.wr_id = 7;
	rwr.sg_list = sge;
	rwr.num_sge = 3;
	if (ibv_post_recv(qp.get(), &rwr, &bad)) {
		r_.fail(name, "ibv_post_recv of 3 SGEs failed");
		return;
	}
	const long naks = read_counter(peer_.dev(), "err_naks_sent");
	const long seq = read_counter(peer_.dev(), "seq_naks_sent");
	const auto start = std::chrono::steady_clock::now();
	Injector &inj = peer_.inj();

	p = peer_.request(SROCE_OP_RC_SEND_MIDDLE, qp.get(), 0);
	PsnFrames bulk(inj, p, mtu_, kBulk);
	bool ok = true;

	/* FIRST, MIDDLEs, then the last two (MIDDLE, LAST) with other bytes. */
	for (uint64_t i = 0; i < npkts && ok; i++) {
		const uint32_t psn = (kRqPsn + uint32_t(i)) & SROCE_PSN_MASK;

		p.psn = psn;
		if (i == 0) {
			p.opcode = SROCE_OP_RC_SEND_FIRST;
			ok = inj.send(inj.frame(p, mtu_, kBulk));
		} else if (i + 2 < npkts) {
			ok = inj.send(bulk.at(psn));
		} else {
			p.opcode = i + 1 == npkts ? SROCE_OP_RC_SEND_LAST : SROCE_OP_RC_SEND_MIDDLE;
			p.ackreq = i + 1 == npkts;
			ok = inj.send(inj.frame(p, mtu_, kTail));
		}
		if (!(i & 255))
			sched_yield();
	}
	const double secs =
	    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

	r_.info("%s: %" PRIu64 " packets of %u bytes sent in %.1f s", name, npkts, mtu_, secs);
	if (!ok) {
		r_.fail(name, "sending the forged SEND: %s", std::strerror(errno));
		return;
	}
	const int got = poll_cq_for(peer_.cq(), &wc, 1, 10000);
	const int state = wait_qp_state(qp.get(), IBV_QPS_ERR, 2000);

	usleep(kCounterMs * 1000);
	const long naks_now = read_counter(peer_.dev(), "err_naks_sent");
	const long seq_now = read_counter(peer_.dev(), "seq_naks_sent");
	const bool small_zero = all_are(small_->data(), kSmall, 0);
	const bool start_tail = all_are(big_.data(), 2 * mtu_, kTail);
	char what[96];

	std::snprintf(what, sizeof(what), "SEND of %" PRIu64 " bytes into SGEs of 2^31 + 2^31 + %u",
	              bytes, kSmall);
	if (seq >= 0 && seq_now != seq) {
		r_.fail(name, "%s: the target lost packets (seq_naks_sent %ld -> %ld): no verdict",
		        what, seq, seq_now);
		return;
	}
	if (got != 1) {
		r_.fail(name, "%s: the receive did not complete within 10 s", what);
		return;
	}
	if (wc.status != IBV_WC_LOC_LEN_ERR || wc.wr_id != 7) {
		r_.fail(name,
		        "%s: the receive completed with %s byte_len %u, want IBV_WC_LOC_LEN_ERR",
		        what, ibv_wc_status_str(wc.status), wc.byte_len);
		if (wc.status == IBV_WC_SUCCESS && uint64_t(wc.byte_len) != bytes)
			r_.fail(name, "%s: byte_len %u: the length modulo 2^32", what, wc.byte_len);
	} else if (state != IBV_QPS_ERR) {
		r_.fail(name, "%s: the QP is in %s, want ERR", what, qp_state_name(state));
	} else if (naks >= 0 && naks_now != naks + 1) {
		r_.fail(name, "%s: err_naks_sent went from %ld to %ld, want +1", what, naks,
		        naks_now);
	} else {
		r_.pass(name, "%s: IBV_WC_LOC_LEN_ERR, NAKed, the QP in ERR", what);
	}
	/* Bytes past max_msg_sz land nowhere: not over the first ones, not in SGE 3. */
	if (start_tail)
		r_.fail(name,
		        "%s: the last packets' bytes (offset %" PRIu64 ") were placed, over the "
		        "receive's first bytes",
		        what, bytes - 2 * mtu_);
	if (!small_zero)
		r_.fail(name, "%s: bytes were placed in the third SGE", what);
}

/* To @qp, the forged peer's READ of @len bytes at @offset of the big region. */
bool MsgSizeRun::forge_read(ibv_qp *qp, uint32_t psn, uint32_t offset, uint32_t len)
{
	sroce_pkt p = peer_.request(SROCE_OP_RC_RDMA_READ_REQUEST, qp, psn & SROCE_PSN_MASK);

	p.ackreq = true;
	p.reth.va = uintptr_t(big_.data()) + offset;
	p.reth.rkey = big_mr_->rkey;
	p.reth.dma_len = len;
	return peer_.inj().send(peer_.inj().frame(p, 0u, uint8_t(0)));
}

/*
 * A duplicate READ that comes while the responder is still sending the
 * responses of a later one (IBA 9.7.5.1.2: a duplicate READ is answered
 * again). A go-back-N requester that lost a response of READ A sends A and
 * every later request again and drops every response until A's come; if A
 * waited for the end of B's, a long B would outlast its retries. The four
 * requests go out back to back: the responder takes them in one softirq
 * run, while nearly all of B's responses are still to be built.
 */
void MsgSizeRun::read_dup_case(const char *name, const PeerTarget &t)
{
	const uint32_t a = kRqPsn, b = kRqPsn + 1, nb = kDupReadB / mtu_;
	const uint32_t b_last = (b + nb - 1) & SROCE_PSN_MASK;
	std::string why;
	Capture cap;
	QpPtr qp = peer_.victim(ForgedPeer::Victim{}, &why);

	if (!qp || !cap.open(t.iface, peer_.ip(), peer_.peer_ip(), &why)) {
		r_.fail(name, "%s", why.c_str());
		return;
	}
	for (uint32_t i = 0; i < mtu_ + kDupReadB; i++)
		big_.data()[i] = uint8_t(i * 7 + i / 4093);
	/*
	 * A, B, then both again, at real-time priority: each is taken in the
	 * softirq of its send, before sroce's work item goes on with B.
	 */
	{
		const Unpreempted now;

		for (int k = 0; k < 4; k++)
			if (!forge_read(qp.get(), k % 2 ? b : a, k % 2 ? mtu_ : 0,
			                k % 2 ? kDupReadB : kDupReadA)) {
				r_.fail(name, "sending the forged READs: %s", std::strerror(errno));
				return;
			}
	}
	Captured c;
	unsigned answers_a = 0, firsts_b = 0, lasts_b = 0, between = 0;
	bool a_intact = true, last_intact = false;

	while (!(firsts_b >= 2 && lasts_b >= 1) && cap.next(&c, 10000) == 1) {
		const uint8_t op = c.pkt.opcode;
		const uint32_t psn = c.pkt.psn;

		if (op == SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY && psn == a) {
			a_intact = a_intact && c.payload.size() == kDupReadA &&
			           !std::memcmp(c.payload.data(), big_.data(), kDupReadA);
			answers_a++;
		} else if (op == SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST && psn == b) {
			firsts_b++;
			lasts_b = 0; /* the LAST of this round counts */
		} else if (op == SROCE_OP_RC_RDMA_READ_RESPONSE_LAST && psn == b_last) {
			last_intact = c.payload.size() == mtu_ &&
			              !std::memcmp(c.payload.data(), big_.data() + kDupReadB, mtu_);
			lasts_b++;
		}
		if (answers_a == 1 && firsts_b)
			between++; /* B's responses before A's second answer */
	}
	const unsigned long drops = cap.drops();
	r_.info("%s: READ A of %u bytes, B of %u (%u responses), A and B again at once: A "
	        "answered %u times (the second after %u of B's responses), B's responses "
	        "started %u times; frames lost by the capture: %lu",
	        name, kDupReadA, kDupReadB, nb, answers_a, between, firsts_b, drops);
	if (drops && !(answers_a == 2 && firsts_b == 2 && lasts_b == 1)) {
		r_.fail(name, "the capture lost %lu frames: no verdict", drops);
		return;
	}
	if (answers_a == 2 && between >= nb) {
		r_.fail(name, "A came again only after B's responses were all out (its softirq "
		              "deferred?): nothing shows it was answered while B's went out; no "
		              "verdict");
		return;
	}
	r_.check(answers_a == 2 && a_intact, std::string(name) + ".answered",
	         "a duplicate READ of %u bytes, come while a READ of %u bytes after it was being "
	         "answered, is answered again, its bytes intact",
	         kDupReadA, kDupReadB);
	r_.check(firsts_b == 2 && lasts_b == 1 && last_intact, std::string(name) + ".restart",
	         "a duplicate of the READ being answered starts its responses over from its "
	         "first PSN, and they end with its last bytes intact");
	const int state = wait_qp_state(qp.get(), IBV_QPS_RTS, 0);
	r_.check(state == IBV_QPS_RTS, std::string(name) + ".state", "the QP stays in RTS (%s)",
	         qp_state_name(state));
}

void MsgSizeRun::responder(const PeerTarget &t, uint64_t send_bytes)
{
	std::string why;

	if (!peer_.open(t, 16, &why)) {
		r_.fail("responder.setup", "%s", why.c_str());
		return;
	}
	mtu_ = peer_.mtu();
	const unsigned access =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (!big_.map(kChunk, kChunks, &why)) {
		r_.fail("responder.setup", "%s", why.c_str());
		return;
	}
	small_ = std::make_unique<Mapping>(kSmall, PROT_READ | PROT_WRITE);
	big_mr_.reset(ibv_reg_mr(peer_.pd(), big_.data(), big_.size(), int(access)));
	small_mr_.reset(small_->ok() ? ibv_reg_mr(peer_.pd(), small_->data(), kSmall, int(access))
	                             : nullptr);
	if (!big_mr_ || !small_mr_) {
		r_.fail("responder.setup",
		        "ibv_reg_mr of %zu bytes (%u MiB of memory mapped %u times): %s",
		        big_.size(), kChunk >> 20, kChunks, errno_name(null_errno()).c_str());
		return;
	}
	r_.info("%s", peer_.describe().c_str());
	write_case("responder.write_at_max", max_msg_, true);
	write_case("responder.write_over_max", uint64_t(max_msg_) + mtu_, false);
	read_case("responder.read_over_max", uint64_t(max_msg_) + mtu_);
	if (send_bytes == kNoSend)
		r_.info("responder.send_over_max: not run (--send-bytes none)");
	else
		send_case("responder.send_over_max",
		          send_bytes ? send_bytes : uint64_t(max_msg_) + 2 * mtu_);
	read_dup_case("responder.read_dup_busy", t);
}

} // namespace

int cmd_msgsize(int argc, char **argv)
{
	Args args;
	std::string why;
	long gid_index;
	PeerTarget t;
	uint64_t send_bytes = 0;

	if (!args.parse(argc, argv,
	                {{"gid-index", true},
	                 {"target", true},
	                 {"inject", true},
	                 {"peer-ip", true},
	                 {"send-bytes", true}},
	                &why))
		return usage_error("msgsize", why);
	if (args.num_positional() != 1)
		return usage_error("msgsize", "expects one device name");
	if (!args.number("gid-index", -1, -1, 65535, &gid_index, &why) ||
	    !parse_peer_target(args, &t, &why))
		return usage_error("msgsize", why);
	if (!t.dev.empty()) {
		char *end = nullptr;

		const char *v = args.value("send-bytes", "0");

		send_bytes = std::strcmp(v, "none") ? std::strtoull(v, &end, 0) : kNoSend;
		if ((end && *end) || (send_bytes > (8ull << 30) && send_bytes != kNoSend))
			return usage_error("msgsize",
			                   "--send-bytes: a number up to 8 GiB, or none");
	}
	ContextPtr ctx = open_device(args.positional(0), &why);
	GidChoice gid;
	if (!ctx || !pick_gid(ctx.get(), int(gid_index), &gid, &why)) {
		Report r("msgsize");
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	MsgSizeRun run(ctx.get(), gid);

	run.requester();
	if (!t.dev.empty())
		run.responder(t, send_bytes);
	return run.finish();
}

} /* namespace vc */
