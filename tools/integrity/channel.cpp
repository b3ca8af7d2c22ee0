// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * TCP control connection (see channel.h).
 */
#include "channel.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <endian.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace integ
{

namespace
{

constexpr uint32_t kMaxPayload = 1u << 16;

std::string errno_text(const char *what)
{
	return std::string(what) + ": " + std::strerror(errno);
}

/* Wait until @fd is ready for @events or @deadline_ms passes. */
int wait_fd(int fd, short events, int64_t deadline_ms)
{
	for (;;) {
		const int64_t left = deadline_ms - now_ms();
		pollfd p = {fd, events, 0};

		if (left <= 0)
			return 0;
		const int n = poll(&p, 1, int(std::min<int64_t>(left, 1000)));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 0)
			return n;
	}
}

std::string addr_text(const sockaddr_storage &ss)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(ss).sin_addr, host,
		          sizeof(host));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(ss).sin6_addr, host,
		          sizeof(host));
	return host;
}

void tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

} // namespace

const char *msg_name(MsgType t)
{
	switch (t) {
	case MsgType::hello:
		return "hello";
	case MsgType::hello_ack:
		return "hello_ack";
	case MsgType::qp_info:
		return "qp_info";
	case MsgType::ready:
		return "ready";
	case MsgType::done:
		return "done";
	case MsgType::result:
		return "result";
	case MsgType::round:
		return "round";
	case MsgType::abort:
		return "abort";
	case MsgType::verdict:
		return "verdict";
	case MsgType::summary:
		return "summary";
	case MsgType::vanish:
		return "vanish";
	}
	return "unknown";
}

Writer &Writer::u8(uint8_t v)
{
	buf_.push_back(v);
	return *this;
}

Writer &Writer::u32(uint32_t v)
{
	const uint32_t be = htobe32(v);

	return bytes(&be, sizeof(be));
}

Writer &Writer::u64(uint64_t v)
{
	const uint64_t be = htobe64(v);

	return bytes(&be, sizeof(be));
}

Writer &Writer::bytes(const void *p, size_t n)
{
	const uint8_t *b = static_cast<const uint8_t *>(p);

	buf_.insert(buf_.end(), b, b + n);
	return *this;
}

Writer &Writer::str(const std::string &s)
{
	u32(uint32_t(s.size()));
	return bytes(s.data(), s.size());
}

bool Reader::take(size_t n)
{
	if (!ok_ || buf_.size() - pos_ < n) {
		ok_ = false;
		return false;
	}
	return true;
}

uint8_t Reader::u8()
{
	return take(1) ? buf_[pos_++] : 0;
}

uint32_t Reader::u32()
{
	uint32_t be = 0;

	bytes(&be, sizeof(be));
	return be32toh(be);
}

uint64_t Reader::u64()
{
	uint64_t be = 0;

	bytes(&be, sizeof(be));
	return be64toh(be);
}

void Reader::bytes(void *p, size_t n)
{
	if (!take(n)) {
		std::memset(p, 0, n);
		return;
	}
	std::memcpy(p, buf_.data() + pos_, n);
	pos_ += n;
}

std::string Reader::str()
{
	const uint32_t n = u32();

	if (!take(n))
		return "";
	std::string s(reinterpret_cast<const char *>(buf_.data() + pos_), n);
	pos_ += n;
	return s;
}

Channel::~Channel()
{
	if (fd_ >= 0)
		close(fd_);
}

bool Channel::accept_one(uint16_t port, unsigned timeout_s, std::string *why)
{
	sockaddr_in6 sa{};
	sockaddr_storage peer{};
	socklen_t plen = sizeof(peer);
	int one = 1, zero = 0;
	int lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0) {
		*why = errno_text("socket");
		return false;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	sa.sin6_family = AF_INET6;
	sa.sin6_port = htons(port);
	sa.sin6_addr = in6addr_any;
	if (bind(lfd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) || listen(lfd, 1)) {
		*why = errno_text("bind/listen");
		close(lfd);
		return false;
	}
	if (wait_fd(lfd, POLLIN, now_ms() + int64_t(timeout_s) * 1000) <= 0) {
		*why = "no client connected within " + std::to_string(timeout_s) + " s";
		close(lfd);
		return false;
	}
	fd_ = accept4(lfd, reinterpret_cast<sockaddr *>(&peer), &plen, SOCK_CLOEXEC);
	close(lfd);
	if (fd_ < 0) {
		*why = errno_text("accept");
		return false;
	}
	tune(fd_);
	peer_ = addr_text(peer);
	return true;
}

bool Channel::connect_to(const std::string &host, uint16_t port, unsigned timeout_s,
                         std::string *why)
{
	const int64_t deadline = now_ms() + int64_t(timeout_s) * 1000;
	addrinfo hints{}, *res = nullptr;
	const std::string service = std::to_string(port);

	hints.ai_socktype = SOCK_STREAM;
	if (int err = getaddrinfo(host.c_str(), service.c_str(), &hints, &res)) {
		*why = "getaddrinfo " + host + ": " + gai_strerror(err);
		return false;
	}
	for (;;) {
		for (addrinfo *ai = res; ai; ai = ai->ai_next) {
			int fd =
			    socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

			if (fd < 0)
				continue;
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
				sockaddr_storage ss{};

				std::memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
				peer_ = addr_text(ss);
				fd_ = fd;
				tune(fd_);
				freeaddrinfo(res);
				return true;
			}
			*why = errno_text("connect");
			close(fd);
		}
		if (now_ms() >= deadline)
			break;
		usleep(100 * 1000);
	}
	freeaddrinfo(res);
	*why = "cannot connect to " + host + " port " + service + " within " +
	       std::to_string(timeout_s) + " s (" + *why + ")";
	return false;
}

bool Channel::send(MsgType type, const Writer &w, std::string *why)
{
	Writer frame;
	const std::vector<uint8_t> &payload = w.data();

	frame.u32(uint32_t(type))
	    .u32(uint32_t(payload.size()))
	    .bytes(payload.data(), payload.size());
	const std::vector<uint8_t> &d = frame.data();
	size_t done = 0;

	while (done < d.size()) {
		const ssize_t n = ::send(fd_, d.data() + done, d.size() - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*why = errno_text("send to the peer");
			return false;
		}
		done += size_t(n);
	}
	return true;
}

bool Channel::read_full(void *p, size_t n, int64_t deadline_ms, std::string *why)
{
	uint8_t *b = static_cast<uint8_t *>(p);

	while (n) {
		const int r = wait_fd(fd_, POLLIN, deadline_ms);

		if (r == 0) {
			*why = "timed out";
			return false;
		}
		const ssize_t got = ::recv(fd_, b, n, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0) {
			*why = "the peer closed the connection";
			return false;
		}
		if (got < 0) {
			*why = errno_text("recv");
			return false;
		}
		b += got;
		n -= size_t(got);
	}
	return true;
}

bool Channel::recv(MsgType want, std::vector<uint8_t> *payload, unsigned timeout_ms,
                   std::string *why)
{
	const int64_t deadline = now_ms() + timeout_ms;
	uint32_t hdr[2];
	std::string err;

	if (!read_full(hdr, sizeof(hdr), deadline, &err)) {
		*why = std::string("waiting for the peer's ") + msg_name(want) + ": " + err;
		if (err == "timed out")
			*why += " after " + std::to_string(timeout_ms / 1000) + " s";
		return false;
	}
	const MsgType type = MsgType(be32toh(hdr[0]));
	const uint32_t len = be32toh(hdr[1]);

	if (len > kMaxPayload) {
		*why = "control message of " + std::to_string(len) + " bytes";
		return false;
	}
	payload->assign(len, 0);
	if (!read_full(payload->data(), len, deadline, &err)) {
		*why = std::string("reading the peer's ") + msg_name(type) + ": " + err;
		return false;
	}
	if (type == MsgType::abort) {
		Reader r(*payload);

		*why = "the peer gave up: " + r.str();
		return false;
	}
	if (type != want) {
		*why = std::string("expected the peer's ") + msg_name(want) + ", got " +
		       msg_name(type);
		return false;
	}
	return true;
}

bool Channel::readable(int timeout_ms) const
{
	pollfd p = {fd_, POLLIN, 0};

	return fd_ >= 0 && ::poll(&p, 1, timeout_ms) > 0;
}

void Channel::abort(const std::string &reason)
{
	std::string ignored;

	if (fd_ >= 0)
		send(MsgType::abort, Writer().str(reason), &ignored);
}

} // namespace integ
