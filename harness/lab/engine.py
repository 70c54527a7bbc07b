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

import gc
import itertools
import json
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from harness.engine.catalog import collect
from harness.engine.course import Module, load_course
from harness.engine.events import QUIET, Listener, Step
from harness.engine.mutants import Edit, Mutant, load_mutants, mutant_source, mutant_target
from harness.engine.pools import forked_pool
from harness.engine.requests import LabRequest
from harness.engine.results import RunResult, TestResult, Verdict
from harness.engine.runner import catalog_points, run_case
from harness.engine.seeding import cases_from
from harness.engine.serial import reading, rerun_command, tagged, untag
from harness.errors import MutantDoesNotApply, VerdictFailure
from harness.lab.cache import LabCache, mutant_digest
from harness.lab.reach import reaches, reference_run_with_coverage

LAB_TEST_LIMIT_S = 60.0
# Version 2: the tag, each mutant's whole definition and run ("file", "hint", "edits", "run"),
# and "not_run" cells (an outcome version 1 did not have: it wrote them as "passed").
FORMAT_VERSION = 2
NOT_RUN = "not_run"  # a cell the lab did not run: the test never reaches the mutated code


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
    # What this run took from the lab's cache and what it ran (``harness.lab.cache``): counts
    # of cells, its folder and mode. Not in the JSON: a cached run's matrix is a fresh run's.
    reuse: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def reference_passed(self) -> bool:
        return self.reference.verdict == Verdict.PASS

    @property
    def verdict(self) -> Verdict:
        ok = self.reference_passed and all(r.killed and r.designated_killed for r in self.rows)
        return Verdict.PASS if ok else Verdict.FAIL

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


def run_cells(module: Module, mutant: Mutant, names: Collection[str], seed: int | None,
              limit: float) -> tuple[list[TestResult], float]:
    """The catalog tests ``names`` against ``mutant``, in catalog order, on the cases of ``seed``;
    with the seconds they took. What every executor runs for one mutant (a forked lab process,
    this process, a Dask worker)."""
    target = mutant_target(mutant, module)
    start = time.perf_counter()
    results = []
    for info, fn in collect(module):
        if info.name in names:
            with cases_from(seed):
                results.append(run_case(module, info, fn, target, limit))
    return results, time.perf_counter() - start


def shipped_cells(module_id: str, mutant: Mutant, names: list[str], seed: int | None,
                  limit: float) -> tuple[list[dict[str, Any]], float]:
    """``run_cells`` as plain data, for a Dask worker: the module by its id, the results as JSON."""
    results, seconds = run_cells(load_course().module(module_id), mutant, set(names), seed, limit)
    return [r.to_json() for r in results], seconds


def _run_one(work: tuple[str, tuple[str, ...]]) -> tuple[str, list[dict[str, Any]], float]:
    """In a forked lab process: the tests ``work`` names against one mutant, as JSON."""
    mutant_id, names = work
    results, seconds = run_cells(_POOL_STATE["module"], _POOL_STATE["mutants"][mutant_id],
                                 set(names), _POOL_STATE.get("seed"), _POOL_STATE["test_limit_s"])
    return mutant_id, [r.to_json() for r in results], seconds


def _check_all_apply(mutants: list[Mutant], module: Module) -> None:
    for mutant in mutants:
        try:
            mutant_source(mutant, module)
        except MutantDoesNotApply as exc:
            raise VerdictFailure(exc.message, exc.hint) from None


def _reference(module: Module, names: tuple[str, ...], store: LabCache, exhaustive: bool,
               seed: int | None) -> tuple[RunResult, dict[str, frozenset[str]] | None]:
    """The reference's run and what each test reaches (None with ``exhaustive``): the cached
    tests from the cache, the others run (with the coverage recorded)."""
    cached = store.reference()
    missing = [n for n in names if n not in cached]
    start = time.perf_counter()
    cells = dict(cached)
    if missing:
        with cases_from(seed):
            run, coverage = reference_run_with_coverage(module, set(missing))
        fresh = {t.name: (t, coverage[t.name]) for t in run.tests}
        cells.update(fresh)
        store.store_reference(cells)
    store.stats["reference_cached"] += len(names) - len(missing)
    store.stats["reference_run"] += len(missing)
    tests = tuple(cells[n][0] for n in names)
    seconds = time.perf_counter() - start
    if exhaustive:  # as run_catalog makes it
        run = RunResult(module.id, "reference", "reference", tests, seconds, seed=seed,
                        points=catalog_points(module))
        return run, None
    run = RunResult(module.id, "reference", "reference", tests, seconds, seed=seed)
    return run, {n: cells[n][1] for n in names}


def run_lab(request: LabRequest, listener: Listener | None = None,
            test_limit_s: float = LAB_TEST_LIMIT_S) -> LabResult:
    """The reference, then every mutant of the request's module, each against the whole catalog.

    ``exhaustive`` runs every cell of the matrix; otherwise the cells of tests that never reach
    the mutated function are ``not_run``, known from the reference's coverage to be the
    reference's outcome (the same kills, faster).
    ``test_limit_s`` bounds each cell: a mutant that loops fails that cell with a time-out.
    Every run is on the cases of ``seed`` (None: the public cases); the coverage is measured on
    those same cases, so its deduction holds for them.
    ``cache`` (``harness.lab.cache``): "use" takes every cell whose key is in the cache from it
    and runs only the others; "fresh" runs every cell and stores it; "off" neither reads nor
    writes. The matrix is the same in all three. ``executor`` "dask" runs the mutants on a Dask
    cluster (``scheduler``, else a local one of ``jobs`` workers) instead of forked processes.
    """
    module_id, jobs, exhaustive = request.module_id, request.jobs, request.exhaustive
    seed = request.seed.number
    listener = listener or QUIET
    start = time.perf_counter()
    module = load_course().module(module_id)
    mutants = load_mutants(module_id)
    _check_all_apply(mutants, module)
    names = tuple(info.name for info, _ in collect(module))
    store = LabCache.open(request.cache, module, names, seed, test_limit_s)
    reference, coverage = _reference(module, names, store, exhaustive, seed)
    if reference.verdict != "pass":
        names_failed = ", ".join(t.name for t in reference.failures())
        raise VerdictFailure(f"the reference fails its own catalog: {names_failed}",
                             "fix the reference or the test before running the lab")
    keys = {m.id: mutant_digest(m, module) for m in mutants} if store.folder else {}
    cells: dict[str, dict[str, TestResult]] = {}
    wanted: dict[str, tuple[str, ...]] = {}
    not_run: dict[str, tuple[str, ...]] = {}
    work: list[tuple[str, tuple[str, ...]]] = []
    for m in mutants:
        reached = names if coverage is None else tuple(
            n for n in names if reaches(coverage[n], m.function))
        wanted[m.id] = reached
        not_run[m.id] = tuple(n for n in names if n not in reached)
        cached = store.row(keys[m.id]) if store.folder else {}
        cells[m.id] = {n: cached[n] for n in reached if n in cached}
        store.stats["cells_cached"] += len(cells[m.id])
        missing = tuple(n for n in reached if n not in cells[m.id])
        if missing:
            work.append((m.id, missing))
    done = len(mutants) - len(work)
    if done:
        listener.step(Step(done, len(mutants), "from the cache"))
    spent: dict[str, float] = {}

    def finished(mutant_id: str, results: list[dict[str, Any]], seconds: float) -> None:
        nonlocal done
        fresh = {r["name"]: TestResult.from_json(r) for r in results}
        cells[mutant_id].update(fresh)
        spent[mutant_id] = seconds
        store.stats["cells_run"] += len(fresh)
        if store.folder:
            store.store_row(keys[mutant_id], cells[mutant_id])
        done += 1
        listener.step(Step(done, len(mutants), mutant_id))

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(work) or 1))
    by_id = {m.id: m for m in mutants}
    try:
        if request.executor == "dask" and work:
            from harness.lab.dask_lab import run_on_dask

            run_on_dask(shipped_cells, module_id, [(by_id[mid], list(ns)) for mid, ns in work], seed,
                        test_limit_s, request.scheduler, jobs, finished)
        else:
            _run_local(module, by_id, work, seed, test_limit_s, jobs, finished)
    finally:
        store.bound()
    rows = []
    for m in mutants:
        tests = tuple(cells[m.id][n] for n in wanted[m.id])
        run = RunResult(module.id, "mutant", f"mutant {m.id}", tests, spent.get(m.id, 0.0),
                        seed=seed)
        rows.append(MutantRow(m, run, not_run[m.id]))
    result = LabResult(module.id, reference, tuple(rows), names, time.perf_counter() - start, jobs,
                       _undesignated_notes(module_id, names, tuple(rows)), seed=seed)
    result.reuse.update(store.stats, folder=str(store.folder) if store.folder else "",
                        mode=store.mode)
    listener.finished()
    return result


def _run_local(module: Module, by_id: dict[str, Mutant], work: list[tuple[str, tuple[str, ...]]],
               seed: int | None, limit: float, jobs: int,
               finished: Callable[[str, list[dict[str, Any]], float], None]) -> None:
    """The work in this process (one job) or in ``jobs`` forked processes."""
    if not work:
        return
    _POOL_STATE.update(module=module, mutants=by_id, test_limit_s=limit, seed=seed)
    try:
        if jobs == 1:
            for unit in work:
                finished(*_run_one(unit))
        else:
            # What start-up loaded is shared with the forked processes; frozen, the collector
            # neither walks it nor copies its pages in every process.
            gc.collect()
            gc.freeze()
            with forked_pool(jobs) as pool:
                for mutant_id, results, seconds in pool.imap_unordered(_run_one, work):
                    finished(mutant_id, results, seconds)
    finally:
        _POOL_STATE.clear()
        gc.unfreeze()


def _undesignated_notes(module_id: str, tests: tuple[str, ...],
                        rows: tuple[MutantRow, ...]) -> dict[str, str]:
    """Why a test is nobody's designated killer, when the mutant library says so."""
    from harness.engine.mutants import mutants_dir

    path = mutants_dir() / module_id / "notes.json"
    notes = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {t: notes.get(t, "") for t in tests
            if not any(t in r.mutant.designated for r in rows) or t in notes}
