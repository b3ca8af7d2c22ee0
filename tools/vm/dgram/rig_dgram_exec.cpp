// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rig-dgram-exec: the UDP socket of one end of the rig's virtual link.
 *
 *   rig-dgram-exec LOCAL_PORT REMOTE_PORT BUF_BYTES -- PROGRAM ARGS...
 *
 * Opens a UDP socket bound to 127.0.0.1:LOCAL_PORT and connected to
 * 127.0.0.1:REMOTE_PORT, gives it BUF_BYTES of receive and send buffer and
 * runs PROGRAM with the socket left open; every "{fd}" in ARGS becomes its
 * descriptor number (qemu: -netdev dgram,id=n0,local.type=fd,local.str={fd}).
 *
 * Why: with qemu opening the socket itself, it gets the host's default
 * receive buffer (net.core.rmem_default, 208 KiB: about 25 frames of 4 KiB
 * by truesize). Whenever the receiving guest's vCPU is not scheduled for a
 * moment (two guests on a busy two-core host), a burst larger than that is
 * dropped by the host's UDP layer (RcvbufErrors in /proc/net/snmp). A real
 * Ethernet link does not lose frames like that; tests that want loss ask for
 * it with netem (RIG_NETEM). As root the buffer is forced past
 * net.core.rmem_max (SO_RCVBUFFORCE); otherwise it is capped there.
 */
#include "number.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace
{

using sroce_tools::parse_uint_into;

void set_buf(int fd, int force_opt, int opt, int bytes, const char *what)
{
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) == 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) != 0)
		std::fprintf(stderr, "rig-dgram-exec: %s: %s\n", what, std::strerror(errno));
}

sockaddr_in loopback(unsigned long port)
{
	sockaddr_in a{};

	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<uint16_t>(port));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

} // namespace

int main(int argc, char **argv)
{
	unsigned long lport, rport, buf;

	if (argc < 6 || std::strcmp(argv[4], "--") != 0 ||
	    !parse_uint_into(argv[1], 0, 65535, &lport, 10) ||
	    !parse_uint_into(argv[2], 0, 65535, &rport, 10) ||
	    !parse_uint_into(argv[3], 0, 1UL << 30, &buf, 10)) {
		std::fprintf(stderr, "usage: rig-dgram-exec LOCAL_PORT REMOTE_PORT BUF_BYTES -- "
		                     "PROGRAM ARGS...\n");
		return 2;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		std::perror("rig-dgram-exec: socket");
		return 1;
	}
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, static_cast<int>(buf), "receive buffer");
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, static_cast<int>(buf), "send buffer");
	sockaddr_in l = loopback(lport), r = loopback(rport);
	if (bind(fd, reinterpret_cast<sockaddr *>(&l), sizeof(l)) != 0) {
		std::fprintf(stderr, "rig-dgram-exec: bind 127.0.0.1:%lu: %s\n", lport,
		             std::strerror(errno));
		return 1;
	}
	if (connect(fd, reinterpret_cast<sockaddr *>(&r), sizeof(r)) != 0) {
		std::fprintf(stderr, "rig-dgram-exec: connect 127.0.0.1:%lu: %s\n", rport,
		             std::strerror(errno));
		return 1;
	}
	int flags = fcntl(fd, F_GETFD);
	if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) {
		std::perror("rig-dgram-exec: fcntl");
		return 1;
	}

	const std::string num = std::to_string(fd);
	std::vector<std::string> args(argv + 5, argv + argc);
	std::vector<char *> cargs;
	for (std::string &a : args) {
		for (size_t at = a.find("{fd}"); at != std::string::npos; at = a.find("{fd}", at))
			a.replace(at, 4, num);
		cargs.push_back(a.data());
	}
	cargs.push_back(nullptr);
	execvp(cargs[0], cargs.data());
	std::fprintf(stderr, "rig-dgram-exec: %s: %s\n", cargs[0], std::strerror(errno));
	return 127;
}
