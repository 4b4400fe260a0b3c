# SPDX-License-Identifier: GPL-2.0-only
"""Writing generated files the way Kbuild's filechk does: everything is
rendered in memory first; a file whose content is unchanged is left alone
(its timestamp too, so nothing rebuilds); a changed one is written to
FILE.tmp beside it and renamed over it, so no reader sees half a file."""

import os
import shutil

from .errors import GenError


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _listing(out):
    """Relative paths of the regular files under out (hidden ones skipped)."""
    found = []
    if not os.path.isdir(out):
        return found
    for dirpath, dirnames, filenames in os.walk(out):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if not f.startswith("."):
                found.append(os.path.relpath(os.path.join(dirpath, f), out))
    return found


def write_tree(out, files, owned, prune_dirs):
    """Bring out/ in line with files ({relpath: text}).  Stale files in the
    owned directories are removed; with prune_dirs, so are directories
    nothing was generated into.  Returns the paths changed."""
    changed = []
    pending = []
    try:
        for rel in sorted(files):
            data = files[rel].encode("utf-8")
            path = os.path.join(out, rel)
            if _read(path) == data:
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            pending.append((tmp, path))
    except OSError as e:
        for tmp, _ in pending:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise GenError(out, None, None, f"cannot write: {e.strerror}") from None
    for tmp, path in pending:
        os.replace(tmp, path)
        changed.append(path)

    produced = set(files)
    for rel in _listing(out):
        top = rel.split(os.sep, 1)[0]
        if rel in produced:
            continue
        if top in owned or (prune_dirs and os.sep in rel):
            os.unlink(os.path.join(out, rel))
            changed.append(os.path.join(out, rel))
    if prune_dirs:
        for d in sorted(os.listdir(out)) if os.path.isdir(out) else []:
            full = os.path.join(out, d)
            if os.path.isdir(full) and not d.startswith(".") and d not in owned:
                shutil.rmtree(full)
    return changed


def compare_tree(out, files):
    """[(kind, relpath)] with kind 'missing', 'stale' or 'extra'."""
    problems = []
    for rel in sorted(files):
        data = _read(os.path.join(out, rel))
        if data is None:
            problems.append(("missing", rel))
        elif data != files[rel].encode("utf-8"):
            problems.append(("stale", rel))
    produced = set(files)
    for rel in _listing(out):
        if rel not in produced:
            problems.append(("extra", rel))
    return sorted(problems, key=lambda p: p[1])
