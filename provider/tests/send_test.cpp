// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Send queue: opcode table, WR validation, WQE encoding of every opcode,
 * inline gathering, ring space, publication and the doorbell decision.
 */
#include "fake_ring.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <set>

using sroce_test::FakeRing;
using sroce_test::send_wqe;

namespace
{

constexpr uint32_t kEntries = 8;
constexpr uint32_t kMaxSge = 4;
constexpr uint32_t kMaxInline = 64;
const uint32_t kStride = sroce_send_wqe_stride(kMaxSge, kMaxInline);

class SendQueueTest : public ::testing::Test
{
      protected:
	SendQueueTest() : ring_(kEntries, kStride)
	{
		sroce_test::attach(sq_, ring_, kMaxSge, kMaxInline);
		for (int i = 0; i < 4; i++)
			sge_[i] = {0x10000u * (i + 1), 100u + i, 0x50u + i};
	}

	/* A valid WR of @opcode with two SGEs. */
	ibv_send_wr wr(uint32_t opcode, uint64_t wr_id = 7)
	{
		ibv_send_wr w{};

		w.wr_id = wr_id;
		sroce::set_wr_opcode(&w, opcode);
		w.sg_list = sge_;
		w.num_sge = 2;
		return w;
	}

	sroce::SqPostResult post(ibv_send_wr *w, ibv_qp_type type = IBV_QPT_RC,
	                         bool sig_all = false)
	{
		bad_ = nullptr;
		return sroce::sq_post(sq_, type, sig_all, w, &bad_);
	}

	FakeRing ring_;
	sroce::WorkQueue sq_;
	ibv_sge sge_[4];
	ibv_send_wr *bad_ = nullptr;
};

bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = static_cast<const uint8_t *>(p);

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* ---- Opcode table ----------------------------------------------------- */

struct Allowed {
	ibv_wr_opcode opcode;
	std::set<ibv_qp_type> qp_types;
};

const Allowed kAllowed[] = {
    {IBV_WR_RDMA_WRITE, {IBV_QPT_RC, IBV_QPT_UC}},
    {IBV_WR_RDMA_WRITE_WITH_IMM, {IBV_QPT_RC, IBV_QPT_UC}},
    {IBV_WR_SEND, {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}},
    {IBV_WR_SEND_WITH_IMM, {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}},
    {IBV_WR_RDMA_READ, {IBV_QPT_RC}},
    {IBV_WR_ATOMIC_CMP_AND_SWP, {IBV_QPT_RC}},
    {IBV_WR_ATOMIC_FETCH_AND_ADD, {IBV_QPT_RC}},
    {IBV_WR_LOCAL_INV, {IBV_QPT_RC, IBV_QPT_UC}},
    {IBV_WR_BIND_MW, {IBV_QPT_RC, IBV_QPT_UC}},
    {IBV_WR_SEND_WITH_INV, {IBV_QPT_RC}},
    {IBV_WR_ATOMIC_WRITE, {IBV_QPT_RC}},           /* ibv_wr_atomic_write() only */
    {ibv_wr_opcode(SROCE_WR_FLUSH), {IBV_QPT_RC}}, /* sroce_wr_flush() only */
};

bool allowed(uint32_t opcode, ibv_qp_type type)
{
	for (const Allowed &a : kAllowed)
		if (uint32_t(a.opcode) == opcode)
			return a.qp_types.count(type) != 0;
	return false;
}

TEST(SendOpTable, EveryOpcodeValueIsAllowedExactlyForItsQpTypes)
{
	const ibv_qp_type types[] = {IBV_QPT_RC,         IBV_QPT_UC,       IBV_QPT_UD,
	                             IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	                             IBV_QPT_DRIVER};

	for (uint32_t opcode = 0; opcode < 256; opcode++) {
		const sroce::SendOpInfo &op = sroce::send_op_info(opcode);

		for (ibv_qp_type type : types) {
			bool table = op.kind != sroce::SendKind::invalid && type < 8 &&
			             (op.qp_types & (1u << type));
			EXPECT_EQ(table, allowed(opcode, type))
			    << "opcode " << opcode << " qp type " << type;
		}
	}
}

TEST(SendOpTable, OutOfRangeOpcodesAreInvalid)
{
	EXPECT_EQ(sroce::send_op_info(16).kind, sroce::SendKind::invalid);
	EXPECT_EQ(sroce::send_op_info(0xffffffffu).kind, sroce::SendKind::invalid);
	EXPECT_EQ(sroce::send_op_info(IBV_WR_TSO).kind, sroce::SendKind::invalid);
}

/* ATOMIC WRITE has no ibv_send_wr encoding: ibv_post_send refuses it. */
TEST_F(SendQueueTest, PostSendRefusesAtomicWrite)
{
	ibv_send_wr w = wr(IBV_WR_ATOMIC_WRITE);

	w.num_sge = 0;
	w.wr.atomic.remote_addr = 0x1000;
	EXPECT_EQ(post(&w).err, EINVAL);
	EXPECT_EQ(bad_, &w);
}

TEST_F(SendQueueTest, CheckRejectsEveryDisallowedOpcodeWithEinval)
{
	for (uint32_t opcode = 0; opcode < 256; opcode++) {
		for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
			ibv_send_wr w = wr(opcode);
			sroce::Ah ah{};
			ibv_mw mw{};
			uint32_t inline_len;

			if (type == IBV_QPT_UD)
				w.wr.ud.ah = &ah.ibah;
			else if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			         opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
			         opcode == IBV_WR_ATOMIC_WRITE)
				w.wr.atomic.remote_addr = 0x1000;
			else if (opcode == SROCE_WR_FLUSH)
				w.wr.atomic.swap = sroce::flush_wr_swap(SROCE_FLUSH_GLOBAL, 0);
			w.bind_mw.mw = &mw;
			int err = sroce::send_wr_check(sq_, type, w, &inline_len);
			EXPECT_EQ(err, allowed(opcode, type) ? 0 : EINVAL)
			    << "opcode " << opcode << " qp type " << type;
		}
	}
}

/* ---- WQE encodings ------------------------------------------------------ */

TEST_F(SendQueueTest, SendCopiesHeaderAndSges)
{
	ibv_send_wr w = wr(IBV_WR_SEND, 0x1122334455667788ull);

	w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
	ASSERT_EQ(post(&w).err, 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->wr_id, 0x1122334455667788ull);
	EXPECT_EQ(q->opcode, uint32_t(IBV_WR_SEND));
	EXPECT_EQ(q->flags, SROCE_WQE_SIGNALED | SROCE_WQE_SOLICITED | SROCE_WQE_FENCE);
	EXPECT_EQ(q->num_sge, 2u);
	EXPECT_EQ(q->inline_len, 0u);
	EXPECT_EQ(q->ex.imm_data, 0u);
	EXPECT_TRUE(all_zero(&q->wr, sizeof(q->wr)));
	EXPECT_TRUE(all_zero(&q->av, sizeof(q->av)));
	const sroce_sge *s = reinterpret_cast<const sroce_sge *>(q->data);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(s[i].addr, sge_[i].addr);
		EXPECT_EQ(s[i].length, sge_[i].length);
		EXPECT_EQ(s[i].lkey, sge_[i].lkey);
	}
}

TEST_F(SendQueueTest, SendWithImmCarriesImmediateInNetworkOrder)
{
	ibv_send_wr w = wr(IBV_WR_SEND_WITH_IMM);

	w.imm_data = htonl(0xdeadbeef);
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->opcode, uint32_t(IBV_WR_SEND_WITH_IMM));
	EXPECT_EQ(send_wqe(ring_, 0)->ex.imm_data, htonl(0xdeadbeef));
}

TEST_F(SendQueueTest, SendWithInvCarriesTheRkeyToInvalidate)
{
	ibv_send_wr w = wr(IBV_WR_SEND_WITH_INV);

	w.invalidate_rkey = 0xabcd01;
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->ex.invalidate_rkey, 0xabcd01u);
	EXPECT_EQ(send_wqe(ring_, 0)->num_sge, 2u);
}

TEST_F(SendQueueTest, RdmaWriteAndReadCarryRemoteAddressAndRkey)
{
	for (ibv_wr_opcode op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ}) {
		ibv_send_wr w = wr(op);
		uint32_t idx = ring_.prod();

		w.wr.rdma.remote_addr = 0x7f0000001000ull;
		w.wr.rdma.rkey = 0x4242;
		w.imm_data = htonl(5);
		ASSERT_EQ(post(&w).err, 0) << op;
		sroce_send_wqe *q = send_wqe(ring_, idx);
		EXPECT_EQ(q->opcode, uint32_t(op));
		EXPECT_EQ(q->wr.rdma.remote_addr, 0x7f0000001000ull);
		EXPECT_EQ(q->wr.rdma.rkey, 0x4242u);
		EXPECT_EQ(q->num_sge, 2u);
		EXPECT_EQ(q->ex.imm_data, op == IBV_WR_RDMA_WRITE_WITH_IMM ? htonl(5) : 0u);
	}
}

TEST_F(SendQueueTest, AtomicsCarryOperandsAndTheResultSge)
{
	for (ibv_wr_opcode op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
		ibv_send_wr w = wr(op);
		uint32_t idx = ring_.prod();

		w.num_sge = 1;
		sge_[0].length = 8;
		w.wr.atomic.remote_addr = 0x2000;
		w.wr.atomic.compare_add = 0x1111222233334444ull;
		w.wr.atomic.swap = 0x5555666677778888ull;
		w.wr.atomic.rkey = 0x99;
		ASSERT_EQ(post(&w).err, 0) << op;
		sroce_send_wqe *q = send_wqe(ring_, idx);
		EXPECT_EQ(q->opcode, uint32_t(op));
		EXPECT_EQ(q->wr.atomic.remote_addr, 0x2000u);
		EXPECT_EQ(q->wr.atomic.compare_add, 0x1111222233334444ull);
		EXPECT_EQ(q->wr.atomic.swap, 0x5555666677778888ull);
		EXPECT_EQ(q->wr.atomic.rkey, 0x99u);
		EXPECT_EQ(q->num_sge, 1u);
	}
}

/* What ibv_wr_atomic_write() writes: the 8 wire bytes, no SGE. */
TEST_F(SendQueueTest, AtomicWriteCarriesItsEightBytesAndNoSge)
{
	ibv_send_wr w = wr(IBV_WR_ATOMIC_WRITE);
	const uint8_t wire[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint32_t inline_len = 0;
	alignas(8) uint8_t slot[SROCE_SEND_WQE_HDR_SIZE + 64] = {};
	auto *q = reinterpret_cast<sroce_send_wqe *>(slot);

	w.num_sge = 0;
	w.wr.atomic.rkey = 0x77;
	w.wr.atomic.remote_addr = 0x3004;
	memcpy(&w.wr.atomic.compare_add, wire, sizeof(wire));
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), EINVAL);
	w.wr.atomic.remote_addr = 0x3008;
	ASSERT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), 0);
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_UC, w, &inline_len), EINVAL);
	sroce::send_wqe_build(q, w, IBV_QPT_RC, inline_len, false);
	EXPECT_EQ(q->opcode, uint32_t(SROCE_WR_ATOMIC_WRITE));
	EXPECT_EQ(q->wr.atomic.remote_addr, 0x3008u);
	EXPECT_EQ(q->wr.atomic.rkey, 0x77u);
	EXPECT_EQ(memcmp(&q->wr.atomic.compare_add, wire, sizeof(wire)), 0);
	EXPECT_EQ(q->num_sge, 0u);
	EXPECT_EQ(q->inline_len, 0u);
}

/* Nor has FLUSH. */
TEST_F(SendQueueTest, PostSendRefusesFlush)
{
	ibv_send_wr w = wr(SROCE_WR_FLUSH);

	w.num_sge = 0;
	w.wr.atomic.swap = sroce::flush_wr_swap(SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE);
	EXPECT_EQ(post(&w).err, EINVAL);
	EXPECT_EQ(bad_, &w);
}

/* What sroce_wr_flush() writes: the range and the FETH fields, no SGE. */
TEST_F(SendQueueTest, FlushCarriesRangeTypeAndLevel)
{
	ibv_send_wr w = wr(SROCE_WR_FLUSH);
	uint32_t inline_len = 0;
	alignas(8) uint8_t slot[SROCE_SEND_WQE_HDR_SIZE + 64] = {};
	auto *q = reinterpret_cast<sroce_send_wqe *>(slot);

	w.num_sge = 0;
	w.wr.atomic.rkey = 0x55;
	w.wr.atomic.remote_addr = 0x4001; /* any alignment */
	w.wr.atomic.compare_add = 4097;
	w.wr.atomic.swap = sroce::flush_wr_swap(SROCE_FLUSH_GLOBAL, SROCE_FLUSH_MR);
	ASSERT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), 0);
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_UC, w, &inline_len), EINVAL);
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_UD, w, &inline_len), EINVAL);
	sroce::send_wqe_build(q, w, IBV_QPT_RC, inline_len, false);
	EXPECT_EQ(q->opcode, uint32_t(SROCE_WR_FLUSH));
	EXPECT_EQ(q->wr.flush.remote_addr, 0x4001u);
	EXPECT_EQ(q->wr.flush.length, 4097u);
	EXPECT_EQ(q->wr.flush.rkey, 0x55u);
	EXPECT_EQ(q->wr.flush.type, SROCE_FLUSH_GLOBAL);
	EXPECT_EQ(q->wr.flush.level, SROCE_FLUSH_MR);
	EXPECT_EQ(q->num_sge, 0u);
}

TEST_F(SendQueueTest, FlushNeedsAKnownTypeLevelAndLength)
{
	ibv_send_wr w = wr(SROCE_WR_FLUSH);
	uint32_t inline_len;
	const struct {
		uint8_t type, level;
		uint64_t len;
		int err;
	} cases[] = {
	    {SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, 0, 0},
	    {SROCE_FLUSH_PERSISTENT, SROCE_FLUSH_RANGE, 64, 0},
	    {SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT, SROCE_FLUSH_MR, 1ull << 31, 0},
	    {0, SROCE_FLUSH_RANGE, 64, EINVAL},
	    {4, SROCE_FLUSH_RANGE, 64, EINVAL},
	    {SROCE_FLUSH_GLOBAL, 2, 64, EINVAL},
	    {SROCE_FLUSH_GLOBAL, SROCE_FLUSH_RANGE, (1ull << 31) + 1, EINVAL},
	};

	w.num_sge = 0;
	for (const auto &c : cases) {
		w.wr.atomic.swap = sroce::flush_wr_swap(c.type, c.level);
		w.wr.atomic.compare_add = c.len;
		EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), c.err)
		    << int(c.type) << " " << int(c.level) << " " << c.len;
	}
}

TEST_F(SendQueueTest, AtomicNeedsAlignedRemoteAddressAndEightBytes)
{
	ibv_send_wr w = wr(IBV_WR_ATOMIC_FETCH_AND_ADD);
	uint32_t inline_len;

	w.num_sge = 1;
	sge_[0].length = 8;
	w.wr.atomic.remote_addr = 0x2004;
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), EINVAL);
	w.wr.atomic.remote_addr = 0x2008;
	sge_[0].length = 4;
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), EINVAL);
	sge_[0].length = 8;
	EXPECT_EQ(sroce::send_wr_check(sq_, IBV_QPT_RC, w, &inline_len), 0);
}

TEST_F(SendQueueTest, LocalInvCarriesTheRkeyAndNoSges)
{
	ibv_send_wr w = wr(IBV_WR_LOCAL_INV);

	w.invalidate_rkey = 0x777;
	ASSERT_EQ(post(&w).err, 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->opcode, uint32_t(IBV_WR_LOCAL_INV));
	EXPECT_EQ(q->ex.invalidate_rkey, 0x777u);
	EXPECT_EQ(q->num_sge, 0u);
}

TEST_F(SendQueueTest, BindMwCarriesTheWindowTheMrAndTheNewRkey)
{
	ibv_mr mr{};
	ibv_mw mw{};
	ibv_send_wr w = wr(IBV_WR_BIND_MW);

	mr.lkey = 0x1010;
	mw.rkey = 0x2000;
	w.bind_mw.mw = &mw;
	w.bind_mw.rkey = 0x2001;
	w.bind_mw.bind_info.mr = &mr;
	w.bind_mw.bind_info.addr = 0xa000;
	w.bind_mw.bind_info.length = 0x1000;
	w.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	ASSERT_EQ(post(&w).err, 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->opcode, uint32_t(IBV_WR_BIND_MW));
	EXPECT_EQ(q->wr.bind_mw.addr, 0xa000u);
	EXPECT_EQ(q->wr.bind_mw.length, 0x1000u);
	EXPECT_EQ(q->wr.bind_mw.mr_lkey, 0x1010u);
	EXPECT_EQ(q->wr.bind_mw.mw_rkey, 0x2000u);
	EXPECT_EQ(q->wr.bind_mw.rkey, 0x2001u);
	EXPECT_EQ(q->wr.bind_mw.access, uint32_t(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(q->num_sge, 0u);
}

TEST_F(SendQueueTest, UnbindWithoutMrHasZeroLkey)
{
	ibv_mw mw{};
	ibv_send_wr w = wr(IBV_WR_BIND_MW);

	w.bind_mw.mw = &mw;
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->wr.bind_mw.mr_lkey, 0u);
	EXPECT_EQ(send_wqe(ring_, 0)->wr.bind_mw.length, 0u);
}

TEST_F(SendQueueTest, BindMwRejectsZeroBasedAndMissingWindow)
{
	ibv_mw mw{};
	ibv_send_wr w = wr(IBV_WR_BIND_MW);

	EXPECT_EQ(post(&w).err, EINVAL);
	w.bind_mw.mw = &mw;
	w.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_ZERO_BASED;
	EXPECT_EQ(post(&w).err, EINVAL);
}

TEST_F(SendQueueTest, UdSendCarriesQpnQkeyAhNumAndAddressVector)
{
	sroce::Ah ah{};
	ibv_send_wr w = wr(IBV_WR_SEND_WITH_IMM);

	ah.ah_num = 17;
	for (int i = 0; i < 16; i++)
		ah.av.dgid[i] = uint8_t(i + 1);
	ah.av.flow_label = 0x12345;
	ah.av.dmac[0] = 0x02;
	ah.av.dmac[5] = 0x99;
	ah.av.sgid_index = 3;
	ah.av.hop_limit = 64;
	ah.av.traffic_class = 0x20;
	ah.av.network_type = SROCE_NETWORK_IPV6;
	w.wr.ud.ah = &ah.ibah;
	w.wr.ud.remote_qpn = 0xabcdef;
	w.wr.ud.remote_qkey = 0x11111111;
	w.imm_data = htonl(9);
	ASSERT_EQ(post(&w, IBV_QPT_UD).err, 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->wr.ud.remote_qpn, 0xabcdefu);
	EXPECT_EQ(q->wr.ud.remote_qkey, 0x11111111u);
	EXPECT_EQ(q->wr.ud.ah_num, 17u);
	EXPECT_EQ(memcmp(&q->av, &ah.av, sizeof(ah.av)), 0);
	EXPECT_EQ(q->ex.imm_data, htonl(9));
	EXPECT_EQ(q->num_sge, 2u);
}

TEST_F(SendQueueTest, UdSendWithoutAhIsEinval)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	EXPECT_EQ(post(&w, IBV_QPT_UD).err, EINVAL);
	EXPECT_EQ(bad_, &w);
}

TEST_F(SendQueueTest, RcSendLeavesTheUdFieldsAndAvZero)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.wr.rdma.remote_addr = 0x1234; /* aliases wr.ud.ah: must not be read */
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_TRUE(all_zero(&send_wqe(ring_, 0)->wr, sizeof(sroce_send_wqe::wr)));
	EXPECT_TRUE(all_zero(&send_wqe(ring_, 0)->av, sizeof(sroce_av)));
}

TEST_F(SendQueueTest, SqSigAllMarksEveryWqeSignaled)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	ASSERT_EQ(post(&w, IBV_QPT_RC, true).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->flags, SROCE_WQE_SIGNALED);
}

TEST_F(SendQueueTest, UnknownSendFlagsAreEinval)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.send_flags = IBV_SEND_IP_CSUM;
	EXPECT_EQ(post(&w).err, EINVAL);
}

TEST_F(SendQueueTest, TooManyOrNegativeSgesAreEinval)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.num_sge = kMaxSge + 1;
	EXPECT_EQ(post(&w).err, EINVAL);
	w.num_sge = -1;
	EXPECT_EQ(post(&w).err, EINVAL);
	w.num_sge = kMaxSge;
	EXPECT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->num_sge, kMaxSge);
}

TEST_F(SendQueueTest, ZeroSgeSendIsAZeroLengthMessage)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.num_sge = 0;
	w.sg_list = nullptr;
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->num_sge, 0u);
}

/* ---- Inline data -------------------------------------------------------- */

TEST_F(SendQueueTest, InlineGathersEverySgeInOrder)
{
	char a[] = "hello, ", b[] = "inline ", c[] = "world";
	ibv_sge sg[3] = {{uintptr_t(a), 7, 0}, {uintptr_t(b), 7, 0}, {uintptr_t(c), 5, 0}};
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.sg_list = sg;
	w.num_sge = 3;
	w.send_flags = IBV_SEND_INLINE;
	ASSERT_EQ(post(&w).err, 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->flags, SROCE_WQE_INLINE);
	EXPECT_EQ(q->num_sge, 0u);
	EXPECT_EQ(q->inline_len, 19u);
	EXPECT_EQ(memcmp(q->data, "hello, inline world", 19), 0);
}

TEST_F(SendQueueTest, InlineUpToTheGrantedMaximumIsAccepted)
{
	std::vector<uint8_t> buf(kMaxInline + 1, 0xab);
	ibv_sge sg = {uintptr_t(buf.data()), kMaxInline, 0};
	ibv_send_wr w = wr(IBV_WR_RDMA_WRITE);

	w.sg_list = &sg;
	w.num_sge = 1;
	w.send_flags = IBV_SEND_INLINE;
	ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(send_wqe(ring_, 0)->inline_len, kMaxInline);
	EXPECT_EQ(send_wqe(ring_, 0)->data[kMaxInline - 1], 0xab);

	sg.length = kMaxInline + 1;
	EXPECT_EQ(post(&w).err, EINVAL);
	EXPECT_EQ(bad_, &w);
}

TEST_F(SendQueueTest, InlineTotalIsSummedWithoutWrapping)
{
	ibv_sge sg[2] = {{0x1000, 0xffffffffu, 0}, {0x2000, 2, 0}};
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.sg_list = sg;
	w.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(post(&w).err, EINVAL);
}

TEST_F(SendQueueTest, InlineIsOnlyForSendsAndWrites)
{
	for (ibv_wr_opcode op : {IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_LOCAL_INV}) {
		ibv_send_wr w = wr(op);

		w.send_flags = IBV_SEND_INLINE;
		EXPECT_EQ(post(&w).err, EINVAL) << op;
	}
}

/* ---- Ring space ------------------------------------------------------- */

TEST_F(SendQueueTest, FullRingIsEnomemAndBadWrIsTheFirstThatDidNotFit)
{
	ibv_send_wr w[kEntries + 2];

	for (uint32_t i = 0; i < kEntries + 2; i++) {
		w[i] = wr(IBV_WR_SEND, i);
		w[i].next = i + 1 < kEntries + 2 ? &w[i + 1] : nullptr;
	}
	EXPECT_EQ(post(&w[0]).err, ENOMEM);
	EXPECT_EQ(bad_, &w[kEntries]);
	EXPECT_EQ(ring_.prod(), kEntries);
	EXPECT_EQ(send_wqe(ring_, kEntries - 1)->wr_id, kEntries - 1);
}

TEST_F(SendQueueTest, SlotsFreedByTheKernelAreReused)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	for (uint32_t i = 0; i < kEntries; i++)
		ASSERT_EQ(post(&w).err, 0);
	EXPECT_EQ(post(&w).err, ENOMEM);
	ring_.set_cons(3);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(post(&w).err, 0);
	EXPECT_EQ(post(&w).err, ENOMEM);
	EXPECT_EQ(ring_.prod(), kEntries + 3);
}

TEST_F(SendQueueTest, ImpossibleConsFromTheKernelIsEio)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	for (uint32_t i = 0; i < kEntries; i++)
		ASSERT_EQ(post(&w).err, 0);
	ring_.set_cons(kEntries + 5); /* ahead of prod */
	EXPECT_EQ(post(&w).err, EIO);
}

TEST_F(SendQueueTest, IndicesWrapAround)
{
	FakeRing ring(kEntries, kStride);
	sroce::WorkQueue sq;
	ibv_send_wr w = wr(IBV_WR_SEND);
	ibv_send_wr *bad;

	ring.start_at(0xfffffffeu);
	sroce_test::attach(sq, ring, kMaxSge, kMaxInline);
	for (uint32_t i = 0; i < 4; i++) {
		w.wr_id = i;
		ASSERT_EQ(sroce::sq_post(sq, IBV_QPT_RC, false, &w, &bad).err, 0);
	}
	EXPECT_EQ(ring.prod(), 2u);
	EXPECT_EQ(send_wqe(ring, 0xffffffffu)->wr_id, 1u);
	EXPECT_EQ(send_wqe(ring, 1)->wr_id, 3u);
}

TEST_F(SendQueueTest, RingInErrorIsEioAndPostsNothing)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	ring_.set_kflags(SROCE_RING_F_ERROR);
	EXPECT_EQ(post(&w).err, EIO);
	EXPECT_EQ(bad_, &w);
	EXPECT_EQ(ring_.prod(), 0u);
}

TEST_F(SendQueueTest, QueueWithoutRingIsEnomem)
{
	sroce::WorkQueue none;
	ibv_send_wr w = wr(IBV_WR_SEND);
	ibv_send_wr *bad = nullptr;

	none.max_sge = kMaxSge;
	EXPECT_EQ(sroce::sq_post(none, IBV_QPT_RC, false, &w, &bad).err, ENOMEM);
	EXPECT_EQ(bad, &w);
}

/* ---- Publication and doorbell ----------------------------------------- */

TEST_F(SendQueueTest, ProdIsPublishedOncePerListAndValidWrsBeforeAnErrorArePosted)
{
	ibv_send_wr w[3] = {wr(IBV_WR_SEND, 1), wr(IBV_WR_SEND, 2), wr(IBV_WR_SEND, 3)};

	w[0].next = &w[1];
	w[1].next = &w[2];
	w[1].num_sge = -1;
	EXPECT_EQ(post(&w[0]).err, EINVAL);
	EXPECT_EQ(bad_, &w[1]);
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(SendQueueTest, NoDoorbellWhileTheEngineRuns)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	ring_.set_kflags(0);
	EXPECT_FALSE(post(&w).ring_doorbell);
}

TEST_F(SendQueueTest, DoorbellWhenTheEngineAskedForAWakeup)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	ring_.set_kflags(SROCE_SQ_NEED_WAKEUP);
	EXPECT_TRUE(post(&w).ring_doorbell);
}

TEST_F(SendQueueTest, NoDoorbellWhenNothingWasPosted)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	w.num_sge = -1;
	ring_.set_kflags(SROCE_SQ_NEED_WAKEUP);
	sroce::SqPostResult res = post(&w);
	EXPECT_EQ(res.err, EINVAL);
	EXPECT_FALSE(res.ring_doorbell);
}

TEST_F(SendQueueTest, DoorbellStillRingsForWrsPostedBeforeAnError)
{
	ibv_send_wr w[2] = {wr(IBV_WR_SEND), wr(IBV_WR_SEND)};

	w[0].next = &w[1];
	w[1].opcode = IBV_WR_TSO;
	ring_.set_kflags(SROCE_SQ_NEED_WAKEUP);
	sroce::SqPostResult res = post(&w[0]);
	EXPECT_EQ(res.err, EINVAL);
	EXPECT_TRUE(res.ring_doorbell);
}

/* ---- The verbs entry points, over a pipe standing in for the cmd fd ------ */

class PostSendTest : public SendQueueTest
{
      protected:
	PostSendTest()
	{
		EXPECT_EQ(pipe2(fds_, O_NONBLOCK), 0);
		ctx_.cmd_fd = fds_[1];
		qp_ = std::make_unique<sroce::Qp>();
		qp_->vqp.qp.context = &ctx_;
		qp_->vqp.qp.handle = 0x4321;
		qp_->vqp.qp.qp_type = IBV_QPT_RC;
		qp_->vqp.qp.state = IBV_QPS_RTS;
		sroce_test::attach(qp_->sq, ring_, kMaxSge, kMaxInline);
	}
	~PostSendTest() override
	{
		close(fds_[0]);
		close(fds_[1]);
	}

	/* Bytes the provider wrote to the command fd. */
	ssize_t read_cmd(void *buf, size_t len) { return read(fds_[0], buf, len); }

	int fds_[2];
	ibv_context ctx_{};
	std::unique_ptr<sroce::Qp> qp_;
};

TEST_F(PostSendTest, DoorbellIsAnEmptyPostSendOnTheQpHandle)
{
	ibv_send_wr w = wr(IBV_WR_SEND);
	struct ibv_post_send cmd;
	uint8_t buf[2 * sizeof(cmd)];

	ring_.set_kflags(SROCE_SQ_NEED_WAKEUP);
	ASSERT_EQ(sroce::post_send(&qp_->vqp.qp, &w, &bad_), 0);
	ASSERT_EQ(read_cmd(buf, sizeof(buf)), ssize_t(sizeof(cmd))); /* one command, no more */
	memcpy(&cmd, buf, sizeof(cmd));
	EXPECT_EQ(cmd.hdr.command, uint32_t(IB_USER_VERBS_CMD_POST_SEND));
	EXPECT_EQ(cmd.hdr.in_words, sizeof(cmd) / 4);
	EXPECT_EQ(cmd.hdr.out_words, sizeof(ib_uverbs_post_send_resp) / 4);
	EXPECT_NE(cmd.core_payload.response, 0u);
	EXPECT_EQ(cmd.core_payload.qp_handle, 0x4321u);
	EXPECT_EQ(cmd.core_payload.wr_count, 0u);
	EXPECT_EQ(cmd.core_payload.sge_count, 0u);
	EXPECT_GE(cmd.core_payload.wqe_size, sizeof(ib_uverbs_send_wr));
}

TEST_F(PostSendTest, NoSystemCallWhileTheEngineRuns)
{
	ibv_send_wr w = wr(IBV_WR_SEND);
	char buf[64];

	ring_.set_kflags(0);
	ASSERT_EQ(sroce::post_send(&qp_->vqp.qp, &w, &bad_), 0);
	EXPECT_EQ(read_cmd(buf, sizeof(buf)), -1);
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(PostSendTest, FailedDoorbellReturnsItsErrnoWithNoBadWr)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	ring_.set_kflags(SROCE_SQ_NEED_WAKEUP);
	ctx_.cmd_fd = -1;
	EXPECT_EQ(sroce::post_send(&qp_->vqp.qp, &w, &bad_), EBADF);
	EXPECT_EQ(bad_, nullptr);
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(PostSendTest, QpBeforeRtsRejectsSends)
{
	for (ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
		ibv_send_wr w = wr(IBV_WR_SEND);

		qp_->vqp.qp.state = s;
		EXPECT_EQ(sroce::post_send(&qp_->vqp.qp, &w, &bad_), EINVAL) << s;
		EXPECT_EQ(bad_, &w);
	}
	EXPECT_EQ(ring_.prod(), 0u);
}

TEST_F(PostSendTest, QpInErrorStillQueuesSoTheKernelCanFlush)
{
	ibv_send_wr w = wr(IBV_WR_SEND);

	qp_->vqp.qp.state = IBV_QPS_ERR;
	EXPECT_EQ(sroce::post_send(&qp_->vqp.qp, &w, &bad_), 0);
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(PostSendTest, BindMwPostsABindWqeAndAdvancesTheRkeyTag)
{
	ibv_mr mr{};
	ibv_mw mw{};
	ibv_mw_bind bind{};

	mw.rkey = 0x123456ff;
	mr.lkey = 0x99;
	bind.wr_id = 77;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = &mr;
	bind.bind_info.addr = 0x1000;
	bind.bind_info.length = 64;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(sroce::bind_mw(&qp_->vqp.qp, &mw, &bind), 0);
	sroce_send_wqe *q = send_wqe(ring_, 0);
	EXPECT_EQ(q->opcode, uint32_t(IBV_WR_BIND_MW));
	EXPECT_EQ(q->wr_id, 77u);
	EXPECT_EQ(q->flags, SROCE_WQE_SIGNALED);
	EXPECT_EQ(q->wr.bind_mw.mw_rkey, 0x123456ffu);
	EXPECT_EQ(q->wr.bind_mw.rkey, 0x12345600u);
	EXPECT_EQ(q->wr.bind_mw.mr_lkey, 0x99u);
	EXPECT_EQ(mw.rkey, 0x12345600u);
}

TEST_F(PostSendTest, FailedBindMwKeepsTheRkey)
{
	ibv_mw mw{};
	ibv_mw_bind bind{};

	mw.rkey = 0x42;
	ring_.set_kflags(SROCE_RING_F_ERROR);
	EXPECT_EQ(sroce::bind_mw(&qp_->vqp.qp, &mw, &bind), EIO);
	EXPECT_EQ(mw.rkey, 0x42u);
}

} /* namespace */
