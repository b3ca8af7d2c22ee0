/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Command line of sroce-integrity. The client's run parameters (seed,
 * rounds, sizes, opcodes, cases) govern both sides: it sends them to the
 * server in its hello, so the server needs only the device options.
 */
#pragma once

#include <cstdint>
#include <string>

namespace integ
{

enum class Mode { run, errors, selfcheck, vanish, flush, order, exchange };

/* A byte to damage on purpose before checking it (run mode self-test). */
enum class Corrupt { none, recv, write, guard, read, atomic };

/* Which side plays the requester. */
enum Directions : uint32_t {
	kClientRequests = 1,
	kServerRequests = 2,
	kBothDirections = 3,
};

struct Options {
	Mode mode = Mode::run;
	std::string server; /* empty: be the server */
	std::string device;
	int gid_index = -1; /* -1: the first RoCEv2 GID of the address family */
	bool ipv6 = false;
	uint16_t port = 18600;
	uint32_t rounds = 16;  /* per direction */
	uint32_t duration = 0; /* seconds; 0: by rounds */
	/* local, client: the run ends once this file exists; empty: never. */
	std::string stop_file;
	uint64_t seed = 0;
	bool seed_set = false;
	uint32_t mtu = 0;      /* path MTU in bytes; 0: the port's active MTU */
	uint32_t max_size = 0; /* 0: three path MTUs */
	uint32_t max_sge = 8;
	uint32_t depth = 8;    /* work requests in flight */
	uint32_t batch = 16;   /* operations per round, at most */
	uint32_t ops_mask = 0; /* 0: every opcode the transport has */
	/* Opcodes when the client (server) is the requester; 0: ops_mask. */
	uint32_t client_ops = 0;
	uint32_t server_ops = 0;
	bool uc = false;
	uint32_t max_inline = 128;
	uint32_t timeout = 15; /* seconds, for every single wait */
	uint32_t connect_timeout = 60;
	uint32_t cases_mask = 0; /* 0: every error case */
	uint32_t directions = kBothDirections;
	/* vanish: the requester's local ACK timeout (4.096 us x 2^N) and retries. */
	uint8_t ack_timeout = 15;
	uint8_t retry_cnt = 5;
	/* exchange: pingpong's least share of held ACKs, in percent. */
	uint32_t min_held_pct = 25;
	bool lenient_recv_flush = false; /* local: see errors.cpp */
	bool srq = false;                /* local: receives through an SRQ */
	bool odp = false;                /* local: run's memory on demand (ODP) */
	uint32_t odp_churn_ms = 0;       /* local, --odp: fork every N ms; 0: never */
	Corrupt corrupt = Corrupt::none; /* local */
	bool verbose = false;
};

/* 0: parsed; 1: --help printed; 2: usage error (printed). */
int parse_options(int argc, char **argv, Options *opt);

constexpr uint32_t kMaxMessage = 8u << 20;

} // namespace integ
