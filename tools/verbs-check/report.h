/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Result lines of sroce-verbs-check. Every check prints one line:
 *
 *   PASS name: what was checked
 *   FAIL name: what was checked: what went wrong
 *   SKIP name: why it could not be checked here
 *   info: a measured value (no verdict)
 *
 * and a subcommand ends with one "summary:" line. Names are stable
 * identifiers (dot-separated) that scripts may grep for.
 */
#ifndef SROCE_VERBS_CHECK_REPORT_H
#define SROCE_VERBS_CHECK_REPORT_H

#include "verbs_helpers.h"

#include <cstdarg>
#include <string>

namespace vc
{

/* "EINVAL" for EINVAL (tools/common/verbs_helpers.h). */
using sroce_tools::errno_name;

class Report
{
      public:
	explicit Report(const char *command) : command_(command) {}

	void pass(const std::string &name, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	void fail(const std::string &name, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	void skip(const std::string &name, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	void info(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

	/* PASS or FAIL with the same message; returns @ok. */
	bool check(bool ok, const std::string &name, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

	/*
	 * A verb that returns 0 or a positive errno (the libibverbs
	 * convention) must have returned 0.
	 */
	bool expect_ok(const std::string &name, int ret, const char *what);

	/* A verb must have failed with exactly @want. */
	bool expect_errno(const std::string &name, int got, int want, const char *what);

	/* Suppress PASS lines (loops print their first round only). */
	void set_quiet(bool quiet) { quiet_ = quiet; }
	/* Prefix for FAIL lines, e.g. "loop 3". */
	void set_context(const std::string &context) { context_ = context; }

	unsigned failures() const { return failed_; }

	/* Prints the summary line; returns the exit status (0 or 1). */
	int finish();

      private:
	void line(const char *tag, const std::string &name, const char *fmt, va_list ap);

	std::string command_;
	std::string context_;
	bool quiet_ = false;
	unsigned passed_ = 0;
	unsigned failed_ = 0;
	unsigned skipped_ = 0;
};

} /* namespace vc */

#endif /* SROCE_VERBS_CHECK_REPORT_H */
