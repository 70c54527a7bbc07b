"""``ol start``: stubs from the contract, written without ever losing a student's edits."""

from __future__ import annotations

import ast
import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.course import REFERENCE_DIR, REFERENCE_PYTHON, Module
from harness.errors import HarnessError
from harness.report.io import write_atomic

PACKAGE_INITS = ("tinyllm/__init__.py", "tinyllm/prob/__init__.py")


def _is_protocol(node: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)


def _stub_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and not _is_protocol(node):
            found += [(f"{node.name}.{f.name}", f) for f in node.body if isinstance(f, ast.FunctionDef)]
    return found


def stub_source(module: Module) -> str:
    """The contract ``.pyi`` of ``module`` as a module whose functions raise NotImplementedError."""
    text = (REFERENCE_DIR / module.contract).read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []
    for qualname, fn in _stub_functions(tree):
        first = fn.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
            raise HarnessError(f"the contract {module.contract} has no docstring for {qualname}",
                               "every contract function documents its rules")
        indent = " " * first.col_offset
        inserts.append((first.end_lineno,
                        f'{indent}raise NotImplementedError("{qualname} is not implemented yet")\n'))
    doc_end = tree.body[0].end_lineno if ast.get_docstring(tree) is not None else 0
    header = (f"\n# Written by `ol start {module.id}`. Replace each `raise NotImplementedError` with\n"
              f"# your implementation; the rules are in the docstrings (the contract).\n\n"
              "from __future__ import annotations\n")
    inserts.append((doc_end, header))
    for line_no, new in sorted(inserts, key=lambda i: i[0], reverse=True):
        lines.insert(line_no, new)
    return "".join(lines)


@dataclass(frozen=True)
class StartAction:
    path: Path
    action: str  # "written" | "unchanged" | "kept" | "replaced"
    backup: Path | None = None


def start(module: Module, root: Path, force: bool = False) -> list[StartAction]:
    """Write the package ``__init__`` files and the stub of ``module`` under ``root/python``."""
    python = root / "python"
    if root.exists() and not root.is_dir():
        raise HarnessError(f"{root} exists and is not a directory", "choose a folder for --workspace")
    wanted = {init: (REFERENCE_PYTHON / init).read_text(encoding="utf-8") for init in PACKAGE_INITS}
    wanted[module.file] = stub_source(module)
    actions = []
    for rel, content in wanted.items():
        path = python / rel
        actions.append(_place(path, content, force and rel == module.file))
    return actions


def _place(path: Path, content: str, force: bool) -> StartAction:
    if path.is_dir():
        raise HarnessError(f"{path} is a directory where a file belongs", "move it away first")
    if path.exists():
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == content:
            return StartAction(path, "unchanged")
        if not force:
            return StartAction(path, "kept")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        backup = path.with_name(f"{path.name}.{stamp}.bak")
        shutil.copy2(path, backup)
        write_atomic(path, content)
        return StartAction(path, "replaced", backup)
    write_atomic(path, content)
    return StartAction(path, "written")
