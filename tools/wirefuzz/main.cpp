// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-wirefuzz: send hostile RoCEv2 packets to a live device over UDP
 * port 4791 (see wirefuzz.h). Run by selftests/wire_fuzz.sh from the peer
 * guest while the target runs verified traffic.
 */
#include "wirefuzz.h"

#include "clock.h"
#include "number.h"

#include <arpa/inet.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace
{

using namespace wirefuzz;
using sroce_tools::now_s;
using sroce_tools::parse_uint;

const char usage_text[] =
    "usage: sroce-wirefuzz -d DEST -s SOURCE [OPTIONS]\n"
    "       sroce-wirefuzz --selfcheck\n"
    "\n"
    "Sends crafted RoCEv2 packets from SOURCE (a local address, bound, as\n"
    "is the source port: both are in the ICRC) to DEST, UDP port 4791.\n"
    "\n"
    "  -d, --dest ADDR        target IPv4 or IPv6 address\n"
    "  -s, --source ADDR      local address of the same family\n"
    "  -P, --sport N          UDP source port (default 0xc000 + seed-derived)\n"
    "  -q, --qp QPN[:TYPE[:RQ_PSN[:SQ_PSN]]]  a QP of the target (TYPE rc, uc,\n"
    "                         ud, gsi; PSNs: its initial ones), repeatable\n"
    "  -f, --qp-file FILE     the target's `rdma resource show qp` output\n"
    "  -k, --rkey N           an rkey of the target to try, repeatable\n"
    "  -S, --seed N           generator seed (default 1): same seed, same packets\n"
    "  -n, --count N          packets to send (default 10000)\n"
    "  -D, --duration SEC     stop after SEC seconds (default: no limit)\n"
    "  -r, --pps N            at most N packets per second (default: no limit)\n"
    "  -g, --guard N          PSNs a live QP may advance during the run\n"
    "                         (default 1048576; see the safety rule)\n"
    "  -m, --max-payload N    largest UDP payload (default 4152: MTU 4200)\n"
    "  -W, --hit-window       also send acceptable packets with PSNs a live QP\n"
    "                         may expect (breaks its connection, by design)\n"
    "  -F, --follow IFACE     with -W: watch this host's own RoCE traffic with the\n"
    "                         target on IFACE (AF_PACKET) and aim at the PSNs its\n"
    "                         QPs expect right now (needs the rqpn of -f; the\n"
    "                         packets then depend on the traffic, not only the seed)\n"
    "      --dry-run          craft and count, send nothing\n"
    "      --selfcheck        device-free checks of the crafter (KTAP)\n"
    "  -v, --verbose          one line per packet\n"
    "\n"
    "Safety rule: without --hit-window, a packet the receiver would accept\n"
    "never carries a PSN its live RC QP may still expect, and never goes to\n"
    "a UC or unknown QP (which accept any PSN); the PSNs a QP may expect are\n"
    "used for packets that must be dropped.\n"
    "\n"
    "Prints the packets sent per mutation class (\"class NAME N\"), what the\n"
    "receiver's checks should count (\"expect drop_REASON N\", \"expect reach_qp\n"
    "N\") and a summary line with a digest of every byte sent.\n";

struct Options {
	Config cfg;
	std::string dest, source;
	bool have_sport = false;
	uint64_t count = 10000;
	uint32_t duration = 0;
	uint32_t pps = 0;
	bool dry_run = false;
	bool verbose = false;
	std::string follow;
};

bool read_file(const char *path, std::string *out)
{
	std::ifstream in(path);
	std::stringstream ss;

	if (!in)
		return false;
	ss << in.rdbuf();
	*out = ss.str();
	return true;
}

bool parse_addr(const std::string &text, bool *ipv6, uint8_t out[16])
{
	std::memset(out, 0, 16);
	if (inet_pton(AF_INET, text.c_str(), out) == 1) {
		*ipv6 = false;
		return true;
	}
	*ipv6 = true;
	return inet_pton(AF_INET6, text.c_str(), out) == 1;
}

/* 0: go on; 1: done (help); 2: usage error. */
int parse_options(int argc, char **argv, Options *o, bool *selfcheck)
{
	enum { OPT_DRY = 1000, OPT_SELFCHECK };
	static const option longopts[] = {
	    {"dest", required_argument, nullptr, 'd'},
	    {"source", required_argument, nullptr, 's'},
	    {"sport", required_argument, nullptr, 'P'},
	    {"qp", required_argument, nullptr, 'q'},
	    {"qp-file", required_argument, nullptr, 'f'},
	    {"rkey", required_argument, nullptr, 'k'},
	    {"seed", required_argument, nullptr, 'S'},
	    {"count", required_argument, nullptr, 'n'},
	    {"duration", required_argument, nullptr, 'D'},
	    {"pps", required_argument, nullptr, 'r'},
	    {"guard", required_argument, nullptr, 'g'},
	    {"max-payload", required_argument, nullptr, 'm'},
	    {"hit-window", no_argument, nullptr, 'W'},
	    {"follow", required_argument, nullptr, 'F'},
	    {"dry-run", no_argument, nullptr, OPT_DRY},
	    {"selfcheck", no_argument, nullptr, OPT_SELFCHECK},
	    {"verbose", no_argument, nullptr, 'v'},
	    {"help", no_argument, nullptr, 'h'},
	    {nullptr, 0, nullptr, 0},
	};
	Config &cfg = o->cfg;
	std::string text, why;
	uint64_t v;
	Target t;
	int c;

	while ((c = getopt_long(argc, argv, "d:s:P:q:f:k:S:n:D:r:g:m:WF:vh", longopts, nullptr)) !=
	       -1) {
		const char *bad = nullptr;

		switch (c) {
		case 'd':
			o->dest = optarg;
			break;
		case 's':
			o->source = optarg;
			break;
		case 'P':
			if (!parse_uint(optarg, 0, 65535, &v) || !v)
				bad = "--sport";
			cfg.ep.sport = uint16_t(v);
			o->have_sport = true;
			break;
		case 'q':
			if (!parse_qp_spec(optarg, &t))
				bad = "--qp";
			cfg.targets.push_back(t);
			break;
		case 'f':
			if (!read_file(optarg, &text)) {
				std::fprintf(stderr, "sroce-wirefuzz: cannot read %s\n", optarg);
				return 2;
			}
			if (!parse_qp_listing(text, &cfg.targets, &why)) {
				std::fprintf(stderr, "sroce-wirefuzz: %s: %s\n", optarg,
				             why.c_str());
				return 2;
			}
			break;
		case 'k':
			if (!parse_uint(optarg, 0, 0xffffffffu, &v))
				bad = "--rkey";
			cfg.rkeys.push_back(uint32_t(v));
			break;
		case 'S':
			if (!parse_uint(optarg, 0, ~0ull, &cfg.seed))
				bad = "--seed";
			break;
		case 'n':
			if (!parse_uint(optarg, 0, ~0ull, &o->count))
				bad = "--count";
			break;
		case 'D':
			if (!parse_uint(optarg, 0, 86400, &v))
				bad = "--duration";
			o->duration = uint32_t(v);
			break;
		case 'r':
			if (!parse_uint(optarg, 0, 10000000, &v))
				bad = "--pps";
			o->pps = uint32_t(v);
			break;
		case 'g':
			if (!parse_uint(optarg, 0, 0x400000, &v) || !v)
				bad = "--guard";
			cfg.guard = uint32_t(v);
			break;
		case 'm':
			if (!parse_uint(optarg, 0, 65507, &v) ||
			    v < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
				bad = "--max-payload";
			cfg.max_payload = size_t(v);
			break;
		case 'W':
			cfg.hit_window = true;
			break;
		case 'F':
			o->follow = optarg;
			break;
		case OPT_DRY:
			o->dry_run = true;
			break;
		case OPT_SELFCHECK:
			*selfcheck = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			std::fputs(usage_text, stdout);
			return 1;
		default:
			return 2;
		}
		if (bad) {
			std::fprintf(stderr, "sroce-wirefuzz: bad %s '%s'\n", bad, optarg);
			return 2;
		}
	}
	if (optind != argc) {
		std::fprintf(stderr, "sroce-wirefuzz: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (*selfcheck)
		return 0;
	bool v6_src = false;

	if (o->dest.empty() || o->source.empty()) {
		std::fputs("sroce-wirefuzz: --dest and --source are required\n", stderr);
		return 2;
	}
	if (!parse_addr(o->dest, &cfg.ep.ipv6, cfg.ep.dst) ||
	    !parse_addr(o->source, &v6_src, cfg.ep.src) || v6_src != cfg.ep.ipv6) {
		std::fputs("sroce-wirefuzz: --dest and --source: addresses of one family\n",
		           stderr);
		return 2;
	}
	if (!o->have_sport) {
		uint64_t s = cfg.seed;

		cfg.ep.sport = uint16_t(SROCE_UDP_SPORT_MIN + sroce_tools::splitmix64(&s) % 0x3fff);
	}
	return 0;
}

/* A UDP socket bound to the source address and port. */
int open_socket(const Endpoints &ep)
{
	const int fd = socket(ep.ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
	sockaddr_storage ss = {};
	socklen_t len;
	int on = IP_PMTUDISC_DO;

	if (fd < 0)
		return -1;
	if (ep.ipv6) {
		auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ep.sport);
		std::memcpy(&a->sin6_addr, ep.src, 16);
		len = sizeof(*a);
		on = IPV6_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &on, sizeof(on));
	} else {
		auto *a = reinterpret_cast<sockaddr_in *>(&ss);

		a->sin_family = AF_INET;
		a->sin_port = htons(ep.sport);
		std::memcpy(&a->sin_addr, ep.src, 4);
		len = sizeof(*a);
		/* DF with IP ID 0 on an unconnected socket: the ICRC covers both. */
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &on, sizeof(on));
	}
	if (bind(fd, reinterpret_cast<sockaddr *>(&ss), len)) {
		const int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

sockaddr_storage dest_addr(const Endpoints &ep, socklen_t *len)
{
	sockaddr_storage ss = {};

	if (ep.ipv6) {
		auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(SROCE_UDP_PORT);
		std::memcpy(&a->sin6_addr, ep.dst, 16);
		*len = sizeof(*a);
	} else {
		auto *a = reinterpret_cast<sockaddr_in *>(&ss);

		a->sin_family = AF_INET;
		a->sin_port = htons(SROCE_UDP_PORT);
		std::memcpy(&a->sin_addr, ep.dst, 4);
		*len = sizeof(*a);
	}
	return ss;
}

/* What the receive path should make of a packet: a drop reason, or -1
 * when it reaches an existing QP's engine.
 */
int expected_outcome(const Config &cfg, const Verdict &v)
{
	if (v.reason)
		return v.reason;
	const struct sroce_opcode_info *info = sroce_opcode_get(v.opcode);

	if (v.dqpn == SROCE_MCAST_QPN)
		return info->transport == SROCE_TRANSPORT_UD ? SROCE_DROP_NO_QP
		                                             : SROCE_DROP_BAD_QP_TYPE;
	for (const Target &t : cfg.targets) {
		if (t.qpn != v.dqpn)
			continue;
		const bool fits = t.type == QpType::unknown ||
		                  (t.type == QpType::rc && info->transport == SROCE_TRANSPORT_RC) ||
		                  (t.type == QpType::uc && info->transport == SROCE_TRANSPORT_UC) ||
		                  ((t.type == QpType::ud || t.type == QpType::gsi) &&
		                   info->transport == SROCE_TRANSPORT_UD);

		return fits ? -1 : SROCE_DROP_BAD_QP_TYPE;
	}
	return SROCE_DROP_NO_QP;
}

/*
 * --follow: this host's real RoCE traffic with the target, seen on an
 * AF_PACKET socket, tells which PSNs the target's QPs expect right now.
 */
class Follower
{
      public:
	bool open(const std::string &iface)
	{
		const unsigned idx = if_nametoindex(iface.c_str());
		sockaddr_ll sll = {};

		fd_ = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, htons(ETH_P_ALL));
		if (!idx || fd_ < 0)
			return false;
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = int(idx);
		return bind(fd_, reinterpret_cast<sockaddr *>(&sll), sizeof(sll)) == 0;
	}

	~Follower()
	{
		if (fd_ >= 0)
			close(fd_);
	}

	/* Read what arrived since the last call; returns the packets seen. */
	unsigned poll(const Config &cfg, Crafter *cr)
	{
		uint8_t buf[256];
		unsigned n = 0;

		for (int i = 0; fd_ >= 0 && i < 512; i++) {
			sockaddr_ll from = {};
			socklen_t fl = sizeof(from);
			const ssize_t len = recvfrom(fd_, buf, sizeof(buf), MSG_TRUNC,
			                             reinterpret_cast<sockaddr *>(&from), &fl);

			if (len < 0)
				break;
			n += see(cfg, cr, buf, std::min(size_t(len), sizeof(buf)),
			         from.sll_pkttype == PACKET_OUTGOING);
		}
		return n;
	}

      private:
	/* One IP packet; only UDP 4791 between the two hosts counts. */
	static unsigned see(const Config &cfg, Crafter *cr, const uint8_t *p, size_t len,
	                    bool outgoing)
	{
		const Endpoints &ep = cfg.ep;
		const size_t l3 = ep.ipv6 ? SROCE_IPV6_HDR_BYTES : SROCE_IPV4_HDR_BYTES;
		const size_t alen = ep.ipv6 ? 16 : 4;
		const uint8_t *src = p + (ep.ipv6 ? 8 : 12), *dst = src + alen;

		if (len < l3 + SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES || sroce_l3_hdr_len(p) != l3 ||
		    p[ep.ipv6 ? 6 : 9] != SROCE_IPPROTO_UDP)
			return 0;
		const uint8_t *udp = p + l3, *bth = udp + SROCE_UDP_HDR_BYTES;
		const struct sroce_opcode_info *info = sroce_opcode_get(bth[0]);
		const uint32_t qpn = sroce_get_be24(bth + 5);
		const uint32_t next = sroce_psn_add(sroce_get_be24(bth + 9), 1);

		if (sroce_get_be16(udp + 2) != SROCE_UDP_PORT || !info ||
		    sroce_get_be16(udp) == ep.sport)
			return 0; /* not RoCE, or one of ours */
		const bool request = info->flags & SROCE_OPF_REQUEST;

		if (outgoing && !std::memcmp(src, ep.src, alen) &&
		    !std::memcmp(dst, ep.dst, alen)) {
			/* Our requests to target QP qpn: its responder is next. */
			if (request)
				cr->observe(qpn, true, next);
			return 1;
		}
		if (outgoing || std::memcmp(src, ep.dst, alen) || std::memcmp(dst, ep.src, alen))
			return 0;
		for (const Target &t : cfg.targets) {
			if (!t.has_rqpn || t.rqpn != qpn)
				continue;
			/* Its requests: its requester's window ends here; its ACKs:
			 * its responder took everything up to here.
			 */
			cr->observe(t.qpn, !request, next);
		}
		return 1;
	}

	int fd_ = -1;
};

int run(const Options &o)
{
	const Config &cfg = o.cfg;
	Crafter cr(cfg);
	uint64_t per_class[C_NUM] = {};
	uint64_t expect[SROCE_DROP_NUM] = {};
	uint64_t reach = 0, sent = 0, errors = 0, bytes = 0;
	uint64_t digest = 0xcbf29ce484222325ull;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	int fd = -1;
	socklen_t dlen = 0;
	const sockaddr_storage da = dest_addr(cfg.ep, &dlen);
	Follower follower;
	uint64_t followed = 0;

	inet_ntop(cfg.ep.ipv6 ? AF_INET6 : AF_INET, cfg.ep.src, src, sizeof(src));
	inet_ntop(cfg.ep.ipv6 ? AF_INET6 : AF_INET, cfg.ep.dst, dst, sizeof(dst));
	std::printf("sroce-wirefuzz: seed %llu, %s port %u -> %s port %u, %zu target QPs, "
	            "guard %u%s%s\n",
	            (unsigned long long)cfg.seed, src, cfg.ep.sport, dst, SROCE_UDP_PORT,
	            cfg.targets.size(), cfg.guard, cfg.hit_window ? ", hitting live windows" : "",
	            o.dry_run ? ", dry run" : "");
	for (const Target &t : cfg.targets)
		std::printf("target qpn %u state %s rq_psn %s%u sq_psn %s%u\n", t.qpn,
		            t.state.empty() ? "?" : t.state.c_str(), t.has_rq_psn ? "" : "?",
		            t.rq_psn, t.has_sq_psn ? "" : "?", t.sq_psn);
	std::fflush(stdout);
	if (!o.follow.empty() && !follower.open(o.follow)) {
		std::fprintf(stderr, "sroce-wirefuzz: cannot watch %s: %s\n", o.follow.c_str(),
		             std::strerror(errno));
		return 1;
	}
	if (!o.dry_run) {
		fd = open_socket(cfg.ep);
		if (fd < 0) {
			std::fprintf(stderr, "sroce-wirefuzz: socket on %s port %u: %s\n", src,
			             cfg.ep.sport, std::strerror(errno));
			return 1;
		}
	}

	const double start = now_s();
	double elapsed = 0;

	while (sent + errors < o.count) {
		if (!o.follow.empty() && (sent & 15) == 0)
			followed += follower.poll(cfg, &cr);
		const Datagram d = cr.next();
		const Verdict v = cr.judge(d.bytes);
		const int out = expected_outcome(cfg, v);

		for (uint8_t byte : d.bytes)
			digest = (digest ^ byte) * 0x100000001b3ull;
		digest = (digest ^ d.bytes.size()) * 0x100000001b3ull;
		if (o.verbose)
			std::printf("%-12s op 0x%02x qpn 0x%06x psn 0x%06x len %4zu -> %s\n",
			            class_name(d.cls), v.opcode, v.dqpn, v.psn, d.bytes.size(),
			            out < 0 ? "qp" : sroce_drop_reason_name(unsigned(out)));
		if (!o.dry_run && sendto(fd, d.bytes.data(), d.bytes.size(), 0,
		                         reinterpret_cast<const sockaddr *>(&da), dlen) < 0) {
			errors++;
			if (errno == ENOBUFS || errno == EAGAIN)
				usleep(1000);
			continue;
		}
		sent++;
		bytes += d.bytes.size();
		per_class[d.cls]++;
		if (out < 0)
			reach++;
		else
			expect[out]++;
		if ((sent & 63) == 0 || o.pps) {
			elapsed = now_s() - start;
			if (o.duration && elapsed >= o.duration)
				break;
			if (o.pps && sent > elapsed * o.pps)
				usleep(useconds_t((double(sent) / o.pps - elapsed) * 1e6));
		}
	}
	elapsed = now_s() - start;
	if (fd >= 0)
		close(fd);

	for (int c = 0; c < C_NUM; c++)
		std::printf("class %s %llu\n", class_name(c), (unsigned long long)per_class[c]);
	for (unsigned r = 1; r < SROCE_DROP_NUM; r++)
		if (expect[r])
			std::printf("expect drop_%s %llu\n", sroce_drop_reason_name(r),
			            (unsigned long long)expect[r]);
	std::printf("expect reach_qp %llu\n", (unsigned long long)reach);
	if (!o.follow.empty())
		std::printf("followed %llu packets of the peers' own traffic\n",
		            (unsigned long long)followed);
	std::printf("sroce-wirefuzz: sent %llu packets, %llu bytes, %llu send errors, in %.1f s "
	            "(%.0f/s); %llu PSNs moved before live windows, %llu QPNs moved off UC or "
	            "unknown QPs; digest %016llx\n",
	            (unsigned long long)sent, (unsigned long long)bytes, (unsigned long long)errors,
	            elapsed, elapsed > 0 ? sent / elapsed : 0.0, (unsigned long long)cr.moved(),
	            (unsigned long long)cr.retargeted(), (unsigned long long)digest);
	return sent ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	bool check = false;
	const int rc = parse_options(argc, argv, &o, &check);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (check)
		return selfcheck();
	setvbuf(stdout, nullptr, _IOLBF, 0);
	return run(o);
}
