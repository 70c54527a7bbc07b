"""Wall-time benchmarks of ol's main commands, as medians over repeated runs in one session.

    python3 bench/run.py [--repeat 5] [--out docs/benchmarks.md]

Each command runs as a fresh process (what a user waits for, start-up included); the commands are
interleaved round by round, so a change in the machine's load hits all of them alike. Ratios are
taken between medians of the same run, each printed beside its goal (issue #16). Beside the time,
each command's peak memory (the largest resident set of the process and the children it waited
for, ``wait4``'s ``ru_maxrss``). ``floor`` is ``bench/floor.py``: a process that imports numpy and
runs the catalog's own compute, nothing else.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOOR = "floor"  # not an ol command: bench/floor.py
COMMANDS = {
    FLOOR: ["M07.6"],
    "check_reference": ["check", "M07.6", "--target", "reference"],
    "check_isolated": ["check", "M07.6", "--workspace", "reference"],
    "lab": ["lab", "M07.6", "--out", "{tmp}"],
    # A failing check (the chapter's pitfall 1), with and without its diagnosis.
    "check_failing": ["check", "M07.6", "--target", "s01"],
    "check_failing_undiagnosed": ["check", "M07.6", "--target", "s01", "--no-diagnosis"],
}
EXIT_CODES = {"check_failing": 1, "check_failing_undiagnosed": 1}  # the others exit 0
DIFFERENCES = [
    ("check_failing", "check_failing_undiagnosed", "the diagnosis of a failing check (seconds)", 0.5),
]
RATIOS = [  # (numerator, denominator, what, goal): the goals of issue #16
    ("check_reference", FLOOR, "in-process check / its floor", 2.0),
    ("check_isolated", "check_reference", "isolated check / in-process check", 1.1),
    ("lab", "check_reference", "lab (all mutants) / one in-process check", 3.0),
]


def run_once(name: str, args: list[str], tmp: str, expected: int = 0) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one fresh process."""
    head = [sys.executable, str(ROOT / "bench" / "floor.py")] if name == FLOOR else \
        [sys.executable, "-m", "harness"]
    cmd = [*head, *[a.format(tmp=tmp) for a in args]]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != expected:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()}")
    return elapsed, usage.ru_maxrss / 1024  # Linux reports kilobytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=sorted(COMMANDS), default=sorted(COMMANDS))
    opts = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in opts.only}
    peaks: dict[str, list[float]] = {name: [] for name in opts.only}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(opts.repeat):
            for name in opts.only:
                seconds, peak = run_once(name, COMMANDS[name], tmp, EXIT_CODES.get(name, 0))
                times[name].append(seconds)
                peaks[name].append(peak)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"medians of {opts.repeat} runs (wall seconds, fresh process each)\n")
    print("| command | median s | runs | peak MB |")
    print("|---|---|---|---|")
    for name in opts.only:
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        shown = "python3 bench/floor.py" if name == FLOOR else "ol"
        print(f"| `{shown} {' '.join(COMMANDS[name]).replace('{tmp}', 'TMP')}` | {med[name]:.2f} "
              f"| {runs} | {max(peaks[name]):.0f} |")
    print()
    for a, b, label, target in RATIOS:
        if a in med and b in med:
            ratio = med[a] / med[b]
            verdict = "within" if ratio <= target else "OVER"
            print(f"- {label}: {ratio:.2f} ({verdict} the goal of {target})")
    for a, b, label, target in DIFFERENCES:
        if a in med and b in med:
            extra = med[a] - med[b]
            verdict = "within" if extra <= target else "OVER"
            print(f"- {label}: +{extra:.2f} ({verdict} the target of {target})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
