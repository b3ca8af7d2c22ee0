// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_wire.h helpers: byte accessors, 24-bit PSN arithmetic, AETH
 * syndromes, the IBA timer and credit tables, UDP source port, P_Key match.
 */
#include <gtest/gtest.h>

#include <random>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::from_hex;

TEST(ByteAccess, BigEndianReadsMostSignificantByteFirst)
{
	Bytes b = from_hex("0102030405060708");

	EXPECT_EQ(sroce_get_be16(b.data()), 0x0102);
	EXPECT_EQ(sroce_get_be24(b.data()), 0x010203u);
	EXPECT_EQ(sroce_get_be32(b.data()), 0x01020304u);
	EXPECT_EQ(sroce_get_be64(b.data()), 0x0102030405060708ull);
}

TEST(ByteAccess, BigEndianWritesMostSignificantByteFirstAtAnyAlignment)
{
	Bytes b(19, 0);

	sroce_put_be16(b.data() + 1, 0xa1a2);
	sroce_put_be24(b.data() + 3, 0xb1b2b3);
	sroce_put_be32(b.data() + 6, 0xc1c2c3c4);
	sroce_put_be64(b.data() + 10, 0xd1d2d3d4d5d6d7ull);
	EXPECT_EQ(b, from_hex("00 a1a2 b1b2b3 c1c2c3c4 00d1d2d3d4d5d6d7 00"));
}

TEST(Psn, AddWrapsAt24Bits)
{
	EXPECT_EQ(sroce_psn_add(0xffffff, 1), 0u);
	EXPECT_EQ(sroce_psn_add(0xfffffe, 5), 3u);
	EXPECT_EQ(sroce_psn_add(5, 0xffffff), 4u); /* adding 2^24 - 1 is minus one */
	EXPECT_EQ(sroce_psn_add(0, 0), 0u);
}

TEST(Psn, MaskKeepsTheLow24Bits)
{
	EXPECT_EQ(sroce_psn_mask(0x12345678), 0x345678u);
	EXPECT_EQ(sroce_psn_mask(0xffffff), 0xffffffu);
}

TEST(Psn, DiffIsTheSignedDistanceAcrossTheWrap)
{
	EXPECT_EQ(sroce_psn_diff(0, 0xffffff), 1);
	EXPECT_EQ(sroce_psn_diff(0xffffff, 0), -1);
	EXPECT_EQ(sroce_psn_diff(2, 0xfffffe), 4);
	EXPECT_EQ(sroce_psn_diff(0xfffffe, 2), -4);
	EXPECT_EQ(sroce_psn_diff(0x123456, 0x123456), 0);
	EXPECT_EQ(sroce_psn_diff(100, 40), 60);
}

TEST(Psn, DiffSpansMinus2To23UpTo2To23MinusOne)
{
	EXPECT_EQ(sroce_psn_diff(0x7fffff, 0), 0x7fffff);
	EXPECT_EQ(sroce_psn_diff(0x800000, 0), -0x800000);
	EXPECT_EQ(sroce_psn_diff(0, 0x800000), -0x800000);
	EXPECT_EQ(sroce_psn_diff(0, 0x800001), 0x7fffff);
}

TEST(Psn, DiffIgnoresBitsAbove24)
{
	EXPECT_EQ(sroce_psn_diff(0xff000005, 0x01000003), 2);
}

TEST(Psn, AddThenDiffRecoversTheStepForEverySignedStep)
{
	std::mt19937 rng(24);

	for (int i = 0; i < 100000; i++) {
		uint32_t a = rng() & SROCE_PSN_MASK;
		int32_t step = static_cast<int32_t>(rng() % 0x1000000) - 0x800000;
		uint32_t b = sroce_psn_add(a, static_cast<uint32_t>(step));

		ASSERT_EQ(sroce_psn_diff(b, a), step) << a << " " << step;
	}
}

TEST(Psn, BeforeAndAfterAroundTheWrap)
{
	EXPECT_TRUE(sroce_psn_before(0xfffff0, 0x000010));
	EXPECT_TRUE(sroce_psn_after(0x000010, 0xfffff0));
	EXPECT_FALSE(sroce_psn_before(0x000010, 0xfffff0));
	EXPECT_FALSE(sroce_psn_after(0xfffff0, 0x000010));
	EXPECT_FALSE(sroce_psn_before(7, 7));
	EXPECT_FALSE(sroce_psn_after(7, 7));
}

TEST(Aeth, AckCarriesTheCreditCodeInTheLowFiveBits)
{
	EXPECT_EQ(sroce_aeth_ack(SROCE_AETH_CREDITS_INVALID), 0x1f);
	EXPECT_EQ(sroce_aeth_ack(5), 0x05);
	EXPECT_EQ(sroce_aeth_ack(0x25), 0x05); /* only five bits fit */
	EXPECT_EQ(sroce_aeth_type(0x1f), SROCE_AETH_ACK);
	EXPECT_EQ(sroce_aeth_value(0x05), 5);
}

TEST(Aeth, RnrNakCarriesTheTimerCode)
{
	EXPECT_EQ(sroce_aeth_rnr_nak(0), 0x20);
	EXPECT_EQ(sroce_aeth_rnr_nak(31), 0x3f);
	EXPECT_EQ(sroce_aeth_type(sroce_aeth_rnr_nak(14)), SROCE_AETH_RNR_NAK);
	EXPECT_EQ(sroce_aeth_value(sroce_aeth_rnr_nak(14)), 14);
}

TEST(Aeth, NakCodesAreTheIbaSyndromes)
{
	EXPECT_EQ(sroce_aeth_nak(SROCE_NAK_PSN_SEQ_ERR), 0x60);
	EXPECT_EQ(sroce_aeth_nak(SROCE_NAK_INVALID_REQ), 0x61);
	EXPECT_EQ(sroce_aeth_nak(SROCE_NAK_REMOTE_ACCESS_ERR), 0x62);
	EXPECT_EQ(sroce_aeth_nak(SROCE_NAK_REMOTE_OP_ERR), 0x63);
	EXPECT_EQ(sroce_aeth_nak(SROCE_NAK_INVALID_RD_REQ), 0x64);
	EXPECT_EQ(sroce_aeth_type(0x63), SROCE_AETH_NAK);
	EXPECT_EQ(sroce_aeth_value(0x63), SROCE_NAK_REMOTE_OP_ERR);
}

TEST(Aeth, TypeIgnoresTheReservedTopBitAndReportsTheReservedType)
{
	EXPECT_EQ(sroce_aeth_type(0x80 | 0x60), SROCE_AETH_NAK);
	EXPECT_EQ(sroce_aeth_type(0x40), SROCE_AETH_RESERVED);
}

TEST(Aeth, EncodeDecodeRoundTripsForEveryTypeAndValue)
{
	for (uint8_t v = 0; v < 32; v++) {
		EXPECT_EQ(sroce_aeth_value(sroce_aeth_ack(v)), v);
		EXPECT_EQ(sroce_aeth_type(sroce_aeth_ack(v)), SROCE_AETH_ACK);
		EXPECT_EQ(sroce_aeth_value(sroce_aeth_rnr_nak(v)), v);
		EXPECT_EQ(sroce_aeth_type(sroce_aeth_rnr_nak(v)), SROCE_AETH_RNR_NAK);
	}
}

TEST(Aeth, CreditCodesDecodeToTheIbaCreditCounts)
{
	/* IBA 9.7.7: 0..4 literally, then alternately x1.5 and x4/3. */
	const uint32_t want[31] = {0,    1,    2,    3,     4,     6,     8,    12,
	                           16,   24,   32,   48,    64,    96,    128,  192,
	                           256,  384,  512,  768,   1024,  1536,  2048, 3072,
	                           4096, 6144, 8192, 12288, 16384, 24576, 32768};

	for (uint8_t c = 0; c < 31; c++)
		EXPECT_EQ(sroce_aeth_credits(c), want[c]) << "code " << int(c);
	EXPECT_EQ(sroce_aeth_credits(SROCE_AETH_CREDITS_INVALID), 0xffffffffu);
}

TEST(Timers, RnrTimerCodesAreTheIbaTable45Values)
{
	/* IBA Table 45, in milliseconds as the spec prints them. */
	const double ms[32] = {655.36, 0.01,  0.02,  0.03,   0.04,   0.06,   0.08,   0.12,
	                       0.16,   0.24,  0.32,  0.48,   0.64,   0.96,   1.28,   1.92,
	                       2.56,   3.84,  5.12,  7.68,   10.24,  15.36,  20.48,  30.72,
	                       40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};

	for (uint8_t code = 0; code < 32; code++)
		EXPECT_EQ(sroce_rnr_timer_us(code), static_cast<uint32_t>(ms[code] * 1000 + 0.5))
		    << "code " << int(code);
}

TEST(Timers, RnrTimerUsesOnlyTheFiveBitCode)
{
	EXPECT_EQ(sroce_rnr_timer_us(0x20 | 1), 10u);
}

TEST(Timers, LocalAckTimeoutIs4096NanosecondsTimesTwoToTheT)
{
	EXPECT_EQ(sroce_local_ack_timeout_ns(1), 8192u);
	EXPECT_EQ(sroce_local_ack_timeout_ns(14), 67108864u); /* 67.1 ms, a common default */
	EXPECT_EQ(sroce_local_ack_timeout_ns(31), 4096ull << 31);
	for (uint8_t t = 1; t < 32; t++)
		EXPECT_EQ(sroce_local_ack_timeout_ns(t), 4096ull * (1ull << t)) << int(t);
}

TEST(Timers, LocalAckTimeoutZeroMeansInfinite)
{
	EXPECT_EQ(sroce_local_ack_timeout_ns(0), 0u);
	EXPECT_EQ(sroce_local_ack_timeout_ns(32), 0u); /* only five bits */
}

TEST(UdpSport, ZeroFlowLabelFoldsTheQpnProductLikeRdmaGetUdpSport)
{
	/* Values worked out by hand from ib_verbs.h's description. */
	EXPECT_EQ(sroce_udp_sport(0, 0x11, 0x12), 0xc132);
	EXPECT_EQ(sroce_udp_sport(0, 0xabcdef, 0x123456), 0xc3c8);
	EXPECT_EQ(sroce_udp_sport(0, 0xffffff, 0xffffff), 0xff21);
	EXPECT_EQ(sroce_udp_sport(0, 1, 1), 0xc001);
}

TEST(UdpSport, NonzeroFlowLabelIsFoldedIntoFourteenBits)
{
	EXPECT_EQ(sroce_udp_sport(0x12345, 1, 2), 0xe341);
	EXPECT_EQ(sroce_flow_label(0x11, 0x12), 0x132u);
}

TEST(UdpSport, IsSymmetricInTheQpnsAndAlwaysInTheRoceRange)
{
	std::mt19937 rng(49152);

	for (int i = 0; i < 10000; i++) {
		uint32_t a = rng() & SROCE_QPN_MASK, b = rng() & SROCE_QPN_MASK;
		uint16_t s = sroce_udp_sport(0, a, b);

		ASSERT_EQ(s, sroce_udp_sport(0, b, a));
		ASSERT_GE(s, SROCE_UDP_SPORT_MIN);
	}
}

TEST(Pkey, MatchesWhenLow15BitsAgreeAndOneSideIsAFullMember)
{
	EXPECT_TRUE(sroce_pkey_match(0xffff, 0xffff));
	EXPECT_TRUE(sroce_pkey_match(0xffff, 0x7fff));
	EXPECT_TRUE(sroce_pkey_match(0x7fff, 0xffff));
	EXPECT_FALSE(sroce_pkey_match(0x7fff, 0x7fff)); /* two limited members */
	EXPECT_FALSE(sroce_pkey_match(0xffff, 0xfffe));
}

TEST(Pkey, InvalidKeyNeverMatches)
{
	EXPECT_FALSE(sroce_pkey_match(0x8000, 0x8000));
	EXPECT_FALSE(sroce_pkey_match(0x0000, 0x8000));
}

TEST(Pad, PadsEveryPayloadLengthToAFourByteBoundary)
{
	for (uint32_t len = 0; len < 64; len++) {
		uint8_t pad = sroce_pad_for(len);
		EXPECT_LT(pad, 4);
		EXPECT_EQ((len + pad) % 4, 0u) << len;
	}
}

TEST(L3, HeaderLengthComesFromTheIpVersionNibble)
{
	const uint8_t v4[] = {0x45}, v6[] = {0x60}, bad[] = {0x50};

	EXPECT_EQ(sroce_l3_hdr_len(v4), 20u);
	EXPECT_EQ(sroce_l3_hdr_len(v6), 40u);
	EXPECT_EQ(sroce_l3_hdr_len(bad), 0u);
}

TEST(Constants, HeaderSizesAreTheIbaAndIetfSizes)
{
	EXPECT_EQ(SROCE_UDP_PORT, 4791);
	EXPECT_EQ(SROCE_BTH_BYTES, 12);
	EXPECT_EQ(SROCE_RETH_BYTES, 16);
	EXPECT_EQ(SROCE_AETH_BYTES, 4);
	EXPECT_EQ(SROCE_ATMETH_BYTES, 28);
	EXPECT_EQ(SROCE_ATMACK_BYTES, 8);
	EXPECT_EQ(SROCE_IMMDT_BYTES, 4);
	EXPECT_EQ(SROCE_IETH_BYTES, 4);
	EXPECT_EQ(SROCE_DETH_BYTES, 8);
	EXPECT_EQ(SROCE_ICRC_BYTES, 4);
	EXPECT_EQ(SROCE_GRH_BYTES, 40);
	EXPECT_EQ(SROCE_IPV4_HDR_BYTES, 20);
	EXPECT_EQ(SROCE_IPV6_HDR_BYTES, 40);
	EXPECT_EQ(SROCE_UDP_HDR_BYTES, 8);
}
