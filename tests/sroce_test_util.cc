// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "sroce_test_util.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace sroce_test
{

uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	}
	return crc;
}

uint32_t ref_icrc(const Bytes &datagram)
{
	Bytes m = datagram;
	size_t l3;

	if ((m[0] >> 4) == 4) {
		l3 = 20;
		m[1] = 0xff;          /* TOS */
		m[8] = 0xff;          /* TTL */
		m[10] = m[11] = 0xff; /* header checksum */
	} else {
		l3 = 40;
		m[0] |= 0x0f;              /* traffic class, high nibble */
		m[1] = m[2] = m[3] = 0xff; /* traffic class low nibble, flow label */
		m[7] = 0xff;               /* hop limit */
	}
	m[l3 + 6] = m[l3 + 7] = 0xff; /* UDP checksum */
	m[l3 + 8 + 4] = 0xff;         /* BTH FECN/BECN/reserved */

	Bytes in(8, 0xff);
	in.insert(in.end(), m.begin(), m.end() - 4);
	return ~ref_crc32(0xffffffffu, in.data(), in.size());
}

Bytes from_hex(const std::string &hex)
{
	Bytes out;
	std::string digits;

	for (char c : hex)
		if (std::isxdigit(static_cast<unsigned char>(c)))
			digits += c;
	for (size_t i = 0; i + 1 < digits.size(); i += 2)
		out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
	return out;
}

struct sroce_pkt make_pkt(uint8_t opcode)
{
	struct sroce_pkt pkt = {};

	pkt.opcode = opcode;
	pkt.pkey = SROCE_DEFAULT_PKEY;
	pkt.dqpn = 0x000111;
	pkt.psn = 0x000222;
	return pkt;
}

struct sroce_pkt with_payload(struct sroce_pkt pkt, size_t payload_len)
{
	pkt.pad = static_cast<uint8_t>((4 - payload_len % 4) % 4);
	pkt.payload_len = static_cast<uint32_t>(payload_len);
	return pkt;
}

Bytes make_bth_packet(const struct sroce_pkt &pkt, size_t payload_len)
{
	Bytes out(SROCE_MAX_HDR_BYTES);
	size_t hdr = sroce_build(out.data(), &pkt);

	out.resize(hdr);
	for (size_t i = 0; i < payload_len; i++)
		out.push_back(static_cast<uint8_t>(0xa0 + i));
	out.insert(out.end(), pkt.pad, 0);
	out.insert(out.end(), SROCE_ICRC_BYTES, 0);
	return out;
}

static void put16(Bytes &b, size_t off, uint32_t v)
{
	b[off] = static_cast<uint8_t>(v >> 8);
	b[off + 1] = static_cast<uint8_t>(v);
}

void fix_ipv4_csum(Bytes &d)
{
	uint32_t sum = 0;

	d[10] = d[11] = 0;
	for (size_t i = 0; i < 20; i += 2)
		sum += (d[i] << 8) | d[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(d, 10, ~sum & 0xffff);
}

void fix_icrc(Bytes &d)
{
	uint32_t icrc = ref_icrc(d);
	size_t n = d.size();

	/* Least significant byte first, as rdma_rxe and ConnectX put it. */
	for (int i = 0; i < 4; i++)
		d[n - 4 + i] = static_cast<uint8_t>(icrc >> (8 * i));
}

Bytes make_frame(const Bytes &bth_packet, bool ipv6)
{
	size_t udp_len = 8 + bth_packet.size();
	Bytes d;

	if (!ipv6) {
		d = from_hex("45 00 0000 1234 4000 40 11 0000"
		             "c0a8 0001 c0a8 0002");
		put16(d, 2, 20 + udp_len);
	} else {
		d = from_hex("6000 0000 0000 11 40"
		             "fe80 0000 0000 0000 0000 0000 0000 0001"
		             "fe80 0000 0000 0000 0000 0000 0000 0002");
		put16(d, 4, udp_len);
	}
	size_t udp = d.size();
	d.insert(d.end(), 8, 0);
	put16(d, udp, 0xc123);
	put16(d, udp + 2, SROCE_UDP_PORT);
	put16(d, udp + 4, udp_len);
	d.insert(d.end(), bth_packet.begin(), bth_packet.end());
	if (!ipv6)
		fix_ipv4_csum(d);
	fix_icrc(d);
	return d;
}

bool pkt_equal(const struct sroce_pkt &a, const struct sroce_pkt &b, std::string *diff)
{
	std::ostringstream os;

#define SROCE_CMP(f)                                                                               \
	do {                                                                                       \
		if (a.f != b.f)                                                                    \
			os << #f << ": " << static_cast<unsigned long long>(a.f)                   \
			   << " != " << static_cast<unsigned long long>(b.f) << "\n";              \
	} while (0)
	SROCE_CMP(opcode);
	SROCE_CMP(se);
	SROCE_CMP(mig);
	SROCE_CMP(pad);
	SROCE_CMP(tver);
	SROCE_CMP(fecn);
	SROCE_CMP(becn);
	SROCE_CMP(ackreq);
	SROCE_CMP(pkey);
	SROCE_CMP(dqpn);
	SROCE_CMP(psn);
	SROCE_CMP(reth.va);
	SROCE_CMP(reth.rkey);
	SROCE_CMP(reth.dma_len);
	SROCE_CMP(aeth.syndrome);
	SROCE_CMP(aeth.msn);
	SROCE_CMP(atmeth.va);
	SROCE_CMP(atmeth.rkey);
	SROCE_CMP(atmeth.swap_add);
	SROCE_CMP(atmeth.compare);
	SROCE_CMP(atmack_orig);
	SROCE_CMP(imm[0]);
	SROCE_CMP(imm[1]);
	SROCE_CMP(imm[2]);
	SROCE_CMP(imm[3]);
	SROCE_CMP(ieth_rkey);
	SROCE_CMP(deth.qkey);
	SROCE_CMP(deth.src_qpn);
	SROCE_CMP(feth.sel);
	SROCE_CMP(feth.plt);
	SROCE_CMP(payload_off);
	SROCE_CMP(payload_len);
#undef SROCE_CMP
	if (diff)
		*diff = os.str();
	return os.str().empty();
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	std::memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

bool read_pcap(const std::string &path, std::vector<PcapFrame> *frames, std::string *err)
{
	std::ifstream in(path, std::ios::binary);
	Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

	if (!in.good() && !in.eof()) {
		*err = "cannot read " + path;
		return false;
	}
	if (file.size() < 24) {
		*err = path + ": shorter than a pcap global header";
		return false;
	}
	uint32_t magic = rd32(file.data(), false);
	bool swap;
	if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d)
		swap = false;
	else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1)
		swap = true;
	else {
		*err = path + ": not a classic pcap file (pcapng is not supported)";
		return false;
	}
	uint32_t linktype = rd32(file.data() + 20, swap) & 0x0fffffff;

	size_t off = 24;
	while (off < file.size()) {
		if (file.size() - off < 16) {
			*err = path + ": truncated record header";
			return false;
		}
		PcapFrame f;
		f.linktype = linktype;
		f.caplen = rd32(file.data() + off + 8, swap);
		f.origlen = rd32(file.data() + off + 12, swap);
		off += 16;
		if (f.caplen > file.size() - off) {
			*err = path + ": truncated record";
			return false;
		}
		f.data.assign(file.begin() + off, file.begin() + off + f.caplen);
		off += f.caplen;
		frames->push_back(std::move(f));
	}
	return true;
}

bool write_pcap(const std::string &path, const std::vector<Bytes> &frames)
{
	std::ofstream out(path, std::ios::binary);
	auto put32 = [&out](uint32_t v) { out.write(reinterpret_cast<const char *>(&v), 4); };
	auto put16le = [&out](uint16_t v) { out.write(reinterpret_cast<const char *>(&v), 2); };

	put32(0xa1b2c3d4);
	put16le(2);
	put16le(4);
	put32(0);
	put32(0);
	put32(65535);
	put32(1);
	for (const Bytes &f : frames) {
		put32(1700000000);
		put32(0);
		put32(static_cast<uint32_t>(f.size()));
		put32(static_cast<uint32_t>(f.size()));
		out.write(reinterpret_cast<const char *>(f.data()),
		          static_cast<std::streamsize>(f.size()));
	}
	return out.good();
}

const uint8_t *frame_l3(const PcapFrame &f, size_t *len)
{
	const uint8_t *p = f.data.data();
	size_t n = f.data.size();
	size_t off;
	uint16_t proto;

	switch (f.linktype) {
	case 1: /* Ethernet */
		if (n < 14)
			return nullptr;
		off = 12;
		proto = static_cast<uint16_t>((p[off] << 8) | p[off + 1]);
		while ((proto == 0x8100 || proto == 0x88a8) && n >= off + 6) {
			off += 4;
			proto = static_cast<uint16_t>((p[off] << 8) | p[off + 1]);
		}
		off += 2;
		break;
	case 113: /* Linux cooked v1: protocol at 14, header 16 bytes */
		if (n < 16)
			return nullptr;
		proto = static_cast<uint16_t>((p[14] << 8) | p[15]);
		off = 16;
		break;
	case 276: /* Linux cooked v2: protocol at 0, header 20 bytes */
		if (n < 20)
			return nullptr;
		proto = static_cast<uint16_t>((p[0] << 8) | p[1]);
		off = 20;
		break;
	case 101: /* raw IP */
		if (n < 1)
			return nullptr;
		proto = (p[0] >> 4) == 6 ? 0x86dd : 0x0800;
		off = 0;
		break;
	default:
		return nullptr;
	}
	if ((proto != 0x0800 && proto != 0x86dd) || off >= n)
		return nullptr;
	*len = n - off;
	return p + off;
}

bool is_roce_datagram(const uint8_t *l3, size_t len)
{
	size_t udp;

	if (len >= 20 && (l3[0] >> 4) == 4 && l3[9] == 17)
		udp = (l3[0] & 0xf) * 4u;
	else if (len >= 40 && (l3[0] >> 4) == 6 && l3[6] == 17)
		udp = 40;
	else
		return false;
	return len >= udp + 8 && ((l3[udp + 2] << 8) | l3[udp + 3]) == SROCE_UDP_PORT;
}

Bytes ethernet_frame(const Bytes &datagram)
{
	Bytes f = from_hex("020000000002 020000000001");
	bool v6 = (datagram[0] >> 4) == 6;

	f.push_back(v6 ? 0x86 : 0x08);
	f.push_back(v6 ? 0xdd : 0x00);
	f.insert(f.end(), datagram.begin(), datagram.end());
	return f;
}

std::vector<uint8_t> valid_opcodes()
{
	std::vector<uint8_t> ops;

	for (int op = 0; op < SROCE_NUM_OPCODES; op++)
		if (sroce_opcode_get(static_cast<uint8_t>(op)))
			ops.push_back(static_cast<uint8_t>(op));
	return ops;
}

} /* namespace sroce_test */
