#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Build the guest kernel from Debian's linux-source once and cache it.
#   build-kernel.sh OUTDIR   -> OUTDIR/bzImage (a symlink to the cached one)
# The cache key is the linux-source version and a hash of kernel.config,
# so a changed fragment or a new source package rebuilds, and nothing else
# does.  The build is niced: it takes about 8 minutes of two cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-kernel.sh OUTDIR}
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "build-kernel.sh: no /usr/src/linux-source-*.tar.xz; apt-get install linux-source" >&2
	exit 1
fi
pkg=$(dpkg-query -W -f '${Version}' "$(basename "$tarball" .tar.xz)" 2>/dev/null || echo unknown)
ver=$(basename "$tarball" .tar.xz | sed 's/^linux-source-//')
hash=$( (cat "$here/kernel.config"; echo "$pkg") | sha256sum | cut -c1-12)
key="$ver-$pkg-$hash"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache="$out/cache/$key"
# One build at a time: a second caller waits for the first one's kernel.
exec 9> "$out/.lock"
flock 9
if [ -f "$cache/bzImage" ]; then
	ln -sf "cache/$key/bzImage" "$out/bzImage"
	echo "linux: cached $cache/bzImage"
	exit 0
fi
rm -rf "$cache.tmp"
mkdir -p "$cache.tmp"
echo "linux: building $key (about 8 minutes on 2 cores; log $cache.tmp/build.log)"
tar -C "$cache.tmp" -xf "$tarball"
src="$cache.tmp/linux-source-$ver"
jobs=$(nproc 2>/dev/null || echo 2)
log="$cache.tmp/build.log"
fail() { tail -n 30 "$log" >&2; echo "build-kernel.sh: $*" >&2; exit 1; }
cd "$src"
{ make tinyconfig && scripts/kconfig/merge_config.sh -m .config "$here/kernel.config" &&
  make olddefconfig; } > "$log" 2>&1 || fail "configuring failed"
# Every fragment line must have survived olddefconfig (a missing
# dependency drops a symbol silently).
for line in $(grep '^CONFIG_' "$here/kernel.config"); do
	grep -qx "$line" .config || fail "$line did not stick (a dependency is missing)"
done
nice make -j"$jobs" bzImage >> "$log" 2>&1 || fail "the kernel build failed"
cd - > /dev/null
cp "$src/arch/x86/boot/bzImage" "$cache.tmp/bzImage"
cp "$src/.config" "$cache.tmp/config"
rm -rf "$src"
mv "$cache.tmp" "$cache"
ln -sf "cache/$key/bzImage" "$out/bzImage"
echo "linux: built $cache/bzImage"
