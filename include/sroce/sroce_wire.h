/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: RoCEv2 wire constants and small pure helpers.
 *
 * References are to the InfiniBand Architecture Specification, Volume 1
 * (IBA), chapter 9 (transport layer) and Annex A17 (RoCEv2). See
 * Documentation/wire.rst for the packet formats.
 *
 * Multi-byte fields are big-endian on the wire. They are only ever read and
 * written through the byte accessors below, so the shared code needs no
 * __be types and no alignment assumptions.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <sroce/sroce_platform.h>

#ifdef __cplusplus
extern "C" {
#endif

/* UDP encapsulation (Annex A17): destination port, source port range. */
#define SROCE_UDP_PORT			4791
#define SROCE_UDP_SPORT_MIN		0xc000
#define SROCE_UDP_SPORT_MAX		0xffff
#define SROCE_IPPROTO_UDP		17

/* Header sizes in bytes (IBA 9.2, 9.3; Annex A17). */
#define SROCE_BTH_BYTES			12
#define SROCE_RETH_BYTES		16
#define SROCE_AETH_BYTES		4
#define SROCE_ATMETH_BYTES		28
#define SROCE_ATMACK_BYTES		8
#define SROCE_IMMDT_BYTES		4
#define SROCE_IETH_BYTES		4
#define SROCE_DETH_BYTES		8
#define SROCE_FETH_BYTES		4
#define SROCE_XRCETH_BYTES		4
#define SROCE_CNP_RSVD_BYTES		16
#define SROCE_ICRC_BYTES		4
#define SROCE_GRH_BYTES			40
#define SROCE_IPV4_HDR_BYTES		20
#define SROCE_IPV6_HDR_BYTES		40
#define SROCE_UDP_HDR_BYTES		8

/* Longest BTH + extension headers of any opcode: BTH + AtomicETH. */
#define SROCE_MAX_HDR_BYTES		(SROCE_BTH_BYTES + SROCE_XRCETH_BYTES + \
					 SROCE_ATMETH_BYTES)

/* Largest IBA path MTU, hence the largest payload of one packet. */
#define SROCE_MAX_PAYLOAD		4096

/* BTH byte 1: SE, MigReq, PadCnt, TVer (IBA 9.2). */
#define SROCE_BTH_SE			0x80
#define SROCE_BTH_MIG			0x40
#define SROCE_BTH_PAD_MASK		0x30
#define SROCE_BTH_PAD_SHIFT		4
#define SROCE_BTH_TVER_MASK		0x0f
#define SROCE_BTH_TVER			0
/* BTH byte 4: FECN, BECN and six reserved bits; not covered by the ICRC. */
#define SROCE_BTH_FECN			0x80
#define SROCE_BTH_BECN			0x40
#define SROCE_BTH_VARIANT_OFFSET	4
/* BTH byte 8: AckReq and seven reserved bits. */
#define SROCE_BTH_ACKREQ		0x80

#define SROCE_QPN_MASK			0xffffffU
#define SROCE_PSN_MASK			0xffffffU
#define SROCE_MSN_MASK			0xffffffU
#define SROCE_MCAST_QPN			0xffffffU
#define SROCE_GSI_QPN			1
#define SROCE_GSI_QKEY			0x80010000U
#define SROCE_DEFAULT_PKEY		0xffff
#define SROCE_PKEY_FULL_MEMBER		0x8000

/* The top three opcode bits select the transport service (IBA 9.2). */
#define SROCE_OPCODE_TRANSPORT_MASK	0xe0

enum sroce_transport {
	SROCE_TRANSPORT_RC	= 0x00,
	SROCE_TRANSPORT_UC	= 0x20,
	SROCE_TRANSPORT_RD	= 0x40,
	SROCE_TRANSPORT_UD	= 0x60,
	SROCE_TRANSPORT_CNP	= 0x80,
	SROCE_TRANSPORT_XRC	= 0xa0,
};

/*
 * BTH opcodes (IBA Table 38; FLUSH and ATOMIC WRITE from IBA Annex A19 as
 * Linux rdma_rxe encodes them; CNP from A17.9.3). RD is not supported and
 * has no entries. XRC (IBA A14) has RC's operations at 0xa0 + the RC
 * value, its requests with an XRCETH after the BTH (no FLUSH or ATOMIC
 * WRITE: A19 defines them for RC only).
 */
enum sroce_bth_opcode {
	SROCE_OP_RC_SEND_FIRST			= 0x00,
	SROCE_OP_RC_SEND_MIDDLE			= 0x01,
	SROCE_OP_RC_SEND_LAST			= 0x02,
	SROCE_OP_RC_SEND_LAST_WITH_IMM		= 0x03,
	SROCE_OP_RC_SEND_ONLY			= 0x04,
	SROCE_OP_RC_SEND_ONLY_WITH_IMM		= 0x05,
	SROCE_OP_RC_RDMA_WRITE_FIRST		= 0x06,
	SROCE_OP_RC_RDMA_WRITE_MIDDLE		= 0x07,
	SROCE_OP_RC_RDMA_WRITE_LAST		= 0x08,
	SROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMM	= 0x09,
	SROCE_OP_RC_RDMA_WRITE_ONLY		= 0x0a,
	SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMM	= 0x0b,
	SROCE_OP_RC_RDMA_READ_REQUEST		= 0x0c,
	SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	SROCE_OP_RC_RDMA_READ_RESPONSE_LAST	= 0x0f,
	SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY	= 0x10,
	SROCE_OP_RC_ACKNOWLEDGE			= 0x11,
	SROCE_OP_RC_ATOMIC_ACKNOWLEDGE		= 0x12,
	SROCE_OP_RC_COMPARE_SWAP		= 0x13,
	SROCE_OP_RC_FETCH_ADD			= 0x14,
	SROCE_OP_RC_SEND_LAST_WITH_INV		= 0x16,
	SROCE_OP_RC_SEND_ONLY_WITH_INV		= 0x17,
	SROCE_OP_RC_FLUSH			= 0x1c,
	SROCE_OP_RC_ATOMIC_WRITE		= 0x1d,

	SROCE_OP_UC_SEND_FIRST			= 0x20,
	SROCE_OP_UC_SEND_MIDDLE			= 0x21,
	SROCE_OP_UC_SEND_LAST			= 0x22,
	SROCE_OP_UC_SEND_LAST_WITH_IMM		= 0x23,
	SROCE_OP_UC_SEND_ONLY			= 0x24,
	SROCE_OP_UC_SEND_ONLY_WITH_IMM		= 0x25,
	SROCE_OP_UC_RDMA_WRITE_FIRST		= 0x26,
	SROCE_OP_UC_RDMA_WRITE_MIDDLE		= 0x27,
	SROCE_OP_UC_RDMA_WRITE_LAST		= 0x28,
	SROCE_OP_UC_RDMA_WRITE_LAST_WITH_IMM	= 0x29,
	SROCE_OP_UC_RDMA_WRITE_ONLY		= 0x2a,
	SROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMM	= 0x2b,

	SROCE_OP_UD_SEND_ONLY			= 0x64,
	SROCE_OP_UD_SEND_ONLY_WITH_IMM		= 0x65,

	SROCE_OP_CNP				= 0x81,

	SROCE_OP_XRC_SEND_FIRST			= 0xa0,
	SROCE_OP_XRC_SEND_MIDDLE		= 0xa1,
	SROCE_OP_XRC_SEND_LAST			= 0xa2,
	SROCE_OP_XRC_SEND_LAST_WITH_IMM		= 0xa3,
	SROCE_OP_XRC_SEND_ONLY			= 0xa4,
	SROCE_OP_XRC_SEND_ONLY_WITH_IMM		= 0xa5,
	SROCE_OP_XRC_RDMA_WRITE_FIRST		= 0xa6,
	SROCE_OP_XRC_RDMA_WRITE_MIDDLE		= 0xa7,
	SROCE_OP_XRC_RDMA_WRITE_LAST		= 0xa8,
	SROCE_OP_XRC_RDMA_WRITE_LAST_WITH_IMM	= 0xa9,
	SROCE_OP_XRC_RDMA_WRITE_ONLY		= 0xaa,
	SROCE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMM	= 0xab,
	SROCE_OP_XRC_RDMA_READ_REQUEST		= 0xac,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_FIRST	= 0xad,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_MIDDLE	= 0xae,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_LAST	= 0xaf,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_ONLY	= 0xb0,
	SROCE_OP_XRC_ACKNOWLEDGE		= 0xb1,
	SROCE_OP_XRC_ATOMIC_ACKNOWLEDGE		= 0xb2,
	SROCE_OP_XRC_COMPARE_SWAP		= 0xb3,
	SROCE_OP_XRC_FETCH_ADD			= 0xb4,
	SROCE_OP_XRC_SEND_LAST_WITH_INV		= 0xb6,
	SROCE_OP_XRC_SEND_ONLY_WITH_INV		= 0xb7,
};

/* Number of distinct BTH opcode values: every table indexed by one. */
#define SROCE_NUM_OPCODES		256

/* Byte accessors: big-endian fields at any alignment. */
static inline u16 sroce_get_be16(const u8 *p)
{
	return (u16)((p[0] << 8) | p[1]);
}

static inline u32 sroce_get_be24(const u8 *p)
{
	return ((u32)p[0] << 16) | ((u32)p[1] << 8) | p[2];
}

static inline u32 sroce_get_be32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) |
	       ((u32)p[2] << 8) | p[3];
}

static inline u64 sroce_get_be64(const u8 *p)
{
	return ((u64)sroce_get_be32(p) << 32) | sroce_get_be32(p + 4);
}

static inline void sroce_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void sroce_put_be24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static inline void sroce_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void sroce_put_be64(u8 *p, u64 v)
{
	sroce_put_be32(p, (u32)(v >> 32));
	sroce_put_be32(p + 4, (u32)v);
}

/*
 * 24-bit sequence numbers (PSN, MSN) wrap modulo 2^24 (IBA 9.7). The
 * signed distance from b to a lies in [-2^23, 2^23 - 1]: a is "after" b
 * when it lies in the half of the sequence space that follows b. (Exactly
 * half-way round counts as "before" in both directions; windows are far
 * smaller than 2^23 so this never matters.)
 */
static inline u32 sroce_psn_mask(u32 psn)
{
	return psn & SROCE_PSN_MASK;
}

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/* Signed distance a - b, in [-2^23, 2^23 - 1]. */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	u32 d = (a - b) & SROCE_PSN_MASK;

	if (d & 0x800000U)
		return (s32)d - 0x1000000;
	return (s32)d;
}

static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

static inline bool sroce_psn_after(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

/*
 * AETH syndrome (IBA 9.3.5): bit 7 reserved, bits 6:5 the type,
 * bits 4:0 a credit count code (ACK), an RNR timer code (RNR NAK) or a NAK
 * code (NAK).
 */
#define SROCE_AETH_TYPE_MASK		0x60
#define SROCE_AETH_VALUE_MASK		0x1f
/* Credit code 31: "invalid", end-to-end credits are not in use. */
#define SROCE_AETH_CREDITS_INVALID	0x1f

enum sroce_aeth_type {
	SROCE_AETH_ACK		= 0x00,
	SROCE_AETH_RNR_NAK	= 0x20,
	SROCE_AETH_RESERVED	= 0x40,
	SROCE_AETH_NAK		= 0x60,
};

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR		= 0,
	SROCE_NAK_INVALID_REQ		= 1,
	SROCE_NAK_REMOTE_ACCESS_ERR	= 2,
	SROCE_NAK_REMOTE_OP_ERR		= 3,
	SROCE_NAK_INVALID_RD_REQ	= 4,
};

static inline u8 sroce_aeth_ack(u8 credit_code)
{
	return SROCE_AETH_ACK | (credit_code & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_rnr_nak(u8 timer_code)
{
	return SROCE_AETH_RNR_NAK | (timer_code & SROCE_AETH_VALUE_MASK);
}

static inline u8 sroce_aeth_nak(enum sroce_nak_code code)
{
	return SROCE_AETH_NAK | ((u8)code & SROCE_AETH_VALUE_MASK);
}

static inline enum sroce_aeth_type sroce_aeth_type(u8 syndrome)
{
	return (enum sroce_aeth_type)(syndrome & SROCE_AETH_TYPE_MASK);
}

static inline u8 sroce_aeth_value(u8 syndrome)
{
	return syndrome & SROCE_AETH_VALUE_MASK;
}

/*
 * Credit count encoding (IBA 9.7.7, end-to-end flow control): codes 0..30
 * grant the listed number of receive WQEs; code 31 means credits are not in
 * use and is returned as 0xffffffff ("unlimited").
 */
static inline u32 sroce_aeth_credits(u8 code)
{
	static const u16 credits[SROCE_AETH_CREDITS_INVALID] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768,
	};

	code &= SROCE_AETH_VALUE_MASK;
	if (code == SROCE_AETH_CREDITS_INVALID)
		return 0xffffffffU;
	return credits[code];
}

/*
 * RNR NAK timer (IBA Table 45): the 5-bit code carried in an RNR
 * NAK (and set as a QP's min_rnr_timer) to microseconds. Code 0 is the
 * longest, 655.36 ms.
 */
static inline u32 sroce_rnr_timer_us(u8 code)
{
	static const u32 timer_us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return timer_us[code & SROCE_AETH_VALUE_MASK];
}

/*
 * Local ACK timeout (IBA 9.7): 4.096 us * 2^t for the 5-bit QP Timeout
 * attribute t. t = 0 means the timer is disabled (infinite); returned as 0.
 */
static inline u64 sroce_local_ack_timeout_ns(u8 t)
{
	t &= 0x1f;
	if (!t)
		return 0;
	return 4096ULL << t;
}

/*
 * P_Key match (IBA 10.9, partitioning): the low 15 bits agree, neither is
 * the invalid key, and at least one side is a full member.
 */
static inline bool sroce_pkey_match(u16 a, u16 b)
{
	if (!(a & 0x7fff) || (a & 0x7fff) != (b & 0x7fff))
		return false;
	return ((a | b) & SROCE_PKEY_FULL_MEMBER) != 0;
}

/* Pad count that brings a payload of len bytes to a 4-byte boundary. */
static inline u8 sroce_pad_for(u32 len)
{
	return (u8)((0U - len) & 3);
}

/*
 * UDP source port for a connection (Annex A17: flow entropy in 0xC000..
 * 0xFFFF), with the semantics of rdma_get_udp_sport() in
 * include/rdma/ib_verbs.h so both ends of an rxe/sroce pair agree: a zero
 * GRH flow label is replaced by one folded from the product of the two QPNs
 * (symmetric in the QPNs), and the 20-bit label is folded into 14 bits.
 */
static inline u32 sroce_flow_label(u32 lqpn, u32 rqpn)
{
	u64 v = (u64)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (u32)(v & 0xfffff);
}

static inline u16 sroce_udp_sport(u32 flow_label, u32 lqpn, u32 rqpn)
{
	u32 fl = flow_label;

	if (!fl)
		fl = sroce_flow_label(lqpn, rqpn);
	return (u16)(SROCE_UDP_SPORT_MIN |
		     ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)));
}

/* IP header length of a RoCEv2 datagram from its version nibble, or 0. */
static inline size_t sroce_l3_hdr_len(const u8 *l3)
{
	switch (l3[0] >> 4) {
	case 4:
		return SROCE_IPV4_HDR_BYTES;
	case 6:
		return SROCE_IPV6_HDR_BYTES;
	default:
		return 0;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* SROCE_WIRE_H */
