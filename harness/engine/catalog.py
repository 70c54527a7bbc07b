"""Catalog metadata on the tests themselves, and collecting a module's catalog.

``@case(...)`` only sets an attribute (like a pytest mark), so ``pytest`` runs the catalog as
plain tests while ``ol tests``, the runner, reports and the lab read the same metadata.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from harness.engine.course import Module
from harness.engine.results import CaseInfo, Kind

ATTR = "ol_case"


def case(
    kind: str, checks: str, why: str, pitfalls: tuple[int, ...] = (), kills: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Attach catalog metadata to a test function."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        info = CaseInfo(fn.__name__, Kind(kind), checks, why, tuple(pitfalls), tuple(kills))
        setattr(fn, ATTR, info)
        return fn

    return mark


def collect(module: Module) -> list[tuple[CaseInfo, Callable[..., Any]]]:
    """The catalog of ``module``, in file order."""
    catalog = importlib.import_module(module.catalog_module)
    cases = []
    for fn in vars(catalog).values():
        info = getattr(fn, ATTR, None)
        if isinstance(info, CaseInfo) and callable(fn):
            cases.append((info, fn))
    cases.sort(key=lambda c: c[1].__code__.co_firstlineno)
    return cases
