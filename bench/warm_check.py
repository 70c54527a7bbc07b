"""The isolated check against the in-process one inside one warm process, test by test.

    python3 bench/warm_check.py [--rounds 5] [--module M07.6] [--tests N]

Both checks of the module's catalog on the bundled reference, alternated round by round in one
process that has imported everything already (scipy, the catalog): the in-process target and the
reference's ``python/`` tree as a workspace in an isolated worker. Printed as medians: each
test's wall seconds both ways and their difference, the parent's and the worker's CPU of the
isolated check, and the requests and calls that crossed. What the process boundary costs a
check, without the start-up of a fresh command (``bench/run.py`` measures that).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's harness

from harness.check.engine import run_check  # noqa: E402
from harness.engine.isolated import IsolatedTarget  # noqa: E402
from harness.engine.requests import CheckRequest  # noqa: E402
from harness.engine.workspace import resolve_workspace  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def _proc_cpu(pid: int) -> float:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0.0
    fields = data[data.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Counting:
    """Counts the requests and calls of every ``IsolatedTarget`` and its worker's CPU at close."""

    def __init__(self) -> None:
        self.requests = self.calls = 0
        self.worker_cpu = 0.0
        stream, close = IsolatedTarget._stream, IsolatedTarget.close
        counting = self

        def counted_stream(target, fn, calls, kwargs, take):  # type: ignore[no-untyped-def]
            counting.requests += 1
            counting.calls += len(calls)
            return stream(target, fn, calls, kwargs, take)

        def counted_close(target):  # type: ignore[no-untyped-def]
            worker = target._worker
            if worker is not None:
                counting.worker_cpu += sum(_proc_cpu(pid) for pid in {worker.process.pid, worker.root}
                                           if pid)
            return close(target)

        IsolatedTarget._stream = counted_stream  # type: ignore[method-assign]
        IsolatedTarget.close = counted_close  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--module", default="M07.6")
    parser.add_argument("--tests", type=int, default=8, help="the slowest tests to list")
    opts = parser.parse_args()
    ws = str(ROOT / "reference")
    resolve_workspace(ws)
    counting = Counting()
    rows: dict[str, dict[str, list[float]]] = {"in-process": {}, "isolated": {}}
    totals: dict[str, list[float]] = {"in-process": [], "isolated": [], "isolated CPU": [],
                                      "worker CPU": []}
    run_check(CheckRequest(opts.module, target="reference"), None)  # warm: imports, caches
    for _ in range(opts.rounds):
        for name in ("in-process", "isolated"):
            counting.requests = counting.calls = 0
            counting.worker_cpu = 0.0
            cpu, start = time.process_time(), time.perf_counter()
            if name == "in-process":
                result = run_check(CheckRequest(opts.module, target="reference"), None)
            else:
                result = run_check(CheckRequest(opts.module, workspace=ws), resolve_workspace(ws))
            totals[name].append(time.perf_counter() - start)
            if name == "isolated":
                totals["isolated CPU"].append(time.process_time() - cpu)
                totals["worker CPU"].append(counting.worker_cpu)
                requests, calls = counting.requests, counting.calls
            assert not result.failed, [t.name for t in result.tests if not t.ok]
            for test in result.tests:
                rows[name].setdefault(test.name, []).append(test.duration_s)
    print(f"{opts.module}: {opts.rounds} rounds in one warm process, medians; the isolated check "
          f"made {requests} requests of {calls} calls\n")
    for name, runs in totals.items():
        print(f"- {name}: {statistics.median(runs):.3f} s ({', '.join(f'{r:.3f}' for r in runs)})")
    diff = statistics.median(totals["isolated"]) - statistics.median(totals["in-process"])
    print(f"- isolated - in-process: {diff:+.3f} s\n")
    print("| test | in-process s | isolated s | difference s |")
    print("|---|---:|---:|---:|")
    med = {name: {t: statistics.median(v) for t, v in tests.items()} for name, tests in rows.items()}
    order = sorted(med["isolated"], key=lambda t: med["in-process"][t] - med["isolated"][t])
    for test in order[:opts.tests]:
        a, b = med["in-process"][test], med["isolated"][test]
        print(f"| {test} | {a:.3f} | {b:.3f} | {b - a:+.3f} |")
    rest = order[opts.tests:]
    if rest:
        a = sum(med["in-process"][t] for t in rest)
        b = sum(med["isolated"][t] for t in rest)
        print(f"| the other {len(rest)} | {a:.3f} | {b:.3f} | {b - a:+.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
