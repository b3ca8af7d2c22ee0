// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The shared helpers of the tools that need no device: number parsing, the
 * streams, memory, names, GID kinds and the attribute sets of a QP's walk.
 */
#include "mapping.h"
#include "number.h"
#include "prng.h"
#include "verbs_helpers.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace
{

using namespace sroce_tools;

TEST(ParseUint, TakesDecimalHexAndOctalWithBaseZero)
{
	uint64_t v = 0;

	EXPECT_TRUE(parse_uint("42", 0, 100, &v));
	EXPECT_EQ(v, 42u);
	EXPECT_TRUE(parse_uint("0x10", 0, 100, &v));
	EXPECT_EQ(v, 16u);
	EXPECT_TRUE(parse_uint("010", 0, 100, &v));
	EXPECT_EQ(v, 8u);
	EXPECT_TRUE(parse_uint("18446744073709551615", 0, UINT64_MAX, &v));
	EXPECT_EQ(v, UINT64_MAX);
}

TEST(ParseUint, TakesOnlyDecimalWithBaseTen)
{
	uint64_t v = 7;

	EXPECT_TRUE(parse_uint("010", 0, 100, &v, 10));
	EXPECT_EQ(v, 10u);
	EXPECT_FALSE(parse_uint("0x10", 0, 100, &v, 10));
}

TEST(ParseUint, RejectsSignsJunkEmptinessAndOutOfRangeAndLeavesTheOutput)
{
	uint64_t v = 7;

	EXPECT_FALSE(parse_uint("", 0, 100, &v));
	EXPECT_FALSE(parse_uint("-1", 0, UINT64_MAX, &v));
	EXPECT_FALSE(parse_uint("12x", 0, 100, &v));
	EXPECT_FALSE(parse_uint("101", 0, 100, &v));
	EXPECT_FALSE(parse_uint("0", 1, 100, &v));
	EXPECT_FALSE(parse_uint("18446744073709551616", 0, UINT64_MAX, &v));
	EXPECT_EQ(v, 7u);
}

TEST(ParseUint, NarrowsIntoTheCallersType)
{
	uint16_t port = 0;

	EXPECT_TRUE(parse_uint_into("65535", 1, 65535, &port));
	EXPECT_EQ(port, 65535);
}

TEST(Rng, GivesTheSameStreamForTheSameKey)
{
	Rng a(stream_key(1, Stream::plan, 3)), b(stream_key(1, Stream::plan, 3));
	Rng c(stream_key(1, Stream::data, 3));
	bool differs = false;

	for (int i = 0; i < 16; i++) {
		const uint64_t x = a.next();

		EXPECT_EQ(x, b.next());
		differs |= x != c.next();
	}
	EXPECT_TRUE(differs);
}

TEST(Mapping, MapsZeroedMemoryAndMapsAgain)
{
	Mapping m(8192, PROT_READ | PROT_WRITE);

	ASSERT_TRUE(m.ok());
	EXPECT_EQ(m.size(), 8192u);
	EXPECT_EQ(m.data()[8191], 0);
	m.data()[0] = 1;
	ASSERT_TRUE(m.map(4096, PROT_READ));
	EXPECT_EQ(m.size(), 4096u);
	EXPECT_EQ(m.data()[0], 0);
	EXPECT_EQ(m.addr(), reinterpret_cast<uintptr_t>(m.data()));
}

TEST(Mapping, KeepsItsBytesThroughACopyOnWriteFork)
{
	Mapping m(8192, PROT_READ | PROT_WRITE);

	ASSERT_TRUE(m.ok());
	std::memset(m.data(), 0x11, m.size());
	ASSERT_TRUE(cow_fork());
	/* Written after the fork: a copy of the page, the caller's own. */
	m.data()[4096] = 0x22;
	EXPECT_EQ(m.data()[0], 0x11);
	EXPECT_EQ(m.data()[4095], 0x11);
	EXPECT_EQ(m.data()[4096], 0x22);
	EXPECT_EQ(m.data()[4097], 0x11);
}

TEST(Mapping, MapsAFilePrivately)
{
	char path[] = "/tmp/sroce-mapping-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "sroce", 5), 5);
	close(fd);
	Mapping m;
	ASSERT_TRUE(m.map_file(path, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(std::memcmp(m.data(), "sroce", 5), 0);
	m.data()[0] = 'S'; /* private: the file keeps its byte */
	Mapping again;
	ASSERT_TRUE(again.map_file(path, 4096, PROT_READ));
	EXPECT_EQ(again.data()[0], 's');
	unlink(path);
	EXPECT_FALSE(m.map_file(path, 4096, PROT_READ));
	EXPECT_FALSE(m.ok());
}

TEST(Names, MtuBytesAndEnumAreInverse)
{
	for (ibv_mtu m : {IBV_MTU_256, IBV_MTU_512, IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096})
		EXPECT_EQ(mtu_enum(uint32_t(mtu_bytes(m))), m);
	EXPECT_EQ(mtu_enum(100), IBV_MTU_256);
	EXPECT_EQ(mtu_enum(4200), IBV_MTU_4096);
	EXPECT_EQ(mtu_bytes(ibv_mtu(6)), -1);
}

TEST(Names, QpStatesAndFailedQueries)
{
	EXPECT_STREQ(qp_state_name(IBV_QPS_RESET), "RESET");
	EXPECT_STREQ(qp_state_name(IBV_QPS_RTS), "RTS");
	EXPECT_STREQ(qp_state_name(IBV_QPS_ERR), "ERR");
	EXPECT_STREQ(qp_state_name(-1), "(query failed)");
	EXPECT_STREQ(qp_state_name(IBV_QPS_UNKNOWN), "?");
	EXPECT_EQ(errno_name(EINVAL), "EINVAL");
	EXPECT_EQ(errno_name(0), "0");
}

ibv_gid gid_of(const char *text)
{
	ibv_gid g{};

	EXPECT_EQ(inet_pton(AF_INET6, text, g.raw), 1);
	return g;
}

TEST(Gid, TextAndKinds)
{
	const ibv_gid v4 = gid_of("::ffff:10.0.0.1");
	const ibv_gid ll = gid_of("fe80::1");
	const ibv_gid global = gid_of("fd00::1");

	EXPECT_EQ(gid_text(v4), "::ffff:10.0.0.1");
	EXPECT_TRUE(gid_is_ipv4_mapped(v4));
	EXPECT_FALSE(gid_is_ipv4_mapped(global));
	EXPECT_TRUE(gid_is_link_local(ll));
	EXPECT_FALSE(gid_is_link_local(global));
}

QpPath rc_path()
{
	QpPath p;

	p.type = IBV_QPT_RC;
	p.access = IBV_ACCESS_REMOTE_WRITE;
	p.path_mtu = IBV_MTU_4096;
	p.dest_qpn = 0x11;
	p.rq_psn = 0x123;
	p.dgid = gid_of("::ffff:10.0.0.2");
	p.sgid_index = 3;
	p.max_dest_rd_atomic = 16;
	p.min_rnr_timer = 12;
	p.sq_psn = 0x456;
	p.timeout = 14;
	p.retry_cnt = 7;
	p.rnr_retry = 6;
	p.max_rd_atomic = 8;
	return p;
}

TEST(QpWalk, RcSetsEveryConnectedAttribute)
{
	const QpPath p = rc_path();
	const QpTransition init = qp_to_init(p), rtr = qp_to_rtr(p), rts = qp_to_rts(p);

	EXPECT_EQ(init.mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	EXPECT_EQ(init.attr.port_num, 1);
	EXPECT_EQ(init.attr.qp_access_flags, unsigned(IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(rtr.mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	EXPECT_EQ(rtr.attr.path_mtu, IBV_MTU_4096);
	EXPECT_EQ(rtr.attr.dest_qp_num, 0x11u);
	EXPECT_EQ(rtr.attr.rq_psn, 0x123u);
	EXPECT_EQ(rtr.attr.ah_attr.is_global, 1);
	EXPECT_EQ(rtr.attr.ah_attr.grh.sgid_index, 3);
	EXPECT_EQ(rtr.attr.ah_attr.grh.hop_limit, 64);
	EXPECT_EQ(rtr.attr.ah_attr.port_num, 1);
	EXPECT_EQ(rts.mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                        IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	EXPECT_EQ(rts.attr.sq_psn, 0x456u);
	EXPECT_EQ(rts.attr.max_rd_atomic, 8);
}

TEST(QpWalk, UcLeavesOutTheReliableAttributes)
{
	QpPath p = rc_path();

	p.type = IBV_QPT_UC;
	EXPECT_EQ(qp_to_rtr(p).mask,
	          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	EXPECT_EQ(qp_to_rts(p).mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

TEST(QpWalk, UdTakesAQkeyAndNoPath)
{
	QpPath p = rc_path();

	p.type = IBV_QPT_UD;
	p.qkey = 0x11111111;
	EXPECT_EQ(qp_to_init(p).mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	EXPECT_EQ(qp_to_init(p).attr.qkey, 0x11111111u);
	EXPECT_EQ(qp_to_rtr(p).mask, IBV_QP_STATE);
	EXPECT_EQ(qp_to_rts(p).mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

} // namespace
