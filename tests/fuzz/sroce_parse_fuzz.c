// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libFuzzer target for the RoCEv2 packet parsers.
 *
 * Input: one mode byte, then a datagram starting at its IP header.
 *   mode bit 0: store a correct ICRC first, so that mutations get past the
 *               ICRC check and reach the transport-header validation
 *   mode bit 1: store a correct IPv4 header checksum first
 * The bytes after the mode byte are also fed to sroce_parse() as a bare
 * BTH..ICRC packet. Each parser sees an exactly-sized heap copy, so any
 * read past the end is caught by AddressSanitizer. An accepted packet must
 * satisfy the length invariants, and rebuilding its headers with
 * sroce_build() must parse back to the same fields.
 *
 *   sroce_parse_fuzz -max_len=4200 corpus_work tests/fuzz/corpus
 */
#include <stdlib.h>

#include "proto/sroce_hdr.h"
#include "proto/sroce_icrc.h"

#define SROCE_FUZZ_CHECK(cond)		\
	do {				\
		if (!(cond))		\
			abort();	\
	} while (0)

static void sroce_fuzz_accepted(const u8 *bth, size_t len,
				const struct sroce_pkt *pkt)
{
	struct sroce_pkt again;
	size_t n;
	u8 *copy;

	SROCE_FUZZ_CHECK(pkt->info && pkt->info == sroce_opcode_get(pkt->opcode));
	SROCE_FUZZ_CHECK(pkt->payload_off == pkt->info->hdr_len);
	SROCE_FUZZ_CHECK(pkt->payload_len <= SROCE_MAX_PAYLOAD);
	SROCE_FUZZ_CHECK(len == pkt->payload_off + pkt->payload_len + pkt->pad +
			 SROCE_ICRC_BYTES);

	copy = malloc(len);
	SROCE_FUZZ_CHECK(copy);
	memcpy(copy, bth, len);
	n = sroce_build(copy, pkt);
	SROCE_FUZZ_CHECK(n == pkt->info->hdr_len);
	SROCE_FUZZ_CHECK(sroce_parse(copy, len, &again) == 0);
	SROCE_FUZZ_CHECK(memcmp(pkt, &again, sizeof(again)) == 0);
	free(copy);
}

static void sroce_fuzz_bth(const u8 *data, size_t size)
{
	struct sroce_pkt pkt;
	u8 *copy = malloc(size ? size : 1);
	int err;

	SROCE_FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	err = sroce_parse(copy, size, &pkt);
	SROCE_FUZZ_CHECK(err <= 0 && err > -SROCE_DROP_NUM);
	if (!err)
		sroce_fuzz_accepted(copy, size, &pkt);
	free(copy);
}

static void sroce_fuzz_fix_ipv4_csum(u8 *ip, size_t size)
{
	u32 sum = 0;
	int i;

	if (size < SROCE_IPV4_HDR_BYTES || (ip[0] >> 4) != 4)
		return;
	ip[10] = 0;
	ip[11] = 0;
	for (i = 0; i < SROCE_IPV4_HDR_BYTES; i += 2)
		sum += sroce_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sroce_put_be16(ip + 10, (u16)~sum);
}

static void sroce_fuzz_fix_icrc(u8 *l3, size_t size)
{
	size_t l3_len, ip_len;

	if (!size)
		return;
	l3_len = sroce_l3_hdr_len(l3);
	if (!l3_len || size < l3_len)
		return;
	if (l3_len == SROCE_IPV4_HDR_BYTES)
		ip_len = sroce_get_be16(l3 + 2);
	else
		ip_len = SROCE_IPV6_HDR_BYTES + sroce_get_be16(l3 + 4);
	if (ip_len > size || ip_len < l3_len + SROCE_UDP_HDR_BYTES +
	    SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return;
	sroce_icrc_put(l3 + ip_len - SROCE_ICRC_BYTES,
		       sroce_icrc_calc(l3, l3_len, ip_len - l3_len -
				       SROCE_UDP_HDR_BYTES));
}

static void sroce_fuzz_frame(u8 mode, const u8 *data, size_t size)
{
	struct sroce_pkt pkt;
	u8 *copy = malloc(size ? size : 1);
	size_t l3_len;
	int err;

	SROCE_FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	if (mode & 2)
		sroce_fuzz_fix_ipv4_csum(copy, size);
	if (mode & 1)
		sroce_fuzz_fix_icrc(copy, size);
	err = sroce_parse_roce_frame(copy, size, &pkt);
	SROCE_FUZZ_CHECK(err <= 0 && err > -SROCE_DROP_NUM);
	if (!err) {
		l3_len = sroce_l3_hdr_len(copy);
		sroce_fuzz_accepted(copy + l3_len + SROCE_UDP_HDR_BYTES,
				    sroce_get_be16(copy + l3_len + 4) -
				    SROCE_UDP_HDR_BYTES, &pkt);
	}
	free(copy);
}

/* The libFuzzer entry point (its name is libFuzzer's). */
int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	if (!size)
		return 0;
	sroce_fuzz_bth(data + 1, size - 1);
	sroce_fuzz_frame(data[0], data + 1, size - 1);
	return 0;
}
