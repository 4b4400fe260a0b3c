# SPDX-License-Identifier: GPL-2.0-only
"""conftest's host probe: every way a host can refuse a program (exec
error, signal, non-zero status) is an answer, never an exception; and
the 32-bit tests run on hosts whose kernel refuses IA-32 programs."""

import os
import shutil

import pytest

import conftest


def make_exe(path, text):
    path.write_text(text)
    os.chmod(path, 0o755)
    return str(path)


def test_exec_format_error_is_an_answer(tmp_path):
    # Executable bytes the kernel recognises as no format: ENOEXEC.
    exe = tmp_path / "junk"
    exe.write_bytes(b"\x7fELF\x01\x01\x01" + b"\0" * 9 + b"\x02\x00\x99\x99" + b"\0" * 40)
    os.chmod(exe, 0o755)
    assert "format" in conftest._runs([str(exe)]).lower()


def test_signal_and_status_are_answers(tmp_path):
    assert conftest._runs([make_exe(tmp_path / "sig", "#!/bin/sh\nkill -SEGV $$\n")]) == "killed by signal 11"
    assert conftest._runs([make_exe(tmp_path / "st", "#!/bin/sh\nexit 3\n")]) == "exit status 3"
    assert conftest._runs([make_exe(tmp_path / "ok", "#!/bin/sh\nexit 0\n")]) is None
    assert conftest._runs([str(tmp_path / "missing")]) is not None


def test_refusing_host_falls_back_to_qemu(tmp_path, monkeypatch):
    """A host that refuses the native probe gets qemu-i386, or a skip
    that names what is missing."""
    real = conftest._runs
    monkeypatch.setattr(conftest, "_runs", lambda cmd: "Exec format error" if len(cmd) == 1 else real(cmd))
    if shutil.which("qemu-i386") is None:
        with pytest.raises(pytest.skip.Exception, match="qemu-user"):
            conftest.i386_runner(tmp_path)
        return
    assert conftest.i386_runner(tmp_path) == [shutil.which("qemu-i386")]
