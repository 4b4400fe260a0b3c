#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot an ISO in Bochs, headless and unattended.
# Usage: run-bochs.sh ISO CPU SERIAL_OUT [TIMEOUT_S] [NCPU]
#
# COM1 goes to SERIAL_OUT; Bochs's log to SERIAL_OUT's directory as
# <name>.bochs.log, its stdout (port 0xE9 output and terminal noise) as
# <name>.stdout.  Bochs's exit status means nothing (it exits 1 when the
# guest powers off, and sometimes segfaults while tearing down): judge a
# run by what the hypervisor printed.  Exits with `timeout`'s 124 when
# the run was killed, 0 otherwise.  With RUN_BOCHS_STREAM=1 the COM1
# output is also copied to this script's stdout as it arrives.  Port 0xE9
# is the hypervisor's alone (the guest cannot write it): its verdict is
# read from there (e9filter.py takes Bochs's own lines out).
# For tests/bench/trace_path.py only: RUN_BOCHS_RC=FILE gives the built-in
# debugger FILE's commands instead of "continue, quit", and
# RUN_BOCHS_MAGIC_BREAK=1 stops it at `xchg %bx,%bx`, which any guest may
# execute: never for a test.
set -uo pipefail

if [ $# -lt 3 ] || [ $# -gt 5 ]; then
	echo "usage: $0 ISO CPU SERIAL_OUT [TIMEOUT_S] [NCPU]" >&2
	exit 2
fi
iso=$(realpath "$1") cpu=$2 serial=$3 timeout_s=${4:-60} ncpu=${5:-1}
megs=${BOCHS_MEGS:-256}
# Bochs 2.7 allocates at most 2048 MiB of host memory for the guest's RAM
# (its host_size range); a larger guest is backed by that much, swapped
# in and out as the guest touches it.
host_megs=$(( megs < 2048 ? megs : 2048 ))
here=$(cd "$(dirname "$0")" && pwd)

[ -f "$iso" ] || { echo "run-bochs: $iso: no such file" >&2; exit 2; }
mkdir -p "$(dirname "$serial")"
serial=$(realpath "$serial")
base=${serial%.serial}
log=$base.bochs.log
out=$base.stdout
work=$(mktemp -d "${base}.bochs.XXXXXX")
trap 'rm -rf "$work"' EXIT

rm -f "$serial" "$log" "$out"
sed -e "s|@CPU@|$cpu|" -e "s|@NCPU@|$ncpu|" -e "s|@MEGS@|$megs|" -e "s|@HOST_MEGS@|$host_megs|" \
    -e "s|@ISO@|$iso|" -e "s|@SERIAL@|$serial|" -e "s|@LOG@|$log|" \
    -e "s|@MAGIC_BREAK@|${RUN_BOCHS_MAGIC_BREAK:-0}|" \
    "$here/bochsrc.in" > "$work/bochsrc"
# The built-in debugger stops at the first instruction: continue, and
# quit when the simulation ends (bochsrc.in disables the magic breakpoint).
if [ -n "${RUN_BOCHS_RC:-}" ]; then
	cp "$RUN_BOCHS_RC" "$work/rc"
else
	printf 'c\nquit\n' > "$work/rc"
fi

cd "$work"
if [ "${RUN_BOCHS_STREAM:-0}" = 1 ]; then
	# COM1 carries the guest's output and the hypervisor's: follow it
	# until Bochs is gone (tail -F waits for the file to appear).
	TERM=dumb timeout --kill-after=5 "$timeout_s" \
		bochs -q -f "$work/bochsrc" -rc "$work/rc" </dev/null >"$out" 2>&1 &
	pid=$!
	tail -n +1 -F --pid="$pid" "$serial" 2>/dev/null | tr -d '\r'
	wait "$pid"
	status=$?
else
	TERM=dumb timeout --kill-after=5 "$timeout_s" \
		bochs -q -f "$work/bochsrc" -rc "$work/rc" </dev/null >"$out" 2>&1
	status=$?
fi
[ "$status" = 124 ] || [ "$status" = 137 ] && exit 124
exit 0
