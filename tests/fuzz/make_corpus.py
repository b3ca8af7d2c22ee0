#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Write the seed corpus of sroce_parse_fuzz (tests/fuzz/corpus/).

Each seed is one mode byte (see sroce_parse_fuzz.c) followed by a valid
IPv4 or IPv6 RoCEv2 datagram whose ICRC is computed here with zlib.crc32,
independently of the C code; and, with mode 0, the first datagram of each
opcode in each real capture of tests/vectors/ (rdma_rxe's packets, ICRC
included). Run from anywhere: python3 make_corpus.py
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def ipv4_csum(hdr):
    s = sum(struct.unpack('!10H', hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def icrc(datagram):
    m = bytearray(datagram)
    if m[0] >> 4 == 4:
        l3 = 20
        m[1] = m[8] = m[10] = m[11] = 0xff
    else:
        l3 = 40
        m[0] |= 0x0f
        m[1] = m[2] = m[3] = m[7] = 0xff
    m[l3 + 6] = m[l3 + 7] = 0xff
    m[l3 + 8 + 4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(m[:-4]))


def datagram(bth_and_payload, ipv6=False):
    udp_len = 8 + len(bth_and_payload) + 4
    udp = struct.pack('!HHHH', 0xc001, 4791, udp_len, 0)
    if ipv6:
        ip = (bytes.fromhex('60000000') + struct.pack('!HBB', udp_len, 17, 64) +
              bytes.fromhex('fe80' + '00' * 13 + '01') +
              bytes.fromhex('fe80' + '00' * 13 + '02'))
    else:
        ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 1,
                                   0x4000, 64, 17, 0, bytes([10, 0, 0, 1]),
                                   bytes([10, 0, 0, 2])))
        ip[10:12] = struct.pack('!H', ipv4_csum(bytes(ip)))
        ip = bytes(ip)
    d = ip + udp + bth_and_payload + b'\0' * 4
    return d[:-4] + struct.pack('<I', icrc(d))


def bth(opcode, pad=0, qpn=0x11, psn=1, ackreq=0):
    return struct.pack('!BBHI', opcode, pad << 4, 0xffff, qpn) + \
        struct.pack('!I', (ackreq << 31) | psn)


SEEDS = {
    'rc_send_only_v4': datagram(bth(0x04, pad=3) + b'sroce\0\0\0'),
    'rc_send_first_v6': datagram(bth(0x00) + bytes(range(64)), ipv6=True),
    'rc_write_only_imm_v4': datagram(
        bth(0x0b, ackreq=1) + struct.pack('!QII', 0x1000, 0x42, 4) +
        b'\x01\x02\x03\x04' + b'data'),
    'rc_read_request_v4': datagram(
        bth(0x0c) + struct.pack('!QII', 0x2000, 0x43, 4096)),
    'rc_read_response_first_v4': datagram(
        bth(0x0d) + struct.pack('!I', 0x1f000001) + bytes(32)),
    'rc_ack_nak_v6': datagram(bth(0x11) + struct.pack('!I', 0x61000002),
                              ipv6=True),
    'rc_compare_swap_v4': datagram(
        bth(0x13) + struct.pack('!QIQQ', 0x3000, 0x44, 5, 6)),
    'rc_atomic_ack_v4': datagram(
        bth(0x12) + struct.pack('!IQ', 0x1f000003, 7)),
    'rc_send_only_inv_v4': datagram(bth(0x17) + struct.pack('!I', 0x45)),
    'rc_flush_v6': datagram(
        bth(0x1c) + struct.pack('!IQII', 0x21, 0x4000, 0x46, 64), ipv6=True),
    'rc_atomic_write_v4': datagram(
        bth(0x1d) + struct.pack('!QII', 0x5000, 0x47, 8) + bytes(8)),
    'uc_write_middle_v4': datagram(bth(0x27) + bytes(256)),
    'ud_send_only_imm_v6': datagram(
        bth(0x65, qpn=1) + struct.pack('!II', 0x80010000, 3) +
        b'\xde\xad\xbe\xef' + b'RoCEv2!!', ipv6=True),
    'cnp_v4': datagram(struct.pack('!BBHI', 0x81, 0, 0xffff, 0x40000118) +
                       bytes(4) + bytes(16)),
}


def captured():
    """Real datagrams: the first frame of each opcode in each capture of
    tests/vectors/ (rdma_rxe traffic, so the ICRC is rxe's own)."""
    seeds = {}
    vectors = os.path.join(HERE, '..', 'vectors')
    for name in sorted(os.listdir(vectors)):
        if not name.endswith('.pcap'):
            continue
        with open(os.path.join(vectors, name), 'rb') as f:
            data = f.read()
        magic, = struct.unpack('<I', data[:4])
        linktype, = struct.unpack('<I', data[20:24])
        if magic != 0xa1b2c3d4 or linktype != 1:
            continue
        off, seen = 24, set()
        while off + 16 <= len(data):
            incl, = struct.unpack('<I', data[off + 8:off + 12])
            frame = data[off + 16:off + 16 + incl]
            off += 16 + incl
            ethertype, = struct.unpack('!H', frame[12:14])
            if ethertype not in (0x0800, 0x86dd):
                continue
            ip = frame[14:]
            bth_off = (20 if ethertype == 0x0800 else 40) + 8
            if len(ip) <= bth_off or ip[bth_off] in seen:
                continue
            seen.add(ip[bth_off])
            seeds['cap_%s_op%02x' % (name[:-5], ip[bth_off])] = ip
    return seeds


def main():
    out = os.path.join(HERE, 'corpus')
    os.makedirs(out, exist_ok=True)
    for name, d in sorted(SEEDS.items()):
        for mode in (0, 1):
            with open(os.path.join(out, '%s.m%d' % (name, mode)), 'wb') as f:
                f.write(bytes([mode]) + d)
    for name, d in sorted(captured().items()):
        with open(os.path.join(out, '%s.m0' % name), 'wb') as f:
            f.write(bytes([0]) + d)


if __name__ == '__main__':
    main()
