"""``ol audit --power``: the false-alarm rate and the power of every sampled test, over seeds.

For each sampled test of the catalog (``REGISTRY``): the reference is tabulated (its exact law
must be ``p``) and checked against the catalog's own trial at three seeds; then the test runs at
``10 * seeds`` seeds on the reference (false alarms) and at ``seeds`` seeds on every hand-written
mutant that edits code the trial runs (a static call graph of the reference file). A mutant whose
exact law is the reference's has nothing to detect; one that cannot be tabulated, or whose table
disagrees with a real run, is measured with the catalog's trial at every seed.

Phase one (tables, one real run per target) and phase two (the seeds) share ``--jobs`` forked
processes; like ``harness.lab.engine``, the state the children need is set just before they fork.
"""

from __future__ import annotations

import ast
import importlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.audit import analytic
from harness.audit.power_result import MutantPower, PowerAudit, TestPower
from harness.audit.sampled import (
    CategoricalChiSquareTest,
    ChiSquareTest,
    MeanTriesTest,
    Trial,
    same_trial,
)
from harness.audit.sampled_pcg import StreamsTest, UniformChiSquareTest
from harness.audit.tabulate import NotTabulable
from harness.engine.catalog import collect
from harness.engine.course import Module, load_course
from harness.engine.events import QUIET, Listener
from harness.engine.mutants import Mutant, load_mutants, mutant_target, mutants_dir
from harness.engine.own_code import load_reference, reference_target
from harness.engine.pools import forked_pool
from harness.engine.runner import alarm, run_case
from harness.errors import HarnessError

DEFAULT_SEEDS = 200
FALSE_ALARM_FACTOR = 10
VALIDATION_SEEDS = (1, 2)  # besides the catalog's fixed seed, for the reference
TRIAL_LIMIT_S = 120.0
CALIBRATION_LEVELS = ("0.05", "0.01", "0.001")

# The sampled tests of each catalog: the test, its seeded trial and the names of its constants.
REGISTRY: dict[str, list[tuple[type, dict[str, str]]]] = {
    "m07_6": [
        (ChiSquareTest, {"test": "test_speculative_chi_square", "trial": "chi_square_trial",
                         "seed": "CHI_SQUARE_SEED", "size": "CHI_SQUARE_DRAWS",
                         "alpha": "CHI_SQUARE_ALPHA"}),
        (MeanTriesTest, {"test": "test_rejection_sample_tries_are_geometric",
                         "trial": "geometric_trial", "seed": "GEOMETRIC_SEED",
                         "size": "GEOMETRIC_SAMPLES", "sigmas": "GEOMETRIC_SIGMAS"}),
    ],
    "m06_3": [
        (UniformChiSquareTest, {"test": "test_uniform_chi_square", "trial": "uniform_chi_square_trial",
                                "seed": "CHI_SQUARE_SEED", "size": "CHI_SQUARE_DRAWS",
                                "alpha": "CHI_SQUARE_ALPHA", "bins": "CHI_SQUARE_BINS"}),
        (StreamsTest, {"test": "test_stream_independence", "trial": "streams_trial",
                       "seed": "STREAMS_SEED", "size": "STREAMS_WORDS", "alpha": "STREAMS_ALPHA",
                       "pairs": "STREAM_PAIRS"}),
    ],
    "m07_1": [
        (CategoricalChiSquareTest, {"test": "test_chi_square", "trial": "chi_square_trial",
                                    "seed": "CHI_SQUARE_SEED", "size": "CHI_SQUARE_DRAWS",
                                    "alpha": "CHI_SQUARE_ALPHA"}),
    ],
}

_POOL_STATE: dict[str, Any] = {}


def sampled_tests(module: Module) -> list:
    """The registered sampled tests of ``module``'s catalog; an unregistered test that calls a
    ``*_trial`` or reads an ``*_ALPHA`` is an error (its power would silently go unaudited)."""
    try:
        catalog = importlib.import_module(module.catalog_module)
    except ImportError as exc:
        raise HarnessError(f"{module.id} has no catalog to audit ({exc})",
                           "catalogs live in harness/catalogs/") from None
    tests = [cls(catalog, **names) for cls, names in REGISTRY.get(module.catalog, [])]
    known = {t.test for t in tests}
    for info, fn in collect(module):
        sampling = [n for n in fn.__code__.co_names if n.endswith(("_trial", "_ALPHA"))]
        if info.name not in known and sampling:
            raise HarnessError(f"{info.name} samples (it uses {sampling[0]}) but has no power audit",
                               "give it a seeded trial(target, seed) and register it in REGISTRY "
                               "of harness/audit/power.py")
    return tests


def reachable(source: str, entry: str) -> set[str]:
    """Functions, classes and methods (``Class.method``) of ``source`` that ``entry`` runs,
    directly or not (``entry`` too). A class runs all of its methods."""
    defs: dict[str, ast.AST] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        if isinstance(node, ast.ClassDef):
            defs.update((f"{node.name}.{n.name}", n) for n in node.body if isinstance(n, ast.FunctionDef))
    seen, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        found = defs[name]
        if isinstance(found, ast.ClassDef):
            todo += [f"{name}.{n.name}" for n in found.body if isinstance(n, ast.FunctionDef)]
        todo += [c.func.id for c in ast.walk(found)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
    return seen


# -- what a forked child runs -------------------------------------------------------------------

def _target(key: str):
    cache = _POOL_STATE.setdefault("targets", {})
    if key not in cache:
        module = _POOL_STATE["module"]
        cache[key] = (reference_target(module) if key == "reference"
                      else mutant_target(_POOL_STATE["mutants"][key], module))
    return cache[key]


def _real(test, target, seed: int, size: int | None = None) -> Trial:
    with alarm(TRIAL_LIMIT_S, "the trial"):  # a mutant may loop: a time-out counts as a kill
        return test.real(target, seed, size)


def _prepare(task: tuple[int, str]) -> dict[str, Any]:
    """Phase one for one (test, target): its table and exact law, checked against real runs, and
    its verdict at the catalog's fixed seed (the catalog test itself too, where it must fail)."""
    index, key = task
    test, target = _POOL_STATE["tests"][index], _target(key)
    reference = key == "reference"
    checks = ([(s, None) for s in (test.fixed_seed, *VALIDATION_SEEDS)] if reference
              else [(test.fixed_seed, test.check_size)])
    reals = {c: _real(test, target, *c) for c in checks}
    out: dict[str, Any] = {"table": None, "law": {}, "reason": ""}
    try:
        table = test.table(target)
        if all(same_trial(r, test.fast(table, *c)) for c, r in reals.items()):
            out.update(table=table, law=test.law(table))
        else:
            out["reason"] = "its table disagrees with the catalog's trial on a real run"
    except NotTabulable as exc:
        out["reason"] = f"not tabulable: {exc}"
    fixed = reals.get((test.fixed_seed, None))
    if fixed is None:
        fixed = (test.fast(out["table"], test.fixed_seed) if out["table"] is not None
                 else _real(test, target, test.fixed_seed))
    out["real"] = fixed
    if reference or test.test in _POOL_STATE["mutants"][key].designated:
        out["test_failed"] = _catalog_test_fails(test.test, target)
    return out


def _catalog_test_fails(name: str, target) -> bool:
    """The catalog test itself, at its fixed seed (the audit's rule must agree with it)."""
    module = _POOL_STATE["module"]
    info, fn = next((i, f) for i, f in collect(module) if i.name == name)
    return not run_case(module, info, fn, target, TRIAL_LIMIT_S).ok


def _trials(task: tuple[int, str, Any, list[int]]) -> list[Trial]:
    """Phase two: one chunk of seeds, from the table when there is one, else real trials."""
    index, key, table, seeds = task
    test = _POOL_STATE["tests"][index]
    if table is not None:
        return [test.fast(table, s) for s in seeds]
    target = _target(key)
    return [_real(test, target, s) for s in seeds]


def _run(fn: Callable, tasks: list, jobs: int) -> list:
    if jobs == 1 or len(tasks) == 1:
        return [fn(t) for t in tasks]
    with forked_pool(jobs) as pool:
        return pool.map(fn, tasks, chunksize=1)


# -- the audit ------------------------------------------------------------------------------------

def run_power_audit(module_id: str, seeds: int = DEFAULT_SEEDS, jobs: int | None = None,
                    listener: Listener | None = None) -> PowerAudit:
    """Every sampled test of ``module_id``: false alarms over ``10 * seeds`` seeds, power over ``seeds``."""
    start = time.perf_counter()
    say = (listener or QUIET).line
    module = load_course().module(module_id)
    tests = sampled_tests(module)
    mutants = _library(module_id)
    jobs = max(1, jobs or os.cpu_count() or 1)
    reference_file = load_reference(module).__file__
    assert reference_file is not None, "the reference is imported from its file"
    source = Path(reference_file).read_text(encoding="utf-8")
    relevant = [[m for m in mutants if m.function in reachable(source, t.entry)] for t in tests]
    _POOL_STATE.update(module=module, tests=tests, mutants={m.id: m for m in mutants})
    timings: dict[str, float] = {}
    try:
        say(f"tables and real runs at the fixed seeds ({sum(map(len, relevant)) + len(tests)} targets)")
        tasks = [(i, k) for i, rel in enumerate(relevant) for k in ["reference"] + [m.id for m in rel]]
        prepared = dict(zip(tasks, _run(_prepare, tasks, jobs), strict=True))
        timings["tables_s"] = time.perf_counter() - start
        _check_reference(tests, prepared)
        plan = _plan(tests, relevant, prepared, seeds)
        say(f"trials: {sum(len(c[3]) for c in plan)} seeded runs")
        t0 = time.perf_counter()
        trials = _gather(plan, _run(_trials, plan, jobs))
        timings["trials_s"] = time.perf_counter() - t0
    finally:
        _POOL_STATE.clear()
    rows = tuple(_test_row(i, t, relevant[i], mutants, prepared, trials)
                 for i, t in enumerate(tests))
    return PowerAudit(module.id, seeds, FALSE_ALARM_FACTOR * seeds, jobs,
                      time.perf_counter() - start, rows, timings)


def _library(module_id: str) -> list[Mutant]:
    return load_mutants(module_id) if (mutants_dir() / module_id).is_dir() else []


def _check_reference(tests: list, prepared: dict) -> None:
    for i, test in enumerate(tests):
        ref = prepared[(i, "reference")]
        if ref["table"] is None:
            raise HarnessError(f"{test.test}: the reference cannot be tabulated ({ref['reason']})",
                               "the fast path needs the reference's table; see harness/audit/tabulate.py")
        if ref["law"]["changed"]:
            raise HarnessError(f"{test.test}: the reference's exact law is not the expected one",
                               "fix the reference; its catalog's exact tests fail too")
        if not test.calls_match(test.fixed_seed):
            raise HarnessError(f"{test.test}: the fast path's draws differ from the catalog's",
                               "update harness/audit/sampled.py to the catalog's draw order")
    for (i, key), prep in prepared.items():
        if "test_failed" in prep and prep["test_failed"] != prep["real"].killed:
            raise HarnessError(f"{tests[i].test} against {key}: the audit's decision rule disagrees "
                               "with the catalog test at its fixed seed",
                               "update the rule in harness/audit/sampled.py")


def _chunks(seeds: list[int], size: int) -> list[list[int]]:
    return [seeds[i:i + size] for i in range(0, len(seeds), size)]


def _plan(tests: list, relevant: list, prepared: dict, seeds: int) -> list[tuple]:
    """Phase two's tasks: (test index, target, table or None, chunk of seeds)."""
    plan = []
    for i, _ in enumerate(tests):
        ref = prepared[(i, "reference")]
        plan += [(i, "reference", ref["table"], c)
                 for c in _chunks(list(range(1, FALSE_ALARM_FACTOR * seeds + 1)), 250)]
        for m in relevant[i]:
            prep = prepared[(i, m.id)]
            if prep["table"] is not None and not prep["law"]["changed"]:
                continue  # nothing to detect: no power to measure
            size = 250 if prep["table"] is not None else 10
            plan += [(i, m.id, prep["table"], c) for c in _chunks(list(range(1, seeds + 1)), size)]
    return plan


def _gather(plan: list[tuple], results: list[list[Trial]]) -> dict[tuple[int, str], list[Trial]]:
    out: dict[tuple[int, str], list[Trial]] = {}
    for (i, key, _, _), chunk in zip(plan, results, strict=True):
        out.setdefault((i, key), []).extend(chunk)
    return out


def _test_row(i: int, test, relevant: list[Mutant], mutants: list[Mutant], prepared: dict,
              trials: dict) -> TestPower:
    from scipy.stats import kstest

    ref = trials[(i, "reference")]
    pvalues = [t.pvalue for t in ref]
    kills = sum(t.killed for t in ref)
    calibration = {lvl: analytic.rate(sum(p < float(lvl) for p in pvalues), len(pvalues))
                   for lvl in CALIBRATION_LEVELS}
    rows = tuple(_mutant_row(test, m, prepared[(i, m.id)], trials.get((i, m.id))) for m in relevant)
    names = {m.id for m in relevant}
    detectable = test.detectable()
    if test.kind == "chi-square":  # the false alarms above include the interim looks' stops
        detectable["interim_stops"] = sum(_stopped_early(test, t) for t in ref)
    return TestPower(
        test.test, test.kind, test.alpha_name, test.alpha, test.fixed_seed, test.size,
        analytic.rate(kills, len(ref)), prepared[(i, "reference")]["real"].pvalue, calibration,
        float(kstest(pvalues, "uniform").pvalue), detectable, rows,
        tuple(m.id for m in mutants if m.id not in names), tuple(pvalues))


def _stopped_early(test, trial: Trial) -> bool:
    """A chi-square that a qualifying interim look's p-value stopped (not an error's look)."""
    return not trial.raised and 0 < trial.draws < test.size


def _stops(test, trials: list[Trial]) -> dict[str, Any]:
    """How a chi-square's seeds of one mutant ended: at an interim look, and the draws made."""
    early = [t.draws for t in trials if _stopped_early(test, t)]
    return {"interim_stops": len(early),
            "mean_draws_of_interim_stops": sum(early) / len(early) if early else None}


def _mutant_row(test, mutant: Mutant, prep: dict, trials: list[Trial] | None) -> MutantPower:
    designated = test.test in mutant.designated
    fixed = prep["real"].killed
    law = prep["law"]
    if prep["table"] is not None and not law["changed"]:
        return MutantPower(mutant.id, mutant.description, designated, "none", False,
                           _brief(law), None, fixed,
                           note=law.get("note", "exact law equals the reference's"))
    method = "table" if prep["table"] is not None else "trials"
    assert trials is not None, "a mutant that changes the law was run in trials"
    power = analytic.rate(sum(t.killed for t in trials), len(trials))
    stats = [t.statistic for t in trials if not t.raised]
    mean = sum(stats) / len(stats) if stats else None
    if method == "trials":
        law = test.estimate(trials)
    note = prep["reason"]
    if test.kind == "chi-square":
        law = {**law, **_stops(test, trials)}
        if law["interim_stops"]:
            note = "; ".join(filter(None, [note, (
                f"stopped at an interim look at {law['interim_stops']} of {len(trials)} seeds (after "
                f"{law['mean_draws_of_interim_stops']:.0f} of {test.size} draws on average)")]))
    return MutantPower(mutant.id, mutant.description, designated, method,
                       True if method == "table" else None, _brief(law), power, fixed, mean, note)


def _brief(law: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in law.items() if k != "changed"}
