# SPDX-License-Identifier: GPL-2.0-only
"""The corpus of bad profiles: each is rejected with exactly the one line
its first comment states, exit status 2, no traceback and nothing written,
by the stage its name says (yaml-, schema-, semantic-)."""

import shutil

import pytest

from conftest import ROOT, run_gen, snapshot

BAD = sorted((ROOT / "tests" / "gen" / "bad").glob("*.yaml"))


def expected(path):
    first = path.read_text().split("\n", 1)[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: MESSAGE'"
    return first[len("# expect: "):]


def test_corpus_is_large_enough():
    assert len(BAD) >= 30
    stages = {p.name.split("-", 1)[0] for p in BAD}
    assert stages == {"yaml", "schema", "semantic"}


@pytest.fixture(scope="module")
def populated_out(tmp_path_factory):
    """An output directory holding a full generation, to prove it is untouched."""
    out = tmp_path_factory.mktemp("out")
    shutil.copytree(ROOT / "generated", out, dirs_exist_ok=True)
    return out


@pytest.fixture
def main_with_session_spec(generator, monkeypatch):
    """exitplan-gen's main(), in process, with spec/ loaded once per session."""
    import exitplan_gen.main as main_mod
    monkeypatch.setattr(main_mod, "Spec", lambda root: generator.spec)
    monkeypatch.chdir(ROOT)
    return main_mod.main


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_profile_rejected(path, populated_out, main_with_session_spec, capsys):
    """Through main() in process (the whole corpus; a subprocess each would
    take most of a minute), exactly as the command line runs it."""
    before = snapshot(populated_out)
    rc = main_with_session_spec(["--out", str(populated_out), "gen", str(path.relative_to(ROOT))])
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == ""
    assert err == expected(path) + "\n"
    assert snapshot(populated_out) == before


@pytest.mark.parametrize("name", ["yaml-duplicate-key", "schema-execution-typo", "semantic-unknown-reason"])
def test_bad_profile_rejected_by_the_command(name, populated_out):
    """One per stage as a real process: status 2, one line, no traceback."""
    path = ROOT / "tests" / "gen" / "bad" / f"{name}.yaml"
    before = snapshot(populated_out)
    r = run_gen("--out", populated_out, "gen", path.relative_to(ROOT))
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert r.stderr == expected(path) + "\n"
    assert snapshot(populated_out) == before


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_rejected_by_the_stage_named(path, generator):
    """yaml-* fail to load, schema-* load but fail the schema, semantic-* pass it."""
    from exitplan_gen.errors import GenError
    from exitplan_gen.loader import load_file
    from exitplan_gen.schema import validate

    stage = path.name.split("-", 1)[0]
    try:
        doc, _ = load_file(str(path))
        if doc.value is None:
            raise GenError(str(path), 1, 1, "empty")
    except GenError:
        assert stage == "yaml"
        return
    assert stage != "yaml", "loads fine but is named yaml-*"
    try:
        validate(doc, generator.schema)
    except GenError:
        assert stage == "schema"
        return
    assert stage == "semantic", "passes the schema but is named schema-*"


def test_good_and_bad_together_write_nothing(tmp_path):
    """A failure half way leaves no partial output: a good profile named
    before a bad one is not written either."""
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", "profiles/hrtimer.yaml", "tests/gen/bad/semantic-shares-sum.yaml")
    assert r.returncode == 2
    assert not out.exists()
