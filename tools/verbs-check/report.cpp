// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Result lines of sroce-verbs-check (see report.h).
 */
#include "report.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace vc
{

void Report::line(const char *tag, const std::string &name, const char *fmt, va_list ap)
{
	std::printf("%s %s: ", tag, name.c_str());
	if (!context_.empty() && std::strcmp(tag, "FAIL") == 0)
		std::printf("[%s] ", context_.c_str());
	std::vprintf(fmt, ap);
	std::putchar('\n');
	std::fflush(stdout);
}

void Report::pass(const std::string &name, const char *fmt, ...)
{
	va_list ap;

	passed_++;
	if (quiet_)
		return;
	va_start(ap, fmt);
	line("PASS", name, fmt, ap);
	va_end(ap);
}

void Report::fail(const std::string &name, const char *fmt, ...)
{
	va_list ap;

	failed_++;
	va_start(ap, fmt);
	line("FAIL", name, fmt, ap);
	va_end(ap);
}

void Report::skip(const std::string &name, const char *fmt, ...)
{
	va_list ap;

	skipped_++;
	if (quiet_)
		return;
	va_start(ap, fmt);
	line("SKIP", name, fmt, ap);
	va_end(ap);
}

void Report::info(const char *fmt, ...)
{
	va_list ap;

	if (quiet_)
		return;
	std::fputs("info: ", stdout);
	va_start(ap, fmt);
	std::vprintf(fmt, ap);
	va_end(ap);
	std::putchar('\n');
	std::fflush(stdout);
}

bool Report::check(bool ok, const std::string &name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (ok) {
		passed_++;
		if (!quiet_)
			line("PASS", name, fmt, ap);
	} else {
		failed_++;
		line("FAIL", name, fmt, ap);
	}
	va_end(ap);
	return ok;
}

bool Report::expect_ok(const std::string &name, int ret, const char *what)
{
	if (ret == 0) {
		pass(name, "%s", what);
		return true;
	}
	if (ret < 0)
		fail(name, "%s: returned %d (a verb returns a positive errno)", what, ret);
	else
		fail(name, "%s: failed with %s", what, errno_name(ret).c_str());
	return false;
}

bool Report::expect_errno(const std::string &name, int got, int want, const char *what)
{
	if (got == want) {
		pass(name, "%s: %s", what, errno_name(want).c_str());
		return true;
	}
	if (got == 0)
		fail(name, "%s: succeeded, want %s", what, errno_name(want).c_str());
	else
		fail(name, "%s: got %s, want %s", what, errno_name(got).c_str(),
		     errno_name(want).c_str());
	return false;
}

int Report::finish()
{
	std::printf("summary: %s: %u passed, %u failed, %u skipped\n", command_.c_str(), passed_,
	            failed_, skipped_);
	std::fflush(stdout);
	return failed_ ? 1 : 0;
}

} /* namespace vc */
