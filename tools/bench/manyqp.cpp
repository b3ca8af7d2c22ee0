// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-manyqp: RDMA WRITE bandwidth over many RC QPs between two hosts,
 * what they cost to set up and to keep, and what registering memory costs,
 * for the benchmark (tools/bench). perftest's -q gives every QP its own
 * deep queue, and sizes its one CQ for all of them: at 4096 QPs that is
 * more completion entries than a software device offers.
 *
 *   sroce-manyqp server DEV GID_INDEX PORT
 *   sroce-manyqp client DEV GID_INDEX HOST PORT QPS SIZE SECONDS
 *   sroce-manyqp reg DEV MIB
 *
 * The client creates QPS RC QPs and connects each to one of the server's
 * (their numbers, PSNs and the server's buffer go over a TCP connection
 * to PORT), then WRITEs SIZE bytes at a time for SECONDS, keeping
 * kInFlight WRITEs outstanding in all (as an application with a bounded
 * pool of requests would): each completion's successor goes to the next
 * QP in turn that has room, so every QP carries traffic all the time and
 * at 4096 QPs each has at most one WRITE out. One CQ takes every
 * completion. Each QP may queue ceil(kInFlight / QPS) WRITEs and no
 * receive.
 *
 * Both sides measure their QPs' setup: the time from the first create to
 * the last QP in RTR (server) or RTS (client), and the memory it took
 * (MemFree in /proc/meminfo, before and after: the kernel's state, the
 * rings the provider maps and its own), per QP, from 64 QPs on (-1 below:
 * one QP's pages are lost in the noise). The client prints
 *
 *   manyqp qps=N size=S seconds=D bytes=B bw_MiBps=X setup_us=U mem_kib=M
 *     peer_setup_us=U peer_mem_kib=M
 *
 * (setup_us and mem_kib per QP) on one line; the server prints its own
 * numbers. Each of the first 64 QPs WRITEs a slot of its own in the
 * server's buffer, the others one they share; at the end the client READs
 * back each of the 64 and fails unless it holds the bytes of that QP's
 * last WRITE.
 *
 * reg registers MIB MiB of memory touched beforehand (ibv_reg_mr with
 * local write and remote read and write access) and deregisters it, three
 * times, and prints the median times and what registering took from
 * MemFree, per 4 KiB page:
 *
 *   manyqp_reg mib=M reg_ms=R dereg_ms=D kib_per_page=K
 *
 * Exit status 0 on success, 1 on any failure (with a message on stderr).
 */
#include "clock.h"
#include "number.h"
#include "verbs_helpers.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace
{

using namespace sroce_tools;

constexpr uint32_t kInFlight = 128; /* WRITEs outstanding in all */
constexpr uint32_t kMaxQps = 65536;
constexpr uint32_t kMaxSize = 1u << 20;
/*
 * The server's buffer: a slot of its own for each of the first kChecked
 * QPs, whose last WRITE is read back, and one all the others share.
 */
constexpr uint32_t kChecked = 64;
constexpr int kTimeoutMs = 60000;
constexpr uint32_t kMemMinQps = 64; /* memory per QP measured from here */

__attribute__((format(printf, 1, 2))) bool fail(const char *fmt, ...)
{
	va_list ap;

	std::fprintf(stderr, "sroce-manyqp: ");
	va_start(ap, fmt);
	std::vfprintf(stderr, fmt, ap);
	va_end(ap);
	std::fprintf(stderr, "\n");
	return false;
}

/* MemFree in KiB, or -1. */
long mem_free_kib()
{
	std::ifstream f("/proc/meminfo");
	std::string key;
	long v = -1;

	while (f >> key) {
		if (key == "MemFree:") {
			f >> v;
			return v;
		}
		f.ignore(4096, '\n');
	}
	return -1;
}

/* Whole-message I/O on the control connection. */
bool send_all(int fd, const void *buf, size_t len)
{
	const char *p = static_cast<const char *>(buf);

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail("control connection: send: %s", std::strerror(errno));
		p += n;
		len -= size_t(n);
	}
	return true;
}

bool recv_all(int fd, void *buf, size_t len)
{
	char *p = static_cast<char *>(buf);

	while (len) {
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail("control connection: %s",
			            n == 0 ? "closed by the peer" : std::strerror(errno));
		p += n;
		len -= size_t(n);
	}
	return true;
}

/* What each side tells the other. */
struct Hello {
	uint32_t qps = 0;
	uint32_t size = 0;
	uint8_t gid[16] = {};
	uint64_t addr = 0; /* server: its buffer */
	uint32_t rkey = 0;
	uint32_t setup_us = 0; /* per QP, once measured */
	int32_t mem_kib = 0;   /* per QP */
};

struct QpWire {
	uint32_t qpn;
	uint32_t psn;
};

/* The device side of either end. */
struct Side {
	ContextPtr ctx;
	PdPtr pd;
	CqPtr cq;
	MrPtr mr;
	std::vector<QpPtr> qps;
	std::vector<QpWire> mine;
	ibv_gid gid{};
	int gid_index = 0;
	ibv_mtu mtu = IBV_MTU_1024;
	void *buf = nullptr;
	size_t buf_len = 0;

	~Side()
	{
		qps.clear();
		mr.reset();
		if (buf)
			munmap(buf, buf_len);
	}
};

bool open_side(Side *s, const char *dev, const char *gid_text_arg)
{
	std::string why;
	unsigned long gi;
	ibv_port_attr pa{};

	if (!parse_uint_into(gid_text_arg, 0, 255, &gi, 10))
		return fail("bad GID index %s", gid_text_arg);
	s->ctx = open_device(dev, &why);
	if (!s->ctx)
		return fail("%s", why.c_str());
	s->gid_index = int(gi);
	if (ibv_query_gid(s->ctx.get(), 1, s->gid_index, &s->gid) ||
	    ibv_query_port(s->ctx.get(), 1, &pa))
		return fail("cannot query port 1 of %s", dev);
	s->mtu = pa.active_mtu;
	s->pd.reset(ibv_alloc_pd(s->ctx.get()));
	if (!s->pd)
		return fail("ibv_alloc_pd: %s", std::strerror(errno));
	return true;
}

bool alloc_buf(Side *s, size_t len, unsigned access)
{
	s->buf_len = len;
	s->buf = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED) {
		s->buf = nullptr;
		return fail("mmap: %s", std::strerror(errno));
	}
	std::memset(s->buf, 0, len);
	s->mr.reset(ibv_reg_mr(s->pd.get(), s->buf, len, int(access)));
	if (!s->mr)
		return fail("ibv_reg_mr: %s", std::strerror(errno));
	return true;
}

/*
 * Creates @n RC QPs of @depth send WRs on one CQ of @cqe entries; their
 * numbers and PSNs go to s->mine. Memory is measured around it by the
 * caller.
 */
bool create_qps(Side *s, uint32_t n, uint32_t depth, int cqe)
{
	ibv_device_attr da{};

	if (ibv_query_device(s->ctx.get(), &da))
		return fail("ibv_query_device: %s", std::strerror(errno));
	s->cq.reset(ibv_create_cq(s->ctx.get(), std::min(cqe, da.max_cqe), nullptr, nullptr, 0));
	if (!s->cq)
		return fail("ibv_create_cq: %s", std::strerror(errno));
	s->qps.reserve(n);
	for (uint32_t i = 0; i < n; i++) {
		ibv_qp_init_attr ia{};

		ia.send_cq = s->cq.get();
		ia.recv_cq = s->cq.get();
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = depth;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.sq_sig_all = 1;
		QpPtr qp(ibv_create_qp(s->pd.get(), &ia));
		if (!qp)
			return fail("ibv_create_qp: %s", std::strerror(errno));
		s->mine.push_back({qp->qp_num, uint32_t(std::rand()) & 0xffffff});
		s->qps.push_back(std::move(qp));
	}
	return true;
}

/* Every QP to RTR (@rts: and RTS) towards the peer's QP of the same index. */
bool connect_qps(Side *s, const std::vector<QpWire> &theirs, const uint8_t *dgid, bool rts)
{
	QpPath p;
	ibv_qp_state stage;

	p.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	p.path_mtu = s->mtu;
	std::memcpy(p.dgid.raw, dgid, 16);
	p.sgid_index = uint8_t(s->gid_index);
	p.max_dest_rd_atomic = 1;
	p.min_rnr_timer = 12;
	p.timeout = 16;
	p.retry_cnt = 7;
	p.rnr_retry = 7;
	p.max_rd_atomic = 1;
	for (size_t i = 0; i < s->qps.size(); i++) {
		p.dest_qpn = theirs[i].qpn;
		p.rq_psn = theirs[i].psn;
		p.sq_psn = s->mine[i].psn;
		if (rts) {
			if (int err = walk_qp_to_rts(s->qps[i].get(), p, IBV_QPS_RESET, &stage))
				return fail("QP to RTS: %s", errno_name(err).c_str());
			continue;
		}
		QpTransition t = qp_to_init(p);
		if (ibv_modify_qp(s->qps[i].get(), &t.attr, t.mask))
			return fail("QP to INIT: %s", std::strerror(errno));
		t = qp_to_rtr(p);
		if (ibv_modify_qp(s->qps[i].get(), &t.attr, t.mask))
			return fail("QP to RTR: %s", std::strerror(errno));
	}
	return true;
}

/* Creates and connects the QPs, measuring time and memory per QP. */
bool setup_qps(Side *s, uint32_t n, uint32_t depth, int cqe, Hello *mine, int ctl, Hello *theirs,
               bool rts)
{
	const long mem0 = mem_free_kib();
	const double t0 = now_s();
	std::vector<QpWire> peer(n);

	if (!create_qps(s, n, depth, cqe))
		return false;
	if (!send_all(ctl, s->mine.data(), n * sizeof(QpWire)) ||
	    !recv_all(ctl, peer.data(), n * sizeof(QpWire)) ||
	    !connect_qps(s, peer, theirs->gid, rts))
		return false;
	const double t1 = now_s();
	const long mem1 = mem_free_kib();

	mine->setup_us = uint32_t((t1 - t0) * 1e6 / n);
	/* One QP's few pages are lost among the others' allocations. */
	mine->mem_kib =
	    mem0 < 0 || mem1 < 0 || n < kMemMinQps ? -1 : int32_t((mem0 - mem1) / long(n));
	return true;
}

int tcp_listen(const char *port_arg)
{
	unsigned long port;
	sockaddr_in a{};
	int one = 1;

	if (!parse_uint_into(port_arg, 1, 65535, &port, 10))
		return fail("bad port %s", port_arg), -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_family = AF_INET;
	a.sin_port = htons(uint16_t(port));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) || listen(fd, 1))
		return fail("listen: %s", std::strerror(errno)), -1;
	std::printf("listening on %lu\n", port);
	std::fflush(stdout);
	int c = accept(fd, nullptr, nullptr);
	close(fd);
	if (c < 0)
		return fail("accept: %s", std::strerror(errno)), -1;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

int tcp_connect(const char *host, const char *port)
{
	addrinfo hints{}, *res = nullptr;
	int one = 1, fd = -1;

	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) || !res)
		return fail("cannot resolve %s", host), -1;
	for (int tries = 0; tries < 100; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail("cannot connect to %s", host), -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Byte @i of the WRITE with sequence number @seq. */
uint8_t pattern(uint64_t seq, uint32_t i)
{
	return uint8_t(seq * 131 + i * 7 + (seq >> 8));
}

int run_server(char **argv)
{
	Side s;
	Hello h, peer;
	char ok = 0;

	if (!open_side(&s, argv[0], argv[1]))
		return 1;
	int ctl = tcp_listen(argv[2]);
	if (ctl < 0 || !recv_all(ctl, &peer, sizeof(peer)))
		return 1;
	if (!peer.qps || peer.qps > kMaxQps || !peer.size || peer.size > kMaxSize)
		return fail("bad request from the client"), 1;
	if (!alloc_buf(&s, size_t(peer.size) * (kChecked + 1),
	               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ))
		return 1;
	h.qps = peer.qps;
	h.size = peer.size;
	std::memcpy(h.gid, s.gid.raw, 16);
	h.addr = uintptr_t(s.buf);
	h.rkey = s.mr->rkey;
	if (!send_all(ctl, &h, sizeof(h)) ||
	    !setup_qps(&s, peer.qps, 1, int(peer.qps) + 1, &h, ctl, &peer, false) ||
	    !send_all(ctl, &h, sizeof(h)) || !recv_all(ctl, &ok, 1))
		return 1;
	std::printf("manyqp_server qps=%u setup_us=%u mem_kib=%d\n", h.qps, h.setup_us, h.mem_kib);
	close(ctl);
	return ok == 1 ? 0 : 1;
}

/* The client's traffic: returns bytes moved in the measured interval. */
bool traffic(Side &s, const Hello &srv, uint32_t depth, double seconds, uint64_t *bytes,
             std::vector<uint64_t> *last_seq)
{
	const uint32_t n = uint32_t(s.qps.size()), size = srv.size;
	std::vector<uint32_t> out(n, 0);
	std::vector<uint32_t> free_slots; /* local source buffers not in use */
	std::vector<ibv_wc> wc(64);
	uint64_t seq = 0, done_bytes = 0;
	uint32_t rr = 0, busy = 0;
	double start = now_s(), measured_from = 0;
	const double warmup = std::min(0.2, seconds / 5);
	bool measuring = false;

	for (uint32_t i = 0; i < kInFlight; i++)
		free_slots.push_back(i);
	auto post = [&](uint32_t q) -> bool {
		const uint32_t slot = free_slots.back();
		uint8_t *src = static_cast<uint8_t *>(s.buf) + size_t(slot) * size;
		ibv_sge sge = {uintptr_t(src), size, s.mr->lkey};
		ibv_send_wr wr{}, *bad = nullptr;

		/* Each WRITE's bytes are its own; the first 64 QPs' last are checked. */
		if (q < kChecked)
			for (uint32_t i = 0; i < size; i++)
				src[i] = pattern(seq, i);
		wr.wr_id = (seq << 27) | (uint64_t(slot) << 20) | q;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = srv.addr + uint64_t(std::min(q, kChecked)) * size;
		wr.wr.rdma.rkey = srv.rkey;
		if (ibv_post_send(s.qps[q].get(), &wr, &bad))
			return fail("ibv_post_send: %s", std::strerror(errno));
		free_slots.pop_back();
		out[q]++;
		busy++;
		seq++;
		return true;
	};
	/* The next QP in turn with room; -1 when none has. */
	auto next_qp = [&]() -> int64_t {
		for (uint32_t k = 0; k < n; k++) {
			const uint32_t q = rr;

			rr = (rr + 1) % n;
			if (out[q] < depth)
				return q;
		}
		return -1;
	};
	while (busy < kInFlight) {
		const int64_t q = next_qp();
		if (q < 0 || !post(uint32_t(q)))
			break;
	}
	int64_t idle_since = now_ms();
	for (;;) {
		const double now = now_s();
		if (!measuring && now - start >= warmup) {
			measuring = true;
			measured_from = now;
			done_bytes = 0;
		}
		if (measuring && now - measured_from >= seconds)
			break;
		int got = ibv_poll_cq(s.cq.get(), int(wc.size()), wc.data());
		if (got < 0)
			return fail("ibv_poll_cq failed");
		if (!got) {
			if (now_ms() - idle_since > kTimeoutMs)
				return fail("no completion for 60 s");
			continue;
		}
		idle_since = now_ms();
		for (int i = 0; i < got; i++) {
			const uint32_t q = uint32_t(wc[i].wr_id & 0xfffff);

			if (wc[i].status != IBV_WC_SUCCESS)
				return fail("WRITE completed with %s",
				            ibv_wc_status_str(wc[i].status));
			if (q >= n)
				return fail("completion of an unknown QP");
			out[q]--;
			busy--;
			free_slots.push_back(uint32_t(wc[i].wr_id >> 20) & 0x7f);
			done_bytes += size;
			if (q < kChecked)
				(*last_seq)[q] = wc[i].wr_id >> 27;
		}
		while (busy < kInFlight) {
			const int64_t q = next_qp();
			if (q < 0 || !post(uint32_t(q)))
				break;
		}
	}
	*bytes = done_bytes;
	/* Drain: every WRITE still out completes, and counts for the check. */
	while (busy) {
		int got = ibv_poll_cq(s.cq.get(), int(wc.size()), wc.data());
		if (got < 0)
			return fail("ibv_poll_cq failed");
		if (!got && now_ms() - idle_since > kTimeoutMs)
			return fail("WRITEs still out after 60 s");
		if (got)
			idle_since = now_ms();
		for (int i = 0; i < got; i++) {
			const uint32_t q = uint32_t(wc[i].wr_id & 0xfffff);

			if (wc[i].status != IBV_WC_SUCCESS || q >= n)
				return fail("WRITE completed with %s",
				            ibv_wc_status_str(wc[i].status));
			out[q]--;
			busy--;
			if (q < kChecked)
				(*last_seq)[q] = wc[i].wr_id >> 27;
		}
	}
	return true;
}

/* READ back the slot of each of the first kChecked QPs: its last WRITE. */
bool check(Side &s, const Hello &srv, const std::vector<uint64_t> &last_seq)
{
	const uint32_t n = std::min<uint32_t>(uint32_t(s.qps.size()), kChecked);
	const uint32_t size = srv.size;
	std::vector<uint8_t> back(size);
	MrPtr mr(ibv_reg_mr(s.pd.get(), back.data(), size, IBV_ACCESS_LOCAL_WRITE));

	if (!mr)
		return fail("ibv_reg_mr: %s", std::strerror(errno));
	for (uint32_t q = 0; q < n; q++) {
		ibv_sge sge = {uintptr_t(back.data()), size, mr->lkey};
		ibv_send_wr wr{}, *bad = nullptr;
		ibv_wc wc{};

		wr.wr_id = q;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = srv.addr + uint64_t(q) * size;
		wr.wr.rdma.rkey = srv.rkey;
		if (ibv_post_send(s.qps[q].get(), &wr, &bad))
			return fail("ibv_post_send (READ): %s", std::strerror(errno));
		const int64_t end = now_ms() + kTimeoutMs;
		int got;
		while ((got = ibv_poll_cq(s.cq.get(), 1, &wc)) == 0 && now_ms() < end)
			;
		if (got != 1 || wc.status != IBV_WC_SUCCESS)
			return fail("READ back failed: %s",
			            got == 1 ? ibv_wc_status_str(wc.status) : "no completion");
		for (uint32_t i = 0; i < size; i++)
			if (back[i] != pattern(last_seq[q], i))
				return fail(
				    "QP %u: the server's buffer differs from its last WRITE", q);
	}
	return true;
}

int run_client(char **argv)
{
	Side s;
	Hello h, srv;
	unsigned long qps, size;
	double seconds;
	char ok = 1;

	if (!parse_uint_into(argv[4], 1, kMaxQps, &qps, 10) ||
	    !parse_uint_into(argv[5], 1, kMaxSize, &size, 10) ||
	    (seconds = std::atof(argv[6])) <= 0)
		return fail("bad QPS, SIZE or SECONDS"), 1;
	if (!open_side(&s, argv[0], argv[1]))
		return 1;
	int ctl = tcp_connect(argv[2], argv[3]);
	if (ctl < 0)
		return 1;
	const uint32_t depth = uint32_t((kInFlight + qps - 1) / qps);
	h.qps = uint32_t(qps);
	h.size = uint32_t(size);
	std::memcpy(h.gid, s.gid.raw, 16);
	if (!alloc_buf(&s, size_t(size) * kInFlight, IBV_ACCESS_LOCAL_WRITE) ||
	    !send_all(ctl, &h, sizeof(h)) || !recv_all(ctl, &srv, sizeof(srv)) ||
	    !setup_qps(&s, h.qps, depth, int(kInFlight) + 1, &h, ctl, &srv, true) ||
	    !recv_all(ctl, &srv, sizeof(srv)))
		return 1;

	uint64_t bytes = 0;
	std::vector<uint64_t> last_seq(kChecked, 0);
	bool good = traffic(s, srv, depth, seconds, &bytes, &last_seq) && check(s, srv, last_seq);

	if (good)
		std::printf("manyqp qps=%u size=%u seconds=%.1f bytes=%" PRIu64
		            " bw_MiBps=%.2f setup_us=%u mem_kib=%d peer_setup_us=%u "
		            "peer_mem_kib=%d\n",
		            h.qps, h.size, seconds, bytes, double(bytes) / seconds / 1048576.0,
		            h.setup_us, h.mem_kib, srv.setup_us, srv.mem_kib);
	ok = good ? 1 : 0;
	send_all(ctl, &ok, 1);
	close(ctl);
	return good ? 0 : 1;
}

int run_reg(char **argv)
{
	Side s;
	unsigned long mib;
	std::vector<double> reg, dereg;
	long kib_per_page_x1000 = -1;

	if (!parse_uint_into(argv[1], 1, 1UL << 20, &mib, 10))
		return fail("bad MIB %s", argv[1]), 1;
	std::string why;
	s.ctx = open_device(argv[0], &why);
	if (!s.ctx)
		return fail("%s", why.c_str()), 1;
	s.pd.reset(ibv_alloc_pd(s.ctx.get()));
	if (!s.pd)
		return fail("ibv_alloc_pd: %s", std::strerror(errno)), 1;
	const size_t len = size_t(mib) << 20;
	void *buf = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return fail("mmap: %s", std::strerror(errno)), 1;
	std::memset(buf, 1, len); /* faulted in: registering only pins */
	for (int i = 0; i < 3; i++) {
		const long mem0 = mem_free_kib();
		double t0 = now_s();
		MrPtr mr(ibv_reg_mr(s.pd.get(), buf, len,
		                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		                        IBV_ACCESS_REMOTE_READ));
		double t1 = now_s();
		if (!mr) {
			munmap(buf, len);
			return fail("ibv_reg_mr: %s", std::strerror(errno)), 1;
		}
		const long mem1 = mem_free_kib();
		mr.reset();
		double t2 = now_s();
		reg.push_back((t1 - t0) * 1e3);
		dereg.push_back((t2 - t1) * 1e3);
		if (i == 0 && mem0 >= 0 && mem1 >= 0)
			kib_per_page_x1000 = (mem0 - mem1) * 1000 / long(len / 4096);
	}
	munmap(buf, len);
	std::sort(reg.begin(), reg.end());
	std::sort(dereg.begin(), dereg.end());
	std::printf("manyqp_reg mib=%lu reg_ms=%.2f dereg_ms=%.2f kib_per_page=%.3f\n", mib, reg[1],
	            dereg[1], double(kib_per_page_x1000) / 1000.0);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 5 && std::strcmp(argv[1], "server") == 0)
		return run_server(argv + 2);
	if (argc == 9 && std::strcmp(argv[1], "client") == 0)
		return run_client(argv + 2);
	if (argc == 4 && std::strcmp(argv[1], "reg") == 0)
		return run_reg(argv + 2);
	std::fprintf(stderr, "usage: sroce-manyqp server DEV GID_INDEX PORT\n"
	                     "       sroce-manyqp client DEV GID_INDEX HOST PORT QPS SIZE SECONDS\n"
	                     "       sroce-manyqp reg DEV MIB\n");
	return 2;
}
