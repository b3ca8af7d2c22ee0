// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Anonymous private memory (see mapping.h).
 */
#include "mapping.h"

#include <sys/mman.h>

namespace sroce_tools
{

bool Mapping::map(size_t length, int prot)
{
	unmap();
	void *p = mmap(nullptr, length, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return false;
	addr_ = p;
	length_ = length;
	return true;
}

void Mapping::unmap()
{
	if (addr_)
		munmap(addr_, length_);
	addr_ = nullptr;
	length_ = 0;
}

} // namespace sroce_tools
