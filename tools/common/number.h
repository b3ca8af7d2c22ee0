/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Whole numbers from command lines and listings.
 */
#pragma once

#include <cstdint>

namespace sroce_tools
{

/*
 * @text as a whole number in [@min, @max]: all of it (no sign, nothing
 * after the digits), decimal or, with @base 0, also 0x hex and 0 octal.
 * False, with *@out untouched, for anything else.
 */
bool parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out, int base = 0);

/* The same into a narrower type (@max must fit it). */
template <typename T>
bool parse_uint_into(const char *text, uint64_t min, uint64_t max, T *out, int base = 0)
{
	uint64_t v;

	if (!parse_uint(text, min, max, &v, base))
		return false;
	*out = T(v);
	return true;
}

} // namespace sroce_tools
