"""Wall-time benchmarks of ol's main commands, as medians over repeated runs in one session.

    python3 bench/run.py [--repeat 5] [--only NAME ...] [--mutmut] [--baseline DIR]

Each command runs as a fresh process (what a user waits for, start-up included); the commands are
interleaved round by round, so a change in the machine's load hits all of them alike. Ratios are
taken between medians of the same run, each printed beside its goal (issue #16). Beside the time,
each command's peak memory (the largest resident set of the process and the children it waited
for, ``wait4``'s ``ru_maxrss``). ``floor`` is ``bench/floor.py``: a process that imports numpy and
runs the catalog's own compute, nothing else. ``ol grade`` grades ``SUBMISSIONS`` copies of the
reference, each run into a gradebook of its own; ``--mutmut`` adds one ``ol audit M07.6 --mutmut
--compare-lab``, which times mutmut and ``ol lab`` in that same run. ``--baseline DIR`` runs
every selected command also from another checkout of ol (``git worktree add DIR COMMIT``),
interleaved with this one's, and prints this tree's medians over the baseline's: what a change
costs, measured side by side.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

FLOOR = "floor"  # not an ol command: bench/floor.py
SUBMISSIONS = 20  # copies of the reference that ``ol grade`` grades
COMMANDS = {
    FLOOR: ["M07.6"],
    "check_reference": ["check", "M07.6", "--target", "reference"],
    "check_isolated": ["check", "M07.6", "--workspace", "reference"],
    "lab": ["lab", "M07.6", "--out", "{out}"],
    # A failing check (the chapter's pitfall 1), with and without its diagnosis.
    "check_failing": ["check", "M07.6", "--target", "s01"],
    "check_failing_undiagnosed": ["check", "M07.6", "--target", "s01", "--no-diagnosis"],
    "check_M06.3": ["check", "M06.3", "--target", "reference"],
    "lab_M06.3": ["lab", "M06.3", "--out", "{out}"],
    "check_M07.1": ["check", "M07.1", "--target", "reference"],
    "lab_M07.1": ["lab", "M07.1", "--out", "{out}"],
    # A lab re-run after one edit (#27 item 5): see LAB_RERUNS.
    "lab_rerun_test": ["lab", "M07.6", "--out", "{out}"],
    "lab_rerun_mutant": ["lab", "M07.6", "--out", "{out}"],
    # Each grading run writes a new gradebook (a folder of its own: an old one would be resumed).
    "grade_1": ["grade", "M07.6", "{subs}", "--jobs", "1", "--seed", "public", "--out", "{out}"],
    "grade_2": ["grade", "M07.6", "{subs}", "--jobs", "2", "--seed", "public", "--out", "{out}"],
    "grade_dask_2": ["grade", "M07.6", "{subs}", "--jobs", "2", "--executor", "dask", "--seed",
                     "public", "--out", "{out}"],
    # Rung R1 on the 20-test suite of issue #27's goal (this tree's copy, also for a baseline).
    "tests_mine": ["tests", "M07.6", "--mine", str(ROOT / "tests" / "own_tests" / "suites" / "twenty")],
    # One sampled test (the speculative step's chi-square): a wrong law (s06) against a right one.
    "chi_square_failing": ["check", "M07.6", "--target", "s06", "-k", "speculative_chi_square"],
    "chi_square_passing": ["check", "M07.6", "--target", "reference", "-k", "speculative_chi_square"],
}
GROUPS = {"grade": ("grade_1", "grade_2", "grade_dask_2"),
          "labs": ("check_M06.3", "lab_M06.3", "check_M07.1", "lab_M07.1"),
          "chi_square": ("chi_square_failing", "chi_square_passing")}
EXIT_CODES = {"check_failing": 1, "check_failing_undiagnosed": 1,  # the others exit 0
              "chi_square_failing": 1, "chi_square_passing": 4}  # -k: a partial run
DIFFERENCES = [
    ("check_failing", "check_failing_undiagnosed", "the diagnosis of a failing check (seconds)", 0.5),
    ("check_isolated", "check_reference", "isolated check - in-process check (seconds)", 0.15),
]
RATIOS = [  # (numerator, denominator, what, goal: at most): the goals of issue #16
    ("check_reference", FLOOR, "in-process check / its floor", 2.0),
    ("check_isolated", "check_reference", "isolated check / in-process check", 1.1),
    ("lab_M06.3", "check_M06.3", "M06.3: lab (all mutants) / one in-process check", 3.0),
    ("lab_M07.1", "check_M07.1", "M07.1: lab (all mutants) / one in-process check", 3.0),
    ("lab", "check_reference", "M07.6: lab (all mutants) / one in-process check", 3.0),
    ("lab_rerun_test", "check_reference",
     "M07.6: lab re-run after editing one test / one in-process check", 1.5),
    ("lab_rerun_mutant", "check_reference",
     "M07.6: lab re-run after adding one mutant / one in-process check", 1.5),
    ("tests_mine", "check_isolated",
     "ol tests M07.6 --mine, the 20-test suite / one isolated check", 3.0),
    ("grade_dask_2", "grade_2", "ol grade --executor dask / local, both --jobs 2, same submissions",
     1.1),
]
# The lab's cache (#27 item 5): every lab run gets a cache folder of its own (OL_CACHE_DIR), empty
# for a cold lab; a re-run's is a warm cache of this tree (made once, untimed) left as the edit
# would leave it (bench/lab_cache_edit.py: a median column, test_speculative_accepts_without_
# resampling; a median row, x42, one of the mutants that reach the chi-square). A baseline older
# than the cache ignores OL_CACHE_DIR: its re-runs are whole labs, as they were.
LAB_RERUNS = {"lab_rerun_test": ["--test", "test_speculative_accepts_without_resampling"],
              "lab_rerun_mutant": ["--mutant", "x42"]}


def lab_cache_env(name: str, tmp: str, out: str) -> dict[str, str]:
    """The environment of lab ``name``'s run: its own cache folder, warm and edited for a re-run."""
    cache = os.path.join(out, "cache")
    env = {k: v for k, v in os.environ.items() if k != "OL_NO_CACHE"}
    env["OL_CACHE_DIR"] = cache
    if name in LAB_RERUNS:
        warm = os.path.join(tmp, "warm-lab-cache")
        if not os.path.isdir(warm):
            subprocess.run([sys.executable, "-m", "harness", "lab", "M07.6", "--out",
                            os.path.join(tmp, "warm-lab")], cwd=ROOT, check=True,
                           env={**env, "OL_CACHE_DIR": warm}, stdout=subprocess.DEVNULL)
        shutil.copytree(warm, cache)
        subprocess.run([sys.executable, str(ROOT / "bench" / "lab_cache_edit.py"), cache, "M07.6",
                        *LAB_RERUNS[name]], cwd=ROOT, check=True)
    return env
SPEEDUPS = [  # (slower, faster, what, goal: at least)
    ("grade_1", "grade_2",
     f"ol grade, {SUBMISSIONS} copies of the reference: --jobs 2 against --jobs 1", 1.8),
]
SAME_RUN = [  # (numerator, denominator, what): measured side by side, no goal
    ("chi_square_failing", "chi_square_passing",
     "one chi-square, ol check -k: a wrong law (s06, stops at an interim look) / the reference's "
     "20000 draws"),
]
THROUGHPUT = [("grade_1", 1), ("grade_2", 2)]  # (command, cores it uses): submissions/min/core
THROUGHPUT_GOAL = 140.0  # issue #27 (#16's was 100)


def shown_command(name: str) -> str:
    args = " ".join(COMMANDS[name]).replace("{out}", "OUT").replace("{subs}", "SUBMISSIONS")
    return f"python3 bench/floor.py {args}" if name == FLOOR else f"ol {args}"


def run_once(name: str, args: list[str], tmp: str, subs: str,
             expected: int = 0, root: Path = ROOT) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MB) of one fresh process: the CPU is the process's
    and its children's (a lab's or a grading run's jobs included), the peak the largest of them.
    ``root``: the checkout whose ol runs (its folder is the first on ``python -m``'s path)."""
    head = [sys.executable, str(root / "bench" / "floor.py")] if name == FLOOR else \
        [sys.executable, "-m", "harness"]
    out = tempfile.mkdtemp(prefix=f"{name}-", dir=tmp)
    cmd = [*head, *[a.format(out=out, subs=subs) for a in args]]
    env = lab_cache_env(name, tmp, out) if name.startswith("lab") else None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != expected:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()[-2000:]}")
    if name.startswith("lab"):
        LAB_COMPUTE.setdefault(name, []).append(lab_compute(Path(out)))
    shutil.rmtree(out)
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: kilobytes


LAB_COMPUTE: dict[str, list[tuple[float, float, int]]] = {}


def lab_compute(out: Path) -> tuple[float, float, int]:
    """(seconds of all the mutants' cells, seconds of the reference's catalog, mutants) of the lab
    that wrote ``out``: what its cells cost, whatever else the lab does."""
    lab = json.loads(next(out.glob("lab-*.json")).read_text(encoding="utf-8"))
    cells = sum(m["duration_s"] for m in lab["mutants"])
    return cells, sum(t["duration_s"] for t in lab["reference"]["tests"]), len(lab["mutants"])


def make_submissions(tmp: str) -> str:
    """``SUBMISSIONS`` workspaces, each a copy of the reference's ``python/`` tree."""
    folder = Path(tmp) / "submissions"
    for i in range(1, SUBMISSIONS + 1):
        shutil.copytree(ROOT / "reference" / "python", folder / f"s{i:02d}" / "python")
    return str(folder)


def mutmut_figures(tmp: str) -> dict[str, Any]:
    """``ol audit M07.6 --mutmut --compare-lab`` once: mutmut's run and ``ol lab`` timed in the
    same run."""
    out = Path(tmp) / "audit"
    cmd = [sys.executable, "-m", "harness", "audit", "M07.6", "--mutmut", "--compare-lab",
           "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    audit = json.loads((out / "audit-mutmut-M07.6.json").read_text(encoding="utf-8"))
    return {**audit["speed"], "mutmut_mutants": audit["counts"], "lab": audit["lab"]}


def cells_line(runs: list[tuple[float, float, int]], check: float) -> str:
    """What a lab's cells alone cost, and the ratio to a check that this leaves as a floor."""
    cores = os.cpu_count() or 1
    cells = statistics.median(c for c, _, _ in runs)
    reference = statistics.median(r for _, r, _ in runs)
    mutants = runs[0][2]
    floor = (check + cells / cores) / check
    return (f"its cells: {cells:.2f} s of compute for {mutants} mutants ({cells / mutants:.3f} s each; "
            f"the reference's whole catalog {reference:.3f} s): one check plus {cells / cores:.2f} s "
            f"on {cores} cores is {floor:.2f} checks before anything else")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=sorted([*COMMANDS, *GROUPS]), default=None,
                        help="commands or groups (grade, labs) to run; default: all")
    parser.add_argument("--mutmut", action="store_true",
                        help="also run `ol audit M07.6 --mutmut` once: the lab's cost per mutant "
                             "against mutmut's, in that same run (needs the audit extra)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="also run each command from the ol checkout DIR, interleaved, and "
                             "print this tree's medians over its")
    opts = parser.parse_args()
    names = list(COMMANDS) if opts.only is None else [
        n for n in COMMANDS if n in opts.only or any(n in GROUPS[g] for g in opts.only if g in GROUPS)]
    if opts.mutmut and importlib.util.find_spec("mutmut") is None:
        print("bench: --mutmut needs mutmut: pip install -e '.[audit]'", file=sys.stderr)
        return 2
    if "grade_dask_2" in names and importlib.util.find_spec("distributed") is None:
        names.remove("grade_dask_2")
        print("bench: dask is not installed, so `ol grade --executor dask` is left out "
              "(pip install -e '.[dask]')", file=sys.stderr)
    times: dict[str, list[float]] = {name: [] for name in names}
    peaks: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    base_times: dict[str, list[float]] = {name: [] for name in names}
    base_cpus: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        subs = make_submissions(tmp)
        for _ in range(opts.repeat):
            for name in names:
                seconds, cpu, peak = run_once(name, COMMANDS[name], tmp, subs, EXIT_CODES.get(name, 0))
                times[name].append(seconds)
                cpus[name].append(cpu)
                peaks[name].append(peak)
                if opts.baseline is not None:
                    seconds, cpu, _ = run_once(name, COMMANDS[name], tmp, subs,
                                               EXIT_CODES.get(name, 0), opts.baseline.resolve())
                    base_times[name].append(seconds)
                    base_cpus[name].append(cpu)
        mutmut = mutmut_figures(tmp) if opts.mutmut else None
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"medians of {opts.repeat} runs, interleaved (wall seconds, fresh process each)\n")
    print("| command | median s | runs | median CPU s | peak MB |")
    print("|---|---|---|---|---|")
    for name in names:
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"| `{shown_command(name)}` | {med[name]:.2f} | {runs} | {statistics.median(cpus[name]):.2f} "
              f"| {max(peaks[name]):.0f} |")
    print()
    for a, b, label, target in RATIOS:
        if a in med and b in med:
            ratio = med[a] / med[b]
            print(f"- {label}: {ratio:.2f} ({'within' if ratio <= target else 'OVER'} the goal of "
                  f"at most {target})")
            if a in LAB_COMPUTE:
                print(f"  - {cells_line(LAB_COMPUTE[a], med[b])}")
    for a, b, label, target in DIFFERENCES:
        if a in med and b in med:
            extra = med[a] - med[b]
            print(f"- {label}: +{extra:.2f} ({'within' if extra <= target else 'OVER'} the target of "
                  f"{target})")
    for slow, fast, label, target in SPEEDUPS:
        if slow in med and fast in med:
            gain = med[slow] / med[fast]
            print(f"- {label}: {gain:.2f}x faster ({'within' if gain >= target else 'SHORT of'} the "
                  f"goal of at least {target}x)")
    for name, cores in THROUGHPUT:
        if name in med:
            rate = SUBMISSIONS * 60 / med[name] / cores
            print(f"- `{shown_command(name)}`: {rate:.0f} submissions per minute per core "
                  f"({'within' if rate >= THROUGHPUT_GOAL else 'SHORT of'} the goal of at least "
                  f"{THROUGHPUT_GOAL:.0f})")
    for a, b, label in SAME_RUN:
        if a in med and b in med:
            print(f"- {label}: {med[a] / med[b]:.2f}")
    if opts.baseline is not None:
        print(f"\nthis tree against the baseline {opts.baseline} (medians, same run, interleaved):\n")
        print("| command | wall s | baseline wall s | ratio | CPU s | baseline CPU s | ratio |")
        print("|---|---|---|---|---|---|---|")
        for name in names:
            wall, base = med[name], statistics.median(base_times[name])
            cpu, base_cpu = statistics.median(cpus[name]), statistics.median(base_cpus[name])
            print(f"| `{shown_command(name)}` | {wall:.2f} | {base:.2f} | {wall / base:.3f} "
                  f"| {cpu:.2f} | {base_cpu:.2f} | {cpu / base_cpu:.3f} |")
    if mutmut is not None:
        ratio = mutmut["lab_s_per_mutant"] / mutmut["mutmut_s_per_mutant"]
        print(f"- `ol audit M07.6 --mutmut`, one run: ol lab {mutmut['lab_s_per_mutant']:.3f} s "
              f"({mutmut['lab_cpu_s_per_mutant']:.3f} CPU-s) per mutant, full matrix of "
              f"{mutmut['lab']['mutants']} mutants; mutmut {mutmut['mutmut_s_per_mutant']:.3f} s "
              f"({mutmut['mutmut_cpu_s_per_mutant']:.3f} CPU-s) per mutant, first kill only; "
              f"the full matrix of mutmut's mutants {mutmut['matrix_s_per_mutant']:.3f} s "
              f"({mutmut['matrix_cpu_s_per_mutant']:.3f} CPU-s) per mutant")
        print(f"- lab / mutmut, seconds per mutant: {ratio:.2f} "
              f"({'within' if ratio <= 1 / 3 else 'OVER'} the goal of at most 1/3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
