# SPDX-License-Identifier: GPL-2.0-only
"""The README's picture of one VM exit's path is drawn by `make picture`
from its text source, docs/exit-path.dot: the committed SVG is what dot
draws from that source today, and the README shows it."""
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_picture_is_drawn_from_its_source(tmp_path):
    if not shutil.which("dot"):
        pytest.skip("no dot (Debian's graphviz; make deps-test installs it)")
    drawn = tmp_path / "exit-path.svg"
    subprocess.run(["dot", "-Tsvg", str(REPO / "docs/exit-path.dot"), "-o", str(drawn)], check=True)
    assert drawn.read_text() == (REPO / "docs/exit-path.svg").read_text(), \
        "docs/exit-path.svg is stale: run make picture and commit it"


def test_readme_shows_the_picture():
    readme = (REPO / "README.md").read_text()
    assert "(docs/exit-path.svg)" in readme
    assert len(readme.splitlines()) <= 200, "README.md is the front door: at most 200 lines"
