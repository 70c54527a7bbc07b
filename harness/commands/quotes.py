"""What each result's reports quote beside it (``harness.report.quotes``), gathered here so that
no reporter reads a file or loads the course: the lab's mutated reference files, pitfalls and
catalog test files; the mutmut audit's reference file and catalog test files; the catalogs of
a gate's modules that did not run."""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError
from harness.report.quotes import NO_QUOTES, Quotes


def quotes_of(result: Any) -> Quotes:
    """The quotes of ``result``'s reports (``NO_QUOTES`` for a result whose reports quote
    nothing beside it)."""
    kind = type(result).__name__
    if kind == "LabResult":
        return _lab(result)
    if kind == "MutmutAudit":
        return _mutmut(result)
    if kind == "GateResult":
        return _gate(result)
    return NO_QUOTES


def _pitfalls(module_id: str) -> dict[int, str]:
    from harness.engine.course import load_course

    try:
        return dict(load_course().module(module_id).pitfalls)
    except HarnessError:  # a result of a module the course no longer has
        return {}


def _lab(result: Any) -> Quotes:
    from harness.lab.sources import catalog_test_files, reference_text

    files = dict.fromkeys(row.mutant.file for row in result.rows)
    return Quotes(pitfalls=_pitfalls(result.module),
                  references={f: reference_text(f) for f in files},
                  test_files=catalog_test_files(result.module, result.tests))


def _mutmut(audit: Any) -> Quotes:
    from harness.lab.sources import catalog_test_files, reference_text

    return Quotes(references={audit.file: reference_text(audit.file)},
                  test_files=catalog_test_files(audit.module, audit.tests))


def _gate(result: Any) -> Quotes:
    from harness.engine.catalog import collect
    from harness.engine.course import load_course
    from harness.gate.engine import catalog_problem

    catalogs = {}
    for m in result.modules:
        if m.run is None and m.status == "blocked":
            module = load_course().module(m.module)
            if catalog_problem(module) is None:
                catalogs[m.module] = tuple(info.name for info, _ in collect(module))
    return Quotes(catalogs=catalogs)
