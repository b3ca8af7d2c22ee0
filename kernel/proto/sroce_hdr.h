/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: parse and build the transport headers of a RoCEv2 packet.
 *
 * A packet is described by one plain struct sroce_pkt. sroce_parse() fills
 * it from received bytes after validating everything a hostile sender can
 * get wrong; sroce_build() writes the BTH and extension headers of the same
 * struct. Parsing copies every field out of the packet, so later stages work
 * on the private copy only and never re-read packet memory.
 */
#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include <sroce/sroce_wire.h>
#include "sroce_opcode.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why a packet was dropped. Functions return the negated value (0 for
 * success); sroce_drop_reason_name() gives a counter name for each. The
 * protocol core uses the first group; the rest are for the receive path.
 */
enum sroce_drop_reason {
	SROCE_DROP_NONE,
	/* Detected by the protocol core. */
	SROCE_DROP_SHORT,		/* shorter than its headers + ICRC */
	SROCE_DROP_BAD_TVER,		/* BTH TVer != 0 */
	SROCE_DROP_BAD_OPCODE,		/* reserved or unsupported opcode */
	SROCE_DROP_BAD_PAD,		/* PadCnt larger than the payload */
	SROCE_DROP_BAD_LENGTH,		/* payload disallowed/misaligned/long */
	SROCE_DROP_BAD_QPN,		/* destination QP 0 */
	SROCE_DROP_BAD_ICRC,
	SROCE_DROP_BAD_IP,		/* IP version/options/fragment/proto */
	SROCE_DROP_BAD_UDP,		/* UDP length inconsistent */
	SROCE_DROP_BAD_UDP_PORT,	/* UDP destination port != 4791 */
	/* Detected by the receive path once it knows the QP. */
	SROCE_DROP_BAD_PKEY,
	SROCE_DROP_BAD_QKEY,
	SROCE_DROP_NO_QP,
	SROCE_DROP_BAD_QP_STATE,
	SROCE_DROP_BAD_QP_TYPE,
	SROCE_DROP_BAD_ADDR,		/* source is not the QP's peer */
	SROCE_DROP_PSN_OUT_OF_WINDOW,
	SROCE_DROP_UNSUPPORTED,		/* valid on the wire, not implemented */
	SROCE_DROP_NO_MEM,
	SROCE_DROP_NUM
};

/* Counter name of a drop reason ("short", "bad_icrc", ...); "invalid" if
 * reason is not one of enum sroce_drop_reason. Pass -err for an error code.
 */
const char *sroce_drop_reason_name(unsigned int reason);

struct sroce_reth {
	u64	va;
	u32	rkey;
	u32	dma_len;
};

struct sroce_aeth {
	u8	syndrome;	/* see sroce_aeth_type() */
	u32	msn;
};

struct sroce_atmeth {
	u64	va;
	u32	rkey;
	u64	swap_add;
	u64	compare;
};

struct sroce_deth {
	u32	qkey;
	u32	src_qpn;
};

struct sroce_feth {
	u8	sel;		/* selectivity level, 2 bits */
	u8	plt;		/* placement type, 4 bits */
};

/*
 * A packet's transport headers in host form. Single-bit BTH fields are 0 or
 * 1. Extension header members are meaningful only when info->flags has the
 * matching SROCE_OPF_* bit; sroce_parse() zeroes all others.
 */
struct sroce_pkt {
	const struct sroce_opcode_info *info;	/* set by sroce_parse() */

	/* BTH */
	u8	opcode;
	u8	se;
	u8	mig;
	u8	pad;		/* PadCnt, 0..3 */
	u8	tver;
	u8	fecn;
	u8	becn;
	u8	ackreq;
	u16	pkey;
	u32	dqpn;
	u32	psn;

	/* Extension headers */
	struct sroce_reth	reth;
	struct sroce_aeth	aeth;
	struct sroce_atmeth	atmeth;
	u64			atmack_orig;	/* AtomicAckETH */
	u8			imm[SROCE_IMMDT_BYTES];	/* as on the wire */
	u32			ieth_rkey;
	struct sroce_deth	deth;
	struct sroce_feth	feth;
	u32			xrc_srqn;	/* XRCETH */

	/* Payload, set by sroce_parse() */
	u32	payload_off;	/* from BTH start (= info->hdr_len) */
	u32	payload_len;	/* excluding pad and ICRC */
};

/*
 * sroce_parse() - validate and decode the transport headers of a packet.
 * @bth: first byte of the BTH (the UDP payload)
 * @len: bytes from the BTH through the ICRC inclusive (UDP length - 8)
 * @pkt: filled in on success; contents unspecified on failure
 *
 * Reads only [bth, bth + len). Does not check the ICRC.
 * Return: 0, or -enum sroce_drop_reason.
 */
int sroce_parse(const u8 *bth, size_t len, struct sroce_pkt *pkt);

/*
 * sroce_build() - write the BTH and extension headers of pkt->opcode.
 * @bth: room for at least SROCE_MAX_HDR_BYTES
 * @pkt: fields to write; info, payload_off and payload_len are ignored
 *
 * Reserved fields are written as zero. Payload, pad bytes and ICRC are the
 * caller's; pkt->pad must agree with the payload length (sroce_pad_for()).
 * Return: bytes written (the opcode's hdr_len), or 0 for an invalid opcode.
 */
size_t sroce_build(u8 *bth, const struct sroce_pkt *pkt);

/*
 * sroce_parse_roce_frame() - validate a whole RoCEv2 datagram.
 * @l3: first byte of the IPv4 or IPv6 header
 * @len: bytes available from l3; may exceed the IP length (link padding)
 * @pkt: as for sroce_parse()
 *
 * Checks the IP header (IPv4 without options or fragmentation and with a
 * valid header checksum, or IPv6 with next header UDP), UDP destination port
 * 4791, UDP length against the IP length, the ICRC, then the transport
 * headers with sroce_parse().
 * Return: 0, or -enum sroce_drop_reason.
 */
int sroce_parse_roce_frame(const u8 *l3, size_t len, struct sroce_pkt *pkt);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_HDR_H */
