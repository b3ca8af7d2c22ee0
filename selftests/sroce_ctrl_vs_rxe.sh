#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# sroce next to rdma_rxe in one guest, one after the other (both own UDP port
# 4791, so they cannot run at once): sroce0 is deleted, rdma_rxe loads and
# rxe0 is created on the same netdev; while rxe holds the port an sroce link
# is refused cleanly; rxe0 is deleted and rdma_rxe unloads; sroce0 comes
# back. For each device, "ibv_devinfo -v" and sroce-verbs-check devinfo,
# invalid and objects are saved, and two side-by-side tables are written
# for review (no verdict on the differences):
#   compare-devinfo.txt   ibv_devinfo -v, field by field (rxe | sroce)
#   compare-invalid.txt   the errno each invalid-argument check got
# The test fails only if the swap itself fails.
# timeout: 300
# place: stock-1@3
. "$(dirname "$0")/lib/guest.sh"
. "$(dirname "$0")/sroce_ctrl_lib.sh"
# A control-path test of sroce: sroce-sroce, or one sroce guest.
rig_suites sroce-sroce sroce

ctrl_init
ifc=$CTRL_IFACE
odir=$RIG_TEST_OUT

# collect DEV: everything we compare, from device DEV.
collect() {
	local d=$1
	ibv_devinfo -v -d "$d" >"$odir/ibv_devinfo-v.$d.txt" 2>&1 ||
		rig_fail "ibv_devinfo -v -d $d failed"
	ctrl_vc "devinfo.$d" 60 devinfo "$d" --state active >/dev/null ||
		rig_log "devinfo $d: checks failed (kept for the comparison)"
	ctrl_vc "invalid.$d" 120 invalid "$d" >/dev/null ||
		rig_log "invalid $d: checks failed (kept for the comparison)"
	ctrl_vc "objects.$d" 120 objects "$d" --loops 1 >/dev/null ||
		rig_log "objects $d: checks failed (kept for the comparison)"
	grep -h '^FAIL' "$odir/devinfo.$d.log" "$odir/invalid.$d.log" "$odir/objects.$d.log" |
		sed "s/^/    [$d] /"
}

collect sroce0

# Swap to rxe.
rdma link delete sroce0 || rig_fail "rdma link delete sroce0 failed"
ctrl_wait_gone sroce0 10 || rig_fail "sroce0 still registered"
! ctrl_udp_open || rig_fail "UDP port 4791 still open without sroce devices"
modprobe rdma_rxe || rig_fail "modprobe rdma_rxe failed after the last sroce device went away"
ctrl_udp_open || rig_fail "rdma_rxe loaded but nothing listens on UDP port 4791"
if rdma link add sroce9 type sroce netdev "$ifc" 2>"$odir/sroce-under-rxe.err"; then
	rig_fail "an sroce device was created while rdma_rxe owns UDP port 4791"
fi
rig_log "sroce link while rxe owns the port: refused ($(cat "$odir/sroce-under-rxe.err"))"
ctrl_wait_gone sroce9 5 || rig_fail "the refused sroce9 is registered"
rdma link add rxe0 type rxe netdev "$ifc" || rig_fail "rdma link add rxe0 failed"
ctrl_wait_state rxe0 ACTIVE 10 || rig_fail "rxe0 not ACTIVE"

collect rxe0

rdma link delete rxe0 || rig_fail "rdma link delete rxe0 failed"
ctrl_wait_gone rxe0 10 || rig_fail "rxe0 still registered"
modprobe -r rdma_rxe || rig_fail "modprobe -r rdma_rxe failed"
[ ! -d /sys/module/rdma_rxe ] || rig_fail "rdma_rxe still loaded"
! ctrl_udp_open || rig_fail "UDP port 4791 still open after rdma_rxe unloaded"
ctrl_link_add sroce0 "$ifc" || rig_fail "rdma link add sroce0 after rxe failed"
ctrl_vc devinfo.sroce0.again 60 devinfo sroce0 --state active >/dev/null ||
	rig_fail "sroce0 does not work after the swap back"

# "key: value" lines of ibv_devinfo -v; continuation lines join their key.
devinfo_kv() {
	awk '
	{
		line = $0
		if (match(line, /^[ \t]*[A-Za-z_][A-Za-z0-9_ .\[\]-]*:/)) {
			k = substr(line, RSTART, RLENGTH - 1)
			gsub(/[ \t]/, "", k)
			v = substr(line, RSTART + RLENGTH)
			gsub(/^[ \t]+|[ \t]+$/, "", v)
			n[k]++
			if (n[k] > 1)
				k = k "#" n[k]
			cur = k
			order[++m] = k
			val[k] = v
		} else {
			v = line
			gsub(/^[ \t]+|[ \t]+$/, "", v)
			if (v != "" && cur != "")
				val[cur] = val[cur] (val[cur] == "" ? "" : ",") v
		}
	}
	END { for (i = 1; i <= m; i++) printf "%s\t%s\n", order[i], val[order[i]] }
	' "$1"
}

# Observed result of each check: the errno, or PASS/FAIL for plain checks.
check_results() {
	awk '
	/^(PASS|FAIL) / {
		name = $2
		sub(/:$/, "", name)
		res = $1
		if ($1 == "PASS" && match($0, /: (E[A-Z0-9]+|0)$/))
			res = substr($0, RSTART + 2)
		else if (match($0, /got E[A-Z0-9]+/))
			res = substr($0, RSTART + 4, RLENGTH - 4) "(FAIL)"
		else if ($0 ~ /succeeded, want/)
			res = "0(FAIL)"
		printf "%s\t%s\n", name, res
	}
	/^info: unsupported: / {
		line = $0
		sub(/^info: unsupported: /, "", line)
		i = index(line, ": ")
		printf "unsupported:%s\t%s\n", substr(line, 1, i - 1), substr(line, i + 2)
	}
	' "$1"
}

# side_by_side A B TITLE_A TITLE_B: join two "key<TAB>value" lists.
side_by_side() {
	awk -F'\t' -v ta="$3" -v tb="$4" '
	FNR == NR { a[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 }; next }
	{ b[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
	END {
		printf "%-34s %-44s %-44s %s\n", "field", ta, tb, "diff"
		for (i = 1; i <= m; i++) {
			k = order[i]
			va = (k in a) ? a[k] : "-"
			vb = (k in b) ? b[k] : "-"
			printf "%-34s %-44s %-44s %s\n", k, va, vb, va == vb ? "" : "*"
		}
	}
	' "$1" "$2"
}

devinfo_kv "$odir/ibv_devinfo-v.rxe0.txt" >"$odir/kv.rxe0"
devinfo_kv "$odir/ibv_devinfo-v.sroce0.txt" >"$odir/kv.sroce0"
side_by_side "$odir/kv.rxe0" "$odir/kv.sroce0" rxe0 sroce0 >"$odir/compare-devinfo.txt"
check_results "$odir/invalid.rxe0.log" >"$odir/res.rxe0"
check_results "$odir/invalid.sroce0.log" >"$odir/res.sroce0"
side_by_side "$odir/res.rxe0" "$odir/res.sroce0" rxe0 sroce0 >"$odir/compare-invalid.txt"
rig_log "ibv_devinfo -v, rxe0 vs sroce0 (compare-devinfo.txt; * = differs):"
sed 's/^/    /' "$odir/compare-devinfo.txt"
rig_log "invalid-argument checks, rxe0 vs sroce0 (compare-invalid.txt; only differences):"
awk 'NR == 1 || $NF == "*"' "$odir/compare-invalid.txt" | sed 's/^/    /'
