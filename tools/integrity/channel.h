/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The out-of-band control connection between the two hosts: one TCP
 * connection, framed messages (type, length, payload) with big-endian
 * fields. Every receive has a time limit; a peer that gives up sends an
 * abort message with its reason, which the other side reports.
 */
#pragma once

#include "clock.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace integ
{

enum class MsgType : uint32_t {
	hello = 1, /* client -> server: version, run parameters, capabilities */
	hello_ack, /* server -> client: capabilities */
	qp_info,   /* both: QPN, PSN, GID, memory regions */
	ready,     /* responder -> requester: the round (or case) is set up */
	done,      /* requester -> responder: all work requests completed */
	result,    /* responder -> requester: what the responder found */
	round,     /* client -> server: go on with the next round, or stop */
	abort,     /* either: giving up, with a reason */
	summary,   /* both, at the end: what each side counted */
	vanish,    /* requester -> responder (vanish mode): take the link down now */
	verdict,   /* both (exchange mode): did this side's counters pass */
};

class Writer
{
      public:
	Writer &u8(uint8_t v);
	Writer &u32(uint32_t v);
	Writer &u64(uint64_t v);
	Writer &bytes(const void *p, size_t n);
	Writer &str(const std::string &s);
	const std::vector<uint8_t> &data() const { return buf_; }

      private:
	std::vector<uint8_t> buf_;
};

/* Reads fields in order; past the end every read yields 0 and ok() is false. */
class Reader
{
      public:
	explicit Reader(const std::vector<uint8_t> &buf) : buf_(buf) {}
	uint8_t u8();
	uint32_t u32();
	uint64_t u64();
	void bytes(void *p, size_t n);
	std::string str();
	bool ok() const { return ok_; }

      private:
	bool take(size_t n);

	const std::vector<uint8_t> &buf_;
	size_t pos_ = 0;
	bool ok_ = true;
};

class Channel
{
      public:
	Channel() = default;
	Channel(const Channel &) = delete;
	Channel &operator=(const Channel &) = delete;
	~Channel();

	/* Listen on @port (IPv4 and IPv6) and accept one client. */
	bool accept_one(uint16_t port, unsigned timeout_s, std::string *why);
	/* Connect to @host:@port, retrying until the server listens. */
	bool connect_to(const std::string &host, uint16_t port, unsigned timeout_s,
	                std::string *why);

	bool send(MsgType type, const Writer &w, std::string *why);
	bool send(MsgType type, std::string *why) { return send(type, Writer(), why); }
	/*
	 * Receive the next message, which must be of type @want, within
	 * @timeout_ms. An abort from the peer fails with its reason.
	 */
	bool recv(MsgType want, std::vector<uint8_t> *payload, unsigned timeout_ms,
	          std::string *why);
	/* True when a message (or the end of the stream) is there to be read. */
	bool readable(int timeout_ms) const;
	/* Tell the peer we give up (best effort). */
	void abort(const std::string &reason);
	std::string peer_name() const { return peer_; }

      private:
	bool read_full(void *p, size_t n, int64_t deadline_ms, std::string *why);

	int fd_ = -1;
	std::string peer_;
};

const char *msg_name(MsgType t);
/* The monotonic clock of tools/common/clock.h. */
using sroce_tools::now_ms;

} // namespace integ
