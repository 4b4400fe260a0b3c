# SPDX-License-Identifier: GPL-2.0-only
"""Which files a PROFILE argument names: a name is profiles/NAME.yaml
under the root, a path (with a separator, or ending in .yaml) is itself;
none means every profile.  Shared by the commands (main.py) and
from-stats's --base, so both resolve a profile alike."""

import os

from .errors import GenError


def profile_paths(root, names):
    """[(path as shown, filesystem path)] of the named profiles, or all."""
    if not names:
        pdir = os.path.join(root, "profiles")
        try:
            files = sorted(f for f in os.listdir(pdir) if f.endswith(".yaml"))
        except OSError as e:
            raise GenError("profiles", None, None, f"cannot list: {e.strerror}") from None
        return [(os.path.join("profiles", f), os.path.join(pdir, f)) for f in files]
    out = []
    for n in names:
        if n.endswith(".yaml") or os.sep in n:
            out.append((n, n))
        else:
            shown = os.path.join("profiles", n + ".yaml")
            out.append((shown, os.path.join(root, shown)))
    return out


def source_name(root, fs_path):
    """How the banners name a profile: its path in the checkout, or its
    absolute path when it lies outside (never a name it does not have)."""
    full = os.path.abspath(fs_path)
    top = os.path.abspath(root)
    if os.path.commonpath([full, top]) == top:
        return os.path.relpath(full, top)
    return full
