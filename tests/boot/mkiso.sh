#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build a GRUB (BIOS) ISO that multiboots the hypervisor with the guest
# as its first module and MODULEs after it, each with its path (as given)
# as its command line, as QEMU's -initrd passes them.  The guest's command
# line is GUEST_ARGS as it stands (the test guests get only their options;
# `make run KERNEL=path` puts the path first, as QEMU's -kernel does).
# Skips the work when the inputs have not changed.
# Usage: mkiso.sh OUT.iso HV.elf GUEST.elf [HV_ARGS] [GUEST_ARGS] [MODULE...]
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 OUT.iso HV.elf GUEST.elf [HV_ARGS] [GUEST_ARGS] [MODULE...]" >&2
	exit 2
fi
out=$1 hv=$2 guest=$3 hv_args=${4:-} guest_args=${5:-}
shift $(( $# < 5 ? $# : 5 ))
modules=("$@")
here=$(cd "$(dirname "$0")" && pwd)

for f in "$hv" "$guest" "${modules[@]}"; do
	[ -f "$f" ] || { echo "mkiso: $f: no such file" >&2; exit 1; }
done
# GRUB's script metacharacters (and quotes) would change the command
# line on the way: refuse rather than pass something else.
case "$hv_args$guest_args${modules[*]}" in
*[\"\'\\\$\;\{\}\|\&\<\>\#]*)
	echo "mkiso: command lines and module paths may not contain GRUB metacharacters:" \
		"$hv_args $guest_args ${modules[*]}" >&2
	exit 1 ;;
esac
for m in "${modules[@]}"; do
	case "$m" in
	*[[:space:]]*) echo "mkiso: module path '$m' has a space: GRUB would split it" >&2; exit 1 ;;
	esac
done

module_lines=
for i in "${!modules[@]}"; do
	module_lines+="	module /boot/module$((i + 1)) ${modules[$i]}"$'\n'
done
cfg=$(< "$here/grub.cfg.in")
cfg=${cfg//@HV_ARGS@/$hv_args}
cfg=${cfg//@GUEST_ARGS@/$guest_args}
cfg=${cfg//$'\t'@MODULES@$'\n'/$module_lines}
stamp=$( { sha256sum "$hv" "$guest" "${modules[@]}" | cut -d' ' -f1; echo "$cfg"; } |
	 sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.inputs" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

tree=$(mktemp -d "${out}.tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/boot/grub"
cp "$hv" "$tree/boot/exitplan.elf"
cp "$guest" "$tree/boot/guest.elf"
for i in "${!modules[@]}"; do
	cp "${modules[$i]}" "$tree/boot/module$((i + 1))"
done
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
