/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The monotonic clock of the tools: deadlines in milliseconds, durations
 * in seconds.
 */
#pragma once

#include <cstdint>
#include <ctime>

namespace sroce_tools
{

/* CLOCK_MONOTONIC in milliseconds. */
inline int64_t now_ms()
{
	timespec ts{};

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

/* CLOCK_MONOTONIC in seconds. */
inline double now_s()
{
	timespec ts{};

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

} // namespace sroce_tools
