/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Reading the sroce device's sysfs attributes: device matching and fw_ver.
 */
#ifndef SROCE_SYSFS_H
#define SROCE_SYSFS_H

#include <cstddef>
#include <cstdint>

struct verbs_sysfs_dev;

namespace sroce
{

/*
 * Reads the attribute file @dir/@name into @buf (NUL-terminated, one
 * trailing newline removed). Returns the length, or -1 if the file cannot
 * be read or does not fit.
 */
int sysfs_read(const char *dir, const char *name, char *buf, size_t size);

/* Parses the contents of SROCE_SYSFS_DRIVER_ATTR: a decimal number. */
bool parse_abi_version(const char *text, uint32_t *version);

/*
 * verbs_device_ops.match_device: claims any device whose ib_device has the
 * SROCE_SYSFS_DRIVER_ATTR attribute with our ABI version, whatever its name.
 */
bool match_device(verbs_sysfs_dev *sysfs_dev);

} /* namespace sroce */

#endif /* SROCE_SYSFS_H */
