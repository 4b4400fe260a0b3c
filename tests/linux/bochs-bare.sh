#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot the project's Linux guest directly in Bochs, without exitplan:
# GRUB loads the bzImage and the initramfs itself (linux/initrd), so the
# same programs run on the bare emulated machine, for make bench's Linux
# table (tests/bench/linux.py).
# Usage: bochs-bare.sh OUT.serial "CMDLINE" [CPU] [NCPU] [TIMEOUT_S]
# The kernel and initramfs: LINUX_DIR (default build/linux).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 5 ]; then
	echo "usage: $0 OUT.serial CMDLINE [CPU] [NCPU] [TIMEOUT_S]" >&2
	exit 2
fi
serial=$1 cmdline=$2 cpu=${3:-corei7_skylake_x} ncpu=${4:-1} timeout_s=${5:-120}
here=$(cd "$(dirname "$0")" && pwd)
linux=${LINUX_DIR:-$here/../../build/linux}
case "$cmdline" in
*[\"\'\\\$\;\{\}\|\&\<\>\#]*) echo "$0: no GRUB metacharacters in the command line" >&2; exit 2 ;;
esac
for f in "$linux/bzImage" "$linux/initramfs.cpio.gz"; do
	[ -f "$f" ] || { echo "$0: $f: no such file (make linux-guest)" >&2; exit 1; }
done
mkdir -p "$(dirname "$serial")"
work=$(mktemp -d "${serial%.serial}.bare.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/iso/boot/grub"
cp -L "$linux/bzImage" "$work/iso/boot/bzImage"
cp -L "$linux/initramfs.cpio.gz" "$work/iso/boot/initrd"
cat > "$work/iso/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
menuentry "linux" {
	linux /boot/bzImage $cmdline
	initrd /boot/initrd
	boot
}
CFG
grub-mkrescue -d /usr/lib/grub/i386-pc -o "$work/linux.iso" "$work/iso" \
	>"$work/mkrescue.log" 2>&1 || { cat "$work/mkrescue.log" >&2; exit 1; }
status=0
"$here/../boot/run-bochs.sh" "$work/linux.iso" "$cpu" "$serial" "$timeout_s" "$ncpu" || status=$?
[ "$status" = 124 ] && echo "bochs-bare: timed out" >&2
exit "$status"
