// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-udp-lat: UDP ping-pong between two hosts, the link's own latency
 * for the benchmark (tools/bench): what ib_send_lat measures, without RDMA.
 *
 *   sroce-udp-lat [--pair] -s PORT ITERS SIZE       (server: echoes ITERS datagrams)
 *   sroce-udp-lat [--pair] -c HOST PORT ITERS SIZE  (client)
 *
 * --pair sends each message as two datagrams, as RC sends a reply behind
 * the ACK of the request it answers: a 20-byte one (an RoCEv2 ACK's BTH,
 * AETH and ICRC) and then the data (SIZE at most 20 bytes), in one
 * sendmmsg() system call. Both must arrive before the round counts: the
 * floor for a protocol that puts two packets on the wire each way. Each
 * datagram is its own transmission, with a NIC kick each (as rdma_rxe
 * sends its ACK and its reply); sroce sends the two as one UDP GSO burst
 * with one kick. UDP_SEGMENT, which would do the same here, needs checksum
 * offload, which the rig's NICs do not have (the link's qemu backend has
 * no virtio-net header), and fails with EIO.
 *
 * Both sides busy-poll their socket (MSG_DONTWAIT), as perftest polls its
 * completion queue, so no scheduler wakeup is counted that ib_send_lat does
 * not have either. The client prints one line in perftest's latency row
 * layout, half the round trip in microseconds:
 *
 *   SIZE ITERS MIN MAX TYPICAL AVERAGE STDEV P99 P99.9
 *
 * Every reply must echo the request byte for byte (a counter pattern that
 * changes with each round); the client fails on any mismatch.
 */
#include "clock.h"
#include "number.h"

#include <arpa/inet.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace
{

using sroce_tools::now_s;
using sroce_tools::parse_uint_into;

constexpr unsigned long max_size = 8192;
// --pair: the leading datagram's size, and the largest data datagram.
constexpr size_t pair_lead = 20;
bool pair_mode = false;
// Gives up when the peer is silent this long (seconds).
constexpr double idle_limit = 10.0;

void fill(std::vector<unsigned char> &buf, unsigned long round)
{
	for (size_t i = 0; i < buf.size(); i++)
		buf[i] = static_cast<unsigned char>(round * 131 + i * 7);
}

/*
 * SROCE_UDP_BUSY_POLL=US sets SO_BUSY_POLL on the socket (and
 * SROCE_UDP_PREFER_BUSY_POLL=1 SO_PREFER_BUSY_POLL): each empty recvfrom
 * then polls the netdev's receive queue once, the socket counterpart of
 * the provider's busy poll (Documentation/architecture.rst).
 */
bool set_busy_poll(int fd)
{
	const char *us = std::getenv("SROCE_UDP_BUSY_POLL");
	const char *prefer = std::getenv("SROCE_UDP_PREFER_BUSY_POLL");
	unsigned long v;

	if (us && *us) {
		if (!parse_uint_into(us, 0, 1000000, &v, 10)) {
			std::fprintf(stderr, "udp-lat: bad SROCE_UDP_BUSY_POLL %s\n", us);
			return false;
		}
		int val = static_cast<int>(v);
		if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &val, sizeof(val))) {
			std::perror("udp-lat: SO_BUSY_POLL");
			return false;
		}
	}
	if (prefer && !std::strcmp(prefer, "1")) {
		int one = 1;
		if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one))) {
			std::perror("udp-lat: SO_PREFER_BUSY_POLL");
			return false;
		}
	}
	return true;
}

// Receive one datagram of exactly buf.size() bytes; false on error/timeout.
bool recv_one(int fd, std::vector<unsigned char> &buf, sockaddr_in *from)
{
	double start = now_s();
	socklen_t len = sizeof(*from);

	for (unsigned int spins = 0;; spins++) {
		ssize_t n = recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC,
		                     reinterpret_cast<sockaddr *>(from), &len);
		if (n >= 0) {
			if (static_cast<size_t>(n) != buf.size()) {
				std::fprintf(stderr,
				             "udp-lat: datagram of %zd bytes, expected %zu\n", n,
				             buf.size());
				return false;
			}
			return true;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			std::perror("udp-lat: recvfrom");
			return false;
		}
		if ((spins & 1023) == 0 && now_s() - start > idle_limit) {
			std::fprintf(stderr, "udp-lat: no datagram for %.0f s\n", idle_limit);
			return false;
		}
	}
}

/*
 * Receive one message: one datagram, or with --pair the 20-byte one and
 * then the data (both busy-polled; the leading one's bytes are not data).
 * The leading one's buffer is allocated once, not in the timed loop.
 */
bool recv_msg(int fd, std::vector<unsigned char> &buf, sockaddr_in *from)
{
	static std::vector<unsigned char> lead(pair_lead);

	if (pair_mode && !recv_one(fd, lead, from))
		return false;
	return recv_one(fd, buf, from);
}

/*
 * Send one message to @to (nullptr: the connected peer): one datagram, or
 * with --pair a 20-byte one and then the data, in one sendmmsg().
 */
bool send_msg(int fd, const std::vector<unsigned char> &buf, const sockaddr_in *to)
{
	static const unsigned char lead[pair_lead] = {};
	iovec iov[2] = {};
	mmsghdr mm[2] = {};
	unsigned int n = pair_mode ? 2 : 1;

	iov[0].iov_base = const_cast<unsigned char *>(lead);
	iov[0].iov_len = sizeof(lead);
	iov[1].iov_base = const_cast<unsigned char *>(buf.data());
	iov[1].iov_len = buf.size();
	for (unsigned int i = 0; i < n; i++) {
		mm[i].msg_hdr.msg_name = const_cast<sockaddr_in *>(to);
		mm[i].msg_hdr.msg_namelen = to ? sizeof(*to) : 0;
		mm[i].msg_hdr.msg_iov = &iov[2 - n + i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	if (sendmmsg(fd, mm, n, 0) != static_cast<int>(n)) {
		std::perror("udp-lat: sendmmsg");
		return false;
	}
	return true;
}

int server(unsigned long port, unsigned long iters, unsigned long size)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_in addr{};
	std::vector<unsigned char> buf(size);

	if (fd < 0) {
		std::perror("udp-lat: socket");
		return 1;
	}
	if (!set_busy_poll(fd))
		return 1;
	addr.sin_family = AF_INET;
	addr.sin_port = htons(static_cast<uint16_t>(port));
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr))) {
		std::perror("udp-lat: bind");
		return 1;
	}
	std::printf("udp-lat: listening on %lu\n", port);
	std::fflush(stdout);
	for (unsigned long i = 0; i < iters; i++) {
		sockaddr_in from{};

		if (!recv_msg(fd, buf, &from) || !send_msg(fd, buf, &from))
			return 1;
	}
	return 0;
}

int client(const char *host, unsigned long port, unsigned long iters, unsigned long size)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	sockaddr_in addr{};
	std::vector<unsigned char> out(size), in(size);
	std::vector<double> half_rtt_us;

	if (fd < 0) {
		std::perror("udp-lat: socket");
		return 1;
	}
	if (!set_busy_poll(fd))
		return 1;
	addr.sin_family = AF_INET;
	addr.sin_port = htons(static_cast<uint16_t>(port));
	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		std::fprintf(stderr, "udp-lat: bad IPv4 address %s\n", host);
		return 1;
	}
	if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr))) {
		std::perror("udp-lat: connect");
		return 1;
	}
	half_rtt_us.reserve(iters);
	for (unsigned long i = 0; i < iters; i++) {
		sockaddr_in from{};

		fill(out, i);
		double t0 = now_s();
		if (!send_msg(fd, out, nullptr) || !recv_msg(fd, in, &from))
			return 1;
		double t1 = now_s();
		if (in != out) {
			std::fprintf(stderr, "udp-lat: reply %lu differs from the request\n", i);
			return 1;
		}
		half_rtt_us.push_back((t1 - t0) * 1e6 / 2);
	}

	std::vector<double> v = half_rtt_us;
	std::sort(v.begin(), v.end());
	double sum = 0, sq = 0;
	for (double x : v)
		sum += x;
	double avg = sum / static_cast<double>(v.size());
	for (double x : v)
		sq += (x - avg) * (x - avg);
	auto pct = [&v](double p) {
		size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
		return v[std::min(i, v.size() - 1)];
	};
	std::printf(" #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] "
	            "t_stdev[usec] 99%%[usec] 99.9%%[usec]\n");
	std::printf(" %lu %lu %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n", size, iters, v.front(),
	            v.back(), pct(0.5), avg, std::sqrt(sq / static_cast<double>(v.size())),
	            pct(0.99), pct(0.999));
	return 0;
}

void usage()
{
	std::fprintf(stderr,
	             "usage: sroce-udp-lat [--pair] -s PORT ITERS SIZE\n"
	             "       sroce-udp-lat [--pair] -c HOST PORT ITERS SIZE\n"
	             "       (--pair: SIZE at most %zu)\n",
	             pair_lead);
}

} // namespace

int main(int argc, char **argv)
{
	unsigned long port, iters, size;

	if (argc > 1 && !std::strcmp(argv[1], "--pair")) {
		pair_mode = true;
		argc--;
		argv++;
	}
	unsigned long size_max = pair_mode ? pair_lead : max_size;
	if (argc == 5 && !std::strcmp(argv[1], "-s") &&
	    parse_uint_into(argv[2], 1, 65535, &port, 10) &&
	    parse_uint_into(argv[3], 1, 10000000, &iters, 10) &&
	    parse_uint_into(argv[4], 1, size_max, &size, 10))
		return server(port, iters, size);
	if (argc == 6 && !std::strcmp(argv[1], "-c") &&
	    parse_uint_into(argv[3], 1, 65535, &port, 10) &&
	    parse_uint_into(argv[4], 1, 10000000, &iters, 10) &&
	    parse_uint_into(argv[5], 1, size_max, &size, 10))
		return client(argv[2], port, iters, size);
	usage();
	return 2;
}
