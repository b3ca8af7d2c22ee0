// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The forged RoCEv2 peer of the responder checks (see forged_peer.h).
 */
#include "forged_peer.h"

#include "commands.h"
#include "report.h"

#include "proto/sroce_icrc.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <linux/if_ether.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

namespace vc
{
namespace
{

bool read_mac(const std::string &netdev, uint8_t mac[6])
{
	std::ifstream f("/sys/class/net/" + netdev + "/address");
	std::string s;
	unsigned v[6];

	if (!(f >> s) || std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3],
	                             &v[4], &v[5]) != 6)
		return false;
	for (int i = 0; i < 6; i++)
		mac[i] = uint8_t(v[i]);
	return true;
}

std::string parent_of(const std::string &dev)
{
	std::ifstream f("/sys/class/infiniband/" + dev + "/parent");
	std::string s;

	f >> s;
	return s;
}

/* The capture socket's buffer: a long READ's full frames, with room. */
constexpr int kCaptureBuf = 96 << 20;

/* Frames the CPUs' input backlogs dropped (softnet_stat column 2, hex). */
unsigned long backlog_drops()
{
	std::ifstream f("/proc/net/softnet_stat");
	std::string processed, dropped, rest;
	unsigned long sum = 0;

	while (f >> processed >> dropped && std::getline(f, rest))
		sum += std::stoul(dropped, nullptr, 16);
	return sum;
}

/* The pid of ksoftirqd/@cpu, or -1. */
pid_t softirqd_of(int cpu)
{
	const std::string want = "ksoftirqd/" + std::to_string(cpu);
	DIR *d = opendir("/proc");
	pid_t found = -1;

	for (dirent *e; d && found < 0 && (e = readdir(d));) {
		std::ifstream f(std::string("/proc/") + e->d_name + "/comm");
		std::string comm;

		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && std::getline(f, comm) &&
		    comm == want)
			found = pid_t(std::stol(e->d_name));
	}
	if (d)
		closedir(d);
	return found;
}

} // namespace

bool all_are(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

long wait_counter(const std::string &dev, const char *name, long want)
{
	long v = read_counter(dev, name);

	for (int i = 0; i < 200 && v < want; i++) {
		usleep(10000);
		v = read_counter(dev, name);
	}
	return v;
}

bool parse_peer_target(const Args &args, PeerTarget *t, std::string *why)
{
	*t = PeerTarget{};
	if (!args.has("target"))
		return true;
	t->dev = args.value("target");
	t->iface = args.value("inject", "");
	if (t->iface.empty() || !args.has("peer-ip") ||
	    inet_pton(AF_INET, args.value("peer-ip"), t->peer_ip) != 1) {
		*why = "--target needs --inject IFACE and --peer-ip IPV4";
		return false;
	}
	return true;
}

PacketSocket::~PacketSocket()
{
	if (fd_ >= 0)
		close(fd_);
}

bool PacketSocket::open(int flags)
{
	fd_ = socket(AF_PACKET, SOCK_RAW | flags, htons(ETH_P_IP));
	return fd_ >= 0;
}

/* ------------------------------------------------------------------------
 * Injector
 */

bool Injector::open(const std::string &iface, const std::string &target_netdev,
                    const uint8_t src_ip[4], const uint8_t dst_ip[4], std::string *why)
{
	const unsigned ifindex = if_nametoindex(iface.c_str());

	if (!ifindex || !read_mac(iface, src_mac_) || !read_mac(target_netdev, dst_mac_)) {
		*why = "no interface " + iface + " or no MAC address of it or of " + target_netdev;
		return false;
	}
	std::memcpy(src_ip_, src_ip, 4);
	std::memcpy(dst_ip_, dst_ip, 4);
	if (!sock_.open(0)) {
		*why = std::string("AF_PACKET socket: ") + std::strerror(errno);
		return false;
	}
	to_.sll_family = AF_PACKET;
	to_.sll_protocol = htons(ETH_P_IP);
	to_.sll_ifindex = int(ifindex);
	to_.sll_halen = 6;
	std::memcpy(to_.sll_addr, dst_mac_, 6);
	return true;
}

std::vector<uint8_t> Injector::frame(const sroce_pkt &pkt, uint32_t len, uint8_t fill) const
{
	const std::vector<uint8_t> payload(len, fill);

	return frame(pkt, payload.data(), len);
}

std::vector<uint8_t> Injector::frame(const sroce_pkt &pkt, const uint8_t *payload,
                                     uint32_t len) const
{
	const uint32_t hdr = sroce_opcode_get(pkt.opcode)->hdr_len;
	const uint32_t pad = (4 - len % 4) % 4;
	const uint32_t bth_len = hdr + len + pad + SROCE_ICRC_BYTES;
	const uint32_t ip_len = SROCE_IPV4_HDR_BYTES + SROCE_UDP_HDR_BYTES + bth_len;
	std::vector<uint8_t> f(ETH_HLEN + ip_len, 0);
	uint8_t *ip = f.data() + ETH_HLEN;
	uint8_t *udp = ip + SROCE_IPV4_HDR_BYTES;
	uint8_t *bth = udp + SROCE_UDP_HDR_BYTES;
	sroce_pkt p = pkt;
	uint32_t sum = 0;

	std::copy(dst_mac_, dst_mac_ + 6, f.begin());
	std::copy(src_mac_, src_mac_ + 6, f.begin() + 6);
	sroce_put_be16(f.data() + 12, ETH_P_IP);
	ip[0] = 0x45;
	sroce_put_be16(ip + 2, uint16_t(ip_len));
	sroce_put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = SROCE_IPPROTO_UDP;
	std::memcpy(ip + 12, src_ip_, 4);
	std::memcpy(ip + 16, dst_ip_, 4);
	for (unsigned i = 0; i < SROCE_IPV4_HDR_BYTES; i += 2)
		sum += sroce_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sroce_put_be16(ip + 10, uint16_t(~sum));
	sroce_put_be16(udp, kPeerSport);
	sroce_put_be16(udp + 2, SROCE_UDP_PORT);
	sroce_put_be16(udp + 4, uint16_t(SROCE_UDP_HDR_BYTES + bth_len));
	p.pad = uint8_t(pad);
	sroce_build(bth, &p);
	std::memcpy(bth + hdr, payload, len);
	sroce_icrc_put(bth + bth_len - SROCE_ICRC_BYTES,
	               sroce_icrc_calc(ip, SROCE_IPV4_HDR_BYTES, bth_len));
	return f;
}

bool Injector::send(const std::vector<uint8_t> &f)
{
	for (;;) {
		if (sendto(sock_.fd(), f.data(), f.size(), 0,
		           reinterpret_cast<const sockaddr *>(&to_),
		           sizeof(to_)) == ssize_t(f.size()))
			return true;
		if (errno != ENOBUFS && errno != EAGAIN)
			return false;
		sched_yield();
	}
}

/* ------------------------------------------------------------------------
 * Capture
 */

bool Capture::open(const std::string &iface, const uint8_t from_ip[4], const uint8_t to_ip[4],
                   std::string *why)
{
	const unsigned ifindex = if_nametoindex(iface.c_str());
	sockaddr_ll at{};
	int size = kCaptureBuf;

	std::memcpy(from_, from_ip, 4);
	std::memcpy(to_, to_ip, 4);
	if (!ifindex || !sock_.open(SOCK_NONBLOCK)) {
		*why = "capture on " + iface + ": " +
		       (ifindex ? std::strerror(errno) : "no such interface");
		return false;
	}
	at.sll_family = AF_PACKET;
	at.sll_protocol = htons(ETH_P_IP);
	at.sll_ifindex = int(ifindex);
	if (bind(sock_.fd(), reinterpret_cast<const sockaddr *>(&at), sizeof(at))) {
		*why = std::string("binding the capture socket: ") + std::strerror(errno);
		return false;
	}
	/* Root may pass net.core.rmem_max; if not, take what there is. */
	if (setsockopt(sock_.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(sock_.fd(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	buf_.resize(65536);
	drops();
	return true;
}

int Capture::next(Captured *c, int timeout_ms)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);

	for (;;) {
		sockaddr_ll from{};
		socklen_t from_len = sizeof(from);
		const ssize_t n = recvfrom(sock_.fd(), buf_.data(), buf_.size(), 0,
		                           reinterpret_cast<sockaddr *>(&from), &from_len);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (n < 0) {
			const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			    end - std::chrono::steady_clock::now());
			pollfd pfd = {sock_.fd(), POLLIN, 0};

			if (left.count() <= 0)
				return 0;
			poll(&pfd, 1, int(left.count()));
			continue;
		}
		/* Our own frames (outgoing) and anything not from the target to the peer. */
		const uint8_t *l3 = buf_.data() + ETH_HLEN;
		const size_t len = size_t(n) > ETH_HLEN ? size_t(n) - ETH_HLEN : 0;

		if (from.sll_pkttype == PACKET_OUTGOING || len < SROCE_IPV4_HDR_BYTES ||
		    std::memcmp(l3 + 12, from_, 4) || std::memcmp(l3 + 16, to_, 4) ||
		    sroce_parse_roce_frame(l3, len, &c->pkt))
			continue;
		const uint8_t *bth = l3 + SROCE_IPV4_HDR_BYTES + SROCE_UDP_HDR_BYTES;

		/* More than the datagram and more than the minimum frame's padding. */
		if (size_t(n) > ETH_ZLEN && len > sroce_get_be16(l3 + 2))
			bursts_++;

		c->payload.assign(bth + c->pkt.payload_off,
		                  bth + c->pkt.payload_off + c->pkt.payload_len);
		return 1;
	}
}

void Capture::drain(std::vector<Captured> *out)
{
	Captured c;

	while (next(&c, 0) == 1)
		out->push_back(std::move(c));
}

void Capture::until_quiet(std::vector<Captured> *out, int quiet_ms, int max_ms)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
	Captured c;

	while (std::chrono::steady_clock::now() < end && next(&c, quiet_ms) == 1)
		out->push_back(std::move(c));
}

unsigned long Capture::drops()
{
	tpacket_stats st{};
	socklen_t len = sizeof(st);
	const unsigned long backlog = backlog_drops();
	unsigned long lost = bursts_ + backlog - backlog_drops_;

	bursts_ = 0;
	backlog_drops_ = backlog;
	if (!getsockopt(sock_.fd(), SOL_PACKET, PACKET_STATISTICS, &st, &len))
		lost += st.tp_drops;
	return lost;
}

Unpreempted::Unpreempted()
{
	const int cpu = sched_getcpu();
	sched_param sp{};
	cpu_set_t here;

	/* The work item runs on the CPU its softirq queued it from: ours. */
	if (cpu >= 0 && !sched_getaffinity(0, sizeof(cpus_), &cpus_)) {
		CPU_ZERO(&here);
		CPU_SET(cpu, &here);
		pinned_ = !sched_setaffinity(0, sizeof(here), &here);
	}
	sp.sched_priority = 1;
	on_ = !sched_setscheduler(0, SCHED_FIFO, &sp);
	softirqd_ = on_ && pinned_ ? softirqd_of(cpu) : -1;
	if (softirqd_ < 0)
		return;
	softirqd_policy_ = sched_getscheduler(softirqd_);
	sp.sched_priority = 2;
	if (softirqd_policy_ < 0 || sched_getparam(softirqd_, &softirqd_param_) ||
	    sched_setscheduler(softirqd_, SCHED_FIFO, &sp))
		softirqd_ = -1;
}

Unpreempted::~Unpreempted()
{
	sched_param sp{};

	if (softirqd_ >= 0)
		sched_setscheduler(softirqd_, softirqd_policy_, &softirqd_param_);
	if (on_)
		sched_setscheduler(0, SCHED_OTHER, &sp);
	if (pinned_)
		sched_setaffinity(0, sizeof(cpus_), &cpus_);
}

/* ------------------------------------------------------------------------
 * ForgedPeer
 */

bool ForgedPeer::open(const PeerTarget &t, int cq_size, std::string *why)
{
	ibv_port_attr port{};

	t_ = t;
	netdev_ = parent_of(t.dev);
	ctx_ = open_device(t.dev.c_str(), why);
	if (!ctx_)
		return false;
	if (!pick_gid(ctx_.get(), -1, &gid_, why) || !gid_.ipv4) {
		if (why->empty())
			*why = t.dev + ": no IPv4 RoCEv2 GID";
		return false;
	}
	if (ibv_query_port(ctx_.get(), 1, &port)) {
		*why = "ibv_query_port failed";
		return false;
	}
	mtu_ = uint32_t(mtu_bytes(port.active_mtu));
	std::memcpy(ip_, gid_.gid.raw + 12, 4);
	peer_gid_ = gid_;
	std::memset(peer_gid_.gid.raw, 0, 10);
	peer_gid_.gid.raw[10] = 0xff;
	peer_gid_.gid.raw[11] = 0xff;
	std::memcpy(peer_gid_.gid.raw + 12, t.peer_ip, 4);
	pd_.reset(ibv_alloc_pd(ctx_.get()));
	cq_.reset(pd_ ? ibv_create_cq(ctx_.get(), cq_size, nullptr, nullptr, 0) : nullptr);
	if (!cq_) {
		*why = "PD or CQ: " + errno_name(null_errno());
		return false;
	}
	return inj_.open(t.iface, netdev_, t.peer_ip, ip_, why);
}

std::string ForgedPeer::describe() const
{
	char s[160];

	std::snprintf(s, sizeof(s), "target %s (%s, path MTU %u), forged peer %u.%u.%u.%u from %s",
	              t_.dev.c_str(), netdev_.c_str(), mtu_, t_.peer_ip[0], t_.peer_ip[1],
	              t_.peer_ip[2], t_.peer_ip[3], t_.iface.c_str());
	return s;
}

int ForgedPeer::connect(ibv_qp *qp, unsigned access, uint32_t rq_psn, uint32_t sq_psn)
{
	QpTransition steps[3] = {to_init(IBV_QPT_RC, access),
	                         to_rtr(IBV_QPT_RC, peer_gid_, kPeerQpn), to_rts(IBV_QPT_RC)};

	steps[1].attr.path_mtu = mtu_ >= 4096   ? IBV_MTU_4096
	                         : mtu_ >= 2048 ? IBV_MTU_2048
	                                        : IBV_MTU_1024;
	steps[1].attr.ah_attr.grh.sgid_index = uint8_t(gid_.index);
	steps[1].attr.rq_psn = rq_psn;
	steps[2].attr.sq_psn = sq_psn;
	for (auto &s : steps) {
		const int err = ibv_modify_qp(qp, &s.attr, s.mask);

		if (err)
			return err;
	}
	return 0;
}

QpPtr ForgedPeer::victim(const Victim &v, std::string *why)
{
	ibv_qp_init_attr ia{};

	ia.send_cq = cq_.get();
	ia.recv_cq = cq_.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = v.max_send_wr;
	ia.cap.max_recv_wr = v.max_recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = v.max_recv_sge;
	QpPtr qp(ibv_create_qp(pd_.get(), &ia));

	if (!qp) {
		*why = "ibv_create_qp: " + errno_name(null_errno());
		return nullptr;
	}
	const int err = connect(qp.get(), v.access, kRqPsn, kSqPsn);

	if (err) {
		*why = "ibv_modify_qp: " + errno_name(err);
		return nullptr;
	}
	return qp;
}

sroce_pkt ForgedPeer::request(uint8_t opcode, const ibv_qp *qp, uint32_t psn) const
{
	sroce_pkt p{};

	p.opcode = opcode;
	p.pkey = SROCE_DEFAULT_PKEY;
	p.dqpn = qp->qp_num;
	p.psn = psn & SROCE_PSN_MASK;
	return p;
}

} /* namespace vc */
