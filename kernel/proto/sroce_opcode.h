/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the BTH opcode table.
 *
 * One const entry per opcode value (SROCE_NUM_OPCODES of them); entries for
 * reserved, RD and otherwise unsupported opcodes are left empty and
 * sroce_opcode_get() returns NULL for them, so every opcode read from a
 * packet or a work request is range-checked by the lookup itself.
 */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include <sroce/sroce_wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Extension headers, in the order IBA 9.2 places them after the BTH. The
 * value is both the index into sroce_opcode_info.off[] and the bit number
 * of the matching SROCE_OPF_* flag.
 */
enum sroce_ext {
	SROCE_EXT_DETH,
	SROCE_EXT_XRCETH,
	SROCE_EXT_FETH,
	SROCE_EXT_RETH,
	SROCE_EXT_ATMETH,
	SROCE_EXT_AETH,
	SROCE_EXT_ATMACK,
	SROCE_EXT_IMMDT,
	SROCE_EXT_IETH,
	SROCE_EXT_NUM
};

enum sroce_opcode_flags {
	/* Extension headers present (bit n is enum sroce_ext n). */
	SROCE_OPF_DETH		= 1 << SROCE_EXT_DETH,
	SROCE_OPF_XRCETH	= 1 << SROCE_EXT_XRCETH,
	SROCE_OPF_FETH		= 1 << SROCE_EXT_FETH,
	SROCE_OPF_RETH		= 1 << SROCE_EXT_RETH,
	SROCE_OPF_ATMETH	= 1 << SROCE_EXT_ATMETH,
	SROCE_OPF_AETH		= 1 << SROCE_EXT_AETH,
	SROCE_OPF_ATMACK	= 1 << SROCE_EXT_ATMACK,
	SROCE_OPF_IMMDT		= 1 << SROCE_EXT_IMMDT,
	SROCE_OPF_IETH		= 1 << SROCE_EXT_IETH,
	SROCE_OPF_EXT_MASK	= (1 << SROCE_EXT_NUM) - 1,

	/* A payload may follow the headers (it may still be empty). */
	SROCE_OPF_PAYLOAD	= 1 << 9,

	/* Direction: sent by a requester, or by a responder. */
	SROCE_OPF_REQUEST	= 1 << 10,
	SROCE_OPF_RESPONSE	= 1 << 11,

	/* Position in a message; an ONLY packet has FIRST and LAST set. */
	SROCE_OPF_FIRST		= 1 << 12,
	SROCE_OPF_MIDDLE	= 1 << 13,
	SROCE_OPF_LAST		= 1 << 14,

	/* Kind of operation (exactly one is set). */
	SROCE_OPF_SEND		= 1 << 15,
	SROCE_OPF_WRITE		= 1 << 16,
	SROCE_OPF_READ		= 1 << 17,	/* request and responses */
	SROCE_OPF_ATOMIC	= 1 << 18,	/* CmpSwap, FetchAdd, ack */
	SROCE_OPF_FLUSH		= 1 << 19,
	SROCE_OPF_ATOMIC_WRITE	= 1 << 20,
	SROCE_OPF_ACK		= 1 << 21,	/* plain ACK/NAK */
	SROCE_OPF_CNP		= 1 << 22,

	/*
	 * An RC request the responder must answer (ACK/NAK, read response
	 * or atomic ACK); the requester keeps it until it is answered.
	 */
	SROCE_OPF_ACKABLE	= 1 << 23,
	/* The first packet of a message that consumes a receive WQE. */
	SROCE_OPF_RECV_WQE	= 1 << 24,
	/* The packet that completes a receive WQE (generates a CQE). */
	SROCE_OPF_COMPLETES	= 1 << 25,
	/* The BTH SE bit is meaningful (IBA 9.2). */
	SROCE_OPF_SOLICITABLE	= 1 << 26,
};

#define SROCE_OPF_ONLY		(SROCE_OPF_FIRST | SROCE_OPF_LAST)
#define SROCE_OPF_KIND_MASK						\
	(SROCE_OPF_SEND | SROCE_OPF_WRITE | SROCE_OPF_READ |		\
	 SROCE_OPF_ATOMIC | SROCE_OPF_FLUSH | SROCE_OPF_ATOMIC_WRITE |	\
	 SROCE_OPF_ACK | SROCE_OPF_CNP)

struct sroce_opcode_info {
	const char	*name;		/* IBA name, e.g. "RC_SEND_FIRST" */
	u32		flags;		/* SROCE_OPF_* */
	u8		transport;	/* enum sroce_transport */
	u8		hdr_len;	/* BTH + extension headers, bytes */
	u8		fixed_payload;	/* 0: any length; else exactly this */
	u8		off[SROCE_EXT_NUM]; /* from BTH start; 0: absent */
};

/*
 * sroce_opcode_get() - table entry for a BTH opcode.
 * Return: the entry, or NULL if the opcode is reserved or not supported.
 */
const struct sroce_opcode_info *sroce_opcode_get(u8 opcode);

/* Name of an opcode for debug output; "INVALID" for a NULL entry. */
const char *sroce_opcode_name(u8 opcode);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_OPCODE_H */
