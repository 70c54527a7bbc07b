"""How well `ol check M07.6` judges and diagnoses a corpus of student files, round after round.

    python bench/diagnosis_corpus.py CORPUS_DIR [--rounds 3] [--load N] [--jobs J] [--timeout S]
                                     [--json OUT] [--ol PATH | --tree OL_CHECKOUT]

CORPUS_DIR holds whole ``rejection.py`` modules (``*.py``), each starting with two header lines:

    # expect: pitfall 3           (or: ol pitfall 17 | pitfalls 1, 8 | pitfalls 3, ol 12 |
    #                                  correct | crashed | raised | timeout | exited | other)
    # bug: one line saying what is wrong

Each file gets a workspace in a fresh temporary folder (under ``$TMPDIR``): a copy of
``reference/python/tinyllm`` whose ``prob/rejection.py`` is replaced by the file. Then
``ol check M07.6 --workspace WS --json R.json`` runs ``--rounds`` times (``--timeout S`` passed on
to ol when given). The ol is this venv's (``--ol PATH`` another executable), or with
``--tree DIR`` the checkout DIR run as ``python -m harness`` from DIR, its own reference copied
(a snapshot, such as ``git archive HEAD``, holds still while others edit the working tree).
``--load N`` keeps N busy-looping processes running meanwhile (a loaded machine); ``--jobs J``
checks J files at once.

Scored per file, from the JSON reports:

- verdict: right when ``correct`` passes and everything else fails;
- top: the first ``diagnosis`` entry names the expected pitfall (its ``pitfall`` number; for a
  two-bug file either of the two), or for crashed / raised / timeout / exited has that ``kind``;
  ``other`` files are not scored here;
- both: for a two-bug file, both numbers among all entries' ``pitfall`` and ``also``;
- stable: the same failing tests and the same diagnosis texts in every round;
- wall: the wall time of each check (median and max over the rounds).

A rate counts the files right in every round. Only the standard library is used.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = "M07.6"
CATEGORIES = ("crashed", "raised", "timeout", "exited", "not_implemented")
CHECK_LIMIT_S = 1800.0  # a whole `ol check` that runs longer than this is stopped and recorded


# ---------------------------------------------------------------- expectations (the headers)

@dataclass(frozen=True)
class Expect:
    """What a corpus file's header says ol should find."""

    raw: str
    kind: str  # "correct", "pitfalls", "other", or one of CATEGORIES
    pitfalls: tuple[int, ...] = ()
    bug: str = ""

    @property
    def should_pass(self) -> bool:
        return self.kind == "correct"

    @property
    def short(self) -> str:
        if self.kind == "pitfalls":
            return "p" + "+".join(str(n) for n in self.pitfalls)
        return self.kind


def parse_expect(value: str, bug: str = "") -> Expect:
    """``pitfall 3``, ``ol pitfall 17``, ``pitfalls 3, ol 12``, ``correct``, ``timeout``, ``other``..."""
    raw = value.strip()
    words = raw.lower()
    if words in ("correct", "other", *CATEGORIES):
        return Expect(raw, words, (), bug)
    if re.fullmatch(r"(ol\s+)?pitfalls?\s+(ol\s+)?\d+(\s*(,|and)\s*(ol\s+)?(pitfall\s+)?\d+)*", words):
        numbers = tuple(int(n) for n in re.findall(r"\d+", words))
        return Expect(raw, "pitfalls", numbers, bug)
    raise ValueError(f"unreadable expectation {raw!r}")


def read_header(text: str) -> Expect:
    """The ``# expect:`` and ``# bug:`` lines among the file's leading comment lines."""
    expect = bug = None
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*(expect|bug)\s*:\s*(.*)$", line)
        if m and m.group(1) == "expect":
            expect = m.group(2)
        elif m:
            bug = m.group(2).strip()
    if expect is None:
        raise ValueError("no '# expect:' line at the top")
    return parse_expect(expect, bug or "")


# ---------------------------------------------------------------- one round's report, scored

@dataclass
class Round:
    """One ``ol check`` of one file: what the JSON report says (or why there is none)."""

    wall_s: float
    exit_code: int | None = None
    verdict: str | None = None  # "pass" / "fail"; None when no report was written
    failing: tuple[str, ...] = ()
    diagnosis: tuple[dict, ...] = ()
    error: str = ""

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(str(d.get("text", "")) for d in self.diagnosis)

    @property
    def top(self) -> dict | None:
        return self.diagnosis[0] if self.diagnosis else None

    def named(self) -> set[int]:
        """Every pitfall number any diagnosis entry names (its ``pitfall`` and its ``also``)."""
        out: set[int] = set()
        for d in self.diagnosis:
            if isinstance(d.get("pitfall"), int):
                out.add(d["pitfall"])
            out.update(n for n in d.get("also", ()) if isinstance(n, int))
        return out


def round_from_report(report: dict, wall_s: float, exit_code: int | None = None) -> Round:
    tests = report.get("tests", [])
    failing = tuple(t["name"] for t in tests if t.get("outcome") != "passed")
    return Round(wall_s, exit_code, report.get("verdict"), failing, tuple(report.get("diagnosis", ())))


def top_label(r: Round) -> str:
    """The first diagnosis entry in a few characters: ``p7``, ``p7+8`` (with its also), a kind."""
    if r.verdict is None:
        return "no-report"
    d = r.top
    if d is None:
        return "-"
    if d.get("pitfall") is not None:
        also = [str(n) for n in d.get("also", ())]
        return f"p{d['pitfall']}" + ("+" + ",".join(also) if also else "")
    return str(d.get("kind", "?"))


def verdict_right(expect: Expect, r: Round) -> bool:
    if r.verdict is None:
        return False
    return (r.verdict == "pass") == expect.should_pass


def top_right(expect: Expect, r: Round) -> bool | None:
    """None where the file's expectation names nothing to compare (correct, other)."""
    if expect.kind in ("correct", "other"):
        return None
    d = r.top
    if d is None:
        return False
    if expect.kind == "pitfalls":
        return d.get("pitfall") in expect.pitfalls
    return d.get("kind") == expect.kind


def both_right(expect: Expect, r: Round) -> bool | None:
    if expect.kind != "pitfalls" or len(expect.pitfalls) < 2:
        return None
    return set(expect.pitfalls) <= r.named()


def stable(rounds: list[Round]) -> bool:
    first = rounds[0]
    return all((r.verdict, r.failing, r.texts) == (first.verdict, first.failing, first.texts)
               for r in rounds[1:])


def all_rounds(values: list[bool | None]) -> bool | None:
    if not values or values[0] is None:
        return None
    return all(values)


@dataclass
class FileResult:
    name: str
    expect: Expect
    rounds: list[Round] = field(default_factory=list)

    def verdict_ok(self) -> bool | None:
        return all_rounds([verdict_right(self.expect, r) for r in self.rounds])

    def top_ok(self) -> bool | None:
        return all_rounds([top_right(self.expect, r) for r in self.rounds])

    def both_ok(self) -> bool | None:
        return all_rounds([both_right(self.expect, r) for r in self.rounds])

    def stable(self) -> bool:
        return stable(self.rounds)

    def walls(self) -> list[float]:
        return [r.wall_s for r in self.rounds]

    def to_json(self) -> dict:
        return {
            "file": self.name, "expect": self.expect.raw, "bug": self.expect.bug,
            "verdict_right": self.verdict_ok(), "top_right": self.top_ok(),
            "both_named": self.both_ok(), "stable": self.stable(),
            "wall_median_s": round(statistics.median(self.walls()), 3),
            "wall_max_s": round(max(self.walls()), 3),
            "rounds": [{"wall_s": round(r.wall_s, 3), "exit_code": r.exit_code, "verdict": r.verdict,
                        "failing": list(r.failing), "top": top_label(r), "error": r.error,
                        "diagnosis": [{k: d.get(k) for k in ("kind", "pitfall", "also", "text")}
                                      for d in r.diagnosis]}
                       for r in self.rounds],
        }


def group_of(expect: Expect) -> str:
    if expect.kind == "correct":
        return "correct"
    if expect.kind in CATEGORIES:
        return "crash"
    if expect.kind == "pitfalls" and len(expect.pitfalls) > 1:
        return "two-bug"
    return "one-bug"


def rate(values: list[bool | None]) -> tuple[int, int]:
    scored = [v for v in values if v is not None]
    return sum(scored), len(scored)


def totals(results: list[FileResult]) -> dict:
    """The rates over all files and per group, and the wall times of every check."""
    def block(rs: list[FileResult]) -> dict:
        walls = [w for r in rs for w in r.walls()]
        out = {"files": len(rs)}
        for key, values in (("verdict_right", [r.verdict_ok() for r in rs]),
                            ("top_right", [r.top_ok() for r in rs]),
                            ("both_named", [r.both_ok() for r in rs]),
                            ("stable", [r.stable() for r in rs])):
            right, scored = rate(values)
            out[key] = [right, scored]
        if walls:
            walls.sort()
            out["wall_s"] = {"median": round(statistics.median(walls), 3),
                             "p90": round(walls[min(len(walls) - 1, int(0.9 * len(walls)))], 3),
                             "max": round(walls[-1], 3), "sum": round(sum(walls), 1)}
        return out

    groups = {}
    for name in ("correct", "one-bug", "two-bug", "crash"):
        members = [r for r in results if group_of(r.expect) == name]
        if members:
            groups[name] = block(members)
    return {"all": block(results), "groups": groups}


# ---------------------------------------------------------------- the table

def mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def fraction(pair: list[int] | tuple[int, int]) -> str:
    right, scored = pair
    return f"{right}/{scored}" if scored else "-"


def table(results: list[FileResult]) -> list[str]:
    """One line per file, at most 100 columns, then the totals."""
    head = f"{'file':<32} {'expect':<10} {'verdict':<7} {'top':<4} {'both':<4} {'stbl':<4} " \
           f"{'wall s':>6}  top diagnosis"
    lines = [head, "-" * len(head)]
    for r in results:
        tops = sorted({top_label(x) for x in r.rounds})
        lines.append(f"{r.name[:32]:<32} {r.expect.short[:10]:<10} {mark(r.verdict_ok()):<7} "
                     f"{mark(r.top_ok()):<4} {mark(r.both_ok()):<4} {mark(r.stable()):<4} "
                     f"{statistics.median(r.walls()):>6.2f}  {'|'.join(tops)[:22]}")
    t = totals(results)
    lines += ["", f"{'group':<10} {'files':>5} {'verdict':>8} {'top':>7} {'both':>6} {'stable':>7} "
              f"{'wall med':>8} {'p90':>6} {'max':>6}"]
    for name, b in [*t["groups"].items(), ("all", t["all"])]:
        w = b.get("wall_s", {})
        lines.append(f"{name:<10} {b['files']:>5} {fraction(b['verdict_right']):>8} "
                     f"{fraction(b['top_right']):>7} {fraction(b['both_named']):>6} "
                     f"{fraction(b['stable']):>7} {w.get('median', 0):>8.2f} {w.get('p90', 0):>6.2f} "
                     f"{w.get('max', 0):>6.2f}")
    return lines


def misses(results: list[FileResult]) -> list[str]:
    """For each file scored wrong or unstable somewhere: its expectation and what ol said."""
    lines = []
    for r in results:
        if r.verdict_ok() is False or r.top_ok() is False or r.both_ok() is False or not r.stable():
            first = r.rounds[0]
            lines.append(f"{r.name}: expect {r.expect.raw}; verdict {first.verdict}, "
                         f"failing {len(first.failing)}{', ' + first.error if first.error else ''}")
            for n, d in enumerate(first.diagnosis[:3], 1):
                lines.append(f"    {n}. [{d.get('kind')} {d.get('pitfall')} also {d.get('also')}] "
                             f"{str(d.get('text', ''))[:150]}")
    return lines


# ---------------------------------------------------------------- running ol

def find_ol(explicit: str | None, tree: Path | None = None) -> list[str]:
    if tree is not None:
        return [sys.executable, "-m", "harness"]
    if explicit:
        return [explicit]
    for candidate in (Path(sys.executable).parent / "ol", REPO / ".venv" / "bin" / "ol"):
        if candidate.is_file():
            return [str(candidate)]
    found = shutil.which("ol")
    if found:
        return [found]
    return [sys.executable, "-m", "harness"]


def make_workspace(source: Path, root: Path, tree: Path = REPO) -> Path:
    ws = root / "ws"
    shutil.copytree(tree / "reference" / "python" / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(source, ws / "python" / "tinyllm" / "prob" / "rejection.py")
    return ws


def check_once(ol: list[str], ws: Path, report: Path, timeout: float | None,
               tree: Path | None = None) -> Round:
    argv = [*ol, "check", MODULE, "--workspace", str(ws), "--json", str(report)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    report.unlink(missing_ok=True)
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=CHECK_LIMIT_S, check=False, cwd=tree or ws.parent)
    except subprocess.TimeoutExpired:
        return Round(time.perf_counter() - start, None, error=f"ol ran over {CHECK_LIMIT_S:g} s")
    wall = time.perf_counter() - start
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError) as exc:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [str(exc)]
        return Round(wall, done.returncode, error=f"no report (exit {done.returncode}): {tail[0][:120]}")
    return round_from_report(data, wall, done.returncode)


def check_file(ol: list[str], source: Path, rounds: int, timeout: float | None,
               tree: Path | None = None) -> FileResult:
    expect = read_header(source.read_text())
    result = FileResult(source.stem, expect)
    root = Path(tempfile.mkdtemp(prefix="diag-corpus-"))
    try:
        ws = make_workspace(source, root, tree or REPO)
        for n in range(rounds):
            result.rounds.append(check_once(ol, ws, root / f"round{n}.json", timeout, tree))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return result


def describe_tree(tree: Path) -> str:
    """The checkout's commit and whether its working tree differs (or the folder, if not a repo)."""
    try:
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return str(tree)
    return f"{tree} at {head}" + (" with uncommitted changes" if dirty else "")


def start_load(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a folder of rejection.py files with headers")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--load", type=int, default=0, metavar="N", help="N busy-looping processes")
    parser.add_argument("--jobs", type=int, default=1, metavar="J", help="J files checked at once")
    parser.add_argument("--timeout", type=float, default=None, metavar="S", help="ol check --timeout S")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT")
    parser.add_argument("--ol", default=None, help="the ol executable (default: this venv's)")
    parser.add_argument("--tree", type=Path, default=None,
                        help="an ol checkout to run as `python -m harness` (and copy the reference of)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.jobs < 1 or args.load < 0:
        parser.error("--rounds and --jobs must be at least 1, --load at least 0")
    files = sorted(args.corpus.glob("*.py"))
    if not files:
        print(f"diagnosis_corpus: no *.py files in {args.corpus}", file=sys.stderr)
        return 2
    for path in files:  # every header readable before anything runs
        try:
            read_header(path.read_text())
        except ValueError as exc:
            print(f"diagnosis_corpus: {path.name}: {exc}", file=sys.stderr)
            return 2
    tree = args.tree.resolve() if args.tree else None
    if tree is not None and not (tree / "harness" / "__main__.py").is_file():
        print(f"diagnosis_corpus: {tree} is not a checkout of ol", file=sys.stderr)
        return 2
    ol = find_ol(args.ol, tree)
    load = start_load(args.load)
    started = time.perf_counter()
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(check_file, ol, f, args.rounds, args.timeout, tree) for f in files]
            results = []
            for future in futures:
                results.append(future.result())
                print(f"  {len(results)}/{len(files)} {results[-1].name}", file=sys.stderr, flush=True)
    finally:
        stop_load(load)
    elapsed = time.perf_counter() - started
    print(f"{MODULE} diagnosis corpus {args.corpus}: {len(files)} files, {args.rounds} rounds, "
          f"load {args.load}, jobs {args.jobs}, timeout {args.timeout or 'default'}; "
          f"{elapsed:.0f} s")
    print(f"ol: {' '.join(ol)} ({describe_tree(tree or REPO)})")
    print("\n".join(table(results)))
    wrong = misses(results)
    if wrong:
        print("\nwrong or unstable (first round's diagnosis):")
        print("\n".join(wrong))
    if args.json:
        args.json.write_text(json.dumps({
            "module": MODULE, "corpus": str(args.corpus), "rounds": args.rounds, "load": args.load,
            "jobs": args.jobs, "timeout": args.timeout, "elapsed_s": round(elapsed, 1),
            "ol": ol, "tree": describe_tree(tree or REPO),
            "totals": totals(results), "files": [r.to_json() for r in results]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
