"""What the lab's reports quote of the sources, read here for them (``harness.commands.quotes``
hands it over): the mutated reference files, the catalog's test
files, and where each mutant changes the reference (the span its edits cover, for Stryker)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import Mutant, apply
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON, REPO_ROOT


def reference_key(file: str) -> str:
    """``reference/python/tinyllm/prob/rejection.py``: the mutated file, relative to the repo."""
    return f"{REFERENCE_PYTHON.relative_to(REPO_ROOT).as_posix()}/{file}"


def reference_text(file: str) -> str:
    """The reference's source of ``file`` (a path under reference/python)."""
    return (REFERENCE_PYTHON / file).read_text(encoding="utf-8")


def mutation_span(mutant: Mutant, source: str) -> tuple[int, int, str]:
    """(start, end, replacement): ``source[start:end]`` becomes ``replacement`` in the mutant.

    The span covers every edit's ``find`` text (searched in the mutant's function, as ``apply``
    does) and whatever the edits changed, so one span holds a multi-edit mutant too.
    """
    mutated = apply(mutant, source)
    starts, ends = [], []
    lo, hi = _function_bounds(source, mutant.function)
    body = source[lo:hi]
    for edit in mutant.edits:
        if body.count(edit.find) == 1:  # a later edit may look for text an earlier one wrote
            at = lo + body.index(edit.find)
            starts.append(at)
            ends.append(at + len(edit.find))
    prefix = _common_prefix(source, mutated)
    suffix = _common_prefix(source[prefix:][::-1], mutated[prefix:][::-1])
    start = min([prefix, *starts])
    end = max([len(source) - suffix, *ends])
    return start, end, mutated[start:len(mutated) - (len(source) - end)]


def _function_bounds(source: str, name: str) -> tuple[int, int]:
    """Character offsets of the top-level ``def name`` (the whole source when it is missing)."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return sum(map(len, lines[:first - 1])), sum(map(len, lines[:node.end_lineno]))
    return 0, len(source)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def position(source: str, offset: int) -> dict[str, int]:
    """The schema's position of ``offset``: 1-based line and column (columns count characters)."""
    line_start = source.rfind("\n", 0, offset) + 1
    return {"line": source.count("\n", 0, offset) + 1, "column": offset - line_start + 1}


def catalog_test_files(module_id: str, tests: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The catalog's ``tests`` of ``module_id``, keyed by their file, with ids equal to the
    names ``killedBy`` uses (a test the catalog no longer has is still listed)."""
    try:
        module = load_course().module(module_id)
    except HarnessError:
        module = None
    found = {info.name: fn for info, fn in collect(module)} if module else {}
    files: dict[str, dict[str, Any]] = {}
    for test in tests:
        fn = found.get(test)
        source = inspect.getsourcefile(fn) if fn else None
        path = Path(source).resolve() if source else None
        key = _test_file_key(path, module_id)
        if key not in files:
            files[key] = {"tests": []}
            if path:
                files[key]["source"] = path.read_text(encoding="utf-8")
        entry: dict[str, Any] = {"id": test, "name": test}
        if fn:
            entry["location"] = {"start": {"line": fn.__code__.co_firstlineno, "column": 1}}
        files[key]["tests"].append(entry)
    return files


def _test_file_key(path: Path | None, module_id: str) -> str:
    if path is None:  # a test the catalog no longer has: still listed, so killedBy resolves
        return f"{module_id} catalog"
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)
