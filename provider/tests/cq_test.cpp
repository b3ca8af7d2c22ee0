// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queue: CQE translation of every status, opcode and flag,
 * polling (batching, cons publication, wrap-around, bad indices, overflow),
 * the extended polling interface, and the values CQ arming stores.
 */
#include "fake_ring.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>

using sroce_test::FakeRing;

namespace
{

sroce_cqe cqe(uint64_t wr_id, uint8_t status = IBV_WC_SUCCESS, uint8_t opcode = IBV_WC_RECV)
{
	sroce_cqe c{};

	c.wr_id = wr_id;
	c.status = status;
	c.opcode = opcode;
	return c;
}

/* ---- Translation -------------------------------------------------------- */

TEST(CqeTranslation, EveryKnownStatusPassesThrough)
{
	for (int s = IBV_WC_SUCCESS; s <= IBV_WC_GENERAL_ERR; s++) {
		ibv_wc wc;

		sroce::cqe_to_wc(cqe(1, uint8_t(s), IBV_WC_SEND), &wc);
		EXPECT_EQ(wc.status, ibv_wc_status(s));
	}
}

TEST(CqeTranslation, UnknownStatusesBecomeGeneralError)
{
	for (int s = IBV_WC_GENERAL_ERR + 1; s < 256; s++) {
		ibv_wc wc;

		sroce::cqe_to_wc(cqe(1, uint8_t(s), IBV_WC_SEND), &wc);
		EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR) << s;
	}
}

TEST(CqeTranslation, EveryOpcodeValueIsValidOnlyIfSroceProducesIt)
{
	const int valid[] = {IBV_WC_SEND,         IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
	                     IBV_WC_COMP_SWAP,    IBV_WC_FETCH_ADD,  IBV_WC_BIND_MW,
	                     IBV_WC_LOCAL_INV,    IBV_WC_RECV,       IBV_WC_RECV_RDMA_WITH_IMM,
	                     IBV_WC_ATOMIC_WRITE, SROCE_WC_FLUSH};

	for (int op = 0; op < 256; op++) {
		bool expect = std::find(std::begin(valid), std::end(valid), op) != std::end(valid);
		ibv_wc_opcode out = ibv_wc_opcode(-1);
		ibv_wc wc;

		EXPECT_EQ(sroce::wc_opcode_from_cqe(uint8_t(op), &out), expect) << op;
		sroce::cqe_to_wc(cqe(1, IBV_WC_SUCCESS, uint8_t(op)), &wc);
		EXPECT_EQ(wc.status, expect ? IBV_WC_SUCCESS : IBV_WC_GENERAL_ERR) << op;
		if (expect) {
			EXPECT_EQ(out, ibv_wc_opcode(op));
			EXPECT_EQ(wc.opcode, ibv_wc_opcode(op));
		}
	}
}

TEST(CqeTranslation, ErrorCompletionKeepsItsStatusWhateverTheOpcode)
{
	ibv_wc wc;

	sroce::cqe_to_wc(cqe(1, IBV_WC_WR_FLUSH_ERR, 0xee), &wc);
	EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST(CqeTranslation, EachFlagMapsToItsIbvFlag)
{
	EXPECT_EQ(sroce::wc_flags_from_cqe(0), 0u);
	EXPECT_EQ(sroce::wc_flags_from_cqe(SROCE_CQE_F_WITH_IMM), unsigned(IBV_WC_WITH_IMM));
	EXPECT_EQ(sroce::wc_flags_from_cqe(SROCE_CQE_F_WITH_INV), unsigned(IBV_WC_WITH_INV));
	EXPECT_EQ(sroce::wc_flags_from_cqe(SROCE_CQE_F_GRH), unsigned(IBV_WC_GRH));
	EXPECT_EQ(sroce::wc_flags_from_cqe(SROCE_CQE_F_SOLICITED), 0u);
	EXPECT_EQ(sroce::wc_flags_from_cqe(SROCE_CQE_F_WITH_IMM | SROCE_CQE_F_GRH |
	                                   SROCE_CQE_F_SOLICITED),
	          unsigned(IBV_WC_WITH_IMM | IBV_WC_GRH));
	EXPECT_EQ(sroce::wc_flags_from_cqe(0xfff0), 0u);
}

TEST(CqeTranslation, EveryFieldIsCopied)
{
	sroce_cqe c = cqe(0x0102030405060708ull, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	ibv_wc wc;

	c.flags = SROCE_CQE_F_WITH_IMM | SROCE_CQE_F_GRH;
	c.byte_len = 4096;
	c.ex.imm_data = htonl(0xa5a5a5a5);
	c.qp_num = 0x12;
	c.src_qp = 0x34;
	c.pkey_index = 5;
	c.sl = 3;
	c.vendor_err = 0x77;
	memset(&wc, 0xff, sizeof(wc));
	sroce::cqe_to_wc(c, &wc);
	EXPECT_EQ(wc.wr_id, 0x0102030405060708ull);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(wc.byte_len, 4096u);
	EXPECT_EQ(wc.imm_data, htonl(0xa5a5a5a5));
	EXPECT_EQ(wc.qp_num, 0x12u);
	EXPECT_EQ(wc.src_qp, 0x34u);
	EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_WITH_IMM | IBV_WC_GRH));
	EXPECT_EQ(wc.pkey_index, 5u);
	EXPECT_EQ(wc.sl, 3u);
	EXPECT_EQ(wc.vendor_err, 0x77u);
	EXPECT_EQ(wc.slid, 0u);
	EXPECT_EQ(wc.dlid_path_bits, 0u);
}

TEST(CqeTranslation, InvalidatedRkeyIsReported)
{
	sroce_cqe c = cqe(1);
	ibv_wc wc;

	c.flags = SROCE_CQE_F_WITH_INV;
	c.ex.invalidated_rkey = 0xbeef;
	sroce::cqe_to_wc(c, &wc);
	EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_WITH_INV));
	EXPECT_EQ(wc.invalidated_rkey, 0xbeefu);
}

/* ---- Polling ------------------------------------------------------------ */

constexpr uint32_t kEntries = 8;

class PollTest : public ::testing::Test
{
      protected:
	PollTest() : ring_(kEntries, SROCE_CQE_SIZE), cq_(std::make_unique<sroce::Cq>())
	{
		sroce_test::attach(*cq_, ring_);
	}

	/* The kernel's side: write a CQE at prod and publish it. */
	void produce(const sroce_cqe &c)
	{
		memcpy(ring_.entry(ring_.prod()), &c, sizeof(c));
		ring_.set_prod(ring_.prod() + 1);
	}

	int poll(int n, ibv_wc *wc) { return sroce::poll_cq(&cq_->vcq.cq, n, wc); }

	FakeRing ring_;
	std::unique_ptr<sroce::Cq> cq_;
};

TEST_F(PollTest, EmptyCqReturnsZero)
{
	ibv_wc wc[2];

	EXPECT_EQ(poll(2, wc), 0);
	EXPECT_EQ(ring_.cons(), 0u);
}

TEST_F(PollTest, PollsUpToTheRequestedNumberAndFreesThoseSlots)
{
	ibv_wc wc[4];

	for (uint64_t i = 0; i < 3; i++)
		produce(cqe(100 + i));
	ASSERT_EQ(poll(2, wc), 2);
	EXPECT_EQ(wc[0].wr_id, 100u);
	EXPECT_EQ(wc[1].wr_id, 101u);
	EXPECT_EQ(ring_.cons(), 2u);
	ASSERT_EQ(poll(4, wc), 1);
	EXPECT_EQ(wc[0].wr_id, 102u);
	EXPECT_EQ(ring_.cons(), 3u);
	EXPECT_EQ(poll(4, wc), 0);
}

TEST_F(PollTest, IndicesWrapAround)
{
	FakeRing ring(kEntries, SROCE_CQE_SIZE);
	auto cq = std::make_unique<sroce::Cq>();
	ibv_wc wc[4];

	ring.start_at(0xfffffffeu);
	sroce_test::attach(*cq, ring);
	for (uint64_t i = 0; i < 4; i++) {
		sroce_cqe c = cqe(i);

		memcpy(ring.entry(ring.prod()), &c, sizeof(c));
		ring.set_prod(ring.prod() + 1);
	}
	ASSERT_EQ(sroce::poll_cq(&cq->vcq.cq, 4, wc), 4);
	for (uint64_t i = 0; i < 4; i++)
		EXPECT_EQ(wc[i].wr_id, i);
	EXPECT_EQ(ring.cons(), 2u);
}

TEST_F(PollTest, ImpossibleProdIsAnError)
{
	ibv_wc wc[2];

	ring_.set_prod(kEntries + 1); /* more than the ring holds */
	EXPECT_EQ(poll(2, wc), -1);
	ring_.set_prod(0xffffffffu); /* behind cons */
	EXPECT_EQ(poll(2, wc), -1);
	EXPECT_EQ(ring_.cons(), 0u);
}

TEST_F(PollTest, OverflowIsReportedOnceTheCqIsDrained)
{
	ibv_wc wc[2];

	produce(cqe(1));
	ring_.set_kflags(SROCE_CQ_F_OVERFLOW);
	EXPECT_EQ(poll(2, wc), 1);
	EXPECT_EQ(poll(2, wc), -1);
}

TEST_F(PollTest, CqWithoutRingFailsToPoll)
{
	ibv_wc wc[1];

	cq_->cq.ring = sroce::Ring{};
	EXPECT_EQ(poll(1, wc), -1);
	EXPECT_EQ(sroce::req_notify_cq(&cq_->vcq.cq, 0), EIO);
}

/* ---- Busy polling ------------------------------------------------------- */

/* The CQ's command fd is a pipe: each busy poll is one command in it. */
class BusyPollTest : public PollTest
{
      protected:
	BusyPollTest()
	{
		EXPECT_EQ(pipe2(fds_, O_NONBLOCK), 0);
		ctx_.cmd_fd = fds_[1];
		cq_->vcq.cq.context = &ctx_;
		cq_->vcq.cq.handle = 77;
	}
	~BusyPollTest() override
	{
		close(fds_[0]);
		close(fds_[1]);
	}

	/* The commands written since the last call; checks each one. */
	unsigned commands()
	{
		struct {
			ib_uverbs_cmd_hdr hdr;
			ib_uverbs_poll_cq body;
		} cmd;
		unsigned n = 0;

		while (read(fds_[0], &cmd, sizeof(cmd)) == ssize_t(sizeof(cmd))) {
			EXPECT_EQ(cmd.hdr.command, unsigned(IB_USER_VERBS_CMD_POLL_CQ));
			EXPECT_EQ(cmd.hdr.in_words * 4u, sizeof(cmd));
			EXPECT_GE(cmd.hdr.out_words * 4u,
			          sizeof(ib_uverbs_poll_cq_resp) + sizeof(ib_uverbs_wc));
			EXPECT_EQ(cmd.body.cq_handle, 77u);
			EXPECT_EQ(cmd.body.ne, 1u);
			EXPECT_NE(cmd.body.response, 0u);
			n++;
		}
		return n;
	}

	ibv_context ctx_{};
	int fds_[2] = {-1, -1};
};

TEST_F(BusyPollTest, NeverEntersTheKernelUnlessTheKernelOffersIt)
{
	ibv_wc wc[1];

	for (uint32_t i = 0; i < 4 * sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(poll(1, wc), 0);
	EXPECT_EQ(commands(), 0u);
}

TEST_F(BusyPollTest, EveryNthEmptyPollEntersTheKernelOnce)
{
	ibv_wc wc[1];

	ring_.set_kflags(SROCE_CQ_F_BUSY_POLL);
	for (uint32_t i = 0; i + 1 < sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(poll(1, wc), 0);
	EXPECT_EQ(commands(), 0u);
	EXPECT_EQ(poll(1, wc), 0);
	EXPECT_EQ(commands(), 1u);
	for (uint32_t i = 0; i < 2 * sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(poll(1, wc), 0);
	EXPECT_EQ(commands(), 2u);
}

TEST_F(BusyPollTest, PollsThatFindCompletionsDoNotCount)
{
	ibv_wc wc[1];

	ring_.set_kflags(SROCE_CQ_F_BUSY_POLL);
	for (uint32_t i = 0; i < 4 * sroce::CQ_BUSY_POLL_AFTER; i++) {
		produce(cqe(i));
		ASSERT_EQ(poll(1, wc), 1);
		EXPECT_EQ(wc[0].wr_id, i);
	}
	EXPECT_EQ(commands(), 0u);
}

TEST_F(BusyPollTest, ExtendedPollingBusyPollsToo)
{
	sroce::cq_ex_set_ops(&cq_->vcq.cq_ex, IBV_WC_STANDARD_FLAGS);
	ibv_poll_cq_attr attr{};

	ring_.set_kflags(SROCE_CQ_F_BUSY_POLL);
	for (uint32_t i = 0; i < sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(ibv_start_poll(&cq_->vcq.cq_ex, &attr), ENOENT);
	EXPECT_EQ(commands(), 1u);
	produce(cqe(5));
	ASSERT_EQ(ibv_start_poll(&cq_->vcq.cq_ex, &attr), 0);
	EXPECT_EQ(cq_->vcq.cq_ex.wr_id, 5u);
	ibv_end_poll(&cq_->vcq.cq_ex);
}

/* A failed command costs nothing but the busy poll, and is not tried again. */
TEST_F(BusyPollTest, AFailedCommandStillReadsTheRingAndIsNotRepeated)
{
	ibv_wc wc[1];

	ctx_.cmd_fd = -1; /* EBADF */
	ring_.set_kflags(SROCE_CQ_F_BUSY_POLL);
	for (uint32_t i = 0; i < sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(poll(1, wc), 0);
	produce(cqe(9));
	ASSERT_EQ(poll(1, wc), 1);
	EXPECT_EQ(wc[0].wr_id, 9u);
	ctx_.cmd_fd = fds_[1];
	for (uint32_t i = 0; i < 4 * sroce::CQ_BUSY_POLL_AFTER; i++)
		EXPECT_EQ(poll(1, wc), 0);
	EXPECT_EQ(commands(), 0u);
}

/* ---- Extended polling ----------------------------------------------------- */

class ExPollTest : public PollTest
{
      protected:
	ExPollTest() { sroce::cq_ex_set_ops(ex(), IBV_WC_STANDARD_FLAGS); }
	ibv_cq_ex *ex() { return &cq_->vcq.cq_ex; }

	ibv_poll_cq_attr attr_{};
};

TEST_F(ExPollTest, StartPollOnAnEmptyCqIsEnoentAndReleasesTheLock)
{
	ibv_wc wc[1];

	EXPECT_EQ(ibv_start_poll(ex(), &attr_), ENOENT);
	EXPECT_EQ(poll(1, wc), 0); /* would deadlock if the lock were held */
}

TEST_F(ExPollTest, WalksEntriesAndConsumesEachExactlyOnce)
{
	sroce_cqe c = cqe(10, IBV_WC_SUCCESS, IBV_WC_RECV);

	c.byte_len = 33;
	c.qp_num = 5;
	c.src_qp = 6;
	c.sl = 2;
	c.flags = SROCE_CQE_F_WITH_IMM;
	c.ex.imm_data = htonl(1234);
	produce(c);
	produce(cqe(11, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE));

	ASSERT_EQ(ibv_start_poll(ex(), &attr_), 0);
	EXPECT_EQ(ex()->wr_id, 10u);
	EXPECT_EQ(ex()->status, IBV_WC_SUCCESS);
	EXPECT_EQ(ibv_wc_read_opcode(ex()), IBV_WC_RECV);
	EXPECT_EQ(ibv_wc_read_byte_len(ex()), 33u);
	EXPECT_EQ(ibv_wc_read_qp_num(ex()), 5u);
	EXPECT_EQ(ibv_wc_read_src_qp(ex()), 6u);
	EXPECT_EQ(ibv_wc_read_sl(ex()), 2u);
	EXPECT_EQ(ibv_wc_read_slid(ex()), 0u);
	EXPECT_EQ(ibv_wc_read_dlid_path_bits(ex()), 0u);
	EXPECT_EQ(ibv_wc_read_wc_flags(ex()), unsigned(IBV_WC_WITH_IMM));
	EXPECT_EQ(ibv_wc_read_imm_data(ex()), htonl(1234));
	ASSERT_EQ(ibv_next_poll(ex()), 0);
	EXPECT_EQ(ex()->wr_id, 11u);
	EXPECT_EQ(ex()->status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(ibv_next_poll(ex()), ENOENT);
	ibv_end_poll(ex());
	EXPECT_EQ(ring_.cons(), 2u);
}

TEST_F(ExPollTest, EndPollConsumesTheCurrentEntry)
{
	produce(cqe(1));
	produce(cqe(2));
	ASSERT_EQ(ibv_start_poll(ex(), &attr_), 0);
	ibv_end_poll(ex());
	EXPECT_EQ(ring_.cons(), 1u);
	ASSERT_EQ(ibv_start_poll(ex(), &attr_), 0);
	EXPECT_EQ(ex()->wr_id, 2u);
	ibv_end_poll(ex());
	EXPECT_EQ(ring_.cons(), 2u);
}

TEST_F(ExPollTest, NonZeroCompMaskIsEinval)
{
	attr_.comp_mask = 1;
	EXPECT_EQ(ibv_start_poll(ex(), &attr_), EINVAL);
}

TEST(CqExOps, OptionalReadersFollowTheRequestedWcFlags)
{
	auto cq = std::make_unique<sroce::Cq>();
	ibv_cq_ex *ex = &cq->vcq.cq_ex;

	sroce::cq_ex_set_ops(ex, IBV_WC_EX_WITH_BYTE_LEN);
	EXPECT_NE(ex->read_byte_len, nullptr);
	EXPECT_EQ(ex->read_imm_data, nullptr);
	EXPECT_EQ(ex->read_qp_num, nullptr);
	EXPECT_NE(ex->read_opcode, nullptr);
	EXPECT_NE(ex->read_wc_flags, nullptr);
}

/* ---- Arming ----------------------------------------------------------- */

TEST(CqArm, RequestsStoreTheirValueIntoAnUnarmedCq)
{
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_NONE, false), uint32_t(SROCE_CQ_ARM_NEXT));
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_NONE, true), uint32_t(SROCE_CQ_ARM_SOLICITED));
}

TEST(CqArm, NextUpgradesSolicitedButSolicitedNeverWeakensNext)
{
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_SOLICITED, false), uint32_t(SROCE_CQ_ARM_NEXT));
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_SOLICITED, true),
	          uint32_t(SROCE_CQ_ARM_SOLICITED));
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_NEXT, true), uint32_t(SROCE_CQ_ARM_NEXT));
	EXPECT_EQ(sroce::cq_arm_value(SROCE_CQ_ARM_NEXT, false), uint32_t(SROCE_CQ_ARM_NEXT));
}

TEST(CqArm, GarbageInUflagsIsReplaced)
{
	EXPECT_EQ(sroce::cq_arm_value(7, true), uint32_t(SROCE_CQ_ARM_SOLICITED));
	EXPECT_EQ(sroce::cq_arm_value(7, false), uint32_t(SROCE_CQ_ARM_NEXT));
}

TEST_F(PollTest, ReqNotifyStoresIntoUflagsWithoutASystemCall)
{
	ASSERT_EQ(sroce::req_notify_cq(&cq_->vcq.cq, 1), 0);
	EXPECT_EQ(ring_.uflags(), uint32_t(SROCE_CQ_ARM_SOLICITED));
	ASSERT_EQ(sroce::req_notify_cq(&cq_->vcq.cq, 0), 0);
	EXPECT_EQ(ring_.uflags(), uint32_t(SROCE_CQ_ARM_NEXT));
	ASSERT_EQ(sroce::req_notify_cq(&cq_->vcq.cq, 1), 0);
	EXPECT_EQ(ring_.uflags(), uint32_t(SROCE_CQ_ARM_NEXT));
	ring_.hdr()->uflags = SROCE_CQ_ARM_NONE; /* the kernel fired the event */
	ASSERT_EQ(sroce::req_notify_cq(&cq_->vcq.cq, 1), 0);
	EXPECT_EQ(ring_.uflags(), uint32_t(SROCE_CQ_ARM_SOLICITED));
}

} /* namespace */
