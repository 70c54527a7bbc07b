"""What the process boundary costs, per call and per request: an isolated worker against in-process.

    python3 bench/boundary.py [--calls 20000] [--rounds 5]

One trivial function (it returns its draft: ``(x, True)``, so nearly all the cost is the
harness's) is called in batches shaped like the chi-square's (``(p, q, x, u, u')``, p and q
tuples shared by every call), through ``InProcessTarget`` and through ``IsolatedTarget``, in
rounds that interleave the two. Printed as medians: microseconds per call of a large batch and
milliseconds per request of one call, wall and CPU, the parent's and the worker's apart (the
worker's CPU read from ``/proc``, in clock ticks: take enough calls), and the worker's start
(spawn to ready). These are the
figures behind docs/performance.md's account of the isolated check and of grading.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's harness

from harness.engine.isolated import IsolatedTarget
from harness.engine.target import InProcessTarget, Target
from harness.uniforms import HarnessPCG32

SOURCE = "def step(p, q, x, u_accept, u_resample):\n    return x, True\n"
RETURNS = {"step": "tuple[int,bool]"}
TICK = os.sysconf("SC_CLK_TCK")


def calls_like_the_chi_square(count: int) -> list[tuple]:
    gen = HarnessPCG32(16, 54)
    p, q = (0.5, 0.25, 0.125, 0.125), (0.25, 0.25, 0.25, 0.25)
    return [(p, q, int(gen.uniform() * 4), gen.uniform(), gen.uniform()) for _ in range(count)]


def _own_cpu() -> float:
    return time.process_time()


def _proc_cpu(pid: int) -> float:
    data = Path(f"/proc/{pid}/stat").read_bytes()
    fields = data[data.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _worker_cpu(target: Target) -> float:
    """The worker's CPU so far: the process ol started and, in a PID namespace, its PID 1."""
    if not isinstance(target, IsolatedTarget):
        return 0.0
    worker = target._worker
    assert worker is not None
    pids = {worker.process.pid, worker.root}
    return sum(_proc_cpu(pid) for pid in pids)


def measure(target: Target, calls: list[tuple], repeat: int) -> tuple[float, float, float]:
    """(wall, parent CPU, worker CPU) seconds of ``repeat`` batches of ``calls``."""
    worker, parent, start = _worker_cpu(target), _own_cpu(), time.perf_counter()
    for _ in range(repeat):
        target.map("step", calls)
    return (time.perf_counter() - start, _own_cpu() - parent, _worker_cpu(target) - worker)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000, help="calls in the large batch")
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    if opts.calls < 1 or opts.rounds < 1:
        print("bench/boundary.py: --calls and --rounds must be at least 1", file=sys.stderr)
        return 2
    calls = calls_like_the_chi_square(opts.calls)
    requests = max(1, opts.calls // 40)  # one-call requests per round
    rows: dict[str, list[tuple[float, float, float]]] = {}
    starts: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="ol-bench-boundary-") as tmp:
        prob = Path(tmp, "python", "tinyllm", "prob")
        prob.mkdir(parents=True)
        for init in (prob.parent / "__init__.py", prob / "__init__.py"):
            init.write_text("")
        (prob / "rejection.py").write_text(SOURCE)
        sys.path.insert(0, str(prob.parent.parent))
        import tinyllm.prob.rejection as module  # the same source, in process

        in_process = InProcessTarget("in-process", module, ("step",), RETURNS)
        for _ in range(opts.rounds):
            spawned, cpu = time.perf_counter(), _own_cpu()
            isolated = IsolatedTarget("isolated", prob.parent.parent, "tinyllm.prob.rejection",
                                      ("step",), RETURNS)
            try:
                assert isolated.import_status() is None, isolated.import_status()
                starts.append((time.perf_counter() - spawned, _own_cpu() - cpu + _worker_cpu(isolated)))
                for name, target in (("in-process", in_process), ("isolated", isolated)):
                    target.begin_test()
                    rows.setdefault(f"{name} batch", []).append(measure(target, calls, 1))
                    single = measure(target, calls[:1], requests)
                    rows.setdefault(f"{name} request", []).append(
                        tuple(x / requests for x in single))  # type: ignore[arg-type]
            finally:
                isolated.close()
    print(f"{opts.rounds} rounds, medians; a batch of {opts.calls} calls, {requests} requests of one call\n")
    print("| path | wall | parent CPU | worker CPU |")
    print("|---|---|---|---|")
    for name, runs in rows.items():
        wall, parent, worker = (statistics.median(r[i] for r in runs) for i in range(3))
        if name.endswith("batch"):
            scale, unit = 1e6 / opts.calls, "us per call"
        else:
            scale, unit = 1e3, "ms per request"
        print(f"| {name} ({unit}) | {wall * scale:.2f} | {parent * scale:.2f} | {worker * scale:.2f} |")
    wall, cpu = (statistics.median(s[i] for s in starts) for i in range(2))
    print(f"\n- a worker's start (spawn to ready, the sandbox and numpy included): {wall * 1e3:.0f} ms "
          f"wall, {cpu * 1e3:.0f} ms CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
