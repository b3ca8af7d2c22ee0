/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Output of sroce-integrity: progress and diagnostics on stdout, one line
 * each, prefixed with the side ("client" or "server"). Every mismatch or
 * bad completion goes through fail(), which counts it; only the first
 * kMaxFailLines are printed in full.
 */
#pragma once

#include <cstdint>

namespace integ
{

class Log
{
      public:
	static constexpr uint64_t kMaxFailLines = 40;

	void set_side(const char *side) { side_ = side; }
	void set_verbose(bool verbose) { verbose_ = verbose; }
	bool verbose() const { return verbose_; }

	void info(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void debug(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

	uint64_t failures() const { return failures_; }

      private:
	const char *side_ = "-";
	bool verbose_ = false;
	uint64_t failures_ = 0;
};

Log &log();

} // namespace integ
