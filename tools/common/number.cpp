// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Whole numbers from command lines and listings (see number.h).
 */
#include "number.h"

#include <cerrno>
#include <cstdlib>

namespace sroce_tools
{

bool parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, int base)
{
	char *end = nullptr;

	if (text[0] == '-')
		return false;
	errno = 0;
	const unsigned long long v = std::strtoull(text, &end, base);

	if (errno || end == text || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

} // namespace sroce_tools
