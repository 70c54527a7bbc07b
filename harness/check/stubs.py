"""``ol start``: stubs from the contract, written without ever losing a student's edits."""

from __future__ import annotations

import ast
import datetime as dt
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.engine.course import Module
from harness.engine.requests import StartRequest
from harness.errors import HarnessError
from harness.files import file_kind, write_atomic
from harness.paths import REFERENCE_DIR, REFERENCE_PYTHON

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
        assert first.end_lineno is not None, "ast.parse gives every node its lines"
        inserts.append((first.end_lineno,
                        f'{indent}raise NotImplementedError("{qualname} is not implemented yet")\n'))
    doc_end = (tree.body[0].end_lineno or 0) if ast.get_docstring(tree) is not None else 0
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


@dataclass(frozen=True)
class Started:
    """What ``ol start`` did: the workspace as given, each file's action, and the modules the
    module needs that are not written there yet (a check needs ``--ref-deps`` until they are)."""

    module_id: str
    root: Path
    actions: tuple[StartAction, ...]
    unwritten_needs: tuple[str, ...]


def start_workspace(request: StartRequest) -> Started:
    """``ol start`` on ``request``: the stubs written (``start``) into ``--workspace``, else the
    workspace the current directory is in, else the current directory; and the needs of the
    module not written there yet."""
    from harness.engine.course import load_course
    from harness.engine.workspace import Workspace, enclosing_workspace, module_state

    course = load_course()
    module = course.module(request.module_id)
    # Without --workspace: the workspace the current directory is in, as ``ol check`` finds it
    # (from inside python/tinyllm/prob, the stubs go beside the student's code, never into a
    # second workspace nested in it); else the current directory.
    root = (Path(request.workspace).expanduser() if request.workspace
            else enclosing_workspace() or Path.cwd())
    actions = start(module, root, force=request.force)
    ws = Workspace(root.resolve())
    unwritten = tuple(dep for dep in course.needs_of(module)
                      if module_state(ws, course.module(dep)) != "written")
    return Started(module.id, root, tuple(actions), unwritten)


def start(module: Module, root: Path, force: bool = False) -> list[StartAction]:
    """Write the package ``__init__`` files and the stub of ``module`` under ``root/python``.

    Every place is checked before anything is written: a folder where a file belongs, a FIFO,
    socket or device (or a link to one), or a link where a stub goes stops ``ol start`` in one
    line. Nothing but a regular file is ever opened (``lstat`` first): a FIFO would block.
    """
    python = root / "python"
    if root.exists() and not root.is_dir():
        raise HarnessError(f"{root} exists and is not a directory", "choose a folder for --workspace")
    wanted = {init: (REFERENCE_PYTHON / init).read_text(encoding="utf-8") for init in PACKAGE_INITS}
    wanted[module.file] = stub_source(module)
    for rel in wanted:
        _check_place(python, rel)
    actions = []
    for rel, content in wanted.items():
        path = python / rel
        actions.append(_place(path, content, force and rel == module.file))
    return actions


def _check_place(python: Path, rel: str) -> None:
    """Refuse what ``ol start`` must neither open nor replace, on the way to ``python/rel``:
    a folder on the way that is not one (a link to a folder is fine), then the file itself."""
    parts = Path(rel).parts
    for folder in [python.joinpath(*parts[:i]) for i in range(len(parts))]:
        if not _is_folder(folder):
            return  # missing: nothing below it exists, the write creates it all
    path = python / rel
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISDIR(info.st_mode):
        raise HarnessError(f"{path} is a directory where a file belongs", "move it away first")
    if stat.S_ISLNK(info.st_mode):
        raise HarnessError(f"{path} is a symbolic link",
                           "ol check copies regular files only: put the file itself there")
    raise HarnessError(f"{path} is {file_kind(info.st_mode)}, not a regular file",
                       "ol start reads and writes regular files only: move it away first")


def _is_folder(folder: Path) -> bool:
    """True for a folder, False when missing; anything else where a folder belongs is refused."""
    try:
        info = folder.stat()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise HarnessError(f"cannot use {folder}: {exc.strerror or exc}", "move it away first") from None
    if not stat.S_ISDIR(info.st_mode):
        raise HarnessError(f"{folder} is {file_kind(info.st_mode)} where a folder belongs",
                           "move it away first")
    return True


def _current(path: Path, size: int) -> bytes | None:
    """At most ``size + 1`` bytes of ``path`` (enough to tell whether it equals a text of
    ``size`` bytes), opened ``O_NOFOLLOW | O_NONBLOCK`` and read only if it still is a regular
    file; None when it does not exist or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # gone, unreadable, or swapped for a link meanwhile (ELOOP): not the stub
    with os.fdopen(fd, "rb") as fh:
        try:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise HarnessError(f"{path} is not a regular file", "move it away first")
            return fh.read(size + 1)
        except OSError:
            return None


def _place(path: Path, content: str, force: bool) -> StartAction:
    _check_place(path.parent, path.name)  # again, right before: the folder may have changed
    if os.path.lexists(path):
        wanted = content.encode("utf-8")
        if _current(path, len(wanted)) == wanted:
            return StartAction(path, "unchanged")
        if not force:
            return StartAction(path, "kept")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        backup = path.with_name(f"{path.name}.{stamp}.bak")
        try:
            shutil.copy2(path, backup, follow_symlinks=False)
        except OSError as exc:  # a read-only folder: nothing replaced, the student's file stays
            raise HarnessError(f"cannot keep a backup of {path}: {os.strerror(exc.errno or 0)}",
                               "make the folder writable, or move the file away yourself") from None
        write_atomic(path, content)
        return StartAction(path, "replaced", backup)
    write_atomic(path, content)
    return StartAction(path, "written")
