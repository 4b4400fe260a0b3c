#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Build the Linux guest's initramfs (cpio newc, gzip):
#   mkinitramfs.sh OUT.cpio.gz [PROGRAM...]
# Debian's busybox-static as /bin/busybox, tests/linux/init as /init, and
# each static PROGRAM as /bin/<its name>.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: mkinitramfs.sh OUT.cpio.gz [PROGRAM...]}
shift
bb=/bin/busybox
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ echo "mkinitramfs.sh: $bb is not busybox-static; apt-get install busybox-static" >&2; exit 1; }
tree=$(mktemp -d "$out.tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/bin" "$tree/dev" "$tree/proc" "$tree/sys"
cp "$bb" "$tree/bin/busybox"
ln -s busybox "$tree/bin/sh"
cp "$here/init" "$tree/init"
chmod 755 "$tree/init"
for p in "$@"; do
	cp "$p" "$tree/bin/$(basename "$p")"
done
# Fixed owner and times: the same inputs give the same bytes.
(cd "$tree" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0 --reproducible) | gzip -9n > "$out.tmp"
mv "$out.tmp" "$out"
