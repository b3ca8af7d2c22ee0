#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Print the kernel build tree to build sroce against: the running kernel's,
# or else the newest installed Debian *-amd64 headers (named on stderr).
# Prints nothing when neither exists.
set -u
running=/lib/modules/$(uname -r)/build
if [ -d "$running" ]; then
	echo "$running"
	exit 0
fi
newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
if [ -n "$newest" ]; then
	echo "sroce: no headers for running kernel $(uname -r); using $newest" >&2
	echo "$newest"
fi
