// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Output of sroce-integrity (see log.h).
 */
#include "log.h"

#include <cstdarg>
#include <cstdio>

namespace integ
{

namespace
{

void emit(const char *side, const char *tag, const char *fmt, va_list ap)
{
	std::printf("[%s] %s", side, tag);
	std::vprintf(fmt, ap);
	std::putchar('\n');
	std::fflush(stdout);
}

} // namespace

Log &log()
{
	static Log instance;

	return instance;
}

void Log::info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(side_, "", fmt, ap);
	va_end(ap);
}

void Log::debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose_)
		return;
	va_start(ap, fmt);
	emit(side_, "debug: ", fmt, ap);
	va_end(ap);
}

void Log::fail(const char *fmt, ...)
{
	va_list ap;

	failures_++;
	if (failures_ > kMaxFailLines) {
		if (failures_ == kMaxFailLines + 1)
			std::printf("[%s] ERROR: more errors follow, not printed\n", side_);
		return;
	}
	va_start(ap, fmt);
	emit(side_, "ERROR: ", fmt, ap);
	va_end(ap);
}

} // namespace integ
