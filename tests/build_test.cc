// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_build(): byte layout, reserved fields, and parse(build(x)) == x for
 * every valid opcode.
 */
#include <gtest/gtest.h>

#include <random>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::from_hex;
using sroce_test::make_pkt;

namespace
{

/* Random values in every field the opcode carries; zero elsewhere. */
sroce_pkt random_pkt(uint8_t op, std::mt19937_64 &rng)
{
	const sroce_opcode_info *info = sroce_opcode_get(op);
	uint32_t f = info->flags;
	sroce_pkt p = {};
	auto bit = [&rng]() { return static_cast<uint8_t>(rng() & 1); };

	p.opcode = op;
	p.se = bit();
	p.mig = bit();
	p.fecn = bit();
	p.becn = bit();
	p.ackreq = bit();
	p.pkey = static_cast<uint16_t>(rng());
	p.dqpn = static_cast<uint32_t>(rng() % SROCE_QPN_MASK) + 1;
	p.psn = static_cast<uint32_t>(rng()) & SROCE_PSN_MASK;
	if (f & SROCE_OPF_RETH)
		p.reth = {rng(), static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
	if (f & SROCE_OPF_AETH)
		p.aeth = {static_cast<uint8_t>(rng()),
		          static_cast<uint32_t>(rng()) & SROCE_MSN_MASK};
	if (f & SROCE_OPF_ATMETH)
		p.atmeth = {rng(), static_cast<uint32_t>(rng()), rng(), rng()};
	if (f & SROCE_OPF_ATMACK)
		p.atmack_orig = rng();
	if (f & SROCE_OPF_IMMDT)
		for (uint8_t &b : p.imm)
			b = static_cast<uint8_t>(rng());
	if (f & SROCE_OPF_IETH)
		p.ieth_rkey = static_cast<uint32_t>(rng());
	if (f & SROCE_OPF_DETH)
		p.deth = {static_cast<uint32_t>(rng()),
		          static_cast<uint32_t>(rng()) & SROCE_QPN_MASK};
	if (f & SROCE_OPF_FETH)
		p.feth = {static_cast<uint8_t>(rng() & 3), static_cast<uint8_t>(rng() & 0xf)};
	if (f & SROCE_OPF_XRCETH)
		p.xrc_srqn = static_cast<uint32_t>(rng()) & SROCE_QPN_MASK;

	uint32_t len = 0;
	if (info->fixed_payload)
		len = info->fixed_payload;
	else if (f & SROCE_OPF_PAYLOAD)
		len = static_cast<uint32_t>(rng() % (SROCE_MAX_PAYLOAD + 1));
	p.pad = sroce_pad_for(len);
	p.payload_len = len;
	p.payload_off = info->hdr_len;
	return p;
}

} /* namespace */

TEST(Build, ParseOfBuildReturnsTheSameFieldsForEveryValidOpcode)
{
	std::mt19937_64 rng(0x5eed);

	for (uint8_t op : sroce_test::valid_opcodes()) {
		for (int iter = 0; iter < 200; iter++) {
			sroce_pkt in = random_pkt(op, rng);
			Bytes b = sroce_test::make_bth_packet(in, in.payload_len);
			sroce_pkt out;
			std::string diff;

			ASSERT_EQ(sroce_parse(b.data(), b.size(), &out), 0)
			    << sroce_opcode_name(op);
			EXPECT_EQ(out.info, sroce_opcode_get(op));
			ASSERT_TRUE(sroce_test::pkt_equal(in, out, &diff))
			    << sroce_opcode_name(op) << "\n"
			    << diff;
		}
	}
}

TEST(Build, ReturnsTheOpcodeHeaderLengthAndWritesNothingBeyondIt)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		Bytes b(SROCE_MAX_HDR_BYTES + 8, 0xa5);
		sroce_pkt pkt = make_pkt(op);
		size_t n = sroce_build(b.data(), &pkt);

		EXPECT_EQ(n, sroce_opcode_get(op)->hdr_len) << sroce_opcode_name(op);
		for (size_t i = n; i < b.size(); i++)
			EXPECT_EQ(b[i], 0xa5) << sroce_opcode_name(op) << " byte " << i;
	}
}

TEST(Build, InvalidOpcodeReturnsZeroAndWritesNothing)
{
	for (int op = 0; op < SROCE_NUM_OPCODES; op++) {
		if (sroce_opcode_get(static_cast<uint8_t>(op)))
			continue;
		Bytes b(SROCE_MAX_HDR_BYTES, 0xa5);
		sroce_pkt pkt = make_pkt(static_cast<uint8_t>(op));

		EXPECT_EQ(sroce_build(b.data(), &pkt), 0u);
		EXPECT_EQ(b, Bytes(SROCE_MAX_HDR_BYTES, 0xa5));
	}
}

TEST(Build, BthBitsLandAtTheirIbaPositions)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_RC_SEND_ONLY);
	Bytes b(SROCE_BTH_BYTES);

	pkt.se = 1;
	pkt.mig = 1;
	pkt.pad = 2;
	pkt.pkey = 0x7fff;
	pkt.fecn = 1;
	pkt.becn = 0;
	pkt.dqpn = 0x123456;
	pkt.ackreq = 1;
	pkt.psn = 0xfedcba;
	sroce_build(b.data(), &pkt);
	EXPECT_EQ(b, from_hex("04 e0 7fff 80 123456 80 fedcba"));
}

TEST(Build, ReservedFieldsAreWrittenAsZero)
{
	Bytes b(SROCE_MAX_HDR_BYTES, 0xff);
	sroce_pkt ud = make_pkt(SROCE_OP_UD_SEND_ONLY);

	ud.dqpn = 0xffffff;
	ud.psn = 0xffffff;
	ud.deth = {0xffffffff, 0xffffff};
	sroce_build(b.data(), &ud);
	EXPECT_EQ(b[4], 0x00) << "BTH resv6 with FECN/BECN clear";
	EXPECT_EQ(b[8], 0x00) << "BTH resv7 with AckReq clear";
	EXPECT_EQ(b[12 + 4], 0x00) << "DETH reserved byte";

	sroce_pkt flush = make_pkt(SROCE_OP_RC_FLUSH);
	flush.feth = {3, 0xf};
	std::fill(b.begin(), b.end(), 0xff);
	sroce_build(b.data(), &flush);
	EXPECT_EQ(Bytes(b.begin() + 12, b.begin() + 16), from_hex("0000003f"));

	sroce_pkt cnp = make_pkt(SROCE_OP_CNP);
	std::fill(b.begin(), b.end(), 0xff);
	sroce_build(b.data(), &cnp);
	EXPECT_EQ(Bytes(b.begin() + 12, b.begin() + 28), Bytes(16, 0));

	/* XRCETH: a reserved byte, then the SRQ number (out of range: cut). */
	sroce_pkt xrc = make_pkt(SROCE_OP_XRC_SEND_ONLY);
	xrc.xrc_srqn = 0xff123456;
	std::fill(b.begin(), b.end(), 0xff);
	sroce_build(b.data(), &xrc);
	EXPECT_EQ(Bytes(b.begin() + 12, b.begin() + 16), from_hex("00123456"));
}

TEST(Build, OutOfRangeQpnPsnAndPadAreTruncatedToTheirFields)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_RC_SEND_ONLY);
	Bytes b(SROCE_BTH_BYTES);

	pkt.dqpn = 0x01abcdef;
	pkt.psn = 0xff000001;
	pkt.pad = 4 | 1;
	sroce_build(b.data(), &pkt);
	EXPECT_EQ(b, from_hex("04 10 ffff 00 abcdef 00 000001"));
}

TEST(Build, TransportVersionIsWrittenAsGivenSoTestsCanForgeIt)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_RC_SEND_ONLY);
	Bytes b(SROCE_BTH_BYTES);

	pkt.tver = 0x3;
	sroce_build(b.data(), &pkt);
	EXPECT_EQ(b[1], 0x03);
}

TEST(Build, ExtensionHeadersUseBigEndianIbaLayout)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_RC_COMPARE_SWAP);
	Bytes b(SROCE_MAX_HDR_BYTES);

	pkt.atmeth = {0x0102030405060708ull, 0x090a0b0c, 0x1112131415161718ull,
	              0x2122232425262728ull};
	ASSERT_EQ(sroce_build(b.data(), &pkt), 40u);
	EXPECT_EQ(Bytes(b.begin() + 12, b.begin() + 40),
	          from_hex("0102030405060708 090a0b0c 1112131415161718 2122232425262728"));
}
