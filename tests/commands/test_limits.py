"""Numeric options outside their range are one line naming the range, exit 2, before any run.

``--timeout inf`` used to fail correct code (no call could finish "in time"), and a huge
``--memory-mb`` overflowed the worker's rlimit so that it died; both now stop at parse time.
"""

from __future__ import annotations

import argparse
import shutil

import pytest

from harness.cli import main
from harness.commands.common import worker_limits_of as _limits
from harness.engine.limits import JOBS_MAX, MEMORY_MB_MAX
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON

TIMEOUT = "must be positive and at most 3600 seconds"
MEMORY = "must be at least 256 and at most 1048576 (1 TiB)"
JOBS = f"must be at least 1 and at most {JOBS_MAX}"
SUBMISSION = "must be positive and at most 86400 seconds"

CASES = [
    *[(["check", "M07.6", "--timeout", v], f"--timeout {TIMEOUT}, got {v}")
      for v in ("inf", "nan", "0", "-1", "3600.5", "1e300")],
    (["check", "M07.6", "--timeout=-inf"], f"--timeout {TIMEOUT}, got -inf"),
    (["check", "M07.6", "--timeout", "ten"], "--timeout must be a number of seconds, got 'ten'"),
    *[(["check", "M07.6", "--memory-mb", v], f"--memory-mb {MEMORY}, got {v}")
      for v in ("1000000000000", str(10 ** 30), "255", "0", "-4096")],
    (["check", "M07.6", "--memory-mb", "4e3"], "--memory-mb must be a whole number, got '4e3'"),
    *[(["check", "M07.6", "--disk-mb", v], f"--disk-mb must be at least 1 and at most 16384, got {v}")
      for v in ("0", "-1", "16385")],
    (["grade", "M07.6", "subs", "--timeout", "inf"], f"--timeout {TIMEOUT}, got inf"),
    (["grade", "M07.6", "subs", "--memory-mb", str(2 ** 64)], f"--memory-mb {MEMORY}"),
    (["grade", "M07.6", "subs", "--disk-mb", "0"], "--disk-mb must be at least 1 and at most 16384"),
    (["grade", "M07.6", "subs", "--submission-timeout", "inf"], f"--submission-timeout {SUBMISSION}"),
    (["grade", "M07.6", "subs", "--submission-timeout", "nan"], f"--submission-timeout {SUBMISSION}"),
    (["grade", "M07.6", "subs", "--jobs", "0"], f"--jobs {JOBS}, got 0"),
    (["grade", "M07.6", "subs", "--jobs", "100000"], f"--jobs {JOBS}, got 100000"),
    (["lab", "M07.6", "--jobs", "1000"], f"--jobs {JOBS}, got 1000"),
    (["tests", "M07.6", "--mine", "tests", "--jobs", "-2"], f"--jobs {JOBS}, got -2"),
]


@pytest.mark.parametrize("argv,says", CASES, ids=[" ".join(a[0:1] + a[-2:]) for a, _ in CASES])
def test_an_out_of_range_option_is_one_line_naming_the_range(argv, says, tmp_path, capsys,
                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "subs").mkdir()
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"ol: {says}"), captured.err


def test_the_api_path_checks_the_same_ranges():
    for timeout, memory in ((float("inf"), None), (float("nan"), None), (None, 10 ** 12)):
        with pytest.raises(HarnessError, match="at most"):
            _limits(argparse.Namespace(timeout=timeout, memory_mb=memory))
    limits = _limits(argparse.Namespace(timeout=3600.0, memory_mb=MEMORY_MB_MAX))
    assert (limits.call_timeout_s, limits.memory_mb) == (3600.0, MEMORY_MB_MAX)


def test_the_largest_limits_still_pass_correct_code(tmp_path, capsys):
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python/tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert main(["check", "M07.6", "--workspace", str(ws), "-k", "hand_example",
                 "--timeout", "3600", "--memory-mb", str(MEMORY_MB_MAX)]) == 4  # -k: partial, no failure
    assert "2 passed, 0 failed, 18 not run (-k hand_example), score 3/25" in capsys.readouterr().out
