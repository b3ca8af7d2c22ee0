/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The modes of sroce-integrity. Each returns the exit status: 0 when
 * both sides found nothing wrong, 1 otherwise.
 */
#pragma once

#include "options.h"

#include <cstdint>

namespace integ
{

/* run: random traffic with every opcode, every byte checked. */
int run_traffic(const Options &opt);

/* errors: the error-path cases, each on fresh QPs. */
int run_errors(const Options &opt);
/* flush: RDMA FLUSH from the client to the server (4: skipped). */
int run_flush(const Options &opt);
/* order: responses in request order behind a long READ, each case on fresh QPs. */
int run_order(const Options &opt);
/* exchange: ping-pong, symmetric and one-way SENDs (sroce's delayed ACK). */
int run_exchange(const Options &opt);
/* vanish: the responder's host goes away in the middle of a transfer. */
int run_vanish(const Options &opt);
/* selfcheck: the device-free parts, on the host (KTAP). */
int run_selfcheck();
/* "bad_rkey,rnr_zero,..." -> mask; false on an unknown name. */
bool parse_cases(const char *list, uint32_t *mask);
/* The names, comma separated, for --help. */
const char *case_names();

} // namespace integ
