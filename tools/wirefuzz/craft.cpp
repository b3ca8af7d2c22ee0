// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-wirefuzz: the packet crafter (see wirefuzz.h for the safety rule).
 */
#include "wirefuzz.h"

#include <algorithm>

namespace wirefuzz
{

namespace
{

const char *const class_names[C_NUM] = {
    "valid",     "psn_edge",   "opcode_sweep", "bad_icrc", "truncated",
    "bad_pad",   "bad_length", "bad_tver",     "pkey",     "qkey",
    "reth_huge", "aeth",       "random_qpn",   "garbage",  "short",
};

/* How often each class comes up in one turn of the schedule. */
const uint8_t class_weight[C_NUM] = {3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};

/* A request (to the responder) or a response (to the completer)? */
bool is_request(const struct sroce_opcode_info *info)
{
	return info && (info->flags & SROCE_OPF_REQUEST);
}

bool transport_fits(uint8_t transport, QpType type)
{
	switch (type) {
	case QpType::rc:
		return transport == SROCE_TRANSPORT_RC;
	case QpType::uc:
		return transport == SROCE_TRANSPORT_UC;
	case QpType::ud:
	case QpType::gsi:
		return transport == SROCE_TRANSPORT_UD;
	case QpType::unknown:
		return true;
	}
	return true;
}

const Target *find_target(const Config &cfg, uint32_t qpn)
{
	for (const Target &t : cfg.targets)
		if (t.qpn == qpn)
			return &t;
	return nullptr;
}

} // namespace

const char *class_name(int c)
{
	return c >= 0 && c < C_NUM ? class_names[c] : "?";
}

std::vector<uint8_t> frame_of(const Endpoints &ep, const uint8_t *payload, size_t len)
{
	const size_t l3 = ep.ipv6 ? SROCE_IPV6_HDR_BYTES : SROCE_IPV4_HDR_BYTES;
	std::vector<uint8_t> f(l3 + SROCE_UDP_HDR_BYTES + len);
	uint8_t *ip = f.data();
	uint8_t *udp = ip + l3;

	if (ep.ipv6) {
		ip[0] = 0x60;
		sroce_put_be16(ip + 4, uint16_t(SROCE_UDP_HDR_BYTES + len));
		ip[6] = SROCE_IPPROTO_UDP;
		ip[7] = 64;
		std::copy(ep.src, ep.src + 16, ip + 8);
		std::copy(ep.dst, ep.dst + 16, ip + 24);
	} else {
		uint32_t sum = 0;

		ip[0] = 0x45;
		sroce_put_be16(ip + 2, uint16_t(f.size()));
		sroce_put_be16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = SROCE_IPPROTO_UDP;
		std::copy(ep.src, ep.src + 4, ip + 12);
		std::copy(ep.dst, ep.dst + 4, ip + 16);
		for (size_t i = 0; i < SROCE_IPV4_HDR_BYTES; i += 2)
			sum += sroce_get_be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		sroce_put_be16(ip + 10, uint16_t(~sum));
	}
	sroce_put_be16(udp, ep.sport);
	sroce_put_be16(udp + 2, SROCE_UDP_PORT);
	sroce_put_be16(udp + 4, uint16_t(SROCE_UDP_HDR_BYTES + len));
	if (len)
		std::copy(payload, payload + len, udp + SROCE_UDP_HDR_BYTES);
	return f;
}

Crafter::Crafter(const Config &cfg)
    : cfg_(cfg), live_(cfg.targets.size()),
      rng_(sroce_tools::stream_key(cfg.seed, sroce_tools::Stream::plan, 0x77f))
{
}

void Crafter::observe(uint32_t qpn, bool responder, uint32_t next_psn)
{
	for (size_t i = 0; i < cfg_.targets.size(); i++) {
		if (cfg_.targets[i].qpn != qpn)
			continue;
		if (responder) {
			live_[i].rq = true;
			live_[i].rq_psn = next_psn;
		} else {
			live_[i].sq = true;
			live_[i].sq_psn = next_psn;
		}
	}
}

/* ICRC over the headers the sending kernel puts around the payload. */
void Crafter::put_icrc(std::vector<uint8_t> &b) const
{
	if (b.size() < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return;
	const std::vector<uint8_t> f = frame_of(cfg_.ep, b.data(), b.size());
	const size_t l3 = cfg_.ep.ipv6 ? SROCE_IPV6_HDR_BYTES : SROCE_IPV4_HDR_BYTES;

	sroce_icrc_put(b.data() + b.size() - SROCE_ICRC_BYTES,
	               sroce_icrc_calc(f.data(), l3, b.size()));
}

bool Crafter::icrc_ok(const std::vector<uint8_t> &b) const
{
	if (b.size() < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return false;
	std::vector<uint8_t> c = b;

	put_icrc(c);
	return c == b;
}

/*
 * The receive path's checks up to the QP lookup, in its order
 * (kernel/sroce_recv.c: sroce_rcv()).
 */
Verdict Crafter::judge(const std::vector<uint8_t> &b) const
{
	Verdict v;
	struct sroce_pkt pkt;

	if (b.size() < SROCE_BTH_BYTES) {
		v.reason = SROCE_DROP_SHORT;
		return v;
	}
	v.opcode = b[0];
	if (b.size() < SROCE_BTH_BYTES + SROCE_ICRC_BYTES) {
		v.reason = SROCE_DROP_BAD_UDP;
		return v;
	}
	const struct sroce_opcode_info *info = sroce_opcode_get(b[0]);

	if (!info) {
		v.reason = SROCE_DROP_BAD_OPCODE;
		return v;
	}
	if (b.size() < size_t(info->hdr_len) + SROCE_ICRC_BYTES) {
		v.reason = SROCE_DROP_SHORT;
		return v;
	}
	if (!icrc_ok(b)) {
		v.reason = SROCE_DROP_BAD_ICRC;
		return v;
	}
	const int err = sroce_parse(b.data(), b.size(), &pkt);

	if (err) {
		v.reason = -err;
		return v;
	}
	if (!sroce_pkey_match(pkt.pkey, SROCE_DEFAULT_PKEY)) {
		v.reason = SROCE_DROP_BAD_PKEY;
		return v;
	}
	v.dqpn = pkt.dqpn;
	v.psn = pkt.psn;
	v.request = is_request(info);
	return v;
}

bool Crafter::in_live_window(const Verdict &v) const
{
	if (v.reason)
		return false;
	const Target *t = find_target(cfg_, v.dqpn);

	if (!t)
		return false;
	const struct sroce_opcode_info *info = sroce_opcode_get(v.opcode);

	if (!transport_fits(info->transport, t->type))
		return false; /* dropped: bad_qp_type */
	switch (t->type) {
	case QpType::ud:
	case QpType::gsi:
		return false; /* datagrams: no connection to disturb */
	case QpType::uc:
	case QpType::unknown:
		return true; /* any PSN may be taken */
	case QpType::rc:
		break;
	}
	if (v.request) {
		if (!t->has_rq_psn)
			return true;
		const int32_t d = sroce_psn_diff(v.psn, t->rq_psn);

		return d >= 0 && uint32_t(d) < cfg_.guard;
	}
	if (!t->has_sq_psn)
		return true;
	const int32_t d = sroce_psn_diff(v.psn, t->sq_psn);

	return d >= -1 && d < int32_t(cfg_.guard);
}

/* Apply the safety rule: move the PSN before the window, or the QPN away. */
void Crafter::make_safe(std::vector<uint8_t> &b)
{
	if (cfg_.hit_window)
		return;
	const Verdict v = judge(b);

	if (!in_live_window(v))
		return;
	const Target *t = find_target(cfg_, v.dqpn);
	const bool anchored = t->type == QpType::rc && (v.request ? t->has_rq_psn : t->has_sq_psn);

	if (anchored) {
		sroce_put_be24(b.data() + 9, psn_old(t, v.request));
		moved_++;
	} else {
		sroce_put_be24(b.data() + 5, random_qpn());
		retargeted_++;
	}
	put_icrc(b);
}

uint32_t Crafter::random_qpn()
{
	/* Far above what sroce hands out in a test boot (cyclic from 16). */
	for (;;) {
		const uint32_t qpn = 0x800000 + rng_.below(0x7ffffe);

		if (!find_target(cfg_, qpn))
			return qpn;
	}
}

Crafter::Pick Crafter::pick_target(bool real_only)
{
	if (cfg_.targets.empty() || (!real_only && rng_.chance(25)))
		return {random_qpn(), nullptr};
	const Target &t = cfg_.targets[rng_.below(uint32_t(cfg_.targets.size()))];

	return {t.qpn, &t};
}

/* A defined opcode; of the target's transport most of the time. */
uint8_t Crafter::opcode_for(const Target *t)
{
	for (;;) {
		const uint8_t op = uint8_t(rng_.below(SROCE_NUM_OPCODES));
		const struct sroce_opcode_info *info = sroce_opcode_get(op);

		if (!info)
			continue;
		if (!t || t->type == QpType::unknown || rng_.chance(10) ||
		    transport_fits(info->transport, t->type))
			return op;
	}
}

uint32_t Crafter::anchor(const Target *t, bool request)
{
	if (t && request && t->has_rq_psn)
		return t->rq_psn;
	if (t && !request && t->has_sq_psn)
		return t->sq_psn;
	return rng_.below(1u << 24);
}

/* PSNs the QP may be expecting right now, and a few just before. */
uint32_t Crafter::psn_near_window(const Target *t, bool request)
{
	const uint32_t a = anchor(t, request);

	if (cfg_.hit_window && t && rng_.chance(70)) {
		/* Right at the live PSN, when the peer's traffic showed it. */
		const Live &l = live_[size_t(t - cfg_.targets.data())];

		if (request && l.rq)
			return sroce_psn_add(l.rq_psn, rng_.below(3));
		if (!request && l.sq)
			return sroce_psn_add(l.sq_psn, SROCE_PSN_MASK - rng_.below(8));
	}
	if (rng_.chance(20))
		return sroce_psn_add(a, SROCE_PSN_MASK - rng_.below(64));
	return sroce_psn_add(a, rng_.below(1u << 16));
}

/* Before the anchor: duplicates for as long as the run lasts. */
uint32_t Crafter::psn_old(const Target *t, bool request)
{
	const uint32_t a = anchor(t, request);

	return sroce_psn_add(a, SROCE_PSN_MASK - rng_.below(1u << 16));
}

/* The edges of the sequence space, relative to the anchor and absolute. */
uint32_t Crafter::psn_edge(const Target *t, bool request)
{
	const uint32_t a = anchor(t, request);

	switch (rng_.below(10)) {
	case 0:
		return sroce_psn_add(a, SROCE_PSN_MASK); /* a - 1 */
	case 1:
		return sroce_psn_add(a, SROCE_PSN_MASK - rng_.below(64));
	case 2:
		return sroce_psn_add(a, 0x7fffff); /* furthest "after" */
	case 3:
		return sroce_psn_add(a, 0x800000); /* half-way: "before" */
	case 4:
		return sroce_psn_add(a, cfg_.guard + rng_.below(1u << 16));
	case 5:
		return SROCE_PSN_MASK - rng_.below(16); /* the wrap */
	case 6:
		return rng_.below(16);
	case 7:
		return 0x7ffff0 + rng_.below(32);
	case 8:
		return sroce_psn_add(a, rng_.below(256)); /* at the anchor */
	default:
		return rng_.below(1u << 24);
	}
}

uint32_t Crafter::payload_len_for(const struct sroce_opcode_info *info)
{
	static const uint32_t mtus[] = {256, 512, 1024, 2048, 4096};

	if (!(info->flags & SROCE_OPF_PAYLOAD))
		return 0;
	if (info->fixed_payload)
		return info->fixed_payload;
	if (!(info->flags & SROCE_OPF_LAST))
		return rng_.chance(60) ? 4096 : mtus[rng_.below(5)];
	if (rng_.chance(50))
		return rng_.below(65);
	return rng_.chance(60) ? rng_.below(SROCE_MAX_PAYLOAD + 1) : SROCE_MAX_PAYLOAD;
}

/* Random values for every field a header may carry. */
void Crafter::fill_fields(struct sroce_pkt *pkt, uint32_t qpn)
{
	static const uint8_t syndromes[] = {
	    0x1f, 0x00, 0x20, 0x21, 0x3f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x7f, 0x40, 0x9f,
	};
	const uint64_t r = rng_.next();

	pkt->se = r & 1;
	pkt->mig = (r >> 1) & 1;
	pkt->fecn = (r >> 2) & 1;
	pkt->becn = (r >> 3) & 1;
	pkt->ackreq = (r >> 4) & 1;
	pkt->pkey = SROCE_DEFAULT_PKEY;
	pkt->dqpn = qpn;
	pkt->reth.va = rng_.chance(50) ? rng_.next() : rng_.next() & 0xffffffffull;
	pkt->reth.rkey = !cfg_.rkeys.empty() && rng_.chance(50)
	                     ? cfg_.rkeys[rng_.below(uint32_t(cfg_.rkeys.size()))]
	                     : uint32_t(rng_.next());
	pkt->reth.dma_len = rng_.below(1u << 14);
	pkt->aeth.syndrome =
	    rng_.chance(70) ? syndromes[rng_.below(sizeof(syndromes))] : uint8_t(rng_.next());
	pkt->aeth.msn = rng_.below(1u << 24);
	pkt->atmeth.va = rng_.chance(70) ? rng_.next() & ~7ull : rng_.next();
	pkt->atmeth.rkey = pkt->reth.rkey;
	pkt->atmeth.swap_add = rng_.next();
	pkt->atmeth.compare = rng_.next();
	pkt->atmack_orig = rng_.next();
	rng_.fill(pkt->imm, sizeof(pkt->imm));
	pkt->ieth_rkey = pkt->reth.rkey;
	pkt->deth.qkey = rng_.chance(50) ? SROCE_GSI_QKEY : uint32_t(rng_.next());
	pkt->deth.src_qpn = rng_.below(1u << 24);
	pkt->feth.sel = uint8_t(rng_.below(4));
	pkt->feth.plt = uint8_t(rng_.below(16));
}

/* Headers of pkt, a random payload, zero pad bytes and a correct ICRC. */
std::vector<uint8_t> Crafter::build(const struct sroce_pkt &pkt_in, uint32_t payload_len)
{
	struct sroce_pkt pkt = pkt_in;
	const struct sroce_opcode_info *info = sroce_opcode_get(pkt.opcode);

	pkt.pad = sroce_pad_for(payload_len);
	std::vector<uint8_t> b(info->hdr_len + payload_len + pkt.pad + SROCE_ICRC_BYTES);

	sroce_build(b.data(), &pkt);
	/* Reserved bits the parser must ignore (byte 4 is not in the ICRC). */
	if (rng_.chance(20))
		b[4] |= uint8_t(rng_.below(64));
	if (rng_.chance(20))
		b[8] |= uint8_t(rng_.below(128));
	rng_.fill(b.data() + info->hdr_len, payload_len);
	put_icrc(b);
	return b;
}

std::vector<uint8_t> Crafter::well_formed(const Pick &p, bool near_window)
{
	struct sroce_pkt pkt = {};

	pkt.opcode = opcode_for(p.t);
	fill_fields(&pkt, p.qpn);
	const struct sroce_opcode_info *info = sroce_opcode_get(pkt.opcode);
	const bool req = is_request(info);

	if (!p.t)
		pkt.psn = rng_.below(1u << 24);
	else
		pkt.psn = near_window ? psn_near_window(p.t, req) : psn_old(p.t, req);
	return build(pkt, payload_len_for(info));
}

Datagram Crafter::craft(int cls)
{
	Datagram d;
	std::vector<uint8_t> &b = d.bytes;
	struct sroce_pkt pkt = {};

	d.cls = cls;
	switch (cls) {
	case C_VALID:
		b = well_formed(pick_target(false), false);
		break;
	case C_PSN_EDGE: {
		const Pick p = pick_target(true);

		pkt.opcode = opcode_for(p.t);
		fill_fields(&pkt, p.qpn);
		pkt.psn = psn_edge(p.t, is_request(sroce_opcode_get(pkt.opcode)));
		b = build(pkt, payload_len_for(sroce_opcode_get(pkt.opcode)));
		break;
	}
	case C_OPCODE_SWEEP: {
		const Pick p = pick_target(false);
		const uint8_t op = uint8_t(sweep_op_++);
		const struct sroce_opcode_info *info = sroce_opcode_get(op);

		if (info) {
			pkt.opcode = op;
			fill_fields(&pkt, p.qpn);
			pkt.psn = psn_near_window(p.t, is_request(info));
			b = build(pkt, payload_len_for(info));
			break;
		}
		/* Reserved: a BTH and up to 64 more bytes. */
		b.resize(SROCE_BTH_BYTES + 4 * rng_.below(17) + SROCE_ICRC_BYTES);
		rng_.fill(b.data(), b.size());
		b[0] = op;
		b[1] &= 0xf0; /* TVer 0 */
		sroce_put_be24(b.data() + 5, p.qpn);
		sroce_put_be24(b.data() + 9, psn_near_window(p.t, true));
		put_icrc(b);
		break;
	}
	case C_BAD_ICRC: {
		b = well_formed(pick_target(false), true);
		const size_t icrc_at = b.size() - SROCE_ICRC_BYTES;
		size_t at = rng_.chance(60) ? icrc_at + rng_.below(SROCE_ICRC_BYTES)
		                            : rng_.below(uint32_t(icrc_at));

		if (at == SROCE_BTH_VARIANT_OFFSET)
			at = icrc_at; /* byte 4 is not covered */
		b[at] ^= uint8_t(1u << rng_.below(8));
		break;
	}
	case C_TRUNCATED:
		b = well_formed(pick_target(false), true);
		b.resize(rng_.below(uint32_t(b.size())));
		if (rng_.chance(50))
			put_icrc(b);
		break;
	case C_BAD_PAD: {
		b = well_formed(pick_target(false), true);
		const uint8_t pad = (b[1] & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
		const uint8_t other = uint8_t((pad + 1 + rng_.below(3)) & 3);

		b[1] = uint8_t((b[1] & ~SROCE_BTH_PAD_MASK) | (other << SROCE_BTH_PAD_SHIFT));
		put_icrc(b);
		break;
	}
	case C_BAD_LENGTH: {
		const Pick p = pick_target(false);

		pkt.opcode = opcode_for(p.t);
		fill_fields(&pkt, p.qpn);
		const struct sroce_opcode_info *info = sroce_opcode_get(pkt.opcode);

		pkt.psn = psn_near_window(p.t, is_request(info));
		b = build(pkt, payload_len_for(info));
		const size_t room = cfg_.max_payload > b.size() ? cfg_.max_payload - b.size() : 0;

		switch (rng_.below(3)) {
		case 0: /* not a multiple of 4 */
			b.insert(b.end() - SROCE_ICRC_BYTES, 1 + rng_.below(3), 0x5a);
			break;
		case 1: /* extra words: too long, or forbidden payload */
			b.insert(b.end() - SROCE_ICRC_BYTES, 4 * (1 + rng_.below(4)), 0xa5);
			break;
		default: /* past the largest MTU */
			b.insert(b.end() - SROCE_ICRC_BYTES,
			         std::min<size_t>(room & ~size_t(3), SROCE_MAX_PAYLOAD + 4), 0x3c);
			break;
		}
		put_icrc(b);
		break;
	}
	case C_BAD_TVER:
		b = well_formed(pick_target(false), true);
		b[1] = uint8_t((b[1] & ~SROCE_BTH_TVER_MASK) | (1 + rng_.below(15)));
		put_icrc(b);
		break;
	case C_PKEY: {
		static const uint16_t pkeys[] = {0x0000, 0x8000, 0x7fff, 0xfffe,
		                                 0x1234, 0x8001, 0x7ffe};

		b = well_formed(pick_target(false), true);
		sroce_put_be16(b.data() + 2,
		               rng_.chance(80) ? pkeys[rng_.below(7)] : uint16_t(rng_.next()));
		put_icrc(b);
		break;
	}
	case C_QKEY: {
		static const uint32_t qkeys[] = {0, SROCE_GSI_QKEY, 0x80000000u, 0xffffffffu,
		                                 0x11111111u};
		const Target *ud = nullptr;

		for (const Target &t : cfg_.targets)
			if ((t.type == QpType::ud || t.type == QpType::gsi) &&
			    (!ud || rng_.chance(50)))
				ud = &t;
		const Pick p = ud && rng_.chance(70) ? Pick{ud->qpn, ud} : pick_target(false);

		pkt.opcode =
		    rng_.chance(50) ? SROCE_OP_UD_SEND_ONLY : SROCE_OP_UD_SEND_ONLY_WITH_IMM;
		fill_fields(&pkt, p.qpn);
		pkt.deth.qkey = rng_.chance(80) ? qkeys[rng_.below(5)] : uint32_t(rng_.next());
		pkt.psn = rng_.below(1u << 24);
		b = build(pkt,
		          rng_.chance(50) ? rng_.below(257) : rng_.below(SROCE_MAX_PAYLOAD + 1));
		break;
	}
	case C_RETH_HUGE: {
		static const uint8_t ops[] = {
		    SROCE_OP_RC_RDMA_WRITE_FIRST,         SROCE_OP_RC_RDMA_WRITE_ONLY,
		    SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMM, SROCE_OP_RC_RDMA_READ_REQUEST,
		    SROCE_OP_UC_RDMA_WRITE_FIRST,         SROCE_OP_UC_RDMA_WRITE_ONLY,
		};
		static const uint32_t lens[] = {0xffffffffu, 0x80000000u, 0x80000001u, 0x7fffffffu,
		                                0xfffff000u, 0,           4097,        0x10000000u};
		const Pick p = pick_target(false);

		pkt.opcode = ops[rng_.below(sizeof(ops))];
		if (p.t && p.t->type == QpType::uc && pkt.opcode < 0x20 &&
		    pkt.opcode != SROCE_OP_RC_RDMA_READ_REQUEST)
			pkt.opcode |= SROCE_TRANSPORT_UC;
		fill_fields(&pkt, p.qpn);
		pkt.reth.dma_len = lens[rng_.below(8)];
		switch (rng_.below(4)) {
		case 0:
			pkt.reth.va = ~0ull - rng_.below(4096);
			break;
		case 1:
			pkt.reth.va = 1ull << 63;
			break;
		case 2:
			pkt.reth.va = 0;
			break;
		default:
			break;
		}
		const struct sroce_opcode_info *info = sroce_opcode_get(pkt.opcode);

		pkt.psn = psn_near_window(p.t, true);
		b = build(pkt, payload_len_for(info));
		break;
	}
	case C_AETH: {
		static const uint8_t ops[] = {
		    SROCE_OP_RC_ACKNOWLEDGE,
		    SROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
		    SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
		    SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		    SROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
		    SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY,
		};
		const Pick p = pick_target(false);

		pkt.opcode = ops[rng_.chance(50) ? 0 : rng_.below(sizeof(ops))];
		fill_fields(&pkt, p.qpn);
		pkt.aeth.syndrome = uint8_t(rng_.next());
		pkt.psn = rng_.chance(50) ? psn_near_window(p.t, false) : psn_edge(p.t, false);
		b = build(pkt, payload_len_for(sroce_opcode_get(pkt.opcode)));
		break;
	}
	case C_RANDOM_QPN: {
		Pick p = {random_qpn(), nullptr};

		if (rng_.chance(10))
			p.qpn = 0;
		else if (rng_.chance(10))
			p.qpn = SROCE_MCAST_QPN;
		b = well_formed(p, false);
		break;
	}
	case C_GARBAGE:
		b.resize(SROCE_BTH_BYTES + SROCE_ICRC_BYTES + rng_.below(512));
		rng_.fill(b.data(), b.size());
		if (rng_.chance(50))
			b[1] &= 0xf0;
		if (rng_.chance(50))
			put_icrc(b);
		break;
	default: /* C_SHORT */
		b.resize(rng_.below(SROCE_BTH_BYTES + SROCE_ICRC_BYTES));
		rng_.fill(b.data(), b.size());
		break;
	}
	if (b.size() > cfg_.max_payload)
		b.resize(cfg_.max_payload);
	make_safe(b);
	return d;
}

Datagram Crafter::next()
{
	static_assert(sizeof(class_weight) == C_NUM, "one weight per class");
	unsigned turn = 0, at;

	for (unsigned w : class_weight)
		turn += w;
	at = unsigned(n_++ % turn);
	for (int c = 0; c < C_NUM; c++) {
		if (at < class_weight[c])
			return craft(c);
		at -= class_weight[c];
	}
	return craft(C_VALID);
}

} // namespace wirefuzz
