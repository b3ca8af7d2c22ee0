/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The work of one round, computed identically by both hosts from the seed:
 * which operations the requester issues (opcode, length, remote offset,
 * immediate, atomic operands), what the atomic words hold before and after,
 * and the payload of every operation. Each side adds its own private
 * choices (SGE layouts, inline, signalling) from a stream of its own.
 */
#pragma once

#include "prng.h"

#include <array>
#include <cstdint>
#include <vector>

namespace integ
{

/* The deterministic streams of tools/common/prng.h. */
using namespace sroce_tools;

enum class OpKind : uint8_t {
	send,
	send_imm,
	write,
	write_imm,
	read,
	cmp_swap,
	fetch_add,
	count,
};

constexpr unsigned kOpKinds = unsigned(OpKind::count);
constexpr uint32_t op_bit(OpKind k)
{
	return 1u << unsigned(k);
}
constexpr uint32_t kAllOps = (1u << kOpKinds) - 1;
constexpr uint32_t kAtomicOps = op_bit(OpKind::cmp_swap) | op_bit(OpKind::fetch_add);
/* What an unreliable connection can carry. */
constexpr uint32_t kUcOps = op_bit(OpKind::send) | op_bit(OpKind::send_imm) |
                            op_bit(OpKind::write) | op_bit(OpKind::write_imm);

const char *op_name(OpKind k);
/* "send,write,..." -> mask; false on an unknown name. */
bool parse_ops(const char *list, uint32_t *mask);

inline bool is_send(OpKind k)
{
	return k == OpKind::send || k == OpKind::send_imm;
}
inline bool is_write(OpKind k)
{
	return k == OpKind::write || k == OpKind::write_imm;
}
inline bool is_atomic(OpKind k)
{
	return k == OpKind::cmp_swap || k == OpKind::fetch_add;
}
inline bool has_imm(OpKind k)
{
	return k == OpKind::send_imm || k == OpKind::write_imm;
}
/* Consumes a receive WQE at the responder. */
inline bool uses_recv(OpKind k)
{
	return is_send(k) || k == OpKind::write_imm;
}
/* The requester's local buffer is the source (false: it is the sink). */
inline bool local_is_source(OpKind k)
{
	return is_send(k) || is_write(k);
}

constexpr unsigned kAtomicWords = 4;
/* Bytes in front of and behind every region that must stay untouched. */
constexpr uint32_t kGuard = 64;
/* Largest random start offset of a region (unaligned on purpose). */
constexpr uint32_t kMaxStartOffset = 63;
/* Largest gap between two SGEs of one work request. */
constexpr uint32_t kMaxSgeGap = 15;

struct Op {
	OpKind kind;
	uint32_t len;        /* bytes; 8 for atomics */
	uint32_t remote_off; /* in the responder's slot (WRITE, READ) */
	uint32_t imm;        /* immediate, as it goes on the wire */
	uint32_t word;       /* atomic word index */
	uint64_t compare;    /* CMP_AND_SWP compare value */
	uint64_t swap_add;   /* swap value or addend */
	uint64_t orig;       /* the value the atomic must return */
	bool fence;
};

struct PlanConfig {
	uint32_t ops_mask[2]; /* [0]: the client requests, [1]: the server */
	uint32_t max_size;
	uint32_t mtu;
	uint32_t batch; /* at most this many operations per round */
	bool uc;
	bool client_only; /* only the client requests */
	bool server_only; /* only the server requests */
};

struct RoundPlan {
	uint32_t round;
	bool client_requests; /* the client is the requester in this round */
	std::vector<Op> ops;
	std::array<uint64_t, kAtomicWords> words_before;
	std::array<uint64_t, kAtomicWords> words_after;
};

RoundPlan make_plan(const PlanConfig &cfg, uint64_t seed, uint32_t round);

/* Payload of operation @index of @round: @len bytes into @out. */
void op_payload(uint64_t seed, uint32_t round, uint32_t index, uint8_t *out, uint32_t len);

/* Size of one per-operation slot of the data buffers. */
uint32_t slot_size(uint32_t max_size, uint32_t max_sge);

/* One SGE: @len bytes at @off in an operation's slot, through MR @mr. */
struct Piece {
	uint32_t off;
	uint32_t len;
	uint8_t mr;
};

/*
 * Where a work request's bytes live in its slot: pieces in order, with
 * random gaps; everything in [0, end) other than the pieces is poison.
 */
struct Layout {
	std::vector<Piece> pieces;
	uint32_t end;
};

/*
 * A layout of @bytes bytes in at most @max_sge pieces (at least one unless
 * @bytes is 0, when zero pieces may come out), each through one of
 * @nr_mrs MRs.
 */
Layout make_layout(Rng &rng, uint32_t bytes, uint32_t max_sge, unsigned nr_mrs);

} // namespace integ
