#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The provider module links no C++ runtime, exports only sroce_wr_flush
# (include/sroce/sroce_ext.h), and every
# symbol it needs comes from libc or libibverbs' IBVERBS_PRIVATE_34.
#
# usage: check_so.sh path/to/libsroce-rdmav34.so
set -u
so=$1
fail=0

if ldd "$so" | grep -E 'libstdc\+\+|libgcc_s' >/dev/null; then
	echo "FAIL: $so needs a C++ runtime:"; ldd "$so"; fail=1
fi

exported=$(nm -D --defined-only "$so" | awk '{ print $3 }')
if [ "$exported" != sroce_wr_flush ]; then
	echo "FAIL: $so must export sroce_wr_flush and nothing else, exports:"
	echo "$exported"; fail=1
fi

# Undefined symbols: weak toolchain ones, GLIBC, or the private verbs ABI.
foreign=$(nm -D --undefined-only "$so" | awk '$1 == "U" { print $2 }' |
	grep -v -E '@(GLIBC_[0-9.]+|IBVERBS_PRIVATE_34|IBVERBS_1\.[0-9]+)$')
if [ -n "$foreign" ]; then
	echo "FAIL: $so needs symbols from elsewhere:"; echo "$foreign"; fail=1
fi

# (__cxa_finalize is glibc's, referenced by every shared object's crt code.)
if nm -D --undefined-only "$so" | awk '{ print $NF }' | grep -v '^__cxa_finalize@' |
	grep -E '^_Z|^__cxa_|^__gxx_' >/dev/null; then
	echo "FAIL: $so references C++ runtime symbols"; fail=1
fi

[ $fail -eq 0 ] && echo "ok: $so is self-contained, exports only sroce_wr_flush"
exit $fail
