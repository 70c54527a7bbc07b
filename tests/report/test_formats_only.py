"""``harness/report/`` only formats: no reporter prints, writes, reads a file or loads the course
(what a report quotes beside its result comes in a ``Quotes``, gathered by its caller), checked
on the code itself, every module of the package parsed once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "harness" / "report"

# Calls that print, write, read a file, load the course or collect a catalog.
FORBIDDEN_CALLS = {"print", "open", "input", "read_text", "read_bytes", "write_text", "write_bytes",
                   "write_atomic", "load_course", "collect", "reference_text", "catalog_test_files",
                   "mkdir", "unlink", "replace", "rename"}
# Modules a formatter has no use for: the file writer, the fixed paths, the terminal, processes.
FORBIDDEN_IMPORTS = {"harness.files", "harness.paths", "harness.terminal", "sys", "subprocess",
                     "rich", "os", "shutil", "tempfile"}


def _called_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node) in FORBIDDEN_CALLS:
            # str.replace is formatting, not a file's rename: only a call on a Path-like name
            if _called_name(node) == "replace" and not _on_path(node):
                continue
            found.append(f"{path.name}:{node.lineno} calls {_called_name(node)}")
        if isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} imports {a.name}" for a in node.names
                      if _forbidden(a.name)]
        if isinstance(node, ast.ImportFrom) and node.module and _forbidden(node.module):
            found.append(f"{path.name}:{node.lineno} imports from {node.module}")
    return found


def _on_path(node: ast.Call) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
        func.value.id in {"os", "path", "Path"}


def _forbidden(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in FORBIDDEN_IMPORTS)


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_a_reporter_only_formats(path):
    assert _problems(path) == []


def test_the_check_finds_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nfrom harness.engine.course import load_course\n"
                   "def f(p):\n    print(p.read_text())\n    return load_course()\n")
    assert sorted(_problems(bad)) == ["bad.py:1 imports sys", "bad.py:4 calls print",
                                      "bad.py:4 calls read_text", "bad.py:5 calls load_course"]
