# SPDX-License-Identifier: GPL-2.0-only
"""One build for every profile (issue 26): the hand-written objects are
compiled once, into BUILD/common, except runtime/runtime.mk's
HV_PER_PROFILE_SRCS, which inline a profile's constants; a second
profile's build compiles only those and generated/PROFILE/*.c."""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNTIME_MK = REPO / "runtime" / "runtime.mk"
# The generated headers that differ between profiles.
PROFILE_HEADERS = ("profile.h", "runtime_profile.h", "msr_policy.h", "msr_switch.h")
# At most this many files compiled for each profile after the first
# (80 before issue 26; its goal is 15).
MAX_PER_PROFILE = 15


def per_profile_srcs():
    """HV_PER_PROFILE_SRCS as runtime.mk lists it."""
    text = RUNTIME_MK.read_text()
    m = re.search(r"^HV_PER_PROFILE_SRCS :=((?:.*\\\n)*.*)$", text, re.M)
    assert m, "runtime/runtime.mk has no HV_PER_PROFILE_SRCS"
    return [w for w in m.group(1).replace("\\\n", " ").split() if w.endswith(".c")]


def make(*args):
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=REPO,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, p.stdout[-4000:]
    return p.stdout


def dependencies(dfile):
    text = dfile.read_text().replace("\\\n", " ")
    return text.split("\n", 1)[0].split(":", 1)[1].split()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """BUILD with default built, then hrtimer's build output."""
    build = tmp_path_factory.mktemp("once") / "build"
    make("-s", "-j2", f"BUILD={build}", "build")
    out = make(f"BUILD={build}", "PROFILE=hrtimer", "build")
    return build, out


def test_per_profile_list_exists():
    srcs = per_profile_srcs()
    missing = [s for s in srcs if not (REPO / s).is_file()]
    assert not missing, f"HV_PER_PROFILE_SRCS names missing files: {missing}"
    assert len(srcs) + len(list((REPO / "generated" / "hrtimer").glob("*.c"))) <= MAX_PER_PROFILE


def test_per_profile_files_read_a_profile_header(built):
    """A file on the list that no longer reads a profile header belongs
    in the common build."""
    build, _ = built
    stale = []
    for src in per_profile_srcs():
        d = build / "default" / "obj" / Path(src).with_suffix(".d")
        deps = dependencies(d)
        if not any(f.startswith("generated/default/") and Path(f).name in PROFILE_HEADERS
                   for f in deps):
            stale.append(src)
    assert not stale, ("HV_PER_PROFILE_SRCS names files that read no profile header "
                       f"(move them to the common build): {stale}")


def test_common_objects_read_no_profile_header(built):
    build, _ = built
    bad = []
    for d in sorted((build / "common" / "obj").rglob("*.d")):
        if any(f.startswith("generated/") and not f.startswith("generated/common/")
               for f in dependencies(d)):
            bad.append(str(d.relative_to(build)))
    assert not bad, bad


def test_second_profile_compiles_only_its_own(built):
    build, out = built
    compiled = sorted(l.split()[1] for l in out.splitlines() if l.split()[:1] in (["CC"], ["AS"]))
    expect = sorted([str(Path(s).with_suffix(".o")) for s in per_profile_srcs()] +
                    [f"generated/hrtimer/{c.stem}.o"
                     for c in (REPO / "generated" / "hrtimer").glob("*.c")])
    assert compiled == expect, out


def test_profile_obj_holds_every_object(built):
    """build/PROFILE/obj still holds each object the image links (the
    call-graph tests read it)."""
    build, _ = built
    for p in ("default", "hrtimer"):
        objs = {o.relative_to(build / p / "obj") for o in (build / p / "obj").rglob("*.o")}
        for src in ["lib/string.c", "arch/vmx/exit.c", "runtime/init/main.c"]:
            assert Path(src).with_suffix(".o") in objs, (p, src)
