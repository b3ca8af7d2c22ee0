#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Print the kernel build tree to build sroce against: the running kernel's,
# or else the newest installed Debian 6.1 *-amd64 headers (the rig's default
# guest kernel), or else the newest of any (named on stderr).
# Prints nothing when neither exists.
set -u
running=/lib/modules/$(uname -r)/build
if [ -d "$running" ]; then
	echo "$running"
	exit 0
fi
# The test rig's default guest kernel (6.1) first, so that "make" builds the
# sroce.ko the default guests load also when 6.12 headers are installed.
newest=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$newest" ] || newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
if [ -n "$newest" ]; then
	echo "sroce: no headers for running kernel $(uname -r); using $newest" >&2
	echo "$newest"
fi
