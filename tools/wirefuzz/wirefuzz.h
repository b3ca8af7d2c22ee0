/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-wirefuzz: hostile RoCEv2 packets for a live device, built with the
 * shared protocol core (kernel/proto/) and sent over a plain UDP socket.
 *
 * The crafter produces one UDP payload (BTH .. ICRC) at a time from a
 * seeded generator, so a run is reproduced by its seed. The ICRC covers
 * the IP and UDP headers the sending kernel will put around the payload;
 * the crafter computes it over the same headers (source address and port
 * bound, IPv4 ID 0 with DF, as Linux sends an unconnected datagram).
 *
 * Safety rule (without --hit-window): a packet that the receiver would
 * accept (correct ICRC, sroce_parse() passes, P_Key matches, transport of
 * the QP's type) never carries a PSN the target QP could still expect:
 * the fuzzer shares the real peer's address, so such a packet would be
 * indistinguishable from the peer's own and would legitimately change the
 * connection. Accepted requests to an RC QP get PSNs before its initial
 * rq_psn (duplicates), accepted responses PSNs before its initial sq_psn;
 * the PSNs the QP can reach during a run ([initial, initial + guard)) are
 * kept for packets that must be dropped (bad ICRC, pad, length, opcode,
 * P_Key...). UC and unknown QPs accept any PSN, so accepted packets for
 * them go to QPNs no QP has instead.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/sroce_hdr.h"
#include "proto/sroce_icrc.h"

#include "prng.h"

namespace wirefuzz
{

enum class QpType { unknown, rc, uc, ud, gsi };

/* A QP of the target, from --qp or `rdma resource show qp`. */
struct Target {
	uint32_t qpn = 0;
	QpType type = QpType::unknown;
	bool has_rq_psn = false;
	bool has_sq_psn = false;
	uint32_t rq_psn = 0; /* first PSN its responder expects */
	uint32_t sq_psn = 0; /* first PSN its requester sends */
	bool has_rqpn = false;
	uint32_t rqpn = 0; /* its peer QP, on the fuzzing host */
	std::string state;
};

/* Addresses and ports the packets travel with (they are in the ICRC). */
struct Endpoints {
	bool ipv6 = false;
	uint8_t src[16] = {};
	uint8_t dst[16] = {};
	uint16_t sport = 0;
};

/* Mutation classes, in the order they are reported. */
enum Class {
	C_VALID,        /* well-formed, every opcode of the QP's transport */
	C_PSN_EDGE,     /* well-formed, PSNs at the wrap and around the anchor */
	C_OPCODE_SWEEP, /* all 256 opcode values in turn */
	C_BAD_ICRC,     /* a bit flipped in the ICRC or in what it covers */
	C_TRUNCATED,    /* cut short, ICRC recomputed or not */
	C_BAD_PAD,      /* PadCnt that does not match the payload */
	C_BAD_LENGTH,   /* misaligned, oversized or forbidden payload */
	C_BAD_TVER,     /* BTH transport version not 0 */
	C_PKEY,         /* P_Key variations */
	C_QKEY,         /* UD Q_Key variations */
	C_RETH_HUGE,    /* WRITE/READ with huge DMA lengths and addresses */
	C_AETH,         /* ACK/NAK/RNR syndromes, MSNs, atomic ACKs */
	C_RANDOM_QPN,   /* well-formed, for QPNs no QP has (and 0, 0xffffff) */
	C_GARBAGE,      /* random bytes, sometimes with a correct ICRC */
	C_SHORT,        /* 0..15 bytes */
	C_NUM
};

const char *class_name(int c);

struct Config {
	Endpoints ep;
	std::vector<Target> targets;
	std::vector<uint32_t> rkeys; /* rkeys worth trying (rdma resource show mr) */
	uint64_t seed = 1;
	uint32_t guard = 1u << 20; /* PSNs a live QP may advance during a run */
	bool hit_window = false;   /* drop the safety rule */
	size_t max_payload = 4152; /* largest UDP payload (link MTU - IP - UDP) */
};

struct Datagram {
	std::vector<uint8_t> bytes; /* UDP payload: BTH .. ICRC */
	int cls = C_VALID;
};

/* What the protocol core says of a datagram (the receiver's first checks). */
struct Verdict {
	int reason = 0; /* enum sroce_drop_reason, 0: accepted */
	uint32_t dqpn = 0;
	uint32_t psn = 0;
	uint8_t opcode = 0;
	bool request = false;
};

class Crafter
{
      public:
	explicit Crafter(const Config &cfg);

	/* The next datagram; deterministic for a given Config. */
	Datagram next();

	/* The protocol core's verdict on a datagram for cfg's endpoints. */
	Verdict judge(const std::vector<uint8_t> &bytes) const;

	/* Would a datagram with this verdict be a legitimate-looking packet
	 * for a PSN its target may still expect (the safety rule)?
	 */
	bool in_live_window(const Verdict &v) const;

	/*
	 * --follow: the peer host's own traffic showed the next PSN target
	 * QP @qpn's responder (@responder) or requester expects / sends.
	 * With --hit-window, PSNs near the window then aim at that PSN.
	 */
	void observe(uint32_t qpn, bool responder, uint32_t next_psn);

	/* Packets whose PSN or QPN the safety rule changed. */
	uint64_t moved() const { return moved_; }
	uint64_t retargeted() const { return retargeted_; }

      private:
	struct Pick {
		uint32_t qpn;
		const Target *t; /* nullptr: a QPN no QP has */
	};

	Pick pick_target(bool real_only);
	uint32_t random_qpn();
	uint8_t opcode_for(const Target *t);
	uint32_t anchor(const Target *t, bool request);
	uint32_t psn_near_window(const Target *t, bool request);
	uint32_t psn_old(const Target *t, bool request);
	uint32_t psn_edge(const Target *t, bool request);
	uint32_t payload_len_for(const struct sroce_opcode_info *info);
	void fill_fields(struct sroce_pkt *pkt, uint32_t qpn);
	std::vector<uint8_t> build(const struct sroce_pkt &pkt, uint32_t payload_len);
	std::vector<uint8_t> well_formed(const Pick &p, bool near_window);

	void put_icrc(std::vector<uint8_t> &b) const;
	bool icrc_ok(const std::vector<uint8_t> &b) const;
	void make_safe(std::vector<uint8_t> &b);

	Datagram craft(int cls);

	struct Live {
		bool rq = false, sq = false;
		uint32_t rq_psn = 0, sq_psn = 0;
	};

	const Config &cfg_;
	std::vector<Live> live_; /* parallel to cfg_.targets */
	sroce_tools::Rng rng_;
	unsigned sweep_op_ = 0;
	uint64_t n_ = 0;
	uint64_t moved_ = 0;
	uint64_t retargeted_ = 0;
};

/*
 * The IP datagram Linux sends for a UDP payload from ep (IPv4: ID 0 and DF,
 * as for an unconnected socket with IP_PMTUDISC_DO; TTL 64, TOS 0; UDP
 * checksum 0). Fields the ICRC masks may differ on the wire.
 */
std::vector<uint8_t> frame_of(const Endpoints &ep, const uint8_t *payload, size_t len);

/* Parse `rdma resource show qp` output; false with *why on a bad line. */
bool parse_qp_listing(const std::string &text, std::vector<Target> *out, std::string *why);

/* "QPN[:TYPE[:RQ_PSN[:SQ_PSN]]]" (numbers decimal or 0x hex). */
bool parse_qp_spec(const std::string &spec, Target *out);

/* Device-free checks of the crafter (ctest); returns the exit status. */
int selfcheck();

} // namespace wirefuzz
