"""Two checkouts of ol, side by side: the same commands run alternately in fresh processes, in one
session, so a change is measured against the commit before it on the same noisy machine.

    python3 bench/side_by_side.py OLD_TREE NEW_TREE [--rounds 7] [--grade 10]

Each round runs every command once in each tree (the order of the trees alternates by round),
as ``python -m harness ...`` with the tree as the working directory (so that tree's ``harness``
is imported). Printed per command: the median wall time and CPU time (the command's and its
children's) in each tree, and the ratio new / old of the medians. ``--grade N`` adds ``ol grade``
over N copies of the reference, one job. Nothing here depends on the trees' own benchmarks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "check_isolated": ["check", "M07.6", "--workspace", "{ref}"],
    "check_in_process": ["check", "M07.6", "--target", "reference"],
    "check_failing": ["check", "M07.6", "--target", "s01"],
}


def run_once(tree: Path, argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (with children) and exit code of one fresh ``python -m harness``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "harness", *argv], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--grade", type=int, default=0, metavar="N",
                        help="also ol grade over N copies of the reference (--jobs 1)")
    args = parser.parse_args(argv)
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for tree in trees.values():
        if not (tree / "harness" / "__main__.py").is_file():
            print(f"side_by_side: {tree} is not a checkout of ol", file=sys.stderr)
            return 2
    work = Path(tempfile.mkdtemp(prefix="side-by-side-"))
    env = {**os.environ, "TMPDIR": str(work), "CI": "true"}
    commands = dict(COMMANDS)
    try:
        if args.grade:
            subs = work / "subs"
            for i in range(args.grade):
                shutil.copytree(trees["new"] / "reference" / "python", subs / f"s{i:02d}" / "python",
                                ignore=shutil.ignore_patterns("__pycache__"))
            commands["grade_1"] = ["grade", "M07.6", str(subs), "--jobs", "1", "--out", "{out}"]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.rounds):
            order = ["old", "new"] if round_ % 2 == 0 else ["new", "old"]
            for command, template in commands.items():
                for name in order:
                    out = work / f"out-{name}-{round_}-{command}"
                    cmd = [a.format(ref=trees[name] / "reference", out=out) for a in template]
                    wall, cpu, _ = run_once(trees[name], cmd, env)
                    times.setdefault((command, name), []).append((wall, cpu))
        print(f"{'command':<18} {'old wall':>9} {'new wall':>9} {'ratio':>6} "
              f"{'old CPU':>8} {'new CPU':>8} {'ratio':>6}   (medians of {args.rounds})")
        for command in commands:
            old, new = times[(command, "old")], times[(command, "new")]
            ow, nw = (statistics.median(w for w, _ in t) for t in (old, new))
            oc, nc = (statistics.median(c for _, c in t) for t in (old, new))
            print(f"{command:<18} {ow:9.3f} {nw:9.3f} {nw / ow:6.3f} {oc:8.3f} {nc:8.3f} "
                  f"{nc / oc:6.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
