// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The opcode table against an independent transcription of IBA Vol 1
 * Table 38 (opcodes) and 9.3 (extension headers per opcode), A19 (FLUSH,
 * ATOMIC WRITE), A17.9.3 (CNP) and A14 (XRC: an XRCETH in every request).
 */
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "sroce_test_util.h"

namespace
{

struct IbaOpcode {
	uint8_t op;
	const char *name;
	unsigned hdr_len; /* BTH + extension headers */
	uint32_t exts;    /* SROCE_OPF_<ext> bits */
	bool payload;
};

constexpr uint32_t R = SROCE_OPF_RETH, A = SROCE_OPF_AETH, ATM = SROCE_OPF_ATMETH,
                   ACK8 = SROCE_OPF_ATMACK, I = SROCE_OPF_IMMDT, INV = SROCE_OPF_IETH,
                   D = SROCE_OPF_DETH, F = SROCE_OPF_FETH, X = SROCE_OPF_XRCETH;

const IbaOpcode kIba[] = {
    {0x00, "RC_SEND_FIRST", 12, 0, true},
    {0x01, "RC_SEND_MIDDLE", 12, 0, true},
    {0x02, "RC_SEND_LAST", 12, 0, true},
    {0x03, "RC_SEND_LAST_WITH_IMM", 16, I, true},
    {0x04, "RC_SEND_ONLY", 12, 0, true},
    {0x05, "RC_SEND_ONLY_WITH_IMM", 16, I, true},
    {0x06, "RC_RDMA_WRITE_FIRST", 28, R, true},
    {0x07, "RC_RDMA_WRITE_MIDDLE", 12, 0, true},
    {0x08, "RC_RDMA_WRITE_LAST", 12, 0, true},
    {0x09, "RC_RDMA_WRITE_LAST_WITH_IMM", 16, I, true},
    {0x0a, "RC_RDMA_WRITE_ONLY", 28, R, true},
    {0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMM", 32, R | I, true},
    {0x0c, "RC_RDMA_READ_REQUEST", 28, R, false},
    {0x0d, "RC_RDMA_READ_RESPONSE_FIRST", 16, A, true},
    {0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 12, 0, true},
    {0x0f, "RC_RDMA_READ_RESPONSE_LAST", 16, A, true},
    {0x10, "RC_RDMA_READ_RESPONSE_ONLY", 16, A, true},
    {0x11, "RC_ACKNOWLEDGE", 16, A, false},
    {0x12, "RC_ATOMIC_ACKNOWLEDGE", 24, A | ACK8, false},
    {0x13, "RC_COMPARE_SWAP", 40, ATM, false},
    {0x14, "RC_FETCH_ADD", 40, ATM, false},
    {0x16, "RC_SEND_LAST_WITH_INV", 16, INV, true},
    {0x17, "RC_SEND_ONLY_WITH_INV", 16, INV, true},
    {0x1c, "RC_FLUSH", 32, F | R, false},
    {0x1d, "RC_ATOMIC_WRITE", 28, R, true},
    {0x20, "UC_SEND_FIRST", 12, 0, true},
    {0x21, "UC_SEND_MIDDLE", 12, 0, true},
    {0x22, "UC_SEND_LAST", 12, 0, true},
    {0x23, "UC_SEND_LAST_WITH_IMM", 16, I, true},
    {0x24, "UC_SEND_ONLY", 12, 0, true},
    {0x25, "UC_SEND_ONLY_WITH_IMM", 16, I, true},
    {0x26, "UC_RDMA_WRITE_FIRST", 28, R, true},
    {0x27, "UC_RDMA_WRITE_MIDDLE", 12, 0, true},
    {0x28, "UC_RDMA_WRITE_LAST", 12, 0, true},
    {0x29, "UC_RDMA_WRITE_LAST_WITH_IMM", 16, I, true},
    {0x2a, "UC_RDMA_WRITE_ONLY", 28, R, true},
    {0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMM", 32, R | I, true},
    {0x64, "UD_SEND_ONLY", 20, D, true},
    {0x65, "UD_SEND_ONLY_WITH_IMM", 24, D | I, true},
    {0x81, "CNP", 28, 0, false},
    {0xa0, "XRC_SEND_FIRST", 16, X, true},
    {0xa1, "XRC_SEND_MIDDLE", 16, X, true},
    {0xa2, "XRC_SEND_LAST", 16, X, true},
    {0xa3, "XRC_SEND_LAST_WITH_IMM", 20, X | I, true},
    {0xa4, "XRC_SEND_ONLY", 16, X, true},
    {0xa5, "XRC_SEND_ONLY_WITH_IMM", 20, X | I, true},
    {0xa6, "XRC_RDMA_WRITE_FIRST", 32, X | R, true},
    {0xa7, "XRC_RDMA_WRITE_MIDDLE", 16, X, true},
    {0xa8, "XRC_RDMA_WRITE_LAST", 16, X, true},
    {0xa9, "XRC_RDMA_WRITE_LAST_WITH_IMM", 20, X | I, true},
    {0xaa, "XRC_RDMA_WRITE_ONLY", 32, X | R, true},
    {0xab, "XRC_RDMA_WRITE_ONLY_WITH_IMM", 36, X | R | I, true},
    {0xac, "XRC_RDMA_READ_REQUEST", 32, X | R, false},
    {0xad, "XRC_RDMA_READ_RESPONSE_FIRST", 16, A, true},
    {0xae, "XRC_RDMA_READ_RESPONSE_MIDDLE", 12, 0, true},
    {0xaf, "XRC_RDMA_READ_RESPONSE_LAST", 16, A, true},
    {0xb0, "XRC_RDMA_READ_RESPONSE_ONLY", 16, A, true},
    {0xb1, "XRC_ACKNOWLEDGE", 16, A, false},
    {0xb2, "XRC_ATOMIC_ACKNOWLEDGE", 24, A | ACK8, false},
    {0xb3, "XRC_COMPARE_SWAP", 44, X | ATM, false},
    {0xb4, "XRC_FETCH_ADD", 44, X | ATM, false},
    {0xb6, "XRC_SEND_LAST_WITH_INV", 20, X | INV, true},
    {0xb7, "XRC_SEND_ONLY_WITH_INV", 20, X | INV, true},
};

std::map<int, const IbaOpcode *> iba_by_value()
{
	std::map<int, const IbaOpcode *> m;

	for (const IbaOpcode &e : kIba)
		m[e.op] = &e;
	return m;
}

/* Extension header sizes (IBA 9.3), in enum sroce_ext order. */
constexpr unsigned kExtBytes[] = {8, 4, 4, 16, 28, 4, 8, 4, 4};
static_assert(SROCE_EXT_DETH == 0 && SROCE_EXT_XRCETH == 1 && SROCE_EXT_FETH == 2 &&
                  SROCE_EXT_RETH == 3 && SROCE_EXT_ATMETH == 4 && SROCE_EXT_AETH == 5 &&
                  SROCE_EXT_ATMACK == 6 && SROCE_EXT_IMMDT == 7 && SROCE_EXT_IETH == 8 &&
                  SROCE_EXT_NUM == 9,
              "kExtBytes follows enum sroce_ext");

bool has(const sroce_opcode_info *info, uint32_t flags)
{
	return (info->flags & flags) == flags;
}

bool name_has(const sroce_opcode_info *info, const char *s)
{
	return std::strstr(info->name, s) != nullptr;
}

} /* namespace */

TEST(OpcodeTable, EachOf256ValuesIsValidExactlyWhenIbaDefinesItAndSroceSupportsIt)
{
	auto iba = iba_by_value();

	for (int op = 0; op < SROCE_NUM_OPCODES; op++) {
		const sroce_opcode_info *info = sroce_opcode_get(static_cast<uint8_t>(op));
		EXPECT_EQ(info != nullptr, iba.count(op) == 1) << "opcode 0x" << std::hex << op;
	}
}

TEST(OpcodeTable, ValidOpcodesHaveIbaNameHeaderLengthAndExtensionHeaders)
{
	for (const IbaOpcode &e : kIba) {
		const sroce_opcode_info *info = sroce_opcode_get(e.op);
		ASSERT_NE(info, nullptr) << e.name;
		EXPECT_STREQ(info->name, e.name);
		EXPECT_EQ(info->hdr_len, e.hdr_len) << e.name;
		EXPECT_EQ(info->flags & SROCE_OPF_EXT_MASK, e.exts) << e.name;
		EXPECT_EQ(has(info, SROCE_OPF_PAYLOAD), e.payload) << e.name;
	}
}

TEST(OpcodeTable, ReliableDatagramReservedAndVendorRangesAreInvalid)
{
	const std::pair<int, int> invalid[] = {
	    {0x15, 0x15}, {0x18, 0x1b}, {0x1e, 0x1f}, {0x2c, 0x3f}, {0x40, 0x5f}, {0x60, 0x63},
	    {0x66, 0x80}, {0x82, 0x9f}, {0xb5, 0xb5}, {0xb8, 0xbf}, {0xc0, 0xff},
	};

	for (auto [lo, hi] : invalid)
		for (int op = lo; op <= hi; op++)
			EXPECT_EQ(sroce_opcode_get(static_cast<uint8_t>(op)), nullptr)
			    << "opcode 0x" << std::hex << op;
}

TEST(OpcodeTable, NamesAreUniqueAndInvalidOpcodesAreNamedInvalid)
{
	std::set<std::string> names;

	for (uint8_t op : sroce_test::valid_opcodes())
		EXPECT_TRUE(names.insert(sroce_opcode_name(op)).second) << sroce_opcode_name(op);
	EXPECT_STREQ(sroce_opcode_name(0x40), "INVALID");
	EXPECT_STREQ(sroce_opcode_name(0xff), "INVALID");
	EXPECT_STREQ(sroce_opcode_name(SROCE_OP_RC_SEND_ONLY), "RC_SEND_ONLY");
}

TEST(OpcodeTable, TransportIsTheTopThreeOpcodeBits)
{
	for (uint8_t op : sroce_test::valid_opcodes())
		EXPECT_EQ(sroce_opcode_get(op)->transport, op & SROCE_OPCODE_TRANSPORT_MASK)
		    << sroce_opcode_name(op);
}

TEST(OpcodeTable, NamePrefixMatchesTransport)
{
	const std::map<int, std::string> prefix = {
	    {SROCE_TRANSPORT_RC, "RC_"},   {SROCE_TRANSPORT_UC, "UC_"},
	    {SROCE_TRANSPORT_UD, "UD_"},   {SROCE_TRANSPORT_CNP, "CNP"},
	    {SROCE_TRANSPORT_XRC, "XRC_"},
	};

	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		ASSERT_EQ(prefix.count(info->transport), 1u) << info->name;
		EXPECT_EQ(std::string(info->name).rfind(prefix.at(info->transport), 0), 0u)
		    << info->name;
	}
}

TEST(OpcodeTable, ExtensionHeadersFollowTheBthInIbaOrderWithoutGaps)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		unsigned at = SROCE_BTH_BYTES;

		for (int ext = 0; ext < SROCE_EXT_NUM; ext++) {
			if (info->flags & (1u << ext)) {
				EXPECT_EQ(info->off[ext], at) << info->name << " ext " << ext;
				at += kExtBytes[ext];
			} else {
				EXPECT_EQ(info->off[ext], 0) << info->name << " ext " << ext;
			}
		}
		if (has(info, SROCE_OPF_CNP))
			at += SROCE_CNP_RSVD_BYTES;
		EXPECT_EQ(info->hdr_len, at) << info->name;
	}
}

TEST(OpcodeTable, LongestHeaderIsSroceMaxHdrBytes)
{
	unsigned longest = 0;

	for (uint8_t op : sroce_test::valid_opcodes())
		longest = std::max<unsigned>(longest, sroce_opcode_get(op)->hdr_len);
	EXPECT_EQ(longest, static_cast<unsigned>(SROCE_MAX_HDR_BYTES));
}

TEST(OpcodeTable, EveryOpcodeHasExactlyOneKind)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		uint32_t kind = sroce_opcode_get(op)->flags & SROCE_OPF_KIND_MASK;
		EXPECT_EQ(__builtin_popcount(kind), 1) << sroce_opcode_name(op);
	}
}

TEST(OpcodeTable, KindMatchesName)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		EXPECT_EQ(has(info, SROCE_OPF_SEND), name_has(info, "_SEND_")) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_WRITE), name_has(info, "_RDMA_WRITE_")) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_READ), name_has(info, "_RDMA_READ_")) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_ATOMIC), name_has(info, "COMPARE_SWAP") ||
		                                           name_has(info, "FETCH_ADD") ||
		                                           name_has(info, "ATOMIC_ACKNOWLEDGE"))
		    << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_ACK),
		          std::string(info->name) == "RC_ACKNOWLEDGE" ||
		              std::string(info->name) == "XRC_ACKNOWLEDGE");
		EXPECT_EQ(has(info, SROCE_OPF_FLUSH), std::string(info->name) == "RC_FLUSH");
		EXPECT_EQ(has(info, SROCE_OPF_ATOMIC_WRITE),
		          std::string(info->name) == "RC_ATOMIC_WRITE");
		EXPECT_EQ(has(info, SROCE_OPF_CNP), std::string(info->name) == "CNP");
	}
}

TEST(OpcodeTable, ResponsesAreReadResponsesAndAcknowledgesOnly)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		bool response = name_has(info, "RESPONSE") || name_has(info, "ACKNOWLEDGE");

		EXPECT_EQ(has(info, SROCE_OPF_RESPONSE), response) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_REQUEST), !response && !has(info, SROCE_OPF_CNP))
		    << info->name;
	}
}

TEST(OpcodeTable, ExactlyTheReliableConnectedRequestsAreAckable)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		bool reliable =
		    info->transport == SROCE_TRANSPORT_RC || info->transport == SROCE_TRANSPORT_XRC;

		EXPECT_EQ(has(info, SROCE_OPF_ACKABLE), reliable && has(info, SROCE_OPF_REQUEST))
		    << info->name;
	}
}

TEST(OpcodeTable, ExactlyTheXrcRequestsCarryAnXrceth)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		bool xrc_request =
		    info->transport == SROCE_TRANSPORT_XRC && has(info, SROCE_OPF_REQUEST);

		EXPECT_EQ(has(info, SROCE_OPF_XRCETH), xrc_request) << info->name;
		if (xrc_request) {
			EXPECT_EQ(info->off[SROCE_EXT_XRCETH], SROCE_BTH_BYTES) << info->name;
		}
	}
}

TEST(OpcodeTable, PositionFlagsMatchNameSuffix)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		uint32_t pos = info->flags & (SROCE_OPF_FIRST | SROCE_OPF_MIDDLE | SROCE_OPF_LAST);
		uint32_t want;

		if (has(info, SROCE_OPF_CNP))
			want = 0;
		else if (name_has(info, "_FIRST"))
			want = SROCE_OPF_FIRST;
		else if (name_has(info, "_MIDDLE"))
			want = SROCE_OPF_MIDDLE;
		else if (name_has(info, "_LAST"))
			want = SROCE_OPF_LAST;
		else
			want = SROCE_OPF_ONLY; /* _ONLY, requests and acks of one packet */
		EXPECT_EQ(pos, want) << info->name;
	}
}

TEST(OpcodeTable, ImmediateAndInvalidateOpcodesCarryImmDtAndIeth)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		EXPECT_EQ(has(info, SROCE_OPF_IMMDT), name_has(info, "WITH_IMM")) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_IETH), name_has(info, "WITH_INV")) << info->name;
	}
}

TEST(OpcodeTable, ReceiveWqeIsConsumedBySendsAndWritesWithImmediate)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		bool send = has(info, SROCE_OPF_SEND);
		bool write_imm = has(info, SROCE_OPF_WRITE) && has(info, SROCE_OPF_IMMDT);
		bool send_starts = send && has(info, SROCE_OPF_FIRST);
		bool send_ends = send && has(info, SROCE_OPF_LAST);

		EXPECT_EQ(has(info, SROCE_OPF_RECV_WQE), send_starts || write_imm) << info->name;
		EXPECT_EQ(has(info, SROCE_OPF_COMPLETES), send_ends || write_imm) << info->name;
		/* IBA 9.2: SE is meaningful exactly where a receive completes. */
		EXPECT_EQ(has(info, SROCE_OPF_SOLICITABLE), has(info, SROCE_OPF_COMPLETES))
		    << info->name;
	}
}

TEST(OpcodeTable, OnlyAtomicWriteHasAFixedPayloadOfEightBytes)
{
	for (uint8_t op : sroce_test::valid_opcodes()) {
		const sroce_opcode_info *info = sroce_opcode_get(op);
		EXPECT_EQ(info->fixed_payload, op == SROCE_OP_RC_ATOMIC_WRITE ? 8 : 0)
		    << info->name;
	}
}

TEST(OpcodeTable, EnumValuesAreIbaOpcodeValues)
{
	/* IBA Table 38 (and A19, A17.9.3) spot checks across every transport. */
	EXPECT_EQ(SROCE_OP_RC_SEND_FIRST, 0x00);
	EXPECT_EQ(SROCE_OP_RC_RDMA_READ_REQUEST, 0x0c);
	EXPECT_EQ(SROCE_OP_RC_ACKNOWLEDGE, 0x11);
	EXPECT_EQ(SROCE_OP_RC_SEND_LAST_WITH_INV, 0x16);
	EXPECT_EQ(SROCE_OP_RC_SEND_ONLY_WITH_INV, 0x17);
	EXPECT_EQ(SROCE_OP_RC_FLUSH, 0x1c);
	EXPECT_EQ(SROCE_OP_RC_ATOMIC_WRITE, 0x1d);
	EXPECT_EQ(SROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMM, 0x2b);
	EXPECT_EQ(SROCE_OP_UD_SEND_ONLY, 0x64);
	EXPECT_EQ(SROCE_OP_CNP, 0x81);
	EXPECT_EQ(SROCE_OP_XRC_SEND_FIRST, 0xa0);
	EXPECT_EQ(SROCE_OP_XRC_RDMA_READ_REQUEST, 0xac);
	EXPECT_EQ(SROCE_OP_XRC_ACKNOWLEDGE, 0xb1);
	EXPECT_EQ(SROCE_OP_XRC_SEND_ONLY_WITH_INV, 0xb7);
}
