#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot an ISO in QEMU (TCG, no KVM: the host is AMD and there is no VT-x,
# which is what the "no VT-x" refusal tests want).
# Usage: run-qemu.sh ISO SERIAL_OUT [TIMEOUT_S]
#
# COM1 goes to SERIAL_OUT, port 0xE9 (debugcon) to <name>.e9, QEMU's own
# output to <name>.stdout.  QEMU exits through isa-debug-exit with status
# (code << 1) | 1; as with Bochs, judge the run by the serial output.
# Exits 124 when the run was killed by the timeout, 0 otherwise.
# QEMU_CPU (default qemu64), QEMU_MEM (default 256) and QEMU_SMP (default 1)
# may be set.
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 ISO SERIAL_OUT [TIMEOUT_S]" >&2
	exit 2
fi
iso=$1 serial=$2 timeout_s=${3:-60}
[ -f "$iso" ] || { echo "run-qemu: $iso: no such file" >&2; exit 2; }
mkdir -p "$(dirname "$serial")"
base=${serial%.serial}
rm -f "$serial" "$base.e9" "$base.stdout"

timeout --kill-after=5 "$timeout_s" \
	qemu-system-x86_64 -machine pc,accel=tcg -cpu "${QEMU_CPU:-qemu64}" \
	-m "${QEMU_MEM:-256}" -smp "${QEMU_SMP:-1}" \
	-cdrom "$iso" -boot d \
	-display none -monitor none -vga none \
	-serial "file:$serial" \
	-debugcon "file:$base.e9" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-no-reboot </dev/null >"$base.stdout" 2>&1
status=$?
[ "$status" = 124 ] || [ "$status" = 137 ] && exit 124
exit 0
