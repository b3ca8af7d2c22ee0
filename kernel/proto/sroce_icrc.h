/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: RoCEv2 invariant CRC (IBA 7.8, Annex A17.4).
 *
 * The ICRC is a CRC-32 (the Ethernet polynomial) over
 *   8 bytes of 0xff (standing in for the masked IB LRH),
 *   the IP header with its variant fields set to ones,
 *   the UDP header with its checksum set to ones,
 *   the BTH with byte 4 (FECN, BECN, reserved) set to ones,
 *   the extension headers, payload and pad bytes,
 * and is carried in the 4 bytes that end the UDP payload. The computation
 * is split so that a receiver can feed a fragmented buffer piece by piece:
 *
 *	state = sroce_icrc_begin(l3, l3_len);		 IP, UDP, BTH
 *	state = sroce_icrc_update(state, p, n);		 rest, any pieces
 *	icrc  = sroce_icrc_final(state);
 *	ok    = icrc == sroce_icrc_get(trailer);
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <sroce/sroce_wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * sroce_icrc_begin() - CRC state after the masked headers up to the BTH end.
 * @l3: IPv4 or IPv6 header, followed contiguously by the UDP header and BTH
 * @l3_len: SROCE_IPV4_HDR_BYTES or SROCE_IPV6_HDR_BYTES (sroce_l3_hdr_len())
 *
 * Reads l3_len + SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES bytes. Masks IPv4
 * fields when l3_len is 20 and IPv6 fields when it is 40.
 */
u32 sroce_icrc_begin(const u8 *l3, size_t l3_len);

/* Feed the next len bytes after the BTH (headers, payload, pad). */
u32 sroce_icrc_update(u32 state, const void *p, size_t len);

/* The ICRC value of a finished state. */
u32 sroce_icrc_final(u32 state);

/* Write / read the 4 ICRC bytes in their wire order (as rdma_rxe does). */
void sroce_icrc_put(u8 *dst, u32 icrc);
u32 sroce_icrc_get(const u8 *src);

/*
 * sroce_icrc_calc() - ICRC of a contiguous datagram.
 * @l3: IP header; @l3_len as for sroce_icrc_begin()
 * @bth_len: UDP payload length including the ICRC, at least
 *	     SROCE_BTH_BYTES + SROCE_ICRC_BYTES
 *
 * Return: the ICRC of everything from l3 up to, not including, the ICRC.
 */
u32 sroce_icrc_calc(const u8 *l3, size_t l3_len, size_t bth_len);

/*
 * The ICRC rdma_rxe gives an RC FLUSH (Linux 6.2 through at least 6.12).
 * Its opcode table has no payload offset for FLUSH, so after the headers
 * it feeds the UDP payload up to the ICRC (BTH, FETH, RETH) once more,
 * unmasked, as if it were the payload. rxe computes and checks FLUSH ICRCs
 * this way only, so talking FLUSH with it needs this variant.
 *
 * sroce_icrc_rxe_flush(): from @state, the ordinary computation over all
 * of the packet (before sroce_icrc_final()), and the @hdr_len bytes at
 * @bth (the UDP payload without the ICRC). sroce_icrc_calc_rxe_flush():
 * the same as sroce_icrc_calc() does for the IBA ICRC.
 */
u32 sroce_icrc_rxe_flush(u32 state, const u8 *bth, size_t hdr_len);
u32 sroce_icrc_calc_rxe_flush(const u8 *l3, size_t l3_len, size_t bth_len);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_ICRC_H */
