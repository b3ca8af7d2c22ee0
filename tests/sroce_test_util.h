/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by the protocol-core tests: an independent bit-at-a-time
 * CRC-32 and ICRC reference, packet and frame builders, a classic-pcap
 * reader. Nothing here calls the code under test to compute an expected
 * value, except sroce_build() where a test needs a well-formed header to
 * start from.
 */
#ifndef SROCE_TEST_UTIL_H
#define SROCE_TEST_UTIL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/sroce_hdr.h"
#include "proto/sroce_icrc.h"

namespace sroce_test
{

using Bytes = std::vector<uint8_t>;

/* Reflected CRC-32 (poly 0xEDB88320), one bit at a time, no inversion. */
uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t n);

/*
 * ICRC of a datagram (IP header through the 4 ICRC bytes), computed the way
 * Annex A17.4 describes it: copy, mask the variant fields to ones, prepend
 * 8 bytes of ones, CRC everything but the trailer, complement.
 */
uint32_t ref_icrc(const Bytes &datagram);

/* "45 00 ..." (whitespace ignored) to bytes. */
Bytes from_hex(const std::string &hex);

/* A pkt with only opcode, pkey and a nonzero destination QP set. */
struct sroce_pkt make_pkt(uint8_t opcode);

/*
 * BTH through ICRC for pkt (headers from sroce_build()), followed by
 * payload_len bytes of pattern, the pad pkt->pad asks for, and a zero ICRC.
 */
Bytes make_bth_packet(const struct sroce_pkt &pkt, size_t payload_len);

/* Payload length and matching pad count for a valid packet. */
struct sroce_pkt with_payload(struct sroce_pkt pkt, size_t payload_len);

/*
 * A complete IPv4 or IPv6 + UDP datagram around a BTH..ICRC packet, with
 * correct lengths, IPv4 header checksum and ICRC (from ref_icrc()).
 */
Bytes make_frame(const Bytes &bth_packet, bool ipv6);

/* Recompute and store the IPv4 header checksum of an IPv4 datagram. */
void fix_ipv4_csum(Bytes &datagram);

/* Recompute and store the ICRC of a datagram (ref_icrc()). */
void fix_icrc(Bytes &datagram);

/* Field-by-field equality of two parsed/built packets (info ignored). */
bool pkt_equal(const struct sroce_pkt &a, const struct sroce_pkt &b, std::string *diff);

/* One captured frame of a classic pcap file. */
struct PcapFrame {
	uint32_t linktype;
	uint32_t caplen;
	uint32_t origlen;
	Bytes data;
};

/*
 * Read a classic (libpcap 2.4) file in either byte order and either time
 * resolution. Returns false with *err set if the file is not one.
 */
bool read_pcap(const std::string &path, std::vector<PcapFrame> *frames, std::string *err);

/* Write frames as a classic little-endian, microsecond pcap (linktype 1). */
bool write_pcap(const std::string &path, const std::vector<Bytes> &frames);

/*
 * The IP datagram inside a captured frame (Ethernet with optional 802.1Q
 * tags, Linux cooked v1/v2, or raw IP), or nullptr if it is not IPv4/IPv6.
 */
const uint8_t *frame_l3(const PcapFrame &f, size_t *len);

/* True if the datagram is UDP to port 4791 (a RoCEv2 candidate). */
bool is_roce_datagram(const uint8_t *l3, size_t len);

/* Prepend an Ethernet header (IPv4 or IPv6 ethertype) to a datagram. */
Bytes ethernet_frame(const Bytes &datagram);

/* Every opcode value for which sroce_opcode_get() is not NULL. */
std::vector<uint8_t> valid_opcodes();

} /* namespace sroce_test */

#endif /* SROCE_TEST_UTIL_H */
