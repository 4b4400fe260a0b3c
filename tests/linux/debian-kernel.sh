#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Debian's stock kernel, unmodified, for `make run GUEST=linux-debian`
# (docs/LINUX.md; not in CI: it takes minutes to reach /init in Bochs).
#   debian-kernel.sh OUTDIR   -> OUTDIR/vmlinuz (a symlink to the cached one)
# The image package linux-image-amd64 depends on is fetched with
# `apt-get download` (no root, nothing installed) and unpacked with
# dpkg-deb; it is kept under OUTDIR/debian/PACKAGE_VERSION, so it is
# fetched once per package version.
set -eu
out=${1:?usage: debian-kernel.sh OUTDIR}
# The versioned image package the metapackage points at (linux-image-6.1.0-N-amd64).
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
if [ -z "$pkg" ]; then
	echo "debian-kernel.sh: apt knows no linux-image-amd64; apt-get update first" >&2
	exit 1
fi
ver=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache="$out/debian/${pkg}_$ver"
if [ ! -f "$cache/vmlinuz" ]; then
	rm -rf "$cache.tmp"
	mkdir -p "$cache.tmp"
	echo "linux-debian: fetching $pkg $ver (apt-get download)"
	(cd "$cache.tmp" && apt-get download -q "$pkg=$ver" > download.log 2>&1) || {
		cat "$cache.tmp/download.log" >&2
		echo "debian-kernel.sh: apt-get download $pkg=$ver failed" >&2
		exit 1
	}
	dpkg-deb -x "$cache.tmp"/*.deb "$cache.tmp/root"
	image=$(ls "$cache.tmp"/root/boot/vmlinuz-* | head -n 1)
	[ -f "$image" ] || { echo "debian-kernel.sh: no /boot/vmlinuz-* in $pkg" >&2; exit 1; }
	cp "$image" "$cache.tmp/vmlinuz"
	rm -rf "$cache.tmp/root" "$cache.tmp"/*.deb
	rm -rf "$cache"
	mv "$cache.tmp" "$cache"
fi
ln -sf "debian/${pkg}_$ver/vmlinuz" "$out/vmlinuz"
echo "linux-debian: $cache/vmlinuz"
