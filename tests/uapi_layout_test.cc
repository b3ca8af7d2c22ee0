// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The user/kernel ABI (include/uapi/rdma/sroce-abi.h) is fixed: these tests
// pin every size and offset, so an accidental change fails here before it
// breaks a provider built against an older header.
#include <cstddef>
#include <type_traits>

#include <gtest/gtest.h>
#include <rdma/sroce-abi.h>

namespace
{

TEST(UapiLayout, RingHeaderPutsEachIndexOnItsOwnCacheLine)
{
	EXPECT_EQ(sizeof(struct sroce_ring_hdr), SROCE_RING_HDR_SIZE);
	EXPECT_EQ(offsetof(struct sroce_ring_hdr, prod), 0u);
	EXPECT_EQ(offsetof(struct sroce_ring_hdr, cons), 64u);
	EXPECT_EQ(offsetof(struct sroce_ring_hdr, kflags), 128u);
	EXPECT_EQ(offsetof(struct sroce_ring_hdr, uflags), 132u);
	EXPECT_EQ(SROCE_RING_HDR_SIZE % SROCE_CACHE_LINE, 0);
}

TEST(UapiLayout, SgeIsSixteenBytesLikeIbSge)
{
	EXPECT_EQ(sizeof(struct sroce_sge), 16u);
	EXPECT_EQ(offsetof(struct sroce_sge, addr), 0u);
	EXPECT_EQ(offsetof(struct sroce_sge, length), 8u);
	EXPECT_EQ(offsetof(struct sroce_sge, lkey), 12u);
}

TEST(UapiLayout, AddressVectorIsThirtyTwoBytes)
{
	EXPECT_EQ(sizeof(struct sroce_av), 32u);
	EXPECT_EQ(offsetof(struct sroce_av, dgid), 0u);
	EXPECT_EQ(offsetof(struct sroce_av, flow_label), 16u);
	EXPECT_EQ(offsetof(struct sroce_av, dmac), 20u);
	EXPECT_EQ(offsetof(struct sroce_av, sgid_index), 26u);
	EXPECT_EQ(offsetof(struct sroce_av, hop_limit), 27u);
	EXPECT_EQ(offsetof(struct sroce_av, traffic_class), 28u);
	EXPECT_EQ(offsetof(struct sroce_av, network_type), 29u);
}

TEST(UapiLayout, SendWqeHeaderIsNinetySixBytesWithDataAfterIt)
{
	EXPECT_EQ(sizeof(struct sroce_send_wqe), SROCE_SEND_WQE_HDR_SIZE);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr_id), 0u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, opcode), 8u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, flags), 12u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, num_sge), 16u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, inline_len), 20u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, ex), 24u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr), 32u);
	EXPECT_EQ(sizeof(((struct sroce_send_wqe *)nullptr)->wr), 32u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.atomic.rkey), 56u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.ud.ah_num), 40u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.bind_mw.access), 60u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.flush.length), 40u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.flush.rkey), 48u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.flush.type), 52u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, wr.flush.level), 53u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, av), 64u);
	EXPECT_EQ(offsetof(struct sroce_send_wqe, data), 96u);
}

TEST(UapiLayout, RecvWqeHeaderIsSixteenBytes)
{
	EXPECT_EQ(sizeof(struct sroce_recv_wqe), SROCE_RECV_WQE_HDR_SIZE);
	EXPECT_EQ(offsetof(struct sroce_recv_wqe, num_sge), 8u);
	EXPECT_EQ(offsetof(struct sroce_recv_wqe, sge), 16u);
}

TEST(UapiLayout, CqeIsOneCacheLine)
{
	EXPECT_EQ(sizeof(struct sroce_cqe), SROCE_CQE_SIZE);
	EXPECT_EQ(SROCE_CQE_SIZE, SROCE_CACHE_LINE);
	EXPECT_EQ(offsetof(struct sroce_cqe, status), 8u);
	EXPECT_EQ(offsetof(struct sroce_cqe, opcode), 9u);
	EXPECT_EQ(offsetof(struct sroce_cqe, flags), 10u);
	EXPECT_EQ(offsetof(struct sroce_cqe, byte_len), 12u);
	EXPECT_EQ(offsetof(struct sroce_cqe, ex), 16u);
	EXPECT_EQ(offsetof(struct sroce_cqe, qp_num), 20u);
	EXPECT_EQ(offsetof(struct sroce_cqe, src_qp), 24u);
	EXPECT_EQ(offsetof(struct sroce_cqe, smac), 32u);
	EXPECT_EQ(offsetof(struct sroce_cqe, timestamp), 48u);
	EXPECT_EQ(offsetof(struct sroce_cqe, kernel_qp), 56u);
}

TEST(UapiLayout, CreateResponsesHaveFixedSizes)
{
	EXPECT_EQ(sizeof(struct sroce_ring_info), 24u);
	EXPECT_EQ(sizeof(struct sroce_alloc_ucontext_resp), 32u);
	EXPECT_EQ(sizeof(struct sroce_create_cq_resp), 24u);
	EXPECT_EQ(sizeof(struct sroce_resize_cq_resp), 24u);
	EXPECT_EQ(sizeof(struct sroce_create_qp_cmd), 8u);
	EXPECT_EQ(sizeof(struct sroce_create_qp_resp), 56u);
	EXPECT_EQ(sizeof(struct sroce_create_srq_resp), 32u);
	EXPECT_EQ(sizeof(struct sroce_create_ah_resp), 40u);
}

TEST(UapiLayout, EveryAbiStructIsTriviallyCopyable)
{
	EXPECT_TRUE(std::is_trivially_copyable_v<struct sroce_send_wqe>);
	EXPECT_TRUE(std::is_trivially_copyable_v<struct sroce_cqe>);
	EXPECT_TRUE(std::is_trivially_copyable_v<struct sroce_ring_hdr>);
}

TEST(UapiLayout, WqeFlagsEqualIbvSendFlags)
{
	// enum ibv_send_flags: FENCE 1, SIGNALED 2, SOLICITED 4, INLINE 8.
	EXPECT_EQ(SROCE_WQE_FENCE, 1u);
	EXPECT_EQ(SROCE_WQE_SIGNALED, 2u);
	EXPECT_EQ(SROCE_WQE_SOLICITED, 4u);
	EXPECT_EQ(SROCE_WQE_INLINE, 8u);
}

} // namespace

TEST(UapiLayout, DeviceMemoryAttributeIsTheFirstDriverId)
{
	/* A driver attribute: the first id of the driver namespace. */
	EXPECT_EQ(SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, 1U << UVERBS_ID_NS_SHIFT);
	EXPECT_EQ(SROCE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, 0x1000U);
	EXPECT_EQ(SROCE_DM_UNIT, 4);
}
