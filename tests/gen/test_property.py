# SPDX-License-Identifier: GPL-2.0-only
"""A property of the generator, tested on random profiles (python3-hypothesis):
every profile either generates C that compiles with the hypervisor's own
flags (runtime/runtime.mk's HV_CFLAGS), or is rejected with status 2 and
exactly one `FILE:LINE:COL: message` line that points into the file, with
nothing written.

The profiles are built from spec/ and spec/profile.schema.json (exit
reasons, handlers, MSRs with the mechanisms spec/msrs.yaml offers, gated
features, the schema's keys and enums), so that many are valid; then
mutated (a key dropped, a value replaced by one of another kind, an
unknown key, the text cut, bytes inserted, an alias, a tab, non-UTF-8) so
that most of those are not.  Text goes through hostile alphabets (C
comment delimiters, trigraphs, control and bidirectional characters).

Derandomized: the same examples on every run, so CI is reproducible; the
number of examples is bounded to keep `make test-gen` quick.  A failure
prints the profile (hypothesis shrinks it first)."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="python3-hypothesis is not installed "
                                                      "(scripts/ensure-deps.sh test installs it)")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
import yaml  # noqa: E402

from conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

NAME = "prop"
LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>[^\n]+)\n$")

COMMON = dict(derandomize=True, database=None, deadline=None, print_blob=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])


# --- what spec/ offers --------------------------------------------------------------
def _spec():
    import sys
    sys.path.insert(0, str(ROOT / "gen"))
    from exitplan_gen.spec import Spec
    return Spec(str(ROOT))


SPEC = _spec()
REASONS = [r.name for r in SPEC.exit_reasons]
HANDLED = [r.name for r in SPEC.exit_reasons if r.name in SPEC.handlers]
POLICY_MSRS = {m.name: [x for x in m.mechanisms] for m in SPEC.msrs if m.policy}
FEATURES = [f.name for f in SPEC.features]
GATED = sorted(SPEC.gated_features)
SCHEMA_SWITCH = ["none", "atomic", "load_list", "manual"]
SCHEMA_ACCESS = ["passthrough", "trap", "trap_writes", "trap_reads"]


def _hv_cflags():
    text = (ROOT / "runtime" / "runtime.mk").read_text().replace("\\\n", " ")
    return re.search(r"^HV_CFLAGS\s*:?=(.*)$", text, re.M).group(1).split()


HV_CFLAGS = _hv_cflags()


# --- strategies ---------------------------------------------------------------------
# Text that has broken C before, mixed with anything printable or not.
FRAGMENTS = ["/*", "*/", "*/*", "??/", "??=", "\\", '"', "'", "\\n", "%s", "\0", "\x01",
             "\u202e", "\u2066", "\u2028", "\ufeff", "\t", "\r", "#", "- ", ": ", "{", "}",
             "e\u0301", "\U0001f600", "&a", "*a", "!!str", "|", ">"]
hostile_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS),
                                  st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)),
                        min_size=1, max_size=8).map("".join)
words = st.one_of(st.just("test"), hostile_text)


def _port(draw):
    return draw(st.one_of(st.integers(0, 0xffff), st.sampled_from([0, 0xffff, 0x10000, -1, 0xcf8, 0x3f8])))


@st.composite
def exit_mixes(draw):
    unit = draw(st.sampled_from(["share", "count"]))
    pool = st.one_of(st.sampled_from(HANDLED), st.sampled_from(REASONS))
    names = draw(st.lists(pool, min_size=1, max_size=7, unique=True))
    if unit == "count":
        reasons = {n: draw(st.integers(0, 10 ** 6)) for n in names}
        if not any(reasons.values()):
            reasons[names[0]] = 1
    else:
        weights = [draw(st.integers(0, 20)) for _ in names]
        weights[0] += 1
        total = sum(weights)
        # Shares as decimals that sum to 1 within the tolerance.
        shares = [round(w / total, 6) for w in weights]
        shares[0] = round(shares[0] + 1 - sum(shares), 6)
        reasons = dict(zip(names, shares))
    source = {"kind": "estimate", "basis": draw(words)}
    if draw(st.booleans()) and unit == "count":
        source = {"kind": "measured", "basis": draw(words), "guest": draw(words), "cpu": "corei7_skylake_x",
                  "date": "2026-12-01", "exits": sum(reasons.values())}
    return {"source": source, "unit": unit, "reasons": reasons}, names


@st.composite
def profiles(draw):
    """A profile as a dict, from the schema's keys and spec/'s names."""
    mix, names = draw(exit_mixes())
    p = {"profile": NAME, "description": draw(words), "exit_mix": mix}
    policy = draw(st.sampled_from(["direct", "direct", "table", "switch"]))
    dispatch = {"policy": policy}
    if policy == "direct":
        mode = draw(st.sampled_from(["count", "coverage", "order", "auto"]))
        if mode == "count":
            direct = {"count": draw(st.integers(1, len(names) + 1))}
        elif mode == "coverage":
            direct = {"coverage": draw(st.sampled_from([0.5, 0.8, 0.95, 1.0, 1.5, 0.0]))}
        elif mode == "order":
            direct = {"order": draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names),
                                             unique=True))}
        else:
            direct = {"auto": True}
            if draw(st.booleans()):
                direct["max"] = draw(st.integers(0, 6))
        dispatch["direct"] = direct
    p["dispatch"] = dispatch
    if draw(st.booleans()):
        p["statistics"] = draw(st.sampled_from(["off", "counts", "timing"]))
    if draw(st.booleans()):
        features = {}
        if draw(st.booleans()):
            features["require"] = draw(st.lists(st.sampled_from(FEATURES), max_size=3, unique=True))
        if draw(st.booleans()):
            features["prefer"] = {f: {"fallback": "none"}
                                  for f in draw(st.lists(st.sampled_from(GATED), max_size=2, unique=True))}
        p["features"] = features
    if draw(st.booleans()):
        msrs = {"default": "trap"} if draw(st.booleans()) else {}
        for m in draw(st.lists(st.sampled_from(sorted(POLICY_MSRS)), max_size=4, unique=True)):
            offered = [s for s in POLICY_MSRS[m] if s in SCHEMA_SWITCH] + ["none"]
            entry = {"switch": draw(st.sampled_from(offered)),
                     "access": draw(st.sampled_from([a for a in SCHEMA_ACCESS
                                                     if a != "passthrough" or "passthrough" in POLICY_MSRS[m]]))}
            if entry["switch"] == "atomic" and draw(st.booleans()):
                entry["fallback"] = draw(st.sampled_from(["manual", "load_list", "none"]))
            msrs[m] = entry
        p["msrs"] = msrs
    if draw(st.booleans()):
        ex = {}
        for key in ("hlt_exiting", "cr8_exiting", "mov_dr_exiting", "rdtsc_exiting"):
            if draw(st.booleans()):
                ex[key] = draw(st.booleans())
        if draw(st.booleans()):
            pause = {"mode": draw(st.sampled_from(["loop", "exit", "none"]))}
            if pause["mode"] == "loop" and draw(st.booleans()):
                pause["ple_gap"] = draw(st.integers(0, 1 << 33))
                pause["ple_window"] = draw(st.integers(0, 1 << 33))
            if draw(st.booleans()):
                pause["fallback"] = draw(st.lists(st.sampled_from(["loop", "exit", "none"]), min_size=1,
                                                  max_size=2, unique=True))
            ex["pause"] = pause
        if draw(st.booleans()):
            timer = {"enabled": draw(st.booleans())}
            if draw(st.booleans()):
                timer["value"] = draw(st.integers(0, 1 << 33))
            if draw(st.booleans()):
                timer["save_on_exit"] = draw(st.booleans())
            ex["preemption_timer"] = timer
        if draw(st.booleans()):
            trap = []
            for _ in range(draw(st.integers(0, 3))):
                r = {"port": _port(draw)}
                if draw(st.booleans()):
                    r["last"] = _port(draw)
                if draw(st.booleans()):
                    r["why"] = draw(words)
                trap.append(r)
            ex["io"] = {"trap": trap}
        p["execution"] = ex
    return p


def dump(p):
    return yaml.safe_dump(p, sort_keys=False, allow_unicode=True, width=72)


# A value of a kind the schema does not expect where it lands.
junk = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                              st.floats(allow_nan=True, allow_infinity=True), hostile_text,
                              st.sampled_from(["1e3", "0x10", "off", "yes", "~", "2026-12-01", "NaN"])),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(hostile_text, inner, max_size=3)),
                    max_leaves=6)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _at(value, path):
    for k in path:
        value = value[k]
    return value


@st.composite
def mutated(draw):
    """(bytes of a profile file, what was done): a valid-looking profile
    with one or two mutations, of its tree or of its text."""
    p = draw(profiles())
    done = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["drop", "replace", "add", "text"]))
        paths = [q for q in _paths(p) if q]
        if kind in ("drop", "replace") and paths:
            q = draw(st.sampled_from(paths))
            parent = _at(p, q[:-1])
            if kind == "drop":
                del parent[q[-1]]
            else:
                parent[q[-1]] = draw(junk)
            done.append(f"{kind} {'.'.join(map(str, q))}")
        elif kind == "add":
            dicts = [q for q in _paths(p) if isinstance(_at(p, q), dict)]
            q = draw(st.sampled_from(dicts))
            key = draw(st.one_of(hostile_text, st.sampled_from(["profile", "auto", "max", "IA32_EFER",
                                                                 "HLT", "why", "default"])))
            _at(p, q)[key] = draw(junk)
            done.append(f"add {'.'.join(map(str, q + (key,)))}")
    text = dump(p).encode("utf-8")
    if draw(st.booleans()):
        edit = draw(st.sampled_from(["insert", "cut", "truncate", "bytes", "alias", "tab", "nest", "dup"]))
        at = draw(st.integers(0, len(text)))
        if edit == "insert":
            text = text[:at] + draw(hostile_text).encode("utf-8") + text[at:]
        elif edit == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif edit == "truncate":
            text = text[:at]
        elif edit == "bytes":
            text = text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at:]
        elif edit == "alias":
            text = text.replace(b"exit_mix:", b"exit_mix: &m", 1) + b"copy: *m\n"
        elif edit == "tab":
            text = text.replace(b"\n  ", b"\n\t", 1)
        elif edit == "nest":
            n = draw(st.integers(20, 40))
            text += b"deep: " + b"[" * n + b"]" * n + b"\n"
        else:
            lines = text.split(b"\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            text = b"\n".join(lines[:i + 1] + lines[i:])
        done.append(f"text {edit} at {at}")
    return text, done


# --- running it ---------------------------------------------------------------------
def _generate(data):
    """Write data as profiles/prop.yaml in a fresh directory and run the
    generator's main() in process (spec/ loaded once).  Returns
    (status, stdout, stderr, the file's path, the output directory)."""
    import exitplan_gen.main as main_mod
    tmp = Path(tempfile.mkdtemp(prefix="exitplan-prop-"))
    path = tmp / "profiles" / f"{NAME}.yaml"
    path.parent.mkdir()
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    saved = main_mod.Spec
    main_mod.Spec = lambda root: SPEC
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main_mod.main(["--root", str(ROOT), "--out", str(tmp / "out"), "gen", "-q", str(path)])
    finally:
        main_mod.Spec = saved
    return rc, out.getvalue(), err.getvalue(), path, tmp


def _compiles(out):
    inc = ["-I", str(ROOT),
           "-I", str(out / "common"), "-I", str(out / NAME)]
    flags = [*HV_CFLAGS, "-fsyntax-only", *inc]
    r = subprocess.run(["gcc", *flags, *sorted(map(str, (out / NAME).glob("*.c")))],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # The strings reach C as vmx.c uses them; msr_switch.h is only static inlines.
    r = subprocess.run(["gcc", *flags, "-x", "c", "-"], capture_output=True, text=True,
                       input='#include "profile.h"\n#include "msr_switch.h"\n'
                             "const char *profile_words = PROFILE_NAME PROFILE_SOURCE;\n")
    assert r.returncode == 0, r.stderr


def check(data):
    """The property, for one file's bytes; returns the status."""
    rc, out, err, path, tmp = _generate(data)
    try:
        assert rc in (0, 2), f"status {rc}:\n{err}"
        assert out == ""
        if rc == 0:
            assert err == ""
            _compiles(tmp / "out")
            return rc
        assert "Traceback" not in err
        m = LINE.match(err)
        assert m, f"not one FILE:LINE:COL line: {err!r}"
        assert m["file"] == str(path)
        lines = data.count(b"\n") + 1
        assert 1 <= int(m["line"]) <= lines, err
        assert int(m["col"]) >= 1, err
        assert not (tmp / "out").exists(), "a rejected profile wrote output"
        return rc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Examples are counted, so that a change that makes every profile invalid
# (or valid) is noticed rather than passing vacuously.
_seen = {"valid": {0: 0, 2: 0}, "mutated": {0: 0, 2: 0}}


@settings(max_examples=int(os.environ.get("EXITPLAN_PROPERTY_EXAMPLES", "30")), **COMMON)
@given(profiles())
def test_schema_built_profiles(p):
    _seen["valid"][check(dump(p).encode("utf-8"))] += 1


@settings(max_examples=int(os.environ.get("EXITPLAN_PROPERTY_EXAMPLES", "30")) * 2, **COMMON)
@given(mutated())
def test_mutated_profiles(case):
    data, _done = case
    _seen["mutated"][check(data)] += 1


def test_both_outcomes_were_exercised():
    """Run after the two above (file order): the strategies reach both
    sides of the property, so neither passes by never being tested."""
    if not any(_seen["valid"].values()):
        pytest.skip("run with the property tests above")
    assert _seen["valid"][0] >= 3, _seen
    assert _seen["valid"][2] + _seen["mutated"][2] >= 10, _seen


def test_a_shipped_profile_passes_the_same_check():
    """The checker itself accepts a known-good profile and compiles it."""
    text = (ROOT / "profiles" / "default.yaml").read_bytes().replace(b"profile: default", b"profile: prop")
    assert check(text) == 0
