"""bench/side_by_side.py: two checkouts measured alternately (smoke test, and its one bad input)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "bench" / "side_by_side.py"


@pytest.mark.slow
def test_one_round_prints_a_ratio_per_command():
    done = subprocess.run([sys.executable, str(SCRIPT), str(REPO_ROOT), str(REPO_ROOT),
                           "--rounds", "1"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert set(rows) == {"check_isolated", "check_in_process", "check_failing"}
    for row in rows.values():
        assert float(row[1]) > 0 and float(row[2]) > 0 and float(row[3]) > 0


def test_a_folder_that_is_not_a_checkout_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), str(REPO_ROOT)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not a checkout of ol" in done.stderr
