#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check-clone`: the repository needs nothing beside it.  Clones the
# committed HEAD (uncommitted changes are not in it) into an empty
# temporary folder, with no sibling folder and no build/, runs the
# host-only checks there (`make check`), and removes the clone.
set -euo pipefail

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
rev=$(git -C "$repo" rev-parse HEAD)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exitplan-clone.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if git clone -q --no-checkout "$repo" "$tmp/exitplan" 2>/dev/null; then
	if ! git -C "$tmp/exitplan" checkout -q --detach "$rev" 2>/dev/null; then
		echo "check-clone: HEAD $rev is on no branch, so a clone does not have it;" \
			"commit it on a branch first" >&2
		exit 1
	fi
else
	# A repository git will not clone (a shallow one, say): the same
	# committed files, unpacked from HEAD.
	echo "check-clone: git clone failed; unpacking git archive HEAD instead" >&2
	rm -rf "$tmp/exitplan" && mkdir "$tmp/exitplan"
	git -C "$repo" archive HEAD | tar -x -C "$tmp/exitplan"
fi
if [ "$(ls -A "$tmp")" != exitplan ]; then
	echo "check-clone: $tmp is not empty besides the clone" >&2
	exit 1
fi
echo "check-clone: $(git -C "$repo" rev-parse --short HEAD) cloned into $tmp/exitplan, nothing beside it"
make -C "$tmp/exitplan" --no-print-directory check
echo "check-clone: make check passed in the clone"
