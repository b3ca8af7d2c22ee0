#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""RC data check between two RDMA devices, with rdma-core's pyverbs.

Unlike ibv_rc_pingpong -c (which looks at one byte per page) and perftest
(which does not look at the data), every byte that crosses the link is
compared with what was sent:

  send-c2s, send-s2c  SEND of a random payload each way into a posted RECV;
                      the receiver checks the completion (status, opcode,
                      byte_len) and every byte
  write               RDMA WRITE from the client into the server's MR; the
                      server checks every byte, and that the bytes around
                      the target were not touched
  read                RDMA READ by the client from the server's MR; the
                      client checks every byte
  atomics             FETCH_AND_ADD then CMP_AND_SWAP on a server word; the
                      client checks the returned old values, the server the
                      final value

for each message size. The two sides agree on QP numbers, GIDs, keys and
addresses, and take turns, over a TCP connection (server: guest a).

  rc_verify.py --role server --dev DEV --gid IDX [--port P]
  rc_verify.py --role client --dev DEV --gid IDX --peer IPV4 [--port P]
               [--sizes 1,4096,...] [--corrupt send-c2s|write]

Prints one line per check ("ok write 4096" or "FAIL ..."); exit status 0
when every check passed, 1 otherwise, 2 on a setup error.
"""

import argparse
import json
import random
import socket
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE

DEFAULT_SIZES = "1,1000,4096,4097,65536,1048576"
GUARD = 64          # bytes checked around an RDMA WRITE target
ATOMIC_START = 0x0123456789abcdef
ATOMIC_ADD = 0x1111
ATOMIC_SWAP = 0xfedcba9876543210
POLL_SECONDS = 30
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


class Failure(Exception):
    """A check failed: the message says which and how."""


def pattern(seed, tag, size):
    """The payload both sides expect for (tag, size): no byte is constant."""
    return random.Random(f"{seed}/{tag}/{size}").randbytes(size)


def first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"byte {i}: got 0x{g:02x}, want 0x{w:02x}"
    if len(got) != len(want):
        return f"length {len(got)}, want {len(want)}"
    return None


class Channel:
    """JSON lines over TCP: the side channel both sides take turns on."""

    def __init__(self, sock):
        self.sock = sock
        self.rfile = sock.makefile("r")

    def send(self, **msg):
        self.sock.sendall((json.dumps(msg) + "\n").encode())

    def recv(self):
        line = self.rfile.readline()
        if not line:
            raise Failure("the peer closed the control connection")
        msg = json.loads(line)
        if msg.get("fail"):
            raise Failure(f"peer: {msg['fail']}")
        return msg


class Endpoint:
    """One RC QP with one MR big enough for the largest message."""

    def __init__(self, dev, gid_index, max_size):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                         rcq=self.cq, cap=cap))
        # Payload area, guard bytes after it, then one 8-byte atomic word.
        self.atomic_off = (max_size + GUARD + 7) // 8 * 8
        self.mr = MR(self.pd, self.atomic_off + 8, ACCESS)
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index)
        self.psn = random.randrange(1 << 24)
        self.mtu = self.ctx.query_port(1).active_mtu

    def info(self):
        return {"qpn": self.qp.qp_num, "psn": self.psn, "gid": str(self.gid),
                "rkey": self.mr.rkey, "addr": self.mr.buf,
                "mtu": int(self.mtu)}

    def connect(self, peer):
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_INIT
        attr.pkey_index = 0
        attr.port_num = 1
        attr.qp_access_flags = ACCESS
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                       e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)

        gr = GlobalRoute(dgid=GID(peer["gid"]), sgid_index=self.gid_index,
                         hop_limit=64)
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTR
        attr.path_mtu = min(int(self.mtu), peer["mtu"])
        attr.dest_qp_num = peer["qpn"]
        attr.rq_psn = peer["psn"]
        attr.max_dest_rd_atomic = 4
        attr.min_rnr_timer = 12
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_AV |
                       e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
                       e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
                       e.IBV_QP_MIN_RNR_TIMER)

        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTS
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.sq_psn = self.psn
        attr.max_rd_atomic = 4
        self.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT |
                       e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                       e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)

    def sge(self, offset, length):
        return SGE(self.mr.buf + offset, length, self.mr.lkey)

    def post_recv(self, size):
        self.qp.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[self.sge(0, size)]))

    def post(self, opcode, offset, length, remote=None, atomic=None):
        wr = SendWR(wr_id=2, opcode=opcode, num_sge=1,
                    sg=[self.sge(offset, length)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if remote is not None:
            wr.set_wr_rdma(remote[0], remote[1])
        if atomic is not None:
            wr.set_wr_atomic(atomic[0], atomic[1], atomic[2], atomic[3])
        self.qp.post_send(wr)

    def complete(self, what, opcode, byte_len=None):
        """Wait for one completion and check it."""
        end = time.monotonic() + POLL_SECONDS
        while True:
            n, wcs = self.cq.poll(1)
            if n:
                wc = wcs[0]
                break
            if time.monotonic() > end:
                raise Failure(f"{what}: no completion in {POLL_SECONDS} s")
            time.sleep(0.0005)
        if wc.status != e.IBV_WC_SUCCESS:
            raise Failure(f"{what}: completion status {wc.status}")
        if wc.opcode != opcode:
            raise Failure(f"{what}: completion opcode {wc.opcode}, want {opcode}")
        if byte_len is not None and wc.byte_len != byte_len:
            raise Failure(f"{what}: byte_len {wc.byte_len}, want {byte_len}")

    def fill(self, data, offset=0):
        if data:
            self.mr.write(data, len(data), offset)

    def read(self, length, offset=0):
        return self.mr.read(length, offset) if length else b""


def check(what, got, want):
    diff = first_difference(got, want)
    if diff:
        raise Failure(f"{what}: {diff}")


def serve(ep, ch, seed):
    """Server side: answers the client's steps in order."""
    while True:
        msg = ch.recv()
        step, size = msg["step"], msg.get("size", 0)
        what = f"{step} {size}"
        if step == "done":
            return
        if step == "send-c2s":
            ep.post_recv(size)
            ch.send(ready=True)
            ep.complete(what, e.IBV_WC_RECV, size)
            check(what, ep.read(size), pattern(seed, step, size))
            ch.send(ok=True)
        elif step == "send-s2c":
            ch.recv()  # the client has posted its receive
            ep.fill(pattern(seed, step, size))
            ep.post(e.IBV_WR_SEND, 0, size)
            ep.complete(what, e.IBV_WC_SEND)
            ch.send(ok=True)
        elif step == "write":
            ep.fill(b"\0" * (size + GUARD))
            ch.send(ready=True)
            ch.recv()  # written (the WRITE completed at the client)
            check(what, ep.read(size), pattern(seed, step, size))
            check(what + " (bytes after the target)", ep.read(GUARD, size),
                  b"\0" * GUARD)
            ch.send(ok=True)
        elif step == "read":
            ep.fill(pattern(seed, step, size))
            ch.send(ready=True)
            ch.recv()  # read and checked by the client
            ch.send(ok=True)
        elif step == "atomics":
            ep.fill(struct.pack("<Q", ATOMIC_START), ep.atomic_off)
            ch.send(ready=True)
            ch.recv()  # both atomics done
            got = struct.unpack("<Q", ep.read(8, ep.atomic_off))[0]
            if got != ATOMIC_SWAP:
                raise Failure(f"atomics: final value 0x{got:016x}, "
                              f"want 0x{ATOMIC_SWAP:016x}")
            ch.send(ok=True)
        else:
            raise Failure(f"unknown step {step}")


def drive(ep, ch, peer, sizes, seed, corrupt=None):
    """Client side: runs every step and reports each result. corrupt names
    a step whose payload the client damages (one byte) before sending, to
    prove that the checks catch it."""

    def payload(step, size):
        data = pattern(seed, step, size)
        if step == corrupt and size:
            data = data[:size // 2] + bytes([data[size // 2] ^ 0x5a]) + data[size // 2 + 1:]
        return data

    for size in sizes:
        step = "send-c2s"
        ch.send(step=step, size=size)
        ch.recv()
        ep.fill(payload(step, size))
        ep.post(e.IBV_WR_SEND, 0, size)
        ep.complete(f"{step} {size}", e.IBV_WC_SEND)
        ch.recv()
        print(f"ok {step} {size}", flush=True)

        step = "send-s2c"
        ch.send(step=step, size=size)
        ep.fill(b"\0" * size)
        ep.post_recv(size)
        ch.send(posted=True)
        ep.complete(f"{step} {size}", e.IBV_WC_RECV, size)
        check(f"{step} {size}", ep.read(size), pattern(seed, step, size))
        ch.recv()
        print(f"ok {step} {size}", flush=True)

        step = "write"
        ch.send(step=step, size=size)
        ch.recv()
        ep.fill(payload(step, size))
        ep.post(e.IBV_WR_RDMA_WRITE, 0, size, remote=(peer["rkey"], peer["addr"]))
        ep.complete(f"{step} {size}", e.IBV_WC_RDMA_WRITE)
        ch.send(written=True)
        ch.recv()
        print(f"ok {step} {size}", flush=True)

        step = "read"
        ch.send(step=step, size=size)
        ch.recv()
        ep.fill(b"\0" * size)
        ep.post(e.IBV_WR_RDMA_READ, 0, size, remote=(peer["rkey"], peer["addr"]))
        ep.complete(f"{step} {size}", e.IBV_WC_RDMA_READ, size)
        check(f"{step} {size}", ep.read(size), pattern(seed, step, size))
        ch.send(checked=True)
        ch.recv()
        print(f"ok {step} {size}", flush=True)

    ch.send(step="atomics")
    ch.recv()
    remote = peer["addr"] + peer["atomic_off"]
    ep.fill(b"\0" * 8, ep.atomic_off)
    ep.post(e.IBV_WR_ATOMIC_FETCH_AND_ADD, ep.atomic_off, 8,
            atomic=(peer["rkey"], remote, ATOMIC_ADD, 0))
    ep.complete("fetch-add", e.IBV_WC_FETCH_ADD)
    old = struct.unpack("<Q", ep.read(8, ep.atomic_off))[0]
    if old != ATOMIC_START:
        raise Failure(f"fetch-add returned 0x{old:016x}, want 0x{ATOMIC_START:016x}")
    ep.post(e.IBV_WR_ATOMIC_CMP_AND_SWP, ep.atomic_off, 8,
            atomic=(peer["rkey"], remote, ATOMIC_START + ATOMIC_ADD, ATOMIC_SWAP))
    ep.complete("cmp-swap", e.IBV_WC_COMP_SWAP)
    old = struct.unpack("<Q", ep.read(8, ep.atomic_off))[0]
    if old != ATOMIC_START + ATOMIC_ADD:
        raise Failure(f"cmp-swap returned 0x{old:016x}, "
                      f"want 0x{ATOMIC_START + ATOMIC_ADD:016x}")
    ch.send(done_atomics=True)
    ch.recv()
    print("ok atomics fetch-add cmp-swap", flush=True)
    ch.send(step="done")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--role", choices=("server", "client"), required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--gid", type=int, required=True)
    ap.add_argument("--peer")
    ap.add_argument("--port", type=int, default=18600)
    ap.add_argument("--sizes", default=DEFAULT_SIZES)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corrupt", choices=("send-c2s", "write"),
                    help="damage one byte of this step's payload (client; "
                    "for testing the checks, which must then fail)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    if args.role == "server":
        lsock = socket.create_server(("0.0.0.0", args.port), reuse_port=False)
        conn, _ = lsock.accept()
        lsock.close()
    else:
        if not args.peer:
            ap.error("--peer is needed with --role client")
        conn = socket.create_connection((args.peer, args.port), timeout=60)
        conn.settimeout(None)
    ch = Channel(conn)
    try:
        if args.role == "client":
            ch.send(sizes=sizes, seed=args.seed)
            params = {"sizes": sizes, "seed": args.seed}
        else:
            params = ch.recv()
        ep = Endpoint(args.dev, args.gid, max(params["sizes"]))
        mine = dict(ep.info(), atomic_off=ep.atomic_off)
        ch.send(**mine)
        peer = ch.recv()
        ep.connect(peer)
        ch.send(connected=True)
        ch.recv()
        if args.role == "server":
            serve(ep, ch, params["seed"])
        else:
            drive(ep, ch, peer, params["sizes"], params["seed"], args.corrupt)
    except Failure as err:
        print(f"FAIL {err}", flush=True)
        try:
            ch.send(fail=str(err))
        except OSError:
            pass
        return 1
    except Exception as err:  # pyverbs errors: setup or posting failed
        print(f"FAIL {type(err).__name__}: {err}", flush=True)
        try:
            ch.send(fail=f"{type(err).__name__}: {err}")
        except OSError:
            pass
        return 1
    print(f"{args.role}: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
