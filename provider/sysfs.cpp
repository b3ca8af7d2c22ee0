// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sysfs attributes of an sroce ib_device. Control path only.
 */
#include "sysfs.h"

#include "util.h"
#include "verbs_private.h"

#include <rdma/sroce-abi.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

namespace sroce
{

int sysfs_read(const char *dir, const char *name, char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX + 64];
	ssize_t len;

	if (size < 2 || snprintf(path, sizeof(path), "%s/%s", dir, name) >= int(sizeof(path)))
		return -1;
	UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
	if (fd.get() < 0)
		return -1;
	len = read(fd.get(), buf, size);
	if (len < 0 || size_t(len) == size)
		return -1; /* error, or too long to terminate */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return int(len);
}

bool parse_abi_version(const char *text, uint32_t *version)
{
	uint64_t v = 0;

	if (*text == '\0')
		return false;
	for (; *text; text++) {
		if (*text < '0' || *text > '9')
			return false;
		v = v * 10 + uint64_t(*text - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*version = uint32_t(v);
	return true;
}

bool match_device(verbs_sysfs_dev *sysfs_dev)
{
	char buf[32];
	uint32_t version;

	if (sysfs_read(sysfs_dev->ibdev_path, SROCE_SYSFS_DRIVER_ATTR, buf, sizeof(buf)) < 0 ||
	    !parse_abi_version(buf, &version))
		return false; /* not an sroce device */
	if (version != SROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
		        "libsroce: warning: %s has sroce ABI %u, this provider supports %u only\n",
		        sysfs_dev->ibdev_name, version, SROCE_UVERBS_ABI_VERSION);
		return false;
	}
	return true;
}

} /* namespace sroce */
