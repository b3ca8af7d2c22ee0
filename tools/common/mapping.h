/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Private memory for the tools' buffers, anonymous or a file's, unmapped with
 * its owner; and a fork that makes it copy-on-write.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace sroce_tools
{

class Mapping
{
      public:
	Mapping() = default;
	/* ok() says whether it worked (errno set when not). */
	Mapping(size_t length, int prot) { map(length, prot); }
	~Mapping() { unmap(); }
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;

	/* @length bytes with @prot, zero-filled, instead of what it held;
	 * false (and empty) with errno set when mmap failed. */
	bool map(size_t length, int prot);
	/* The first @length bytes of file @path, privately (writes stay here),
	 * with @prot; false (and empty) with errno set when it failed. */
	bool map_file(const char *path, size_t length, int prot);

	bool ok() const { return addr_ != nullptr; }
	uint8_t *data() const { return static_cast<uint8_t *>(addr_); }
	size_t size() const { return length_; }
	uint64_t addr() const { return reinterpret_cast<uintptr_t>(addr_); }

      private:
	void unmap();

	void *addr_ = nullptr;
	size_t length_ = 0;
};

/*
 * Forks a child that exits at once, and reaps it: every private writable
 * page of the caller is copy-on-write afterwards, so a device's on-demand
 * (ODP) mappings of them are invalidated and its next write into one
 * faults in a new page; the data stays. false when the fork or the wait
 * failed.
 */
bool cow_fork();

} // namespace sroce_tools
