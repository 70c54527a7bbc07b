"""Student workspaces: finding one, reading its files statically, and preparing what a worker runs.

Nothing here executes student code: syntax, stubs, missing functions and signatures are read
with ``ast``. The worker runs a *copy* of the workspace's ``tinyllm`` package, its Python source as
``harness.sandbox.staging`` stages it (with the reference substituted for dependencies under
``--ref-deps``), so no bytecode or stray file lands in the workspace and none is imported.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.engine.course import REFERENCE_DIR, REFERENCE_PYTHON, STUDENT_DIR, Course, Module
from harness.errors import HarnessError
from harness.sandbox.fs import remove_tree
from harness.sandbox.rundirs import run_dir
from harness.sandbox.staging import materialize, stage

MAX_FILE_BYTES = 1 << 20  # a module a student writes is far smaller; anything bigger is a mistake
PACKAGE = "python/tinyllm"  # what the worker imports of a workspace's staged python/ tree


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "python"

    def file(self, module: Module) -> Path:
        return self.python / module.file

    def relative(self, module: Module) -> str:
        return f"python/{module.file}"


def resolve_workspace(arg: str | None, cwd: Path | None = None) -> Workspace:
    """``--workspace DIR``; else the current directory if it holds ``python/tinyllm``; else ``student/``."""
    if arg is None:
        cwd = cwd or Path.cwd()
        root = cwd if (cwd / "python" / "tinyllm").is_dir() else STUDENT_DIR
    else:
        root = Path(arg).expanduser()
        if not root.exists():
            raise HarnessError(f"workspace {arg} does not exist", "check the path given to --workspace")
        if not root.is_dir():
            raise HarnessError(f"workspace {arg} is not a directory", "give the folder that holds python/")
    if not (root / "python" / "tinyllm").is_dir():
        raise HarnessError(f"{root} is not a workspace: it has no python/tinyllm",
                           f"run `ol start MODULE --workspace {root}` to create one")
    return Workspace(root.resolve())


def read_source(path: Path, shown: str) -> str:
    """The text of a student's file, or a one-line HarnessError saying why it cannot be read.

    Only a regular file, read at most ``MAX_FILE_BYTES`` (a link to /dev/zero would never end).
    """
    too_big = HarnessError(f"{shown} is larger than {MAX_FILE_BYTES // 1024} KiB",
                           "a module is a few hundred lines; check the file")
    try:  # opened before it is looked at: a FIFO never blocks, a link is never followed
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HarnessError(f"{shown} is a symbolic link", "put the file itself there") from None
        if exc.errno == errno.EISDIR:
            raise HarnessError(f"cannot read {shown}: Is a directory",
                               "put the module's text there") from None
        raise HarnessError(f"cannot read {shown}: {exc.strerror or exc}",
                           "check that the file exists and is readable") from None
    try:
        with open(fd, encoding="utf-8", closefd=True) as f:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise HarnessError(f"cannot read {shown}: Is a directory",
                                   "put the module's text there")
            if not stat.S_ISREG(info.st_mode):
                raise HarnessError(f"{shown} is not a regular file", "put the module's text there")
            if info.st_size > MAX_FILE_BYTES:
                raise too_big
            text = f.read(MAX_FILE_BYTES + 1)
        if len(text) > MAX_FILE_BYTES:
            raise too_big
        return text
    except HarnessError:
        raise
    except UnicodeDecodeError:
        raise HarnessError(f"cannot read {shown}: it is not UTF-8 text", "save it as UTF-8") from None
    except OSError as exc:
        raise HarnessError(f"cannot read {shown}: {exc.strerror or exc}",
                           "check that the file exists and is readable") from None


def parse(source: str, shown: str) -> ast.Module:
    try:
        compile(source, shown, "exec", dont_inherit=True)  # compile-time errors too; runs nothing
        return ast.parse(source, filename=shown)
    except SyntaxError as exc:
        raise HarnessError(f"syntax error in {shown}, line {exc.lineno}: {exc.msg}",
                           "fix it, then run ol check again") from None
    except ValueError as exc:  # e.g. null bytes
        raise HarnessError(f"cannot parse {shown}: {exc}", "fix the file") from None


def _is_stub_body(body: list[ast.stmt]) -> bool:
    stmts = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Raise) or stmts[0].exc is None:
        return False
    exc = stmts[0].exc
    name = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"


def _definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _functions_of(node: ast.AST) -> list[ast.FunctionDef]:
    if isinstance(node, ast.ClassDef):
        return [n for n in node.body if isinstance(n, ast.FunctionDef)]
    return [node]  # type: ignore[list-item]


def module_state(ws: Workspace, module: Module) -> str:
    """``missing``, ``stub`` (every contract function still raises NotImplementedError), or ``written``."""
    path = ws.file(module)
    if not path.is_file():
        return "missing"
    try:
        tree = ast.parse(read_source(path, str(path)))
    except (SyntaxError, ValueError, HarnessError):
        return "written"  # broken, but not a stub: its own check will say what is wrong
    defs = _definitions(tree)
    for name in module.functions:
        node = defs.get(name)
        if node is None:
            continue
        if not all(_is_stub_body(f.body) for f in _functions_of(node)):
            return "written"
    return "stub"


def check_dependencies(ws: Workspace, module: Module, course: Course, ref_deps: bool) -> None:
    """Stop with ``M07.6 needs M07.1`` when a module it needs is missing or a stub."""
    if ref_deps:
        return
    for dep_id in _all_needs(module, course):  # direct needs first: "M07.6 needs M07.1"
        dep = course.module(dep_id)
        state = module_state(ws, dep)
        if state != "written":
            raise HarnessError(
                f"{module.id} needs {dep.id}",
                f"{ws.relative(dep)} is {'missing' if state == 'missing' else 'still a stub'}: "
                f"pass `ol check {dep.id}` first, or run with --ref-deps to use the reference {dep.id}")


def _all_needs(module: Module, course: Course) -> tuple[str, ...]:
    seen: list[str] = []

    def visit(m: Module) -> None:
        for dep in m.needs:
            if dep not in seen:
                seen.append(dep)
                visit(course.module(dep))

    visit(module)
    return tuple(seen)


def contract_signatures(module: Module) -> dict[str, list[str]]:
    """Parameter names of every contract function (methods as ``Class.method``), from the ``.pyi``."""
    tree = ast.parse((REFERENCE_DIR / module.contract).read_text(encoding="utf-8"))
    return _signatures(tree)


def _signatures(tree: ast.Module) -> dict[str, list[str]]:
    sigs = {}
    for name, node in _definitions(tree).items():
        if isinstance(node, ast.ClassDef):
            for f in _functions_of(node):
                if not f.name.startswith("_") or f.name == "__init__":
                    sigs[f"{name}.{f.name}"] = [a.arg for a in f.args.posonlyargs + f.args.args]
        else:
            sigs[name] = [a.arg for a in node.args.posonlyargs + node.args.args]
    return sigs


def check_module_file(ws: Workspace, module: Module) -> str:
    """The module's source if it exists, parses, and defines every contract function with the
    contract's parameters; otherwise a one-line HarnessError."""
    shown = ws.relative(module)
    path = ws.file(module)
    if not path.exists():
        raise HarnessError(f"{shown} does not exist in {ws.root}",
                           f"run `ol start {module.id}` to write the stubs")
    source = read_source(path, shown)
    tree = parse(source, shown)
    defs = _definitions(tree)
    for name in module.functions:
        if name not in defs:
            raise HarnessError(f"{shown} has no {name}",
                               f"the contract needs it; `ol start {module.id}` writes a stub to fill in")
    mine = _signatures(tree)
    for name, params in contract_signatures(module).items():
        if name.split(".")[0] in module.functions and name in mine and mine[name] != params:
            raise HarnessError(
                f"{name}({', '.join(mine[name])}) in {shown} does not match the contract "
                f"{name}({', '.join(params)})", "use the contract's parameters, in its order")
    return source


def content_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def prepare_overlay(ws: Workspace, module: Module, course: Course, ref_deps: bool) -> Path:
    """A temporary copy of the workspace's ``tinyllm`` package for the worker to import.

    The copy is what ``harness.sandbox.staging`` stages of ``python/``: its ``.py`` files only,
    after refusing (one-line ``HarnessError``) a link, a special file, a tree too deep or too
    big, a name that is not UTF-8, and whatever Python would import instead of the source. It
    is the same reading as ``ol grade``'s, so both refuse the same workspaces. Under
    ``--ref-deps`` the reference files replace the modules ``module`` needs. Returns the
    directory to put on the worker's ``sys.path``; the caller removes its parent.
    """
    staged = stage(ws.root)
    package = {rel: data for rel, data in staged.files.items()
               if rel.startswith(f"{PACKAGE}/")}
    tmp = run_dir("ws")  # named after this process: swept if it is killed
    try:
        materialize(package, tmp)
        dest = tmp / "python"
        for init in ("tinyllm/__init__.py", "tinyllm/prob/__init__.py"):
            if not (dest / init).exists():
                (dest / init).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(REFERENCE_PYTHON / init, dest / init)
        if ref_deps:
            for dep_id in _all_needs(module, course):
                dep = course.module(dep_id)
                shutil.copyfile(REFERENCE_PYTHON / dep.file, dest / dep.file)
        return dest
    except OSError as exc:
        remove_tree(tmp)
        raise HarnessError(f"cannot copy the workspace {ws.root}: {exc}",
                           "check that there is room in the temporary folder") from None
    except BaseException:
        remove_tree(tmp)
        raise
