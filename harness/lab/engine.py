"""``ol lab``: the whole catalog against the reference and every hand-written mutant.

Mutants are our own code, so they run in-process; start-up (Python, numpy, scipy, the catalog and
its cached seeded inputs) is paid once, then the mutants are shared among ``--jobs`` forked
processes. No mutant stops at its first kill: every cell of the kill matrix is a real run, or
``not_run`` (``NOT_RUN``): a test that never reaches the mutated function on the reference, whose
outcome is the reference's (``harness.lab.reach``; Stryker's ``coveredBy``). A not-run cell is
not a kill; ``--exhaustive`` runs those cells too, and finds the same kills.

The lab runs on the public cases by default; ``seed`` (``ol lab --seed N``) runs the reference,
its coverage and every mutant on the hidden cases of one run seed instead, for an instructor who
checks that the kills do not depend on the public inputs. The seed is in every report.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.catalogs.metadata import collect
from harness.engine.course import Module, load_course
from harness.engine.mutants import Edit, Mutant, apply, load_mutants, mutant_code
from harness.engine.own_code import module_from_code, reference_source, reference_target
from harness.engine.requests import LabRequest
from harness.engine.results import RunResult
from harness.engine.runner import run_case, run_catalog
from harness.engine.seeding import cases_from
from harness.engine.serial import reading, rerun_command, tagged, untag
from harness.engine.target import InProcessTarget
from harness.errors import MutantDoesNotApply, VerdictFailure
from harness.lab.reach import reaches, reference_run_with_coverage

LAB_TEST_LIMIT_S = 60.0
# Version 2: the tag, each mutant's whole definition and run ("file", "hint", "edits", "run"),
# and "not_run" cells (an outcome version 1 did not have: it wrote them as "passed").
FORMAT_VERSION = 2
NOT_RUN = "not_run"  # a cell the lab did not run: the test never reaches the mutated code


def mutant_source(mutant: Mutant, module: Module) -> str:
    """The reference file of ``module`` with ``mutant`` applied (MutantDoesNotApply if it cannot be)."""
    return apply(mutant, reference_source(module))


def mutant_target(mutant: Mutant, module: Module) -> InProcessTarget:
    code = mutant_code(mutant, reference_source(module))
    mod = module_from_code(f"ol_mutant_{mutant.id}", code)
    return InProcessTarget(f"mutant {mutant.id}", mod, module.functions, load_course().returns)


@dataclass(frozen=True)
class MutantRow:
    """One mutant against the catalog: ``run`` holds the tests that ran on it, ``not_run`` (in
    catalog order) those the lab did not run because they never reach the mutated function."""

    mutant: Mutant
    run: RunResult
    not_run: tuple[str, ...] = ()

    @property
    def killed_by(self) -> list[str]:
        return [t.name for t in self.run.tests if not t.ok]

    @property
    def killed(self) -> bool:
        return bool(self.killed_by)

    @property
    def designated_killed(self) -> bool:
        return all(name in self.killed_by for name in self.mutant.designated)

    def outcome(self, test: str) -> str:
        """The cell's outcome: an ``Outcome`` value, ``NOT_RUN``, or "" for a test not in it."""
        if test in self.not_run:
            return NOT_RUN
        return next((t.outcome.value for t in self.run.tests if t.name == test), "")

    def to_json(self, tests: tuple[str, ...] = ()) -> dict[str, Any]:
        """The mutant, its cells (``outcomes`` in the order of ``tests``) and its whole run."""
        m = self.mutant
        outcomes = {t: self.outcome(t) for t in tests}
        outcomes.update({t.name: t.outcome.value for t in self.run.tests if t.name not in outcomes})
        outcomes.update({t: NOT_RUN for t in self.not_run if t not in outcomes})
        return {
            "id": m.id, "pitfall": m.pitfall, "description": m.description,
            "function": m.function, "extended": m.extended,
            "designated": list(m.designated), "killed": self.killed,
            "killed_by": self.killed_by, "designated_killed": self.designated_killed,
            "outcomes": outcomes, "not_run": list(self.not_run),
            "messages": {t.name: t.message for t in self.run.tests if not t.ok},
            "duration_s": self.run.duration_s,
            "module": m.module, "file": m.file, "hint": m.hint,
            "edits": [{"find": e.find, "replace": e.replace} for e in m.edits],
            "run": self.run.to_json(),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MutantRow:
        mutant = Mutant(d["id"], d["module"], d["file"], d["function"], int(d["pitfall"]),
                        d["description"], tuple(d["designated"]), d["hint"],
                        tuple(Edit(e["find"], e["replace"]) for e in d["edits"]),
                        bool(d["extended"]))
        return cls(mutant, RunResult.from_json(d["run"]), tuple(d.get("not_run", ())))


@dataclass(frozen=True)
class LabResult:
    module: str
    reference: RunResult
    rows: tuple[MutantRow, ...]
    tests: tuple[str, ...]
    duration_s: float
    jobs: int
    notes: dict[str, str] = field(default_factory=dict)  # test -> why it is nobody's designated killer
    seed: int | None = None  # the run seed of the randomised cases; None: the public cases
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def reference_passed(self) -> bool:
        return self.reference.verdict == "pass"

    @property
    def verdict(self) -> str:
        ok = self.reference_passed and all(r.killed and r.designated_killed for r in self.rows)
        return "pass" if ok else "fail"

    def kills(self, test: str) -> list[str]:
        return [r.mutant.id for r in self.rows if test in r.killed_by]

    def unique_kills(self, test: str) -> list[str]:
        return [r.mutant.id for r in self.rows if r.killed_by == [test]]

    def minimal_subset(self) -> list[str]:
        if "subset" not in self.cache:
            self.cache["subset"] = self._minimal_subset()
        return list(self.cache["subset"])

    def _minimal_subset(self) -> list[str]:
        return minimal_cover({t: set(self.kills(t)) for t in self.tests},
                             {r.mutant.id for r in self.rows if r.killed})

    def to_json(self) -> dict[str, Any]:
        return tagged("LabResult", FORMAT_VERSION, {
            "module": self.module,
            "seed": self.seed,
            "verdict": self.verdict,
            "reference_passed": self.reference_passed,
            "duration_s": self.duration_s,
            "jobs": self.jobs,
            "mutants": [r.to_json(self.tests) for r in self.rows],
            "tests": [{"name": t, "kills": self.kills(t), "unique_kills": self.unique_kills(t),
                       "designated_for": [r.mutant.id for r in self.rows if t in r.mutant.designated],
                       "not_run_on": [r.mutant.id for r in self.rows if t in r.not_run],
                       "note": self.notes.get(t, "")}
                      for t in self.tests],
            "notes": dict(self.notes),
            "minimal_subset": self.minimal_subset(),
            "reference": self.reference.to_json(),
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> LabResult:
        """The lab ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        rerun = rerun_command(d, "module", "ol lab {}", "ol lab MODULE")
        untag(d, "LabResult", (FORMAT_VERSION,), source, rerun)
        with reading("LabResult", source, rerun):
            return cls(d["module"], RunResult.from_json(d["reference"], source),
                       tuple(MutantRow.from_json(r) for r in d["mutants"]),
                       tuple(t["name"] for t in d["tests"]), float(d["duration_s"]),
                       int(d["jobs"]), dict(d.get("notes", {})), d.get("seed"))


def minimal_cover(kills: dict[str, set[str]], universe: set[str]) -> list[str]:
    """A smallest set of tests whose kills cover ``universe`` (exact: tries sizes 1, 2, ...).

    Sets are bit masks, and a test whose kills another test's kills contain is left out (some
    smallest cover never needs it), which keeps the search small.
    """
    bit = {m: 1 << i for i, m in enumerate(sorted(universe))}
    masks = {t: sum(bit[m] for m in ms if m in bit) for t, ms in kills.items()}
    names = [t for t, mask in masks.items() if mask and not any(
        other != t and (masks[other] | mask) == masks[other]
        and (masks[other] != mask or other < t) for other in masks)]
    goal = sum(bit.values())
    for size in range(1, len(names) + 1):
        for combo in itertools.combinations(names, size):
            union = 0
            for t in combo:
                union |= masks[t]
            if union == goal:
                return list(combo)
    return names


# -- running ---------------------------------------------------------------------------------------

_POOL_STATE: dict[str, Any] = {}


def _run_one(mutant_id: str) -> dict[str, Any]:
    """In a forked lab process: the catalog against one mutant, as a row's JSON.

    Without ``--exhaustive``, a test that never calls the mutated function on the reference is
    not run: it would execute the reference's code exactly, so its outcome is the reference's
    (``harness.lab.reach``). Its cell is ``not_run``, not a kill.
    """
    module: Module = _POOL_STATE["module"]
    mutant = _POOL_STATE["mutants"][mutant_id]
    coverage = _POOL_STATE.get("coverage")
    seed = _POOL_STATE.get("seed")
    target = mutant_target(mutant, module)
    start = time.perf_counter()
    results, not_run = [], []
    for info, fn in collect(module):
        if coverage is not None and not reaches(coverage[info.name], mutant.function):
            not_run.append(info.name)
        else:
            with cases_from(seed):
                results.append(run_case(module, info, fn, target, _POOL_STATE["test_limit_s"]))
    run = RunResult(module.id, "mutant", target.label, tuple(results),
                    time.perf_counter() - start, seed=seed)
    return MutantRow(mutant, run, tuple(not_run)).to_json()


def _check_all_apply(mutants: list[Mutant], module: Module) -> None:
    for mutant in mutants:
        try:
            mutant_source(mutant, module)
        except MutantDoesNotApply as exc:
            raise VerdictFailure(exc.message, exc.hint) from None


def run_lab(request: LabRequest, progress: Callable[[int, int, str], None] | None = None,
            test_limit_s: float = LAB_TEST_LIMIT_S) -> LabResult:
    """The reference, then every mutant of the request's module, each against the whole catalog.

    ``exhaustive`` runs every cell of the matrix; otherwise the cells of tests that never reach
    the mutated function are ``not_run``, known from the reference's coverage to be the
    reference's outcome (the same kills, faster).
    ``test_limit_s`` bounds each cell: a mutant that loops fails that cell with a time-out.
    Every run is on the cases of ``seed`` (None: the public cases); the coverage is measured on
    those same cases, so its deduction holds for them.
    """
    module_id, jobs, exhaustive, seed = request.module_id, request.jobs, request.exhaustive, request.seed
    start = time.perf_counter()
    module = load_course().module(module_id)
    mutants = load_mutants(module_id)
    _check_all_apply(mutants, module)
    if exhaustive:
        reference = run_catalog(module, reference_target(module), "reference", limit=test_limit_s,
                                seed=seed)
        coverage = None
    else:  # one run gives the reference's verdicts and what each test reaches
        with cases_from(seed):
            reference, coverage = reference_run_with_coverage(module)
        reference = dataclasses.replace(reference, seed=seed)
    if reference.verdict != "pass":
        names = ", ".join(t.name for t in reference.failures())
        raise VerdictFailure(f"the reference fails its own catalog: {names}",
                             "fix the reference or the test before running the lab")
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(mutants) or 1))
    results: dict[str, MutantRow] = {}
    _POOL_STATE.update(module=module, mutants={m.id: m for m in mutants},
                       coverage=coverage, test_limit_s=test_limit_s, seed=seed)
    try:
        if jobs == 1:
            for i, m in enumerate(mutants):
                results[m.id] = MutantRow.from_json(_run_one(m.id))
                if progress:
                    progress(i + 1, len(mutants), m.id)
        else:
            ctx = multiprocessing.get_context("fork")
            # What start-up loaded is shared with the forked processes; frozen, the collector
            # neither walks it nor copies its pages in every process.
            gc.collect()
            gc.freeze()
            with ctx.Pool(jobs) as pool:
                for i, (mid, data) in enumerate(pool.imap_unordered(_run_pair, [m.id for m in mutants])):
                    results[mid] = MutantRow.from_json(data)
                    if progress:
                        progress(i + 1, len(mutants), mid)
    finally:
        _POOL_STATE.clear()
        gc.unfreeze()
    rows = tuple(results[m.id] for m in mutants)
    tests = tuple(info.name for info, _ in collect(module))
    return LabResult(module.id, reference, rows, tests, time.perf_counter() - start, jobs,
                     _undesignated_notes(module_id, tests, rows), seed=seed)


def _run_pair(mutant_id: str) -> tuple[str, dict[str, Any]]:
    return mutant_id, _run_one(mutant_id)


def _undesignated_notes(module_id: str, tests: tuple[str, ...],
                        rows: tuple[MutantRow, ...]) -> dict[str, str]:
    """Why a test is nobody's designated killer, when the mutant library says so."""
    from harness.engine.mutants import mutants_dir

    path = mutants_dir() / module_id / "notes.json"
    notes = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {t: notes.get(t, "") for t in tests
            if not any(t in r.mutant.designated for r in rows) or t in notes}
