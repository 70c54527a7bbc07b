"""The corpus of independently written implementations (tests/diagnosis/corpus/<module>/*.py).

Each file is a whole module file as a student would submit it, written from the chapter and the
contracts only (never from ol's reference or mutants), with a header saying what it should get:

    # expect: pitfall 1             one mistake: the top diagnosis names pitfall 1
    # expect: ol pitfall 3          the same, for a pitfall that is ol's own
    # expect: pitfalls 1, 12        two mistakes: the diagnosis names both
    # expect: correct               passes every test
    # expect: crashed | raised | timeout | not implemented    a plain category, no pitfall
    # passes-today                  a blind spot of the catalog (a wrong file that passes today)
    # counterexample: ...           with passes-today: an input where the file breaks the contract
    # diagnosis-misses: why         a known miss of the diagnosis (the test expects it to miss)
    # caught-by: test_a[, test_b]   for a wrong file: the catalog test(s) that must fail on it
    # worker-passes: why            caught in process, but ol check's isolated worker passes it
    # only-known-mistakes: why      every diagnosis entry names a known mistake, none "matches no
                                    known mistake" (nor a failed check told by its own words)
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
CATEGORIES = {"crashed": "crashed", "raised": "raised", "timeout": "timeout",
              "not implemented": "not_implemented", "exited": "exited"}


@dataclass(frozen=True)
class Entry:
    module: str
    path: Path
    verdict: str  # "pass" | "fail"
    pitfalls: tuple[int, ...] = ()
    category: str = ""
    passes_today: bool = False
    min_python: tuple[int, int] | None = None
    misses: str = ""  # why the diagnosis is known not to name every pitfall of this file
    caught_by: tuple[str, ...] = ()  # the catalog tests that must fail on this (wrong) file
    worker_passes: str = ""  # why ol check's worker passes this file although the catalog fails it
    known_only: str = ""  # why every entry must name a known mistake (``# only-known-mistakes:``)

    @property
    def name(self) -> str:
        return f"{self.module}/{self.path.stem}"


def _parse(module: str, path: Path) -> Entry:
    head = path.read_text(encoding="utf-8").splitlines()[:12]
    expect = next(line.split(":", 1)[1].strip() for line in head if line.startswith("# expect:"))
    passes_today = any(line.startswith("# passes-today") for line in head)
    misses = next((line.split(":", 1)[1].strip() for line in head
                   if line.startswith("# diagnosis-misses:")), "")
    caught_by = next((tuple(re.findall(r"test_\w+", line.split(":", 1)[1])) for line in head
                      if line.startswith("# caught-by:")), ())
    worker_passes = next((line.split(":", 1)[1].strip() for line in head
                          if line.startswith("# worker-passes:")), "")
    known_only = next((line.split(":", 1)[1].strip() for line in head
                       if line.startswith("# only-known-mistakes:")), "")
    version = re.search(r"\(python >= (\d+)\.(\d+)\)", expect)
    min_python = (int(version.group(1)), int(version.group(2))) if version else None
    expect = re.sub(r"\(.*?\)", "", expect).strip()
    if expect == "correct":
        return Entry(module, path, "pass", caught_by=caught_by)  # none: asserted by the test
    if expect in CATEGORIES:
        return Entry(module, path, "fail", category=CATEGORIES[expect], caught_by=caught_by)
    numbers = tuple(int(n) for n in re.findall(r"\d+", expect))
    assert numbers, f"{path}: cannot read the expectation {expect!r}"
    return Entry(module, path, "fail", numbers, passes_today=passes_today, min_python=min_python,
                 misses=misses, caught_by=caught_by, worker_passes=worker_passes,
                 known_only=known_only)


def entries(module: str) -> list[Entry]:
    folder = CORPUS / module
    return [_parse(module, p) for p in sorted(folder.glob("*.py"))] if folder.is_dir() else []


def applies(entry: Entry) -> bool:
    return entry.min_python is None or sys.version_info[:2] >= entry.min_python
