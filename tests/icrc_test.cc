// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ICRC (IBA 7.8, Annex A17.4) against known-good packets: a CNP captured
 * from real ConnectX-4 Lx hardware, and two hand-built packets whose ICRC
 * was computed outside this code base with Python's zlib.crc32 (see the
 * recipe below). Plus the host CRC-32 against a bit-at-a-time reference,
 * the masking rules, and incremental feeding.
 */
#include <gtest/gtest.h>

#include <random>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::from_hex;

namespace
{

/*
 * RoCEv2 CNP sent by a ConnectX-4 Lx NIC (Ethernet frame), published in
 * the scapy project's RoCE regression tests (test/contrib/roce.uts). The
 * last four bytes are the ICRC the hardware computed.
 */
const char kCx4CnpFrame[] = "e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2"
                            "003c 718c 4000 4011 9161 0a00 1101 0a00"
                            "1201 0000 12b7 0028 0000 8100 ffff 4000"
                            "0118 0000 0000 0000 0000 0000 0000 0000"
                            "0000 0000 0000 82fd 002a";

/*
 * Hand-built datagrams. Expected ICRCs from Python 3, independently of
 * sroce: mask the variant fields to 0xff (IPv4 TOS/TTL/checksum or IPv6
 * traffic class/flow label/hop limit; UDP checksum; BTH byte 4), then
 *   struct.pack('<I', zlib.crc32(b'\xff' * 8 + masked[:-4]))
 */
/* IPv4, RC SEND ONLY, payload "sroce" + 3 pad bytes, ICRC 0x5071c556. */
const char kIpv4SendOnly[] = "4502 0034 1c46 4000 4011 9d1d c0a8 0001 c0a8 0002"
                             "e517 12b7 0020 0000"
                             "0430 ffff 0000 0012 8000 0001"
                             "7372 6f63 6500 0000"
                             "56c5 7150";
const uint32_t kIpv4SendOnlyIcrc = 0x5071c556;

/* IPv6 (TC 0x12, flow label 0xabcde), UD SEND ONLY WITH IMM, "RoCEv2!!". */
const char kIpv6UdSendImm[] = "612a bcde 002c 1140"
                              "fe80 0000 0000 0000 0000 0000 0000 0001"
                              "fe80 0000 0000 0000 0000 0000 0000 0002"
                              "c0de 12b7 002c 0000"
                              "6500 ffff 0000 0001 0000 0007"
                              "8001 0000 0000 0003 0102 0304"
                              "526f 4345 7632 2121"
                              "57c6 cde0";
const uint32_t kIpv6UdSendImmIcrc = 0xe0cdc657;

/* sroce's ICRC of a datagram (IP header .. ICRC) with an l3_len-byte IP header. */
uint32_t icrc_of(const Bytes &d, size_t l3)
{
	return sroce_icrc_calc(d.data(), l3, d.size() - l3 - SROCE_UDP_HDR_BYTES);
}

uint32_t icrc_of(const Bytes &d)
{
	return icrc_of(d, sroce_l3_hdr_len(d.data()));
}

uint32_t trailer(const Bytes &d)
{
	return sroce_icrc_get(d.data() + d.size() - SROCE_ICRC_BYTES);
}

Bytes datagram_of(const char *ethernet_hex)
{
	Bytes f = from_hex(ethernet_hex);
	return Bytes(f.begin() + 14, f.end());
}

} /* namespace */

TEST(Crc32, HostTableMatchesTheBitwiseReference)
{
	std::mt19937 rng(7);

	for (int i = 0; i < 2000; i++) {
		Bytes b(rng() % 300);
		for (uint8_t &x : b)
			x = static_cast<uint8_t>(rng());
		uint32_t seed = rng();
		ASSERT_EQ(sroce_crc32_le(seed, b.data(), b.size()),
		          sroce_test::ref_crc32(seed, b.data(), b.size()));
	}
}

TEST(Crc32, CheckValueOfTheStandardTestStringIsCbf43926)
{
	const char *s = "123456789";

	EXPECT_EQ(~sroce_crc32_le(0xffffffffu, s, 9), 0xcbf43926u);
}

TEST(Crc32, EightBytesOfOnesGiveTheSeedRdmaRxeHardcodes)
{
	const Bytes ones(8, 0xff);

	EXPECT_EQ(sroce_crc32_le(0xffffffffu, ones.data(), ones.size()), 0xdebb20e3u);
}

TEST(Icrc, ConnectX4LxCnpCaptureVerifies)
{
	Bytes d = datagram_of(kCx4CnpFrame);

	EXPECT_EQ(icrc_of(d), trailer(d));
	EXPECT_EQ(sroce_test::ref_icrc(d), trailer(d));
}

TEST(Icrc, ConnectX4LxCnpCaptureParsesAsCnp)
{
	Bytes d = datagram_of(kCx4CnpFrame);
	sroce_pkt pkt;

	ASSERT_EQ(sroce_parse_roce_frame(d.data(), d.size(), &pkt), 0);
	EXPECT_EQ(pkt.opcode, SROCE_OP_CNP);
	EXPECT_EQ(pkt.becn, 1);
	EXPECT_EQ(pkt.fecn, 0);
	EXPECT_EQ(pkt.dqpn, 0x118u);
	EXPECT_EQ(pkt.pkey, 0xffff);
	EXPECT_EQ(pkt.psn, 0u);
}

TEST(Icrc, HandBuiltIpv4PacketMatchesPythonZlib)
{
	Bytes d = from_hex(kIpv4SendOnly);

	EXPECT_EQ(icrc_of(d), kIpv4SendOnlyIcrc);
	EXPECT_EQ(sroce_test::ref_icrc(d), kIpv4SendOnlyIcrc);
	EXPECT_EQ(trailer(d), kIpv4SendOnlyIcrc);
}

TEST(Icrc, HandBuiltIpv6PacketMatchesPythonZlib)
{
	Bytes d = from_hex(kIpv6UdSendImm);

	EXPECT_EQ(icrc_of(d), kIpv6UdSendImmIcrc);
	EXPECT_EQ(sroce_test::ref_icrc(d), kIpv6UdSendImmIcrc);
	EXPECT_EQ(trailer(d), kIpv6UdSendImmIcrc);
}

TEST(Icrc, IsPutOnTheWireLeastSignificantByteFirst)
{
	uint8_t b[4];

	sroce_icrc_put(b, 0x2a00fd82);
	EXPECT_EQ(Bytes(b, b + 4), from_hex("82fd002a"));
	EXPECT_EQ(sroce_icrc_get(b), 0x2a00fd82u);
}

TEST(Icrc, Ipv4VariantFieldsDoNotChangeIt)
{
	const Bytes d = from_hex(kIpv4SendOnly);
	/* TOS, TTL, header checksum (2), UDP checksum (2), BTH byte 4 */
	const size_t variant[] = {1, 8, 10, 11, 26, 27, 28 + 4};

	for (size_t at : variant) {
		Bytes m = d;
		m[at] ^= 0x5a;
		EXPECT_EQ(icrc_of(m), kIpv4SendOnlyIcrc) << "byte " << at;
	}
}

TEST(Icrc, Ipv6VariantFieldsDoNotChangeIt)
{
	const Bytes d = from_hex(kIpv6UdSendImm);
	Bytes m = d;

	m[0] ^= 0x0f; /* traffic class, high nibble; the version stays */
	m[1] ^= 0xff; /* traffic class low nibble, flow label */
	m[2] ^= 0xff;
	m[3] ^= 0xff;
	m[7] ^= 0xff;  /* hop limit */
	m[46] ^= 0xff; /* UDP checksum */
	m[47] ^= 0xff;
	m[48 + 4] ^= 0xc0; /* FECN, BECN */
	EXPECT_EQ(icrc_of(m), kIpv6UdSendImmIcrc);
}

TEST(Icrc, EveryOtherBitOfTheDatagramChangesIt)
{
	for (const char *hex : {kIpv4SendOnly, kIpv6UdSendImm}) {
		const Bytes d = from_hex(hex);
		bool v4 = (d[0] >> 4) == 4;
		size_t l3 = v4 ? 20 : 40;
		uint32_t good = icrc_of(d);

		for (size_t at = 0; at < d.size() - SROCE_ICRC_BYTES; at++) {
			uint8_t mask = 0xff;
			if (v4 && (at == 1 || at == 8 || at == 10 || at == 11))
				continue;
			if (!v4 && at == 0)
				mask = 0xf0; /* the version nibble is covered */
			if (!v4 && (at == 1 || at == 2 || at == 3 || at == 7))
				continue;
			if (at == l3 + 6 || at == l3 + 7 || at == l3 + 8 + 4)
				continue;
			for (int bit = 0; bit < 8; bit++) {
				if (!(mask & (1 << bit)))
					continue;
				Bytes m = d;
				m[at] ^= static_cast<uint8_t>(1 << bit);
				ASSERT_NE(icrc_of(m, l3), good) << "byte " << at << " bit " << bit;
			}
		}
	}
}

TEST(Icrc, FeedingTheRestInAnyTwoPiecesGivesTheSameValue)
{
	const Bytes d = from_hex(kIpv6UdSendImm);
	const size_t start = 40 + 8 + SROCE_BTH_BYTES;
	const size_t end = d.size() - SROCE_ICRC_BYTES;

	for (size_t cut = start; cut <= end; cut++) {
		uint32_t s = sroce_icrc_begin(d.data(), 40);
		s = sroce_icrc_update(s, d.data() + start, cut - start);
		s = sroce_icrc_update(s, d.data() + cut, end - cut);
		EXPECT_EQ(sroce_icrc_final(s), kIpv6UdSendImmIcrc) << "cut at " << cut;
	}
}

TEST(Icrc, FeedingOneByteAtATimeGivesTheSameValue)
{
	const Bytes d = from_hex(kIpv4SendOnly);
	uint32_t s = sroce_icrc_begin(d.data(), 20);

	for (size_t i = 20 + 8 + SROCE_BTH_BYTES; i < d.size() - SROCE_ICRC_BYTES; i++)
		s = sroce_icrc_update(s, &d[i], 1);
	EXPECT_EQ(sroce_icrc_final(s), kIpv4SendOnlyIcrc);
}

TEST(Icrc, BeginDoesNotModifyTheDatagram)
{
	const Bytes d = from_hex(kIpv4SendOnly);
	Bytes copy = d;

	sroce_icrc_begin(copy.data(), 20);
	EXPECT_EQ(copy, d);
}

TEST(Icrc, BeginRejectsAnIpHeaderLengthOtherThan20Or40)
{
	const Bytes d = from_hex(kIpv6UdSendImm);

	EXPECT_EQ(sroce_icrc_begin(d.data(), 24), 0u);
}

TEST(Icrc, RandomPacketsAgreeWithTheReferenceForBothIpVersions)
{
	std::mt19937 rng(17);
	const std::vector<uint8_t> ops = sroce_test::valid_opcodes();

	for (int i = 0; i < 500; i++) {
		uint8_t op = ops[rng() % ops.size()];
		const sroce_opcode_info *info = sroce_opcode_get(op);
		size_t len = info->fixed_payload;
		if (!len && (info->flags & SROCE_OPF_PAYLOAD))
			len = rng() % 200;
		sroce_pkt pkt = sroce_test::with_payload(sroce_test::make_pkt(op), len);
		pkt.psn = rng() & SROCE_PSN_MASK;
		Bytes d = sroce_test::make_frame(sroce_test::make_bth_packet(pkt, len), rng() & 1);

		ASSERT_EQ(icrc_of(d), trailer(d)) << sroce_opcode_name(op);
	}
}

/*
 * rdma_rxe 6.2..6.12 FLUSH: after the masked headers its ICRC covers the
 * UDP payload before the ICRC (BTH, FETH, RETH) a second time, unmasked.
 * The reference below builds that input by hand from the datagram.
 */
TEST(Icrc, RxeFlushVariantCoversTheHeadersTwice)
{
	for (bool ipv6 : {false, true}) {
		Bytes bth = from_hex("1c 40 ffff 00 000011 80 abcdef"      /* BTH, ack req, PSN */
		                     "00000001"                            /* FETH: global, range */
		                     "00007f00 12345678 00000042 00001000" /* RETH */
		                     "00000000");                          /* ICRC */
		Bytes d = sroce_test::make_frame(bth, ipv6);
		const size_t l3 = ipv6 ? 40 : 20;
		const size_t udp_payload = d.size() - l3 - SROCE_UDP_HDR_BYTES;
		const uint32_t spec = icrc_of(d, l3);

		ASSERT_EQ(spec, trailer(d)) << ipv6;
		/* Reference: the IBA input again, then the raw headers. */
		Bytes m = d;
		if (!ipv6) {
			m[1] = 0xff;
			m[8] = 0xff;
			m[10] = m[11] = 0xff;
		} else {
			m[0] |= 0x0f;
			m[1] = m[2] = m[3] = 0xff;
			m[7] = 0xff;
		}
		m[l3 + 6] = m[l3 + 7] = 0xff;
		m[l3 + 8 + 4] = 0xff;
		const Bytes ones(8, 0xff);
		uint32_t crc = sroce_test::ref_crc32(0xffffffffu, ones.data(), ones.size());
		crc = sroce_test::ref_crc32(crc, m.data(), m.size() - 4);
		crc = sroce_test::ref_crc32(crc, d.data() + l3 + 8, udp_payload - 4);
		const uint32_t want = ~crc;

		EXPECT_EQ(sroce_icrc_calc_rxe_flush(d.data(), l3, udp_payload), want) << ipv6;
		EXPECT_NE(want, spec) << ipv6;
	}
}
