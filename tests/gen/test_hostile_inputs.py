# SPDX-License-Identifier: GPL-2.0-only
"""Inputs built to hurt the generator (issue 7): each is refused quickly
with exactly one FILE:LINE:COL line and status 2, no traceback, nothing
written; text that reaches C comments and string literals is escaped so
that the generated C still compiles with the hypervisor's flags.  The
small cases are in the bad corpus (yaml-billion-laughs, yaml-alias,
yaml-nested-too-deep, schema-count-exponent, ...); these need a file
built by the test."""

import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run_gen

LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>[^\n]+)\n$")


def refused(r, out):
    """r (a finished generator run) refused its input as the rules say;
    returns (file, line, col, message)."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    m = LINE.match(r.stderr)
    assert m, r.stderr[-2000:]
    assert not out.exists()
    return m["file"], int(m["line"]), int(m["col"]), m["msg"]


def profile_text(name, description="A profile written by the generator's tests.",
                 unit="share", reasons="MSR_WRITE: 0.5, HLT: 0.3, CPUID: 0.2", rest=""):
    return (f"profile: {name}\ndescription: {description}\nexit_mix:\n"
            f"  source: {{kind: estimate, basis: test}}\n  unit: {unit}\n"
            f"  reasons: {{{reasons}}}\ndispatch:\n  policy: table\n{rest}")


@pytest.mark.parametrize("depth", [500, 50000])
def test_deep_nesting_refused_at_the_limit(tmp_path, depth):
    """500 levels gave a RecursionError traceback with status 1, 50000 a
    segfault in libyaml's composer: now the 33rd level is refused."""
    path = tmp_path / "deep.yaml"
    path.write_text("profile: deep\ndescription: " + "[" * depth + "]" * depth + "\n")
    f, line, col, msg = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert (f, line, col, msg) == (str(path), 2, 13 + 32, "nested more than 32 levels deep")


def test_deep_mapping_nesting_refused(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("profile: deep\n" + "".join(" " * i + f"k{i}:\n" for i in range(40)))
    f, line, col, msg = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert (line, col, msg) == (34, 33, "nested more than 32 levels deep")


def test_billion_laughs_refused_at_the_first_alias(tmp_path):
    """The 756-byte profile of the issue ran for minutes."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, c in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{c}: &{c} [" + ",".join([f"*{prev}"] * 10) + "]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    f, line, col, msg = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert (line, col, msg) == (2, 8, "YAML aliases (*a) are not supported: write the value out")


def test_alias_in_a_statistics_document_refused(tmp_path):
    log = tmp_path / "run.serial"
    log.write_text("exitplan 0.1\n# exitplan-stats-begin\nexitplan_stats: &s {level: counts}\n"
                   "copy: *s\n# exitplan-stats-end\n")
    r = run_gen("from-stats", log, "--base", "default", "--name", "x", "--out", tmp_path / "x.yaml")
    f, line, col, msg = refused(r, tmp_path / "x.yaml")
    assert (f, line, col) == (str(log), 4, 7)
    assert msg.startswith("YAML aliases (*s) are not supported")


@pytest.mark.parametrize("data, line, col, what", [
    (b"profile: x\ndescription: caf\xe9\n", 2, 17, "byte 0xe9: invalid continuation byte"),
    (b"profile: x\ndescription: \xc3\xa9t\xff\n", 2, 16, "byte 0xff: invalid start byte"),
    (b"profile: x\xe2\x82", 1, 11, "byte 0xe2: unexpected end of data"),
])
def test_not_utf8_has_a_position(tmp_path, data, line, col, what):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(data)
    got = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert got == (str(path), line, col, f"the file is not UTF-8 ({what})")


def test_size_limit(tmp_path):
    """Only 256 KiB + 1 bytes are read: a file of zeros is refused at once."""
    path = tmp_path / "big.yaml"
    text = profile_text("big") + "".join(f"# {i:070d}\n" for i in range(4000))
    assert len(text) > 256 << 10
    path.write_text(text)
    f, line, col, msg = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert msg == "the file is larger than 256 KiB (262144 bytes), the most an input may hold"
    assert (line, col) == (text.count("\n", 0, 256 << 10) + 1, (256 << 10) - text.rfind("\n", 0, 256 << 10))
    r = run_gen("--out", tmp_path / "out", "gen", "/dev/zero")
    assert refused(r, tmp_path / "out")[1:] == (1, (256 << 10) + 1, msg)


def test_a_profile_under_the_limit_is_fine(tmp_path):
    path = tmp_path / "profiles" / "padded.yaml"
    path.parent.mkdir()
    path.write_text(profile_text("padded") + "".join(f"# {i:070d}\n" for i in range(3000)))
    r = run_gen("--out", tmp_path / "out", "gen", path)
    assert r.returncode == 0, r.stderr


def test_exponent_is_explained(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(profile_text("exp", unit="count", reasons="MSR_WRITE: 10, CPUID: 1e3"))
    f, line, col, msg = refused(run_gen("--out", tmp_path / "out", "gen", path), tmp_path / "out")
    assert "not the string '1e3' (YAML 1.1 reads an exponent without a decimal point and a sign " \
           "as a string; write 1000)" in msg, msg


def test_same_profile_twice_has_a_position(tmp_path):
    path = tmp_path / "profiles" / "table-only.yaml"
    path.parent.mkdir()
    shutil.copy(ROOT / "profiles" / "table-only.yaml", path)
    r = run_gen("--out", tmp_path / "out", "gen", "table-only", path)
    f, line, col, msg = refused(r, tmp_path / "out")
    assert (f, line, col, msg) == (str(path), 2, 10, "profile 'table-only' is also profiles/table-only.yaml")


def test_internal_error_is_not_a_verdict(generator, monkeypatch, capsys):
    """A bug in the generator is status 3 (not 1, `check`'s differences,
    nor 2, invalid input), with its traceback for whoever fixes it."""
    import exitplan_gen.main as main_mod
    monkeypatch.setattr(main_mod, "Spec", lambda root: generator.spec)
    monkeypatch.setattr(main_mod, "decide", lambda p, spec: 1 // 0)
    monkeypatch.chdir(ROOT)
    assert main_mod.main(["explain", "default"]) == 3
    err = capsys.readouterr().err
    assert "ZeroDivisionError" in err
    assert err.endswith("exitplan-gen: internal error (a bug in the generator; the traceback is above)\n")


# --- text that reaches C ------------------------------------------------------------
HOSTILE = ('"a /* b */ c */* d ??/ \\0 e \\u202e f \\x01 g \\u2028 h ??= i \\"q\\" \\\\ '
           'j \\t k \\u00e9 ??/"')


def hv_cflags():
    text = (ROOT / "runtime" / "runtime.mk").read_text().replace("\\\n", " ")
    return re.search(r"^HV_CFLAGS\s*:?=(.*)$", text, re.M).group(1).split()


def compile_with_hv_flags(out, profile):
    inc = ["-I", str(ROOT),
           "-I", str(out / "common"), "-I", str(out / profile)]
    flags = [*hv_cflags(), "-fsyntax-only", *inc]
    for src in sorted((out / profile).glob("*.c")):
        r = subprocess.run(["gcc", *flags, str(src)], capture_output=True, text=True)
        assert r.returncode == 0, f"{src}:\n{r.stderr}"
    # The strings reach C too: PROFILE_NAME and PROFILE_SOURCE as vmx.c uses them.
    r = subprocess.run(["gcc", *flags, "-x", "c", "-"], capture_output=True, text=True,
                       input='#include "profile.h"\n#include "msr_switch.h"\n'
                             "const char *profile_words = PROFILE_NAME PROFILE_SOURCE;\n")
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_hostile_text_compiles(tmp_path):
    """`/*`, `*/`, trigraphs, NUL, bidirectional and control characters in
    the description, an I/O range's why and the file's own path: the C
    compiles, and the text is still there to read."""
    d = tmp_path / "we*rd ??" / " dir"
    d.mkdir(parents=True)
    path = d / "hostile.yaml"
    text = profile_text("hostile", HOSTILE, rest="execution:\n  io:\n    grant:\n"
                        "      - {port: 0x2f8, last: 0x2ff, why: " + HOSTILE + "}\n")
    path.write_text(text)
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", "-q", path)
    assert r.returncode == 0, r.stderr
    compile_with_hv_flags(out, "hostile")
    h = (out / "hostile" / "profile.h").read_text()
    assert " * a / * b * / c * / * d ? ?/ <U+0000> e <U+202E> f <U+0001> g h ? ?= i \"q\" \\ j k \u00e9 ? ?/\n" in h
    assert f" *   {str(path).replace('??', '? ?')} (sha256: " in h
    source = str(path).replace("??", "?\\?")
    assert f'#define PROFILE_SOURCE\t\t"{source}"' in (out / "hostile" / "runtime_profile.h").read_text()


def test_banner_names_the_real_path(tmp_path):
    """A profile given by path is named by that path (relative to the
    checkout inside it, absolute outside), not as profiles/NAME.yaml."""
    path = tmp_path / "elsewhere" / "table-only.yaml"
    path.parent.mkdir()
    shutil.copy(ROOT / "profiles" / "table-only.yaml", path)
    out = tmp_path / "out"
    assert run_gen("--out", out, "gen", "-q", path).returncode == 0
    h = (out / "table-only" / "runtime_profile.h").read_text()
    assert f" *   {path} (sha256: " in h
    assert f'#define PROFILE_SOURCE\t\t"{path}"' in h
    assert "profiles/table-only.yaml" not in h
    assert run_gen("--out", out, "gen", "-q", "tests/gen/bad/../../../profiles/table-only.yaml").returncode == 0
    assert '#define PROFILE_SOURCE\t\t"profiles/table-only.yaml"' in \
        (out / "table-only" / "runtime_profile.h").read_text()
