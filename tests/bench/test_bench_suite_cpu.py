"""bench/suite_cpu.py: the suite's CPU per file and test, and the floor it sets on the wall time."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("suite_cpu", ROOT / "bench" / "suite_cpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SUITE_CPU = _bench()


def test_lines_are_read_and_added_up_per_file():
    rows = SUITE_CPU.read_lines(["1.5\t2.0\ttests/a.py::t1\n", "0.5\t1.0\ttests/a.py::t2[x::y]",
                                 "3.0\t3.0\ttests/b.py::t", "garbage", "x\t1\ttests/c.py::t"])
    assert [r[2] for r in rows] == ["tests/a.py::t1", "tests/a.py::t2[x::y]", "tests/b.py::t"]
    assert SUITE_CPU.per_file(rows) == [(3.0, 1, "tests/b.py"), (2.0, 2, "tests/a.py")]


def test_the_summary_names_the_floor_on_the_cores():
    rows = [(600.0, 700.0, "tests/a.py::t"), (360.0, 400.0, "tests/b.py::t")]
    text = SUITE_CPU.summary(rows, wall_s=600.0, cores=2, top=5)
    assert text.splitlines()[0] == ("2 tests: 960 CPU seconds (self and waited-for children), "
                                    "wall 600 s on 2 cores")
    assert "floor on 2 cores: 480 s (8.0 min); cores busy on average: 1.60" in text
    assert " 600.0      1  tests/a.py" in text


def test_the_plugin_counts_a_tests_children(tmp_path):
    """Run as the bench runs it: one test that burns CPU in a child is charged for it."""
    (tmp_path / "test_burn.py").write_text(
        "import subprocess, sys\n"
        "def test_burn():\n"
        "    subprocess.run([sys.executable, '-c', 'sum(range(3_000_000))'], check=True)\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not a worker's
    env.update({SUITE_CPU.DIR_ENV: str(out), "PYTHONPATH": str(ROOT / "bench")})
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "suite_cpu",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", os.devnull,
                           str(tmp_path / "test_burn.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = SUITE_CPU.read_lines((out / "main.tsv").read_text().splitlines())
    assert [r[2] for r in rows] == ["test_burn.py::test_burn"]
    assert rows[0][0] >= 0.03  # the child's interpreter start and its sum


def test_a_run_that_measured_nothing_is_an_error_that_says_why(monkeypatch, capsys):
    """A Python without the test extra (``python3`` outside the virtual environment) makes pytest
    refuse ``-n 2``: no test runs, and that is exit 2 with one line, not a floor of 0 s."""
    def refused(*args, **kwargs):
        return subprocess.CompletedProcess(args, 4)

    monkeypatch.setattr(SUITE_CPU.subprocess, "run", refused)
    assert SUITE_CPU.main(["--top", "3"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "ran no test (exit 4)" in captured.err
