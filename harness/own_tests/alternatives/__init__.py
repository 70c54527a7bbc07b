"""Hidden correct implementations: code that honours a module's contract but is not the reference.

``ol tests MODULE --mine PATH`` runs a student's own tests against the reference *and* these: a
test that fails on any of them would reject correct code. They differ from the reference only in
ways the contract leaves open (validation style and messages, numpy or plain loops, numpy scalar
results, how the dependencies are reached), and each must pass the module's whole catalog
(``tests/mine/test_alternatives.py``).

They ship with the harness but are not shown to students: no command prints them and their code
never reaches a report (only ``differs``, one line saying in what way an implementation is
another correct one). A module's alternatives live in the subpackage named like its catalog
(``m07_6``): source files read as text, executed as the student's module would be (they import
``tinyllm``), never imported as part of ``harness``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from harness.engine.course import Module
from harness.errors import HarnessError

PACKAGE_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Alternative:
    """One hidden correct implementation of a module's file."""

    name: str  # short and stable, e.g. "loops"
    file: str  # its source, relative to the module's subpackage
    differs: str  # for a student whose test fails on it: what is legitimately different

    def source(self, module: Module) -> str:
        return (PACKAGE_DIR / module.catalog / self.file).read_text(encoding="utf-8")


def load_alternatives(module: Module) -> tuple[Alternative, ...]:
    """The hidden correct implementations of ``module``; HarnessError if it has none."""
    try:
        package = importlib.import_module(f"harness.own_tests.alternatives.{module.catalog}")
    except ModuleNotFoundError:
        package = None
    alternatives = tuple(getattr(package, "ALTERNATIVES", ()))
    if not alternatives:
        raise HarnessError(f"{module.id} has no hidden correct implementations, so its students' "
                           "tests cannot be graded (rung R1)", "ol tests M07.6 --mine PATH")
    return alternatives
