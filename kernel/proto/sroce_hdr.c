// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: parse, validate and build RoCEv2 transport headers (IBA 9.2, 9.3;
 * Annex A17.4 for the IP/UDP encapsulation).
 *
 * Every read from a packet is bounded by the length checked before it: the
 * BTH is read only once len covers BTH + ICRC, the extension headers only
 * once len covers the opcode's hdr_len + ICRC.
 */
#include "sroce_hdr.h"
#include "sroce_icrc.h"

static const char * const sroce_drop_names[SROCE_DROP_NUM] = {
	[SROCE_DROP_NONE]		= "none",
	[SROCE_DROP_SHORT]		= "short",
	[SROCE_DROP_BAD_TVER]		= "bad_tver",
	[SROCE_DROP_BAD_OPCODE]		= "bad_opcode",
	[SROCE_DROP_BAD_PAD]		= "bad_pad",
	[SROCE_DROP_BAD_LENGTH]		= "bad_length",
	[SROCE_DROP_BAD_QPN]		= "bad_qpn",
	[SROCE_DROP_BAD_ICRC]		= "bad_icrc",
	[SROCE_DROP_BAD_IP]		= "bad_ip",
	[SROCE_DROP_BAD_UDP]		= "bad_udp",
	[SROCE_DROP_BAD_UDP_PORT]	= "bad_udp_port",
	[SROCE_DROP_BAD_PKEY]		= "bad_pkey",
	[SROCE_DROP_BAD_QKEY]		= "bad_qkey",
	[SROCE_DROP_NO_QP]		= "no_qp",
	[SROCE_DROP_BAD_QP_STATE]	= "bad_qp_state",
	[SROCE_DROP_BAD_QP_TYPE]	= "bad_qp_type",
	[SROCE_DROP_BAD_ADDR]		= "bad_addr",
	[SROCE_DROP_PSN_OUT_OF_WINDOW]	= "psn_out_of_window",
	[SROCE_DROP_UNSUPPORTED]	= "unsupported",
	[SROCE_DROP_NO_MEM]		= "no_mem",
};

const char *sroce_drop_reason_name(unsigned int reason)
{
	if (reason >= SROCE_DROP_NUM || !sroce_drop_names[reason])
		return "invalid";
	return sroce_drop_names[reason];
}

/* Extension header layouts (IBA 9.3). */

static void sroce_reth_get(const u8 *p, struct sroce_reth *reth)
{
	reth->va = sroce_get_be64(p);
	reth->rkey = sroce_get_be32(p + 8);
	reth->dma_len = sroce_get_be32(p + 12);
}

static void sroce_reth_put(u8 *p, const struct sroce_reth *reth)
{
	sroce_put_be64(p, reth->va);
	sroce_put_be32(p + 8, reth->rkey);
	sroce_put_be32(p + 12, reth->dma_len);
}

/* Syndrome in the top byte, MSN in the low 24 bits. */
static void sroce_aeth_get(const u8 *p, struct sroce_aeth *aeth)
{
	aeth->syndrome = p[0];
	aeth->msn = sroce_get_be24(p + 1);
}

static void sroce_aeth_put(u8 *p, const struct sroce_aeth *aeth)
{
	p[0] = aeth->syndrome;
	sroce_put_be24(p + 1, aeth->msn);
}

static void sroce_atmeth_get(const u8 *p, struct sroce_atmeth *atm)
{
	atm->va = sroce_get_be64(p);
	atm->rkey = sroce_get_be32(p + 8);
	atm->swap_add = sroce_get_be64(p + 12);
	atm->compare = sroce_get_be64(p + 20);
}

static void sroce_atmeth_put(u8 *p, const struct sroce_atmeth *atm)
{
	sroce_put_be64(p, atm->va);
	sroce_put_be32(p + 8, atm->rkey);
	sroce_put_be64(p + 12, atm->swap_add);
	sroce_put_be64(p + 20, atm->compare);
}

/* Q_Key, then a reserved byte and the 24-bit source QP. */
static void sroce_deth_get(const u8 *p, struct sroce_deth *deth)
{
	deth->qkey = sroce_get_be32(p);
	deth->src_qpn = sroce_get_be24(p + 5);
}

static void sroce_deth_put(u8 *p, const struct sroce_deth *deth)
{
	sroce_put_be32(p, deth->qkey);
	p[4] = 0;
	sroce_put_be24(p + 5, deth->src_qpn & SROCE_QPN_MASK);
}

/* FETH (A19): 26 reserved bits, SEL in bits 5:4, PLT in bits 3:0. */
static void sroce_feth_get(const u8 *p, struct sroce_feth *feth)
{
	feth->sel = (p[3] >> 4) & 0x3;
	feth->plt = p[3] & 0xf;
}

static void sroce_feth_put(u8 *p, const struct sroce_feth *feth)
{
	memset(p, 0, 3);
	p[3] = (u8)(((feth->sel & 0x3) << 4) | (feth->plt & 0xf));
}

static void sroce_bth_get(const u8 *bth, struct sroce_pkt *pkt)
{
	pkt->opcode = bth[0];
	pkt->se = !!(bth[1] & SROCE_BTH_SE);
	pkt->mig = !!(bth[1] & SROCE_BTH_MIG);
	pkt->pad = (bth[1] & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
	pkt->tver = bth[1] & SROCE_BTH_TVER_MASK;
	pkt->pkey = sroce_get_be16(bth + 2);
	pkt->fecn = !!(bth[4] & SROCE_BTH_FECN);
	pkt->becn = !!(bth[4] & SROCE_BTH_BECN);
	pkt->dqpn = sroce_get_be24(bth + 5);
	pkt->ackreq = !!(bth[8] & SROCE_BTH_ACKREQ);
	pkt->psn = sroce_get_be24(bth + 9);
}

static void sroce_bth_put(u8 *bth, const struct sroce_pkt *pkt)
{
	bth[0] = pkt->opcode;
	bth[1] = (pkt->se ? SROCE_BTH_SE : 0) |
		 (pkt->mig ? SROCE_BTH_MIG : 0) |
		 ((pkt->pad << SROCE_BTH_PAD_SHIFT) & SROCE_BTH_PAD_MASK) |
		 (pkt->tver & SROCE_BTH_TVER_MASK);
	sroce_put_be16(bth + 2, pkt->pkey);
	bth[4] = (pkt->fecn ? SROCE_BTH_FECN : 0) |
		 (pkt->becn ? SROCE_BTH_BECN : 0);
	sroce_put_be24(bth + 5, pkt->dqpn & SROCE_QPN_MASK);
	bth[8] = pkt->ackreq ? SROCE_BTH_ACKREQ : 0;
	sroce_put_be24(bth + 9, pkt->psn & SROCE_PSN_MASK);
}

static void sroce_ext_get(const u8 *bth, const struct sroce_opcode_info *info,
			  struct sroce_pkt *pkt)
{
	const u8 *off = info->off;
	u32 flags = info->flags;

	if (flags & SROCE_OPF_DETH)
		sroce_deth_get(bth + off[SROCE_EXT_DETH], &pkt->deth);
	/* XRCETH: 8 reserved bits, then the 24-bit XRC SRQ number. */
	if (flags & SROCE_OPF_XRCETH)
		pkt->xrc_srqn = sroce_get_be32(bth + off[SROCE_EXT_XRCETH]) &
				SROCE_QPN_MASK;
	if (flags & SROCE_OPF_FETH)
		sroce_feth_get(bth + off[SROCE_EXT_FETH], &pkt->feth);
	if (flags & SROCE_OPF_RETH)
		sroce_reth_get(bth + off[SROCE_EXT_RETH], &pkt->reth);
	if (flags & SROCE_OPF_ATMETH)
		sroce_atmeth_get(bth + off[SROCE_EXT_ATMETH], &pkt->atmeth);
	if (flags & SROCE_OPF_AETH)
		sroce_aeth_get(bth + off[SROCE_EXT_AETH], &pkt->aeth);
	if (flags & SROCE_OPF_ATMACK)
		pkt->atmack_orig = sroce_get_be64(bth + off[SROCE_EXT_ATMACK]);
	if (flags & SROCE_OPF_IMMDT)
		memcpy(pkt->imm, bth + off[SROCE_EXT_IMMDT], SROCE_IMMDT_BYTES);
	if (flags & SROCE_OPF_IETH)
		pkt->ieth_rkey = sroce_get_be32(bth + off[SROCE_EXT_IETH]);
}

static void sroce_ext_put(u8 *bth, const struct sroce_opcode_info *info,
			  const struct sroce_pkt *pkt)
{
	const u8 *off = info->off;
	u32 flags = info->flags;

	if (flags & SROCE_OPF_DETH)
		sroce_deth_put(bth + off[SROCE_EXT_DETH], &pkt->deth);
	if (flags & SROCE_OPF_XRCETH)
		sroce_put_be32(bth + off[SROCE_EXT_XRCETH],
			       pkt->xrc_srqn & SROCE_QPN_MASK);
	if (flags & SROCE_OPF_FETH)
		sroce_feth_put(bth + off[SROCE_EXT_FETH], &pkt->feth);
	if (flags & SROCE_OPF_RETH)
		sroce_reth_put(bth + off[SROCE_EXT_RETH], &pkt->reth);
	if (flags & SROCE_OPF_ATMETH)
		sroce_atmeth_put(bth + off[SROCE_EXT_ATMETH], &pkt->atmeth);
	if (flags & SROCE_OPF_AETH)
		sroce_aeth_put(bth + off[SROCE_EXT_AETH], &pkt->aeth);
	if (flags & SROCE_OPF_ATMACK)
		sroce_put_be64(bth + off[SROCE_EXT_ATMACK], pkt->atmack_orig);
	if (flags & SROCE_OPF_IMMDT)
		memcpy(bth + off[SROCE_EXT_IMMDT], pkt->imm, SROCE_IMMDT_BYTES);
	if (flags & SROCE_OPF_IETH)
		sroce_put_be32(bth + off[SROCE_EXT_IETH], pkt->ieth_rkey);
	if (flags & SROCE_OPF_CNP)
		memset(bth + SROCE_BTH_BYTES, 0, SROCE_CNP_RSVD_BYTES);
}

/*
 * Length rules for what follows the headers (IBA 9.2: PadCnt pads the
 * payload to a multiple of 4 bytes, so headers + payload + pad is too).
 */
static int sroce_check_payload(const struct sroce_opcode_info *info,
			       size_t body, u8 pad)
{
	size_t payload;

	if (body & 3)
		return -SROCE_DROP_BAD_LENGTH;
	if (pad > body)
		return -SROCE_DROP_BAD_PAD;
	payload = body - pad;
	if (!(info->flags & SROCE_OPF_PAYLOAD) && body)
		return -SROCE_DROP_BAD_LENGTH;
	if (payload > SROCE_MAX_PAYLOAD)
		return -SROCE_DROP_BAD_LENGTH;
	if (info->fixed_payload && payload != info->fixed_payload)
		return -SROCE_DROP_BAD_LENGTH;
	return 0;
}

int sroce_parse(const u8 *bth, size_t len, struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	size_t body;
	int err;

	if (len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return -SROCE_DROP_SHORT;

	memset(pkt, 0, sizeof(*pkt));
	sroce_bth_get(bth, pkt);
	if (pkt->tver != SROCE_BTH_TVER)
		return -SROCE_DROP_BAD_TVER;

	info = sroce_opcode_get(pkt->opcode);
	if (!info)
		return -SROCE_DROP_BAD_OPCODE;
	if (len < (size_t)info->hdr_len + SROCE_ICRC_BYTES)
		return -SROCE_DROP_SHORT;
	if (!pkt->dqpn)
		return -SROCE_DROP_BAD_QPN;

	body = len - info->hdr_len - SROCE_ICRC_BYTES;
	err = sroce_check_payload(info, body, pkt->pad);
	if (err)
		return err;

	sroce_ext_get(bth, info, pkt);
	pkt->info = info;
	pkt->payload_off = info->hdr_len;
	pkt->payload_len = (u32)(body - pkt->pad);
	return 0;
}

size_t sroce_build(u8 *bth, const struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info = sroce_opcode_get(pkt->opcode);

	if (!info)
		return 0;
	sroce_bth_put(bth, pkt);
	sroce_ext_put(bth, info, pkt);
	return info->hdr_len;
}

/* RFC 791 header checksum: the ones' complement sum of a valid header is
 * all ones.
 */
static bool sroce_ipv4_csum_ok(const u8 *ip)
{
	u32 sum = 0;
	int i;

	for (i = 0; i < SROCE_IPV4_HDR_BYTES; i += 2)
		sum += sroce_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* IPv4 without options or fragmentation; sets the datagram length. */
static int sroce_check_ipv4(const u8 *ip, size_t len, size_t *ip_len)
{
	if (len < SROCE_IPV4_HDR_BYTES)
		return -SROCE_DROP_SHORT;
	if (ip[0] != 0x45 || ip[9] != SROCE_IPPROTO_UDP)
		return -SROCE_DROP_BAD_IP;
	/* Flags MF (0x2000) and fragment offset (0x1fff) must be clear. */
	if (sroce_get_be16(ip + 6) & 0x3fff)
		return -SROCE_DROP_BAD_IP;
	if (!sroce_ipv4_csum_ok(ip))
		return -SROCE_DROP_BAD_IP;
	*ip_len = sroce_get_be16(ip + 2);
	if (*ip_len < SROCE_IPV4_HDR_BYTES)
		return -SROCE_DROP_BAD_IP;
	if (*ip_len > len)
		return -SROCE_DROP_SHORT;
	return 0;
}

/* IPv6 whose next header is UDP; sets the datagram length. */
static int sroce_check_ipv6(const u8 *ip, size_t len, size_t *ip_len)
{
	if (len < SROCE_IPV6_HDR_BYTES)
		return -SROCE_DROP_SHORT;
	if (ip[6] != SROCE_IPPROTO_UDP)
		return -SROCE_DROP_BAD_IP;
	*ip_len = SROCE_IPV6_HDR_BYTES + (size_t)sroce_get_be16(ip + 4);
	if (*ip_len > len)
		return -SROCE_DROP_SHORT;
	return 0;
}

int sroce_parse_roce_frame(const u8 *l3, size_t len, struct sroce_pkt *pkt)
{
	size_t l3_len, ip_len, udp_len;
	const u8 *udp;
	int err;

	if (!len)
		return -SROCE_DROP_SHORT;
	l3_len = sroce_l3_hdr_len(l3);
	if (l3_len == SROCE_IPV4_HDR_BYTES)
		err = sroce_check_ipv4(l3, len, &ip_len);
	else if (l3_len == SROCE_IPV6_HDR_BYTES)
		err = sroce_check_ipv6(l3, len, &ip_len);
	else
		err = -SROCE_DROP_BAD_IP;
	if (err)
		return err;

	if (ip_len < l3_len + SROCE_UDP_HDR_BYTES)
		return -SROCE_DROP_SHORT;
	udp = l3 + l3_len;
	if (sroce_get_be16(udp + 2) != SROCE_UDP_PORT)
		return -SROCE_DROP_BAD_UDP_PORT;
	udp_len = sroce_get_be16(udp + 4);
	if (udp_len != ip_len - l3_len)
		return -SROCE_DROP_BAD_UDP;
	if (udp_len < SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return -SROCE_DROP_SHORT;

	if (sroce_icrc_calc(l3, l3_len, udp_len - SROCE_UDP_HDR_BYTES) !=
	    sroce_icrc_get(l3 + ip_len - SROCE_ICRC_BYTES))
		return -SROCE_DROP_BAD_ICRC;

	return sroce_parse(udp + SROCE_UDP_HDR_BYTES,
			   udp_len - SROCE_UDP_HDR_BYTES, pkt);
}
