// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Ring descriptors from the kernel: validation and mapping. Control path.
 */
#include "ring.h"

#include <sys/mman.h>

#include <utility>

namespace sroce
{

bool ring_info_valid(const sroce_ring_info &info, uint32_t min_stride, size_t page_size)
{
	const uint32_t n = info.num_entries;
	const uint64_t need = uint64_t(n) * info.stride + SROCE_RING_HDR_SIZE;

	if (n == 0 || n > SROCE_RING_MAX_ENTRIES || (n & (n - 1)) != 0)
		return false;
	if (info.stride < min_stride || info.stride % SROCE_RING_STRIDE_ALIGN != 0)
		return false;
	if (info.size < need || info.offset % page_size != 0)
		return false;
	return true;
}

int RingMapping::map(int cmd_fd, const sroce_ring_info &info, uint32_t min_stride, size_t page_size,
                     Ring *view)
{
	void *addr;

	if (!ring_info_valid(info, min_stride, page_size))
		return EPROTO;
	addr = mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
	            static_cast<off_t>(info.offset));
	if (addr == MAP_FAILED)
		return errno;
	reset();
	addr_ = addr;
	len_ = info.size;
	view->hdr = static_cast<sroce_ring_hdr *>(addr);
	view->num_entries = info.num_entries;
	view->stride = info.stride;
	return 0;
}

void RingMapping::reset()
{
	if (addr_)
		munmap(addr_, len_);
	addr_ = nullptr;
	len_ = 0;
}

void RingMapping::swap(RingMapping &other)
{
	std::swap(addr_, other.addr_);
	std::swap(len_, other.len_);
}

} /* namespace sroce */
