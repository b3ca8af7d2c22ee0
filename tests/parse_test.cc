// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_parse(): field decoding from hand-written bytes laid out as IBA 9.2
 * and 9.3 draw them, and every way a hostile packet can be malformed.
 * The ASan/UBSan build runs each case on an exactly-sized heap copy, so any
 * read past the given length fails the test.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::from_hex;
using sroce_test::make_bth_packet;
using sroce_test::make_pkt;
using sroce_test::with_payload;

namespace
{

/* Parse an exactly-sized heap copy of the first len bytes. */
int parse_prefix(const Bytes &b, size_t len, sroce_pkt *pkt)
{
	Bytes copy(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
	return sroce_parse(copy.data(), copy.size(), pkt);
}

int parse(const Bytes &b, sroce_pkt *pkt)
{
	return parse_prefix(b, b.size(), pkt);
}

/* Header bytes as written in a test, plus a (zero) ICRC. */
Bytes wire(const std::string &hex)
{
	Bytes b = from_hex(hex);
	b.insert(b.end(), SROCE_ICRC_BYTES, 0);
	return b;
}

/* A valid packet for op carrying payload_len bytes (8 for ATOMIC WRITE). */
Bytes valid_packet(uint8_t op, size_t payload_len)
{
	const sroce_opcode_info *info = sroce_opcode_get(op);

	if (!(info->flags & SROCE_OPF_PAYLOAD))
		payload_len = 0;
	if (info->fixed_payload)
		payload_len = info->fixed_payload;
	return make_bth_packet(with_payload(make_pkt(op), payload_len), payload_len);
}

} /* namespace */

TEST(Parse, EveryValidOpcodeParsesWithPayloadAfterItsHeaders)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		size_t want = (info->flags & SROCE_OPF_PAYLOAD) ? 5 : 0;
		sroce_pkt pkt;

		if (info->fixed_payload)
			want = info->fixed_payload;
		ASSERT_EQ(parse(valid_packet(op, 5), &pkt), 0) << info->name;
		EXPECT_EQ(pkt.info, info);
		EXPECT_EQ(pkt.opcode, op);
		EXPECT_EQ(pkt.payload_off, info->hdr_len) << info->name;
		EXPECT_EQ(pkt.payload_len, want) << info->name;
	}
}

TEST(Parse, EveryInvalidOpcodeIsBadOpcode)
{
	for (int op = 0; op < SROCE_NUM_OPCODES; op++) {
		if (sroce_opcode_get(static_cast<uint8_t>(op)))
			continue;
		Bytes b = valid_packet(SROCE_OP_RC_SEND_ONLY, 0);
		sroce_pkt pkt;

		b.insert(b.end(), 64, 0); /* long enough for any header */
		b[0] = static_cast<uint8_t>(op);
		EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_OPCODE) << "opcode 0x" << std::hex << op;
	}
}

TEST(Parse, PacketTruncatedAnywhereBeforeTheEndOfHeadersPlusIcrcIsShort)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		Bytes b = valid_packet(op, 0);
		size_t need = sroce_opcode_get(op)->hdr_len + SROCE_ICRC_BYTES;
		sroce_pkt pkt;

		for (size_t len = 0; len < need; len++)
			EXPECT_EQ(parse_prefix(b, len, &pkt), -SROCE_DROP_SHORT)
			    << sroce_opcode_name(op) << " len " << len;
		EXPECT_EQ(parse(b, &pkt), 0) << sroce_opcode_name(op);
	}
}

TEST(Parse, NullBufferOfLengthZeroIsShort)
{
	sroce_pkt pkt;

	EXPECT_EQ(sroce_parse(nullptr, 0, &pkt), -SROCE_DROP_SHORT);
}

TEST(Parse, NonzeroTransportVersionIsBadTver)
{
	for (uint8_t tver = 1; tver < 16; tver++) {
		Bytes b = valid_packet(SROCE_OP_RC_SEND_ONLY, 4);
		sroce_pkt pkt;

		b[1] = static_cast<uint8_t>((b[1] & 0xf0) | tver);
		EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_TVER) << "tver " << int(tver);
	}
}

TEST(Parse, DestinationQpZeroIsBadQpn)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_UD_SEND_ONLY);
	sroce_pkt out;

	pkt.dqpn = 0;
	EXPECT_EQ(parse(make_bth_packet(pkt, 0), &out), -SROCE_DROP_BAD_QPN);
}

TEST(Parse, PadCountOnAnEmptyPayloadIsBadPad)
{
	for (uint8_t pad = 1; pad < 4; pad++) {
		sroce_pkt pkt = make_pkt(SROCE_OP_RC_SEND_ONLY);
		sroce_pkt out;

		pkt.pad = pad;
		Bytes b = make_bth_packet(pkt, 0);
		b.resize(SROCE_BTH_BYTES + SROCE_ICRC_BYTES); /* no pad bytes either */
		EXPECT_EQ(parse(b, &out), -SROCE_DROP_BAD_PAD) << "pad " << int(pad);
	}
}

TEST(Parse, PadCountIsSubtractedFromThePayload)
{
	sroce_pkt out;

	for (size_t len = 1; len <= 8; len++) {
		Bytes b = make_bth_packet(with_payload(make_pkt(SROCE_OP_UC_SEND_ONLY), len), len);
		ASSERT_EQ(parse(b, &out), 0) << "len " << len;
		EXPECT_EQ(out.payload_len, len);
		EXPECT_EQ(out.pad, (4 - len % 4) % 4);
	}
}

TEST(Parse, PaddedPayloadNotAMultipleOfFourBytesIsBadLength)
{
	for (size_t extra = 1; extra < 4; extra++) {
		Bytes b = valid_packet(SROCE_OP_RC_SEND_ONLY, 8);
		sroce_pkt pkt;

		b.insert(b.end(), extra, 0);
		EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_LENGTH) << "extra " << extra;
	}
}

TEST(Parse, PayloadOnAnOpcodeThatCarriesNoneIsBadLength)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		if (sroce_opcode_get(op)->flags & SROCE_OPF_PAYLOAD)
			continue;
		Bytes b = valid_packet(op, 0);
		sroce_pkt pkt;

		b.insert(b.end() - SROCE_ICRC_BYTES, 4, 0x5a);
		EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_LENGTH) << sroce_opcode_name(op);
	}
}

TEST(Parse, PadCountOnAnOpcodeThatCarriesNoPayloadIsBadPad)
{
	sroce_pkt pkt = make_pkt(SROCE_OP_RC_ACKNOWLEDGE);
	sroce_pkt out;

	pkt.pad = 2;
	Bytes b = make_bth_packet(pkt, 0);
	b.resize(SROCE_BTH_BYTES + SROCE_AETH_BYTES + SROCE_ICRC_BYTES);
	EXPECT_EQ(parse(b, &out), -SROCE_DROP_BAD_PAD);
}

TEST(Parse, EmptyPayloadIsAcceptedWhereAPayloadIsAllowed)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		if (!(info->flags & SROCE_OPF_PAYLOAD) || info->fixed_payload)
			continue;
		sroce_pkt pkt;

		ASSERT_EQ(parse(make_bth_packet(make_pkt(op), 0), &pkt), 0) << info->name;
		EXPECT_EQ(pkt.payload_len, 0u);
	}
}

TEST(Parse, PayloadUpToTheLargestMtuIsAcceptedAndOneWordMoreIsBadLength)
{
	sroce_pkt pkt;

	EXPECT_EQ(parse(valid_packet(SROCE_OP_RC_SEND_MIDDLE, SROCE_MAX_PAYLOAD), &pkt), 0);
	EXPECT_EQ(pkt.payload_len, static_cast<uint32_t>(SROCE_MAX_PAYLOAD));
	EXPECT_EQ(parse(valid_packet(SROCE_OP_RC_SEND_MIDDLE, SROCE_MAX_PAYLOAD + 4), &pkt),
	          -SROCE_DROP_BAD_LENGTH);
}

TEST(Parse, AtomicWriteMustCarryExactlyEightBytes)
{
	sroce_pkt pkt;

	for (size_t len : {0, 4, 12, 16}) {
		Bytes b = make_bth_packet(make_pkt(SROCE_OP_RC_ATOMIC_WRITE), len);
		EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_LENGTH) << "len " << len;
	}
	EXPECT_EQ(parse(make_bth_packet(make_pkt(SROCE_OP_RC_ATOMIC_WRITE), 8), &pkt), 0);
}

TEST(Parse, BthFieldsDecodeFromTheirIbaBitPositions)
{
	/* RDMA WRITE ONLY, SE M Pad=3, P_Key, FECN BECN, DestQP, AckReq, PSN */
	Bytes b = wire("0a f0 1234 c0 abcdef 80 010203"
	               "0123456789abcdef 11223344 00000001"
	               "78 000000");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.opcode, SROCE_OP_RC_RDMA_WRITE_ONLY);
	EXPECT_EQ(pkt.se, 1);
	EXPECT_EQ(pkt.mig, 1);
	EXPECT_EQ(pkt.pad, 3);
	EXPECT_EQ(pkt.tver, 0);
	EXPECT_EQ(pkt.pkey, 0x1234);
	EXPECT_EQ(pkt.fecn, 1);
	EXPECT_EQ(pkt.becn, 1);
	EXPECT_EQ(pkt.dqpn, 0xabcdefu);
	EXPECT_EQ(pkt.ackreq, 1);
	EXPECT_EQ(pkt.psn, 0x010203u);
	EXPECT_EQ(pkt.reth.va, 0x0123456789abcdefull);
	EXPECT_EQ(pkt.reth.rkey, 0x11223344u);
	EXPECT_EQ(pkt.reth.dma_len, 1u);
	EXPECT_EQ(pkt.payload_off, 28u);
	EXPECT_EQ(pkt.payload_len, 1u);
}

TEST(Parse, ClearBthBitsDecodeAsZero)
{
	Bytes b = wire("04 00 ffff 00 000001 00 000000");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.se | pkt.mig | pkt.pad | pkt.fecn | pkt.becn | pkt.ackreq, 0);
	EXPECT_EQ(pkt.pkey, 0xffff);
	EXPECT_EQ(pkt.dqpn, 1u);
	EXPECT_EQ(pkt.psn, 0u);
}

TEST(Parse, ReservedBthBitsAreIgnored)
{
	/* resv6 (byte 4, bits 5:0) and resv7 (byte 8, bits 6:0) all ones */
	Bytes b = wire("04 00 ffff 3f 000001 7f 000005");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.fecn, 0);
	EXPECT_EQ(pkt.becn, 0);
	EXPECT_EQ(pkt.ackreq, 0);
	EXPECT_EQ(pkt.dqpn, 1u);
	EXPECT_EQ(pkt.psn, 5u);
}

TEST(Parse, AethCarriesSyndromeAndMsn)
{
	Bytes b = wire("11 00 ffff 00 000010 00 000020  61 123456");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.aeth.syndrome, 0x61);
	EXPECT_EQ(pkt.aeth.msn, 0x123456u);
	EXPECT_EQ(sroce_aeth_type(pkt.aeth.syndrome), SROCE_AETH_NAK);
	EXPECT_EQ(sroce_aeth_value(pkt.aeth.syndrome), SROCE_NAK_INVALID_REQ);
}

TEST(Parse, AtomicEthCarriesVaRkeySwapAddAndCompare)
{
	Bytes b = wire("13 00 ffff 00 000010 80 000020"
	               "1111111122222222 33333333 4444444455555555 6666666677777777");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.atmeth.va, 0x1111111122222222ull);
	EXPECT_EQ(pkt.atmeth.rkey, 0x33333333u);
	EXPECT_EQ(pkt.atmeth.swap_add, 0x4444444455555555ull);
	EXPECT_EQ(pkt.atmeth.compare, 0x6666666677777777ull);
	EXPECT_EQ(pkt.payload_len, 0u);
}

TEST(Parse, AtomicAcknowledgeCarriesAethThenOriginalData)
{
	Bytes b = wire("12 00 ffff 00 000010 00 000020  1f 000007  0102030405060708");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.aeth.syndrome, SROCE_AETH_CREDITS_INVALID);
	EXPECT_EQ(pkt.aeth.msn, 7u);
	EXPECT_EQ(pkt.atmack_orig, 0x0102030405060708ull);
}

TEST(Parse, ImmediateDataIsKeptAsTheFourWireBytes)
{
	Bytes b = wire("05 00 ffff 00 000010 00 000020  deadbeef");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.imm[0], 0xde);
	EXPECT_EQ(pkt.imm[1], 0xad);
	EXPECT_EQ(pkt.imm[2], 0xbe);
	EXPECT_EQ(pkt.imm[3], 0xef);
	EXPECT_EQ(pkt.payload_off, 16u);
}

TEST(Parse, InvalidateEthCarriesTheRkey)
{
	Bytes b = wire("17 00 ffff 00 000010 00 000020  a1b2c3d4");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.ieth_rkey, 0xa1b2c3d4u);
}

TEST(Parse, DatagramEthCarriesQkeyAndSourceQpIgnoringItsReservedByte)
{
	Bytes b = wire("65 00 ffff 00 000001 00 000020  80010000 ff 000abc  01020304");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.deth.qkey, SROCE_GSI_QKEY);
	EXPECT_EQ(pkt.deth.src_qpn, 0xabcu);
	EXPECT_EQ(pkt.imm[0], 0x01);
	EXPECT_EQ(pkt.imm[3], 0x04);
	EXPECT_EQ(pkt.payload_off, 24u);
}

TEST(Parse, XrcEthCarriesTheSrqNumberBeforeTheRethIgnoringItsReservedByte)
{
	Bytes b = wire("aa 00 ffff 00 000010 80 000020  ff00abcd"
	               "0000000000001000 00000042 00000004  01020304");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.xrc_srqn, 0xabcdu);
	EXPECT_EQ(pkt.reth.va, 0x1000u);
	EXPECT_EQ(pkt.reth.rkey, 0x42u);
	EXPECT_EQ(pkt.reth.dma_len, 4u);
	EXPECT_EQ(pkt.payload_off, 32u);
	EXPECT_EQ(pkt.payload_len, 4u);
}

TEST(Parse, FlushEthCarriesSelectivityAndPlacementTypeBeforeTheReth)
{
	Bytes b = wire("1c 00 ffff 00 000010 80 000020  00000021"
	               "0000000000001000 00000042 00000100");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.feth.sel, 2);
	EXPECT_EQ(pkt.feth.plt, 1);
	EXPECT_EQ(pkt.reth.va, 0x1000u);
	EXPECT_EQ(pkt.reth.rkey, 0x42u);
	EXPECT_EQ(pkt.reth.dma_len, 0x100u);
}

TEST(Parse, CnpHasSixteenReservedBytesAndNoPayload)
{
	Bytes b = wire("81 00 ffff 40 000118 00 000000  00000000000000000000000000000000");
	sroce_pkt pkt;

	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.becn, 1);
	EXPECT_EQ(pkt.dqpn, 0x118u);
	EXPECT_EQ(pkt.payload_off, 28u);
	EXPECT_EQ(pkt.payload_len, 0u);
	b.insert(b.end() - 4, 4, 0);
	EXPECT_EQ(parse(b, &pkt), -SROCE_DROP_BAD_LENGTH);
}

TEST(Parse, FieldsOfExtensionHeadersTheOpcodeDoesNotCarryAreZero)
{
	/* An ACK whose bytes after the AETH would look like a RETH if misread. */
	Bytes b = wire("11 00 ffff 00 000010 00 000020  00 000001");
	sroce_pkt pkt;

	std::memset(&pkt, 0xa5, sizeof(pkt));
	ASSERT_EQ(parse(b, &pkt), 0);
	EXPECT_EQ(pkt.reth.va, 0u);
	EXPECT_EQ(pkt.atmeth.rkey, 0u);
	EXPECT_EQ(pkt.deth.qkey, 0u);
	EXPECT_EQ(pkt.ieth_rkey, 0u);
	EXPECT_EQ(pkt.imm[0], 0);
}

TEST(Parse, RandomBytesNeverReadOutOfBoundsAndAcceptedPacketsAreConsistent)
{
	std::mt19937 rng(4791);
	const std::vector<uint8_t> valid = sroce_test::valid_opcodes();
	int accepted = 0;

	for (int iter = 0; iter < 50000; iter++) {
		Bytes b(rng() % 96);
		for (uint8_t &x : b)
			x = static_cast<uint8_t>(rng());
		if (!b.empty() && (rng() & 1))
			b[0] = valid[rng() % valid.size()];
		if (b.size() > 1 && (rng() & 1))
			b[1] &= 0xf0; /* TVer 0 */
		sroce_pkt pkt;
		int err = parse(b, &pkt);

		ASSERT_LE(err, 0);
		ASSERT_GT(err, -SROCE_DROP_NUM);
		if (err)
			continue;
		accepted++;
		ASSERT_NE(pkt.info, nullptr);
		ASSERT_EQ(pkt.payload_off + pkt.payload_len + pkt.pad + SROCE_ICRC_BYTES, b.size());
	}
	EXPECT_GT(accepted, 100);
}

TEST(DropReason, EveryReasonHasADistinctCounterName)
{
	std::set<std::string> names;

	for (unsigned r = 0; r < SROCE_DROP_NUM; r++) {
		std::string name = sroce_drop_reason_name(r);
		EXPECT_NE(name, "invalid") << r;
		EXPECT_FALSE(name.empty()) << r;
		EXPECT_TRUE(names.insert(name).second) << name;
	}
}

TEST(DropReason, NamesMatchTheEnumerators)
{
	EXPECT_STREQ(sroce_drop_reason_name(SROCE_DROP_SHORT), "short");
	EXPECT_STREQ(sroce_drop_reason_name(SROCE_DROP_BAD_ICRC), "bad_icrc");
	EXPECT_STREQ(sroce_drop_reason_name(SROCE_DROP_PSN_OUT_OF_WINDOW), "psn_out_of_window");
}

TEST(DropReason, OutOfRangeReasonIsNamedInvalid)
{
	EXPECT_STREQ(sroce_drop_reason_name(SROCE_DROP_NUM), "invalid");
	EXPECT_STREQ(sroce_drop_reason_name(static_cast<unsigned>(-1)), "invalid");
}
