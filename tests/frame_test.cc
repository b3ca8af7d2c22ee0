// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_parse_roce_frame(): a whole IPv4/IPv6 + UDP + RoCEv2 datagram, and
 * each way its IP and UDP encapsulation (Annex A17) can be wrong.
 */
#include <gtest/gtest.h>

#include <random>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::fix_icrc;
using sroce_test::fix_ipv4_csum;
using sroce_test::make_bth_packet;
using sroce_test::make_frame;
using sroce_test::make_pkt;
using sroce_test::with_payload;

namespace
{

Bytes send_only(bool ipv6, size_t payload = 6)
{
	sroce_pkt pkt = with_payload(make_pkt(SROCE_OP_RC_SEND_ONLY), payload);
	return make_frame(make_bth_packet(pkt, payload), ipv6);
}

int parse_frame(const Bytes &d, sroce_pkt *pkt)
{
	Bytes copy = d; /* exactly sized, for ASan */
	return sroce_parse_roce_frame(copy.data(), copy.size(), pkt);
}

/* Change an IPv4 byte and keep the header checksum and ICRC valid. */
Bytes ipv4_with(size_t at, uint8_t value)
{
	Bytes d = send_only(false);
	d[at] = value;
	fix_ipv4_csum(d);
	fix_icrc(d);
	return d;
}

} /* namespace */

TEST(Frame, EveryValidOpcodeParsesOverIpv4AndIpv6)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		size_t len = info->fixed_payload;
		if (!len && (info->flags & SROCE_OPF_PAYLOAD))
			len = 13;
		for (bool v6 : {false, true}) {
			sroce_pkt in = with_payload(make_pkt(op), len);
			sroce_pkt out;

			ASSERT_EQ(parse_frame(make_frame(make_bth_packet(in, len), v6), &out), 0)
			    << info->name << (v6 ? " IPv6" : " IPv4");
			EXPECT_EQ(out.opcode, op);
			EXPECT_EQ(out.payload_len, len);
		}
	}
}

TEST(Frame, BytesAfterTheIpDatagramAreIgnoredAsLinkPadding)
{
	Bytes d = send_only(false, 0);
	sroce_pkt pkt;

	/* 14 + 44 bytes: Ethernet pads the frame to its 60-byte minimum. */
	ASSERT_EQ(d.size(), 44u);
	d.insert(d.end(), 60 - 14 - d.size(), 0);
	EXPECT_EQ(parse_frame(d, &pkt), 0);
}

TEST(Frame, UnknownIpVersionIsBadIp)
{
	Bytes d = send_only(false);
	sroce_pkt pkt;

	d[0] = 0x55;
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, Ipv4OptionsAreBadIp)
{
	sroce_pkt pkt;

	EXPECT_EQ(parse_frame(ipv4_with(0, 0x46), &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, Ipv4FragmentsAreBadIp)
{
	sroce_pkt pkt;

	/* More Fragments flag */
	EXPECT_EQ(parse_frame(ipv4_with(6, 0x20), &pkt), -SROCE_DROP_BAD_IP);
	/* Fragment offset 1 (8 bytes), DF still set */
	EXPECT_EQ(parse_frame(ipv4_with(7, 0x01), &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, Ipv4DontFragmentIsAccepted)
{
	sroce_pkt pkt;

	EXPECT_EQ(parse_frame(ipv4_with(6, 0x40), &pkt), 0);
}

TEST(Frame, Ipv4ProtocolOtherThanUdpIsBadIp)
{
	sroce_pkt pkt;

	EXPECT_EQ(parse_frame(ipv4_with(9, 6), &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, Ipv4HeaderChecksumErrorIsBadIp)
{
	Bytes d = send_only(false);
	sroce_pkt pkt;

	d[10] ^= 1; /* the ICRC does not cover the checksum, so only this is wrong */
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, Ipv4TotalLengthShorterThanItsHeaderIsBadIp)
{
	sroce_pkt pkt;

	EXPECT_EQ(parse_frame(ipv4_with(3, 19), &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, IpLengthBeyondTheBufferIsShort)
{
	sroce_pkt pkt;

	for (bool v6 : {false, true}) {
		Bytes d = send_only(v6);
		d.pop_back();
		EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_SHORT) << (v6 ? "IPv6" : "IPv4");
	}
}

TEST(Frame, Ipv6NextHeaderOtherThanUdpIsBadIp)
{
	Bytes d = send_only(true);
	sroce_pkt pkt;

	d[6] = 0; /* hop-by-hop options */
	fix_icrc(d);
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_IP);
}

TEST(Frame, UdpDestinationPortOtherThan4791IsBadUdpPort)
{
	for (bool v6 : {false, true}) {
		Bytes d = send_only(v6);
		size_t udp = v6 ? 40 : 20;
		sroce_pkt pkt;

		d[udp + 3] ^= 1;
		fix_icrc(d);
		EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_UDP_PORT);
	}
}

TEST(Frame, UdpLengthDisagreeingWithTheIpLengthIsBadUdp)
{
	for (bool v6 : {false, true}) {
		for (int delta : {-4, 4}) {
			Bytes d = send_only(v6);
			size_t udp = v6 ? 40 : 20;
			sroce_pkt pkt;

			d[udp + 5] = static_cast<uint8_t>(d[udp + 5] + delta);
			fix_icrc(d);
			EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_UDP)
			    << (v6 ? "IPv6 " : "IPv4 ") << delta;
		}
	}
}

TEST(Frame, UdpPayloadTooShortForBthAndIcrcIsShort)
{
	Bytes d = send_only(false, 0);
	sroce_pkt pkt;

	d.resize(20 + 8 + 12); /* BTH, no ICRC */
	d[3] = static_cast<uint8_t>(d.size());
	d[20 + 5] = 8 + 12;
	fix_ipv4_csum(d);
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_SHORT);
}

TEST(Frame, AnyCorruptedCoveredByteIsBadIcrc)
{
	for (bool v6 : {false, true}) {
		const Bytes good = send_only(v6);
		size_t bth = v6 ? 48 : 28;
		sroce_pkt pkt;

		for (size_t at = bth; at < good.size(); at++) {
			if (at == bth + 4)
				continue; /* FECN/BECN byte is not covered */
			Bytes d = good;
			d[at] ^= 0x10;
			EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_ICRC)
			    << (v6 ? "IPv6" : "IPv4") << " byte " << at;
		}
	}
}

TEST(Frame, CongestionMarksAreNotCoveredByTheIcrc)
{
	Bytes d = send_only(false);
	sroce_pkt pkt;

	d[1] |= 0x03;      /* ECN CE in the IPv4 TOS byte */
	d[8] = 1;          /* TTL decremented by routers */
	d[28 + 4] |= 0x80; /* BTH FECN */
	fix_ipv4_csum(d);
	ASSERT_EQ(parse_frame(d, &pkt), 0);
	EXPECT_EQ(pkt.fecn, 1);
}

TEST(Frame, TransportErrorsAreReportedAfterTheIcrcIsChecked)
{
	Bytes d = send_only(false);
	sroce_pkt pkt;

	d[28 + 1] |= 0x01; /* TVer 1 */
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_ICRC);
	fix_icrc(d);
	EXPECT_EQ(parse_frame(d, &pkt), -SROCE_DROP_BAD_TVER);
}

TEST(Frame, TruncatedAtEveryLengthIsRejectedWithoutReadingPastTheEnd)
{
	for (bool v6 : {false, true}) {
		const Bytes d = send_only(v6);
		sroce_pkt pkt;

		for (size_t len = 0; len < d.size(); len++) {
			Bytes cut(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(len));
			EXPECT_NE(sroce_parse_roce_frame(cut.data(), cut.size(), &pkt), 0)
			    << "len " << len;
		}
	}
}

TEST(Frame, RandomMutationsNeverCrashAndReturnAKnownReason)
{
	std::mt19937 rng(0xfeed);

	for (int iter = 0; iter < 20000; iter++) {
		Bytes d = send_only(rng() & 1, rng() % 40);
		int flips = 1 + rng() % 4;
		for (int i = 0; i < flips; i++)
			d[rng() % d.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
		if (rng() & 1)
			d.resize(rng() % (d.size() + 1));
		if (d.size() > 60 && (rng() & 1))
			fix_icrc(d);
		sroce_pkt pkt;
		int err = parse_frame(d, &pkt);

		ASSERT_LE(err, 0);
		ASSERT_GT(err, -SROCE_DROP_NUM);
	}
}
