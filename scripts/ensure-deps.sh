#!/bin/bash
# Install the Debian packages exitplan needs, if any is missing.
# Usage: scripts/ensure-deps.sh [build|run|test|bench]
set -euo pipefail

need_build="gcc make binutils libc6-dev python3 python3-jinja2 python3-yaml python3-jsonschema"
need_run="$need_build bochs bochsbios vgabios bochs-term grub-pc-bin grub-common xorriso mtools"
# The Linux guest (tests/linux): the kernel built from Debian's source,
# with what its build needs (LZ4-compressed, objtool reads ELF), and the
# initramfs from busybox-static.
need_linux="linux-source busybox-static bc flex bison libelf-dev lz4 cpio xz-utils"
need_test="$need_run $need_linux python3-pytest python3-pytest-xdist python3-hypothesis libcmocka-dev qemu-system-x86 qemu-user graphviz"
need_bench="$need_run python3-matplotlib"

case "${1:-test}" in
build) want=$need_build ;;
run) want=$need_run ;;
test) want=$need_test ;;
bench) want="$need_test $need_bench" ;;
*) echo "usage: $0 [build|run|test|bench]" >&2; exit 2 ;;
esac

missing=()
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "exitplan: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO=sudo
	else
		echo "exitplan: cannot install packages: not root and no password-less sudo." >&2
		echo "exitplan: run as root: apt-get install ${missing[*]}" >&2
		exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }; then
	echo "exitplan: apt-get could not install: ${missing[*]}" >&2
	echo "exitplan: install them by hand, then run make again." >&2
	exit 1
fi
