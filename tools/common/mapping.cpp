// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Private memory, anonymous or a file's (see mapping.h).
 */
#include "mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

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

bool Mapping::map_file(const char *path, size_t length, int prot)
{
	unmap();
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	void *p = mmap(nullptr, length, prot, MAP_PRIVATE, fd, 0);
	int err = errno;

	close(fd);
	if (p == MAP_FAILED) {
		errno = err;
		return false;
	}
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

bool cow_fork()
{
	const pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return pid > 0 && waitpid(pid, nullptr, 0) == pid;
}

} // namespace sroce_tools
