"""Which functions of a module each catalog test calls, measured on the reference.

A mutant edits one function (or method, or class). A test that never calls that function on the
reference runs exactly the reference's code on the mutant too (the catalog is deterministic:
fixed inputs, fixed seeds), so its outcome on the mutant is its outcome on the reference: passed.
The lab uses this to run, per mutant, only the tests that reach the mutated code; the cells it
does not run are ``not_run`` in its matrix, known, not guessed (``ol lab --exhaustive`` runs them
all, and a test of the project checks that both find the same kills, every not-run cell passing
there). Stryker calls this per-test coverage (``coveredBy``).
"""

from __future__ import annotations

import functools
import time
import types
from collections.abc import Collection
from typing import Any

from harness.engine.catalog import collect
from harness.engine.course import Module, load_course
from harness.engine.own_code import reference_copy
from harness.engine.results import RunResult
from harness.engine.runner import run_case
from harness.engine.target import InProcessTarget


def _wrap(fn: Any, name: str, seen: set[str]) -> Any:
    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.add(name)
        return fn(*args, **kwargs)

    return recorded


def _instrument(mod: types.ModuleType, seen: set[str]) -> None:
    """Record every call of the module's own functions and methods (through its globals)."""
    for name, value in list(vars(mod).items()):
        if isinstance(value, types.FunctionType) and value.__module__ == mod.__name__:
            setattr(mod, name, _wrap(value, name, seen))
        elif isinstance(value, type) and value.__module__ == mod.__name__:
            for attr, member in list(vars(value).items()):
                if isinstance(member, types.FunctionType):
                    setattr(value, attr, _wrap(member, f"{name}.{attr}", seen))


def reference_run_with_coverage(module: Module, only: Collection[str] | None = None
                                ) -> tuple[RunResult, dict[str, frozenset[str]]]:
    """The catalog against the reference, recording for each test the module's functions
    (``f`` or ``Class.method``) it calls. The wrappers only record: the verdicts are the
    reference's own. ``only``: just these tests (the lab's cache holds the others)."""
    seen: set[str] = set()
    mod = reference_copy(module, "ol_coverage")
    _instrument(mod, seen)
    target = InProcessTarget("reference", mod, module.functions, load_course().returns)
    covered, results = {}, []
    start = time.perf_counter()
    for info, fn in collect(module):
        if only is not None and info.name not in only:
            continue
        seen.clear()
        result = run_case(module, info, fn, target, 60.0)
        results.append(result)
        # A test that fails on the reference is not deduced from: it is run on every mutant.
        covered[info.name] = frozenset(seen) if result.ok else frozenset({"*"})
    run = RunResult(module.id, "reference", "reference", tuple(results), time.perf_counter() - start)
    return run, covered


def reaches(covered: frozenset[str], function: str) -> bool:
    """Whether a test that called ``covered`` can reach code of ``function`` (a name or a class)."""
    if "*" in covered or function in covered:
        return True
    return "." not in function and any(c.startswith(function + ".") for c in covered)
