"""#24: a failure of the grading machine (no descriptors, no space for ol's own staging) is the
row ``internal``, graded again next run, never the student's ``error``."""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import EXIT_INTERNAL, HostError, host_failure
from harness.paths import REPO_ROOT
from harness.sandbox import staging


def _workspace(path: Path) -> Path:
    shutil.copytree(REPO_ROOT / "reference" / "python", path / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return path


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE, errno.ENOMEM])
def test_out_of_descriptors_while_reading_a_submission_is_the_machines(tmp_path, monkeypatch, code):
    ws = _workspace(tmp_path / "ws")
    real = os.scandir

    def scandir(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(staging.os, "scandir", scandir)
    with pytest.raises(HostError) as caught:
        staging.stage(ws)
    assert caught.value.exit_code == EXIT_INTERNAL
    monkeypatch.setattr(staging.os, "scandir", real)
    assert staging.stage(ws).files  # and the same tree reads fine once the machine recovers


def test_a_submissions_own_problem_is_still_its_error(tmp_path):
    ws = _workspace(tmp_path / "ws")
    (ws / "python" / "tinyllm" / "prob" / "link.py").symlink_to("/etc/passwd")
    with pytest.raises(Exception) as caught:
        staging.stage(ws)
    assert not isinstance(caught.value, HostError)
    assert not host_failure(OSError(errno.EACCES, "denied"))
    assert host_failure(OSError(errno.ENOSPC, "full"))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="mounts a full tmpfs in a private mount namespace: needs root")
@pytest.mark.slow
def test_a_full_disk_for_ols_own_staging_is_internal_and_graded_again(tmp_path):
    """ol's temporary directory is a tmpfs that is full: the slot cannot stage the submission.
    The row is internal (exit 3), and the next run, with room again, grades it."""
    subs = tmp_path / "subs"
    _workspace(subs / "kate")
    out = tmp_path / "book"
    full = tmp_path / "full"
    full.mkdir()
    grade = shlex.join([sys.executable, "-m", "harness", "grade", "M07.6", str(subs), "--out",
                        str(out), "--seed", "public", "--jobs", "1"])
    script = (f"set -e; mount -t tmpfs -o size=1m tmpfs {shlex.quote(str(full))}; "
              f"dd if=/dev/zero of={shlex.quote(str(full / 'filler'))} bs=4k 2>/dev/null || true; "
              # Two pages free: Python's test write of its temporary directory still succeeds
              # (else it would choose another one), the copies of the submission do not fit.
              f"truncate -s -8k {shlex.quote(str(full / 'filler'))}; "
              f"cd {REPO_ROOT}; TMPDIR={shlex.quote(str(full))} {grade}")
    done = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == EXIT_INTERNAL, done.stdout + done.stderr
    row = json.loads((out / "gradebook.json").read_text())["submissions"][0]
    assert row["verdict"] == "internal", row
    again = subprocess.run(shlex.split(grade), cwd=REPO_ROOT, capture_output=True, text=True,
                           timeout=300, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((out / "gradebook.json").read_text())["submissions"][0]["verdict"] == "pass"
