#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build a GRUB (BIOS) ISO that multiboots the hypervisor with one guest
# module.  Skips the work when the inputs have not changed.
# Usage: mkiso.sh OUT.iso HV.elf GUEST.elf [HV_ARGS] [GUEST_ARGS]
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 5 ]; then
	echo "usage: $0 OUT.iso HV.elf GUEST.elf [HV_ARGS] [GUEST_ARGS]" >&2
	exit 2
fi
out=$1 hv=$2 guest=$3 hv_args=${4:-} guest_args=${5:-}
here=$(cd "$(dirname "$0")" && pwd)

for f in "$hv" "$guest"; do
	[ -f "$f" ] || { echo "mkiso: $f: no such file" >&2; exit 1; }
done
# GRUB's script metacharacters (and quotes) would change the command
# line on the way: refuse rather than pass something else.
case "$hv_args$guest_args" in
*[\"\'\\\$\;\{\}\|\&\<\>]*)
	echo "mkiso: command lines may not contain GRUB metacharacters: $hv_args $guest_args" >&2
	exit 1 ;;
esac

# (Nothing left that sed's replacement would interpret: no \ & or |.)
cfg=$(sed -e "s|@HV_ARGS@|$hv_args|" -e "s|@GUEST_ARGS@|$guest_args|" "$here/grub.cfg.in")
stamp=$( { sha256sum "$hv" "$guest" | cut -d' ' -f1; echo "$cfg"; } | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.inputs" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

tree=$(mktemp -d "${out}.tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/boot/grub"
cp "$hv" "$tree/boot/exitplan.elf"
cp "$guest" "$tree/boot/guest.elf"
printf '%s\n' "$cfg" > "$tree/boot/grub/grub.cfg"

# BIOS only (i386-pc): that is what Bochs and QEMU's SeaBIOS boot.
if ! grub-mkrescue -d /usr/lib/grub/i386-pc -o "$out.tmp" "$tree" >"$out.log" 2>&1; then
	cat "$out.log" >&2
	rm -f "$out.tmp"
	exit 1
fi
mv "$out.tmp" "$out"
echo "$stamp" > "$out.inputs"
echo "  ISO     $out"
