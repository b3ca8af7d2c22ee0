#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# One human monitor (HMP) command to a running rig guest's qemu, its
# output on stdout (the monitor's line editing stripped):
#
#   tools/vm/monitor.sh RUN_DIR ROLE COMMAND...
#
# RUN_DIR is the run folder of tools/vm/run.sh (-o) started with
# --monitor, ROLE a or b; the monitor listens on 127.0.0.1
# (RUN_DIR/.rig/monitor-ROLE holds its port).
# For the state of the link, e.g.:
#   info network
#   info virtio-queue-status /machine/peripheral/nic0/virtio-backend 1
# (queue 0 receives, 1 sends). Nothing here leaves this machine.
set -uo pipefail

die() {
	echo "monitor: $*" >&2
	exit 1
}
[ $# -ge 3 ] || die "usage: monitor.sh RUN_DIR ROLE COMMAND..."
dir=$1 role=$2
shift 2
port=""
read -r port <"$dir/.rig/monitor-$role" 2>/dev/null || die "no monitor port in $dir/.rig/monitor-$role"
[[ "$port" =~ ^[0-9]+$ ]] || die "bad monitor port '$port'"
exec 3<>"/dev/tcp/127.0.0.1/$port" || die "guest $role: cannot connect to its monitor on port $port"

# drain SECONDS: print what the monitor says until it is quiet that long.
drain() {
	local line
	while IFS= read -r -t "$1" line <&3; do
		printf '%s\n' "$line"
	done
}

drain 0.3 >/dev/null # the greeting and the first prompt
printf '%s\n' "$*" >&3
# Line editing echoes each key with escape sequences; the prompt has no
# newline and ends up before the next output line.
drain 0.5 | sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r//g' -e 's/^(qemu) //' |
	grep -vF -e "$*" | grep -v "^$"
exec 3>&-
