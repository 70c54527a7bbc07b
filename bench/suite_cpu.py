"""What the test suite costs in CPU, per file and per test: the floor of its wall time on this machine.

    .venv/bin/python bench/suite_cpu.py [--top 20] [-- PYTEST_ARGS...]

Runs the README's test command (``python -m pytest -q``, plus any ``PYTEST_ARGS``) with this module
as a pytest plugin (``-p suite_cpu``), which notes, around every test, the CPU seconds of the
pytest process and of the processes it has waited for (``getrusage``: self and children, user
and system; a child's own waited-for children are in its count). Every xdist worker writes its
own lines; the parent adds them up and prints the suite's CPU, its wall time, the CPU per file and
the costliest tests, and the floor: on ``C`` cores no scheduling of these tests can take less
wall time than their CPU over ``C``, so a goal below that floor needs less computation, not more
workers. Issue #28 item 5 (the whole suite in 8 minutes on two cores) is read against it.

What it misses (so the true floor is a little higher): a process nobody waits for (one that a
sandbox's PID namespace reaps) and the controller's own work between tests.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIR_ENV = "OL_SUITE_CPU_DIR"  # where the workers write their lines; unset: the plugin does nothing


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


try:  # the plugin's hook (pytest is there when pytest loads this module, not always otherwise)
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        folder = os.environ.get(DIR_ENV)
        cpu, wall = _cpu_seconds(), time.perf_counter()
        yield
        if folder:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            with open(os.path.join(folder, f"{worker}.tsv"), "a", encoding="utf-8") as f:
                f.write(f"{_cpu_seconds() - cpu:.3f}\t{time.perf_counter() - wall:.3f}\t"
                        f"{item.nodeid}\n")
except ImportError:  # pragma: no cover - bench/ is run with the test extra installed
    pass


def read_lines(lines: Iterable[str]) -> list[tuple[float, float, str]]:
    """``(cpu, wall, test id)`` of every well-formed line."""
    rows = []
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3:
            try:
                rows.append((float(parts[0]), float(parts[1]), parts[2]))
            except ValueError:
                continue
    return rows


def per_file(rows: list[tuple[float, float, str]]) -> list[tuple[float, int, str]]:
    """``(cpu, tests, file)`` per test file, costliest first."""
    cpu: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for seconds, _, test in rows:
        name = test.split("::", 1)[0]
        cpu[name] += seconds
        count[name] += 1
    return sorted(((cpu[n], count[n], n) for n in cpu), key=lambda r: (-r[0], r[2]))


def summary(rows: list[tuple[float, float, str]], wall_s: float, cores: int, top: int) -> str:
    """The report: totals, the floor on ``cores`` cores, the costliest files and tests."""
    total = sum(r[0] for r in rows)
    out = [f"{len(rows)} tests: {total:.0f} CPU seconds (self and waited-for children), "
           f"wall {wall_s:.0f} s on {cores} cores",
           f"floor on {cores} cores: {total / cores:.0f} s ({total / cores / 60:.1f} min); "
           f"cores busy on average: {total / max(wall_s, 1e-9):.2f}",
           "", f"CPU s  tests  file (top {top})"]
    out += [f"{c:6.1f}  {n:5d}  {name}" for c, n, name in per_file(rows)[:top]]
    out += ["", f"CPU s  wall s  test (top {top})"]
    out += [f"{c:6.1f}  {w:6.1f}  {t}" for c, w, t in sorted(rows, key=lambda r: -r[0])[:top]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ol-suite-cpu-") as folder:
        env = {**os.environ, DIR_ENV: folder,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "bench"),
                                                           os.environ.get("PYTHONPATH")]))}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "suite_cpu",
                               *args.pytest_args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                              check=False)
        wall = time.perf_counter() - start
        rows = []
        for path in sorted(Path(folder).glob("*.tsv")):
            rows += read_lines(path.read_text(encoding="utf-8").splitlines())
    if not rows:  # e.g. a Python without the test extra (pytest-xdist): nothing was measured
        print(f"suite_cpu: pytest ran no test (exit {done.returncode}); run it with the Python that "
              "has the test extra: .venv/bin/python bench/suite_cpu.py", file=sys.stderr)
        return 2
    print(summary(rows, wall, len(os.sched_getaffinity(0)), args.top))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
