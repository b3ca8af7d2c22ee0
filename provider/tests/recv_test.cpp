// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Receive queue and SRQ posting: WQE encoding, limits, ring space,
 * publication, and the rule that posting never enters the kernel.
 */
#include "fake_ring.h"

#include <gtest/gtest.h>

#include <memory>

using sroce_test::FakeRing;
using sroce_test::recv_wqe;

namespace
{

constexpr uint32_t kEntries = 4;
constexpr uint32_t kMaxSge = 3;
const uint32_t kStride = sroce_recv_wqe_stride(kMaxSge);

class RecvQueueTest : public ::testing::Test
{
      protected:
	RecvQueueTest() : ring_(kEntries, kStride)
	{
		sroce_test::attach(rq_, ring_, kMaxSge, 0);
		for (int i = 0; i < 3; i++)
			sge_[i] = {0x1000u * (i + 1), 64u * (i + 1), 0x70u + i};
	}

	ibv_recv_wr wr(uint64_t wr_id, int num_sge = 3)
	{
		ibv_recv_wr w{};

		w.wr_id = wr_id;
		w.sg_list = sge_;
		w.num_sge = num_sge;
		return w;
	}

	int post(ibv_recv_wr *w)
	{
		bad_ = nullptr;
		return sroce::rq_post(rq_, w, &bad_);
	}

	FakeRing ring_;
	sroce::WorkQueue rq_;
	ibv_sge sge_[3];
	ibv_recv_wr *bad_ = nullptr;
};

TEST_F(RecvQueueTest, WqeCarriesWrIdAndEverySge)
{
	ibv_recv_wr w = wr(0xfeedfacecafebeefull);

	ASSERT_EQ(post(&w), 0);
	sroce_recv_wqe *q = recv_wqe(ring_, 0);
	EXPECT_EQ(q->wr_id, 0xfeedfacecafebeefull);
	EXPECT_EQ(q->num_sge, 3u);
	EXPECT_EQ(q->reserved, 0u);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(q->sge[i].addr, sge_[i].addr);
		EXPECT_EQ(q->sge[i].length, sge_[i].length);
		EXPECT_EQ(q->sge[i].lkey, sge_[i].lkey);
	}
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(RecvQueueTest, TooManyOrNegativeSgesAreEinval)
{
	ibv_recv_wr w = wr(1, kMaxSge + 1);

	EXPECT_EQ(post(&w), EINVAL);
	EXPECT_EQ(bad_, &w);
	w.num_sge = -1;
	EXPECT_EQ(post(&w), EINVAL);
	EXPECT_EQ(ring_.prod(), 0u);
}

TEST_F(RecvQueueTest, FullRingIsEnomemAfterPostingWhatFits)
{
	ibv_recv_wr w[kEntries + 1];

	for (uint32_t i = 0; i <= kEntries; i++) {
		w[i] = wr(i);
		w[i].next = i < kEntries ? &w[i + 1] : nullptr;
	}
	EXPECT_EQ(post(&w[0]), ENOMEM);
	EXPECT_EQ(bad_, &w[kEntries]);
	EXPECT_EQ(ring_.prod(), kEntries);
	ring_.set_cons(1);
	ibv_recv_wr more = wr(99);
	EXPECT_EQ(post(&more), 0);
	EXPECT_EQ(recv_wqe(ring_, kEntries)->wr_id, 99u);
}

TEST_F(RecvQueueTest, RingInErrorIsEio)
{
	ibv_recv_wr w = wr(1);

	ring_.set_kflags(SROCE_RING_F_ERROR);
	EXPECT_EQ(post(&w), EIO);
	EXPECT_EQ(bad_, &w);
	EXPECT_EQ(ring_.prod(), 0u);
}

TEST_F(RecvQueueTest, ProdCountsOnlyTheWrsBeforeAnError)
{
	ibv_recv_wr w[3] = {wr(1), wr(2, -1), wr(3)};

	w[0].next = &w[1];
	w[1].next = &w[2];
	EXPECT_EQ(post(&w[0]), EINVAL);
	EXPECT_EQ(bad_, &w[1]);
	EXPECT_EQ(ring_.prod(), 1u);
}

class PostRecvTest : public RecvQueueTest
{
      protected:
	PostRecvTest()
	{
		ctx_.cmd_fd = -1; /* any system call would fail loudly */
		qp_ = std::make_unique<sroce::Qp>();
		qp_->vqp.qp.context = &ctx_;
		qp_->vqp.qp.state = IBV_QPS_INIT;
		sroce_test::attach(qp_->rq, ring_, kMaxSge, 0);
	}

	ibv_context ctx_{};
	std::unique_ptr<sroce::Qp> qp_;
};

TEST_F(PostRecvTest, PostingInInitPublishesTheWqe)
{
	ibv_recv_wr w = wr(5);

	EXPECT_EQ(sroce::post_recv(&qp_->vqp.qp, &w, &bad_), 0);
	EXPECT_EQ(ring_.prod(), 1u);
}

TEST_F(PostRecvTest, QpInResetRejectsReceives)
{
	ibv_recv_wr w = wr(5);

	qp_->vqp.qp.state = IBV_QPS_RESET;
	EXPECT_EQ(sroce::post_recv(&qp_->vqp.qp, &w, &bad_), EINVAL);
	EXPECT_EQ(bad_, &w);
}

TEST_F(PostRecvTest, QpWithSrqRejectsReceives)
{
	ibv_srq srq{};
	ibv_recv_wr w = wr(5);

	qp_->vqp.qp.srq = &srq;
	EXPECT_EQ(sroce::post_recv(&qp_->vqp.qp, &w, &bad_), EINVAL);
}

TEST_F(RecvQueueTest, SrqPostingFillsTheSrqRing)
{
	auto srq = std::make_unique<sroce::Srq>();
	FakeRing ring(kEntries, kStride);
	ibv_recv_wr w = wr(8, 1);

	sroce_test::attach(srq->rq, ring, kMaxSge, 0);
	EXPECT_EQ(sroce::post_srq_recv(&srq->vsrq.srq, &w, &bad_), 0);
	EXPECT_EQ(ring.prod(), 1u);
	EXPECT_EQ(recv_wqe(ring, 0)->wr_id, 8u);
	EXPECT_EQ(recv_wqe(ring, 0)->num_sge, 1u);
}

} /* namespace */
