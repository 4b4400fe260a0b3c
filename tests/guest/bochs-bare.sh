#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot a test guest directly in Bochs, without exitplan: GRUB multiboots
# the guest itself.  For developing the guests on Bochs's CPU models (TSC
# deadline, XSAVE, Bochs's APIC), which QEMU's TCG does not all have.
# The checks that need exitplan FAIL or SKIP, as under QEMU.
# Usage: bochs-bare.sh GUEST.elf [GUEST_ARGS] [CPU]   (serial to stdout)
# BOCHS_NCPU=n gives the machine n CPUs (the smp and pingpong guests).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: $0 GUEST.elf [GUEST_ARGS] [CPU]" >&2
	exit 2
fi
guest=$(realpath "$1") args=${2:-} cpu=${3:-corei7_skylake_x}
here=$(cd "$(dirname "$0")" && pwd)
boot=$here/../boot
work=$(mktemp -d "${TMPDIR:-/tmp}/guest-bochs.XXXXXX")
trap 'rm -rf "$work"' EXIT

case "$args" in
*[\"\\\$\;\{\}]*) echo "$0: no GRUB metacharacters in the arguments" >&2; exit 2 ;;
esac
mkdir -p "$work/iso/boot/grub"
cp "$guest" "$work/iso/boot/guest.elf"
cat > "$work/iso/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
menuentry "guest" {
	multiboot /boot/guest.elf $args
	boot
}
CFG
grub-mkrescue -d /usr/lib/grub/i386-pc -o "$work/guest.iso" "$work/iso" \
	>"$work/mkrescue.log" 2>&1 || { cat "$work/mkrescue.log" >&2; exit 1; }
status=0
"$boot/run-bochs.sh" "$work/guest.iso" "$cpu" "$work/out.serial" \
	"${BOCHS_TIMEOUT:-120}" "${BOCHS_NCPU:-1}" || status=$?
cat "$work/out.serial" 2>/dev/null || true
grep -E 'VMENTER|PANIC|panic' "$work/out.bochs.log" 2>/dev/null | head -5 || true
[ "$status" = 124 ] && echo "bochs-bare: timed out" >&2
exit "$status"
