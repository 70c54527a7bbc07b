"""``tests/olrun.py``, the tests' one way to run ol as a process: what it returns and bounds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from olrun import Ol


def test_a_command_runs_to_its_end_in_a_tmpdir_of_its_own(run_ol, tmp_path):
    run = run_ol("start", "--help")
    assert run.rc == 0, run.text
    assert "usage: ol start" in run.out and run.err == ""
    assert run.tmp.parent == tmp_path and run.tmp.name.startswith("oltmp-")
    assert run.left() == []
    assert f"rc=0\n--- stdout ---\n{run.out}" in run.text  # the whole output, nothing cut


def test_a_command_past_its_time_out_is_killed_with_its_session(tmp_path):
    run = Ol(tmp_path, "check", "M07.6", "--target", "reference").wait(0.05)
    assert run.rc == -9 and run.elapsed < 30
    with pytest.raises(ProcessLookupError):  # its session's group is gone, children included
        os.killpg(run.proc.pid, 0)


def test_runs_can_share_a_tmpdir_and_the_peak_memory_is_read(tmp_path):
    shared = tmp_path / "shared"
    first = Ol(shared, "start", "--help", shared_tmp=True, peak=True).wait()
    second = Ol(shared, "start", "--help", shared_tmp=True).wait()
    assert first.tmp == second.tmp == shared
    assert first.rc == second.rc == 0
    assert 10 << 10 < first.peak_kb < 1 << 20, first.peak_kb  # between 10 MiB and 1 GiB


def test_the_test_session_environment_does_not_leak_into_ol(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/nowhere")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    run = Ol(tmp_path, "check", "M07.6", "--target", "reference", env={"OL_PROBE": "1"},
             watch=lambda: Path(f"/proc/{run.proc.pid}/environ").read_bytes())
    run.wait(120)
    assert run.rc == 0, run.text
    assert run.samples, "the watch never saw ol run"
    environ = run.samples[0].split(b"\0")
    assert b"OL_PROBE=1" in environ and b"PYTHONDONTWRITEBYTECODE=1" in environ
    assert f"TMPDIR={run.tmp}".encode() in environ
    assert not [v for v in environ if v.startswith((b"PYTHONPATH=", b"GITHUB_STEP_SUMMARY="))]
    assert not (tmp_path / "summary.md").exists()
