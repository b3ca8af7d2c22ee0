// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device, control connection and hello exchange (see session.h).
 */
#include "session.h"

#include "log.h"

#include <algorithm>
#include <random>

namespace integ
{

namespace
{

constexpr uint32_t kHelloMagic = 0x73726931; /* "sri1" */

Caps caps_of(const Device &dev)
{
	Caps c;

	c.active_mtu = mtu_bytes(dev.port.active_mtu);
	c.atomic_cap = dev.attr.atomic_cap;
	c.max_qp_rd_atom = uint32_t(dev.attr.max_qp_rd_atom);
	c.max_qp_init_rd_atom = uint32_t(dev.attr.max_qp_init_rd_atom);
	c.max_sge = uint32_t(dev.attr.max_sge);
	c.max_sge_rd = uint32_t(dev.attr.max_sge_rd ? dev.attr.max_sge_rd : dev.attr.max_sge);
	c.flush = flush_caps(dev.ctx.get());
	return c;
}

void put_caps(Writer &w, const Caps &c)
{
	w.u32(c.active_mtu).u32(c.atomic_cap).u32(c.max_qp_rd_atom).u32(c.max_qp_init_rd_atom);
	w.u32(c.max_sge).u32(c.max_sge_rd).u32(c.flush);
}

Caps get_caps(Reader &r)
{
	Caps c;

	c.active_mtu = r.u32();
	c.atomic_cap = r.u32();
	c.max_qp_rd_atom = r.u32();
	c.max_qp_init_rd_atom = r.u32();
	c.max_sge = r.u32();
	c.max_sge_rd = r.u32();
	c.flush = r.u32();
	return c;
}

/* The client's run parameters, which the server adopts. */
void put_params(Writer &w, const Options &o)
{
	w.u32(kHelloMagic).u32(uint32_t(o.mode)).u64(o.seed).u32(o.rounds).u32(o.duration);
	w.u32(o.mtu).u32(o.max_size).u32(o.batch).u32(o.depth).u32(o.ops_mask).u8(o.uc);
	w.u32(o.client_ops).u32(o.server_ops);
	w.u32(o.cases_mask).u32(o.directions);
	w.u8(o.ack_timeout).u8(o.retry_cnt);
}

bool get_params(Reader &r, Options *o, std::string *why)
{
	if (r.u32() != kHelloMagic) {
		*why = "the client is not sroce-integrity (bad hello)";
		return false;
	}
	const Mode mode = Mode(r.u32());

	if (mode != o->mode) {
		*why = "the client runs another mode (run, errors, flush or vanish)";
		return false;
	}
	o->seed = r.u64();
	o->seed_set = true;
	o->rounds = r.u32();
	o->duration = r.u32();
	o->mtu = r.u32();
	o->max_size = r.u32();
	o->batch = r.u32();
	o->depth = r.u32();
	o->ops_mask = r.u32();
	o->uc = r.u8() != 0;
	o->client_ops = r.u32();
	o->server_ops = r.u32();
	o->cases_mask = r.u32();
	o->directions = r.u32();
	o->ack_timeout = r.u8();
	o->retry_cnt = r.u8();
	if (!r.ok()) {
		*why = "short hello from the client";
		return false;
	}
	return true;
}

} // namespace

uint32_t pick_psn(Rng &rng)
{
	if (rng.chance(50))
		return 0xffffffu - rng.below(256);
	return rng.below(1u << 24);
}

bool Session::start(const Options &cmdline, std::string *why)
{
	std::vector<uint8_t> buf;

	opt = cmdline;
	client = !opt.server.empty();
	log().set_side(side());
	log().set_verbose(opt.verbose);
	if (!dev.open(opt, why))
		return false;
	self = caps_of(dev);
	if (client && !opt.seed_set) {
		opt.seed = (uint64_t(std::random_device()()) << 32) ^ std::random_device()() ^
		           uint64_t(now_ms());
		opt.seed_set = true;
	}

	if (client) {
		if (!chan.connect_to(opt.server, opt.port, opt.connect_timeout, why))
			return false;
		Writer w;

		put_params(w, opt);
		put_caps(w, self);
		if (!chan.send(MsgType::hello, w, why) ||
		    !chan.recv(MsgType::hello_ack, &buf, peer_timeout_ms(), why))
			return false;
		Reader r(buf);

		peer = get_caps(r);
		if (!r.ok()) {
			*why = "short hello_ack from the server";
			return false;
		}
	} else {
		log().info("listening on TCP port %u", opt.port);
		if (!chan.accept_one(opt.port, opt.connect_timeout, why) ||
		    !chan.recv(MsgType::hello, &buf, peer_timeout_ms(), why))
			return false;
		Reader r(buf);

		if (!get_params(r, &opt, why)) {
			chan.abort(*why);
			return false;
		}
		peer = get_caps(r);
		Writer w;

		put_caps(w, self);
		if (!chan.send(MsgType::hello_ack, w, why))
			return false;
	}

	uint32_t mtu = std::min(self.active_mtu, peer.active_mtu);

	if (opt.mtu)
		mtu = std::min(mtu, opt.mtu);
	path_mtu = mtu_bytes(mtu_enum(mtu));
	if (!opt.max_size)
		opt.max_size = 3 * path_mtu;
	atomics = self.atomic_cap != IBV_ATOMIC_NONE && peer.atomic_cap != IBV_ATOMIC_NONE;
	log().info("%s gid %d %s, peer %s, path mtu %u, seed 0x%016llx", dev.name.c_str(),
	           dev.gid_index, gid_text(dev.gid).c_str(), chan.peer_name().c_str(), path_mtu,
	           (unsigned long long)opt.seed);
	return true;
}

bool Session::exchange_qp(const QpEnd &mine, const std::vector<RemoteMr> &mrs, QpEnd *theirs,
                          std::vector<RemoteMr> *their_mrs, std::string *why)
{
	std::vector<uint8_t> buf;
	Writer w;

	w.u32(mine.qpn).u32(mine.psn).bytes(mine.gid.raw, sizeof(mine.gid.raw));
	w.u32(uint32_t(mrs.size()));
	for (const RemoteMr &m : mrs)
		w.u64(m.addr).u32(m.rkey).u64(m.len);
	if (!chan.send(MsgType::qp_info, w, why) ||
	    !chan.recv(MsgType::qp_info, &buf, peer_timeout_ms(), why))
		return false;
	Reader r(buf);

	theirs->qpn = r.u32();
	theirs->psn = r.u32();
	r.bytes(theirs->gid.raw, sizeof(theirs->gid.raw));
	const uint32_t n = r.u32();

	their_mrs->clear();
	for (uint32_t i = 0; i < n && r.ok(); i++) {
		RemoteMr m;

		m.addr = r.u64();
		m.rkey = r.u32();
		m.len = r.u64();
		their_mrs->push_back(m);
	}
	if (!r.ok()) {
		*why = "short qp_info from the peer";
		return false;
	}
	return true;
}

bool Session::connect_to_peer(ibv_qp *qp, uint32_t psn, const std::vector<RemoteMr> &mrs,
                              size_t min_mrs, const QpParams &qpp, QpEnd *theirs,
                              std::vector<RemoteMr> *their_mrs, std::string *why)
{
	QpEnd mine;

	mine.qpn = qp->qp_num;
	mine.psn = psn;
	mine.gid = dev.gid;
	if (!exchange_qp(mine, mrs, theirs, their_mrs, why))
		return false;
	if (their_mrs->size() < min_mrs) {
		*why = "the peer sent too few memory regions";
		return false;
	}
	return connect_qp(qp, dev, qpp, mine, *theirs, why);
}

bool Session::give_up(const std::string &why)
{
	log().fail("%s", why.c_str());
	chan.abort(why);
	return false;
}

bool Session::requester_done(const std::string &tag)
{
	std::vector<uint8_t> buf;
	std::string why;

	if (!chan.send(MsgType::done, &why) ||
	    !chan.recv(MsgType::result, &buf, peer_timeout_ms(), &why))
		return give_up(tag + ": " + why);
	Reader r(buf);
	const uint32_t peer_failed = r.u32();

	if (peer_failed)
		log().fail("%s: the responder found %u problem(s) (see its log)", tag.c_str(),
		           peer_failed);
	return true;
}

bool Session::responder_done(const std::string &tag, uint64_t before)
{
	std::string why;
	Writer w;

	w.u32(uint32_t(log().failures() - before));
	if (!chan.send(MsgType::result, w, &why))
		return give_up(tag + ": " + why);
	return true;
}

uint8_t Session::rd_atomic() const
{
	return uint8_t(
	    std::clamp<uint32_t>(std::min(self.max_qp_init_rd_atom, peer.max_qp_rd_atom), 1, 16));
}

uint8_t Session::dest_rd_atomic() const
{
	return uint8_t(std::clamp<uint32_t>(self.max_qp_rd_atom, 1, 16));
}

QpParams Session::rc_params() const
{
	QpParams qpp;

	qpp.path_mtu = path_mtu;
	qpp.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	             (atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	qpp.max_rd_atomic = rd_atomic();
	qpp.max_dest_rd_atomic = dest_rd_atomic();
	return qpp;
}

} // namespace integ
