// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Known-good packets captured from real rdma_rxe traffic on the VM rig
 * (tests/vectors/, files ending .pcap): every RoCEv2 packet in them must pass
 * sroce_parse_roce_frame(), including its ICRC, and rebuilding its headers
 * from the parsed struct must reproduce the captured bytes. Also tests for
 * the small pcap reader itself.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "sroce_test_util.h"

using sroce_test::Bytes;
using sroce_test::from_hex;
using sroce_test::PcapFrame;

namespace fs = std::filesystem;

namespace
{

const char kCnpEthernet[] = "e41d2dab2bc2 7cfe90643b32 0800"
                            "45c2003c718c400040119161 0a001101 0a001201"
                            "000012b700280000"
                            "8100ffff40000118 00000000"
                            "00000000000000000000000000000000"
                            "82fd002a";

std::string temp_path(const char *name)
{
	return (fs::temp_directory_path() /
	        (std::string("sroce_") + std::to_string(::getpid()) + "_" + name))
	    .string();
}

std::vector<std::string> vector_files()
{
	std::vector<std::string> files;
	std::error_code ec;

	for (const auto &e : fs::directory_iterator(SROCE_TEST_VECTOR_DIR, ec))
		if (e.path().extension() == ".pcap")
			files.push_back(e.path().string());
	std::sort(files.begin(), files.end());
	return files;
}

struct Tally {
	int roce = 0;
	int truncated = 0;
	std::map<std::string, int> by_opcode;
};

/* Check one captured RoCEv2 datagram; failures name the file and frame. */
void check_datagram(const uint8_t *l3, size_t len, const std::string &where, Tally *t)
{
	sroce_pkt pkt;
	int err = sroce_parse_roce_frame(l3, len, &pkt);

	ASSERT_EQ(err, 0) << where << ": " << sroce_drop_reason_name(static_cast<unsigned>(-err))
	                  << ", opcode " << sroce_opcode_name(l3[(l3[0] >> 4) == 4 ? 28 : 48]);

	size_t l3_len = sroce_l3_hdr_len(l3);
	const uint8_t *bth = l3 + l3_len + SROCE_UDP_HDR_BYTES;
	size_t ip_len = l3_len == 20 ? sroce_get_be16(l3 + 2) : 40 + sroce_get_be16(l3 + 4);
	Bytes datagram(l3, l3 + ip_len);
	Bytes rebuilt(SROCE_MAX_HDR_BYTES);
	size_t n = sroce_build(rebuilt.data(), &pkt);

	rebuilt.resize(n);
	EXPECT_EQ(rebuilt, Bytes(bth, bth + n)) << where << ": rebuilt headers differ";
	EXPECT_EQ(sroce_test::ref_icrc(datagram), sroce_icrc_get(l3 + ip_len - SROCE_ICRC_BYTES))
	    << where << ": reference ICRC disagrees";
	t->roce++;
	t->by_opcode[pkt.info->name]++;
}

} /* namespace */

TEST(PcapReader, ReturnsTheFramesThatWereWritten)
{
	const std::string path = temp_path("rw.pcap");
	const std::vector<Bytes> frames = {from_hex(kCnpEthernet), from_hex("0102030405")};
	std::vector<PcapFrame> got;
	std::string err;

	ASSERT_TRUE(sroce_test::write_pcap(path, frames));
	ASSERT_TRUE(sroce_test::read_pcap(path, &got, &err)) << err;
	std::remove(path.c_str());
	ASSERT_EQ(got.size(), 2u);
	EXPECT_EQ(got[0].linktype, 1u);
	EXPECT_EQ(got[0].data, frames[0]);
	EXPECT_EQ(got[1].data, frames[1]);
	EXPECT_EQ(got[1].caplen, 5u);
}

TEST(PcapReader, ReadsBigEndianNanosecondFiles)
{
	const std::string path = temp_path("be.pcap");
	Bytes file = from_hex("a1b23c4d 0002 0004 00000000 00000000 0000ffff 00000001"
	                      "00000001 00000002 00000003 00000003 aabbcc");
	std::vector<PcapFrame> got;
	std::string err;

	std::ofstream(path, std::ios::binary)
	    .write(reinterpret_cast<const char *>(file.data()),
	           static_cast<std::streamsize>(file.size()));
	ASSERT_TRUE(sroce_test::read_pcap(path, &got, &err)) << err;
	std::remove(path.c_str());
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].data, from_hex("aabbcc"));
}

TEST(PcapReader, RejectsPcapngAndTruncatedRecords)
{
	const std::string path = temp_path("bad.pcap");
	std::vector<PcapFrame> got;
	std::string err;
	auto write = [&path](const Bytes &b) {
		std::ofstream(path, std::ios::binary)
		    .write(reinterpret_cast<const char *>(b.data()),
		           static_cast<std::streamsize>(b.size()));
	};

	write(from_hex("0a0d0d0a 0000001c 1a2b3c4d 00010000 ffffffffffffffff 0000001c"));
	EXPECT_FALSE(sroce_test::read_pcap(path, &got, &err));
	write(from_hex("d4c3b2a1 0200 0400 00000000 00000000 ffff0000 01000000"
	               "00000000 00000000 10000000 10000000 0102"));
	EXPECT_FALSE(sroce_test::read_pcap(path, &got, &err));
	std::remove(path.c_str());
}

TEST(PcapReader, FindsTheDatagramBehindEthernetVlanAndLinuxCookedHeaders)
{
	const Bytes ip = from_hex("4500");
	size_t len = 0;
	PcapFrame eth{1, 0, 0, from_hex("020000000002 020000000001 0800 4500")};
	PcapFrame vlan{1, 0, 0, from_hex("020000000002 020000000001 8100 0064 0800 4500")};
	PcapFrame sll{113, 0, 0, from_hex("0000 0001 0006 020000000001 0000 0800 4500")};
	PcapFrame sll2{276, 0, 0, from_hex("86dd 0000 00000002 0001 00 06 020000000001 0000 6000")};
	PcapFrame arp{1, 0, 0, from_hex("020000000002 020000000001 0806 0001")};

	for (const PcapFrame *f : {&eth, &vlan, &sll}) {
		const uint8_t *l3 = sroce_test::frame_l3(*f, &len);
		ASSERT_NE(l3, nullptr);
		EXPECT_EQ(Bytes(l3, l3 + len), ip);
	}
	const uint8_t *l3 = sroce_test::frame_l3(sll2, &len);
	ASSERT_NE(l3, nullptr);
	EXPECT_EQ(Bytes(l3, l3 + len), from_hex("6000"));
	EXPECT_EQ(sroce_test::frame_l3(arp, &len), nullptr);
}

TEST(PcapReader, HardwareCnpFrameChecksOutThroughThePcapPath)
{
	const std::string path = temp_path("cnp.pcap");
	std::vector<PcapFrame> got;
	std::string err;
	Tally t;
	size_t len = 0;

	ASSERT_TRUE(sroce_test::write_pcap(path, {from_hex(kCnpEthernet)}));
	ASSERT_TRUE(sroce_test::read_pcap(path, &got, &err)) << err;
	std::remove(path.c_str());
	const uint8_t *l3 = sroce_test::frame_l3(got.at(0), &len);
	ASSERT_NE(l3, nullptr);
	ASSERT_TRUE(sroce_test::is_roce_datagram(l3, len));
	check_datagram(l3, len, "cnp", &t);
	EXPECT_EQ(t.by_opcode["CNP"], 1);
}

TEST(CapturedVectors, EveryRoceV2PacketParsesVerifiesAndRebuildsByteForByte)
{
	const std::vector<std::string> files = vector_files();
	Tally total;

	if (files.empty())
		GTEST_SKIP() << "no captures in " << SROCE_TEST_VECTOR_DIR << "/*.pcap yet";

	for (const std::string &file : files) {
		std::vector<PcapFrame> frames;
		std::string err;
		Tally t;

		ASSERT_TRUE(sroce_test::read_pcap(file, &frames, &err)) << err;
		for (size_t i = 0; i < frames.size(); i++) {
			size_t len = 0;
			const uint8_t *l3 = sroce_test::frame_l3(frames[i], &len);

			if (!l3 || !sroce_test::is_roce_datagram(l3, len))
				continue;
			if (frames[i].caplen < frames[i].origlen) {
				t.truncated++;
				continue;
			}
			std::ostringstream where;
			where << fs::path(file).filename().string() << " frame " << i + 1;
			check_datagram(l3, len, where.str(), &t);
		}
		std::ostringstream summary;
		summary << fs::path(file).filename().string() << ": " << t.roce
		        << " RoCEv2 packets checked, " << t.truncated << " truncated skipped;";
		for (const auto &[name, n] : t.by_opcode)
			summary << " " << name << "=" << n;
		std::printf("[ vectors  ] %s\n", summary.str().c_str());
		if (!t.roce)
			std::printf("[ vectors  ] warning: %s holds no complete RoCEv2 packet\n",
			            file.c_str());
		total.roce += t.roce;
	}
	EXPECT_GT(total.roce, 0) << "no complete RoCEv2 packet in any capture";
}

TEST(CapturedVectors, RdmaRxeChoseTheUdpSourcePortSroceUdpSportComputes)
{
	/*
	 * rxe sets a connected QP's source port with rdma_get_udp_sport() from
	 * the AH flow label (zero in these captures) and the two QPNs. Each
	 * direction of a connection carries the peer's QPN, so a flow seen in
	 * both directions gives both QPNs.
	 */
	const std::vector<std::string> files = vector_files();
	int flows = 0;

	if (files.empty())
		GTEST_SKIP() << "no captures in " << SROCE_TEST_VECTOR_DIR << " yet";
	for (const std::string &file : files) {
		std::vector<PcapFrame> frames;
		std::string err;
		/* UDP source port -> (IP source address -> destination QPN) */
		std::map<uint16_t, std::map<Bytes, uint32_t>> seen;

		ASSERT_TRUE(sroce_test::read_pcap(file, &frames, &err)) << err;
		for (const PcapFrame &f : frames) {
			size_t len = 0;
			const uint8_t *l3 = sroce_test::frame_l3(f, &len);
			sroce_pkt pkt;

			if (!l3 || !sroce_test::is_roce_datagram(l3, len) ||
			    sroce_parse_roce_frame(l3, len, &pkt) ||
			    pkt.info->transport != SROCE_TRANSPORT_RC)
				continue;
			bool v4 = sroce_l3_hdr_len(l3) == 20;
			Bytes src(l3 + (v4 ? 12 : 8), l3 + (v4 ? 16 : 24));
			uint16_t sport = sroce_get_be16(l3 + sroce_l3_hdr_len(l3));
			seen[sport][src] = pkt.dqpn;
		}
		for (const auto &[sport, by_src] : seen) {
			if (by_src.size() != 2)
				continue;
			uint32_t a = by_src.begin()->second, b = by_src.rbegin()->second;
			EXPECT_EQ(sport, sroce_udp_sport(0, a, b))
			    << fs::path(file).filename().string() << ": QPNs " << a << ", " << b;
			flows++;
		}
	}
	EXPECT_GT(flows, 0) << "no RC flow captured in both directions";
}
