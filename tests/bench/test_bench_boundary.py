"""``bench/boundary.py`` runs end to end (a small batch, one round) and refuses bad arguments."""

from __future__ import annotations

import subprocess
import sys

from harness.paths import REPO_ROOT

TOOL = REPO_ROOT / "bench" / "boundary.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_it_prints_both_paths_per_call_and_per_request():
    done = _run("--calls", "20000", "--rounds", "1")  # enough for the worker's CPU ticks
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ("in-process batch (us per call)", "isolated batch (us per call)",
                "isolated request (ms per request)", "a worker's start"):
        assert row in done.stdout, done.stdout
    worker_cpu = [line.split("|")[4] for line in done.stdout.splitlines()
                  if line.startswith("| isolated batch")]
    assert worker_cpu and float(worker_cpu[0]) > 0, done.stdout  # the worker's CPU is read


def test_a_count_below_one_is_one_line_and_exit_2():
    done = _run("--calls", "0")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--calls" in done.stderr
