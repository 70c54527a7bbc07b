"""Student workspaces: finding one, reading its files statically, and preparing what a worker runs.

What runs is what was read (``read_submission``): a check stages the workspace's ``python/`` tree
once (``harness.sandbox.staging``), and every check of it reads those bytes: the module's file
parsed with ``ast`` (nothing executes: syntax, compile-time errors, missing functions, signatures),
the modules it needs (missing, still a stub), the imports of the staged files. The worker imports
a *copy* made of the same bytes that holds only the contract's files: the module's own and those
of the modules it needs (the reference's under ``--ref-deps``), under ol's own empty package
``__init__.py`` files. A student's package files are never run, and no other file of the
workspace is copied: an import of one is refused before the run. A pass is recorded under the
digest of the module's file in that copy (``Submission.module_digest``).
"""

from __future__ import annotations

import ast
import errno
import hashlib
import importlib.util
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.engine.course import Course, Module
from harness.errors import HarnessError, HostError, host_failure
from harness.paths import REFERENCE_DIR, REFERENCE_PYTHON, STUDENT_DIR
from harness.sandbox.fs import remove_tree
from harness.sandbox.rundirs import run_dir
from harness.sandbox.staging import Staged, digest, materialize, stage

MAX_FILE_BYTES = 64 << 10  # a module's source; the reference's biggest is 5 KB (see ``parse``)


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


def enclosing_workspace(cwd: Path | None = None) -> Path | None:
    """The nearest of ``cwd`` (the current directory) and its parents that holds
    ``python/tinyllm``, as git finds its repository; None when none does."""
    cwd = (cwd or Path.cwd()).absolute()
    return next((d for d in (cwd, *cwd.parents) if (d / "python" / "tinyllm").is_dir()), None)


def resolve_workspace(arg: str | None, cwd: Path | None = None,
                      module_id: str = "MODULE") -> Workspace:
    """``--workspace DIR``; else the nearest of the current directory and its parents that holds
    ``python/tinyllm`` (as git finds its repository: ``ol check`` from inside
    ``python/tinyllm/prob`` checks that workspace, never the bundled one); else ``student/``."""
    if arg is None:
        root = enclosing_workspace(cwd) or STUDENT_DIR
    else:
        root = Path(arg).expanduser()
        try:
            root.stat()
        except FileNotFoundError:
            raise HarnessError(f"workspace {arg} does not exist",
                               "check the path given to --workspace") from None
        except OSError as exc:  # a path too long, a folder on the way that cannot be entered
            raise HarnessError(f"workspace {arg} cannot be reached: {os.strerror(exc.errno or 0)}",
                               "check the path given to --workspace and its permissions") from None
        if not root.is_dir():
            raise HarnessError(f"workspace {arg} is not a directory", "give the folder that holds python/")
    if not (root / "python" / "tinyllm").is_dir():
        raise HarnessError(f"{root} is not a workspace: it has no python/tinyllm",
                           f"run `ol start {module_id} --workspace {root}` to create one")
    return Workspace(root.resolve())


def read_source(path: Path, shown: str) -> str:
    """The text of a file of ol's own or a student's file read outside a check, or a one-line
    HarnessError saying why it cannot be read. (A check reads a workspace only through staging:
    ``read_submission``.)

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


def text_of(data: bytes, shown: str) -> str:
    """A module's bytes as the importer decodes them (its coding line or UTF-8, a BOM skipped,
    newlines universal), or a one-line HarnessError."""
    if len(data) > MAX_FILE_BYTES:
        raise HarnessError(f"{shown} is larger than {MAX_FILE_BYTES // 1024} KiB",
                           "a module is a few hundred lines; check the file")
    try:
        return importlib.util.decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        raise HarnessError(f"cannot read {shown}: it is not UTF-8 text", "save it as UTF-8") from None


def parse(source: str | bytes, shown: str) -> ast.Module:
    """``source`` parsed and compiled (compile-time errors too; nothing runs), or a one-line
    HarnessError: a syntax error, or a source Python's parser or compiler cannot handle.

    Bytes are parsed as the importer reads a file (its coding line, a BOM). The parser refuses a
    source nested too deeply with ``MemoryError`` ("parser stack overflowed", raised before it
    allocates anything: a 10 KB line of unary minus), the compiler with ``RecursionError`` (a sum
    of 20 000 terms): both are caught here, where nothing has grown. ``MAX_FILE_BYTES`` bounds
    the rest: the slowest sources measured within it (an f-string of 20 000 fields, a chain of
    16 000 comparisons) take 1.3 s and 85 MiB on Python 3.11 to 3.13.
    """
    if len(source) > MAX_FILE_BYTES:
        raise HarnessError(f"{shown} is larger than {MAX_FILE_BYTES // 1024} KiB",
                           "a module is a few hundred lines; check the file")
    try:
        tree = ast.parse(source, filename=shown)
        compile(tree, shown, "exec", dont_inherit=True)  # the symbol table's errors too
        return tree
    except SyntaxError as exc:
        raise HarnessError(f"syntax error in {shown}, line {exc.lineno}: {exc.msg}",
                           "fix it, then run ol check again") from None
    except (ValueError, OverflowError, SystemError) as exc:  # e.g. null bytes
        raise HarnessError(f"cannot parse {shown}: {exc}", "fix the file") from None
    except (MemoryError, RecursionError) as exc:
        why = str(exc) or "parser stack overflowed"
        raise HarnessError(f"cannot parse {shown}: it is nested too deeply for Python ({why})",
                           "split the long expression into several statements") from None


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


def _state(data: bytes | None, module: Module, shown: str) -> tuple[str, ast.Module | None,
                                                                    HarnessError | None]:
    """``missing``, ``stub`` (every contract function still raises NotImplementedError) or
    ``written`` (a file that does not parse too: its own check says what is wrong), with the tree
    or why there is none."""
    if data is None:
        return "missing", None, None
    try:
        tree = parse(data, shown)
    except HarnessError as exc:
        return "written", None, exc
    defs = _definitions(tree)
    for name in module.functions:
        node = defs.get(name)
        if node is not None and not all(_is_stub_body(f.body) for f in _functions_of(node)):
            return "written", tree, None
    return "stub", tree, None


def module_state(ws: Workspace, module: Module) -> str:
    """``missing``, ``stub`` (every contract function still raises NotImplementedError), or
    ``written``, of the file as staging reads it (a tree it refuses: ``written``, the check that
    follows says why)."""
    try:
        staged = stage(ws.root)
    except HarnessError:
        return "written"
    return _state(staged.files.get(ws.relative(module)), module, ws.relative(module))[0]


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


def module_bytes(ws: Workspace, module: Module, staged: Staged) -> bytes:
    """The module's file as ``staged`` read it, or a one-line HarnessError when it has none."""
    shown = ws.relative(module)
    data = staged.files.get(shown)
    if data is not None:
        return data
    # Staging read no such file: nothing there, or a folder (a link or special file was refused).
    if ws.file(module).is_dir() and not ws.file(module).is_symlink():
        raise HarnessError(f"cannot read {shown}: Is a directory", "put the module's text there")
    raise HarnessError(f"{shown} does not exist in {ws.root}",
                       f"run `ol start {module.id}` to write the stubs")


def read_module(ws: Workspace, module: Module) -> bytes:
    """The module's file as staging reads it now (the whole tree staged: what it refuses, a
    check refuses too)."""
    return module_bytes(ws, module, stage(ws.root))


def check_source(data: bytes, module: Module, shown: str) -> ast.Module:
    """The module's parsed source, if it decodes, parses and defines every contract function
    with the contract's parameters; otherwise a one-line HarnessError."""
    text_of(data, shown)  # the size cap, and an encoding the importer can read
    tree = parse(data, shown)
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
    return tree


def check_module_file(ws: Workspace, module: Module) -> str:
    """The module's source as staging reads it now, if it passes ``check_source``; otherwise a
    one-line HarnessError."""
    shown = ws.relative(module)
    data = read_module(ws, module)
    check_source(data, module, shown)
    return text_of(data, shown)


def content_hash(source: str | bytes) -> str:
    """The digest ``ol check`` records for a module's file that passed: sha256 of its bytes."""
    return hashlib.sha256(source.encode("utf-8") if isinstance(source, str) else source).hexdigest()


# -- what the worker runs ------------------------------------------------------------------------

@dataclass(frozen=True)
class Submission:
    """What a check of one module runs of a workspace, read once (``read_submission``).

    ``files`` is the staged copy the worker imports (``python/...`` paths): ol's own empty
    package ``__init__.py`` files, the module's file and those of the modules it needs (the
    reference's under ``--ref-deps``), each the bytes the checks parsed. ``digest`` is that
    copy's, ``module_digest`` the module's file's (what a pass records and ``ol diff`` shows),
    ``tree_digest`` the whole ``python/`` tree's as staging read it (a gradebook's content hash).
    ``notes`` say what of the workspace was not used.
    """

    files: dict[str, bytes]
    digest: str
    module_digest: str
    tree_digest: str
    notes: tuple[str, ...] = ()


def read_submission(ws: Workspace, module: Module, course: Course, ref_deps: bool,
                    tree_digest: str | None = None) -> Submission:
    """Stage ``ws`` once and check what a check of ``module`` would run, or a one-line
    HarnessError: the module's file (``check_source``), each module it needs (missing or still a
    stub: ``M07.6 needs M07.1``; it must parse), and every import of a staged file of the
    workspace that names a module ol does not stage. ``tree_digest``: the digest the tree must
    still have (``ol grade`` hashed it before).
    """
    staged = stage(ws.root)
    if tree_digest is not None and staged.digest != tree_digest:
        raise HarnessError(f"{ws.root}/python changed while it was being graded",
                           "grade it again once it no longer changes")
    shown = ws.relative(module)
    data = module_bytes(ws, module, staged)
    theirs = {shown: check_source(data, module, shown)}  # the workspace's files staged, parsed
    copy = {shown: data}
    broken = None
    for dep_id in _all_needs(module, course):  # direct needs first: "M07.6 needs M07.1"
        dep = course.module(dep_id)
        dep_shown = ws.relative(dep)
        if ref_deps:
            copy[dep_shown] = (REFERENCE_PYTHON / dep.file).read_bytes()
            continue
        dep_data = staged.files.get(dep_shown)
        state, tree, problem = _state(dep_data, dep, dep_shown)
        if state != "written":
            raise HarnessError(
                f"{module.id} needs {dep.id}",
                f"{dep_shown} is {state.replace('stub', 'still a stub')}: `ol check {module.id} "
                f"--ref-deps` uses the reference {dep.id}; or pass `ol check {dep.id}` first")
        assert dep_data is not None, "a written module has a file"
        copy[dep_shown] = dep_data
        if tree is not None:
            theirs[dep_shown] = tree
        broken = broken or problem
    if broken is not None:
        raise broken
    packages = _package_files(copy)
    copy.update(dict.fromkeys(packages, b""))
    _check_imports(theirs, copy, staged, module)
    notes = tuple(f"{init} holds code that ol did not run: a check runs only the contract's files "
                  f"under ol's own empty package files" for init in packages
                  if init in staged.files and _holds_code(staged.files[init], init))
    files = dict(sorted(copy.items()))
    return Submission(files, digest(files), content_hash(data), staged.digest, notes)


def _package_files(files: dict[str, bytes]) -> list[str]:
    """The ``__init__.py`` of every folder below ``python/`` that holds one of ``files``."""
    found: set[str] = set()
    for rel in files:
        parts = rel.split("/")[1:-1]  # below python/, without the file's own name
        found.update("/".join(["python", *parts[:i], "__init__.py"]) for i in range(1, len(parts) + 1))
    return sorted(found)


def _holds_code(data: bytes, shown: str) -> bool:
    """Whether a package file holds more than docstrings, comments and ``pass``."""
    try:
        tree = parse(data, shown)
    except HarnessError:
        return True
    return not all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr)
                                               and isinstance(s.value, ast.Constant))
                   for s in tree.body)


def _dotted(rel: str) -> str:
    """``python/tinyllm/prob/rejection.py`` -> ``tinyllm.prob.rejection`` (a package file: the
    package's name)."""
    return rel.removeprefix("python/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _check_imports(trees: dict[str, ast.Module], copy: dict[str, bytes], staged: Staged,
                   module: Module) -> None:
    """Refuse, in one line, an import in a staged file of the workspace of a module of the
    workspace that is not staged (``tinyllm.prob.utils``, a top-level ``utils``): ol's package
    files are empty, so any name taken from ``tinyllm`` or ``tinyllm.prob`` is a module too.
    Imports of anything else (numpy, the standard library, a module that exists nowhere) are
    left to the import, which says what is wrong."""
    modules = {_dotted(rel) for rel in copy}
    packages = {_dotted(rel) for rel in copy if rel.endswith("/__init__.py")}
    tops = {rel.split("/")[1].removesuffix(".py") for rel in staged.files} | {"tinyllm"}
    for rel, tree in trees.items():
        package = _dotted(rel).rpartition(".")[0]
        for line, name, names in imports_of(tree, package):
            missing = _not_staged(name, names, modules, packages, tops)
            if missing is not None:
                raise HarnessError(
                    f"{rel}, line {line} imports {missing}, which ol does not run: a check of "
                    f"{module.id} runs only the contract's files of {module.id} and of the modules "
                    f"it needs, under ol's own empty package files", f"move that code into {rel}")


def imports_of(tree: ast.Module, package: str):
    """``(line, module, names imported from it)`` of every import in ``tree``, relative ones
    resolved against ``package``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 >= len(parts):
                    continue  # beyond the top-level package: the import itself fails
                base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
            yield node.lineno, base, [a.name for a in node.names if a.name != "*"]


def _not_staged(name: str, names: list[str], modules: set[str], packages: set[str],
                tops: set[str]) -> str | None:
    """The first module of the workspace named by an import of ``names`` from ``name`` that is
    not staged, or None."""
    parts = name.split(".")
    if parts[0] not in tops:
        return None
    for i in range(1, len(parts) + 1):
        if ".".join(parts[:i]) not in modules:
            return ".".join(parts[:i])
    if name in packages:
        for n in names:
            if f"{name}.{n}" not in modules:
                return f"{name}.{n}"
    return None


def prepare_overlay(submission: Submission) -> Path:
    """The staged copy written to a temporary folder for the worker to import: the directory
    to put on its ``sys.path`` (``.../python``); the caller removes its parent."""
    tmp = run_dir("ws")  # named after this process: swept if it is killed
    try:
        materialize(submission.files, tmp)
        return tmp / "python"
    except OSError as exc:
        remove_tree(tmp)
        # ol's own copy: a full disk or no descriptors is the machine's failure, not the
        # submission's (ol grade records it internal and grades it again next run).
        kind = HostError if host_failure(exc) else HarnessError
        raise kind(f"cannot copy the workspace: {exc}",
                   "check that there is room in the temporary folder") from None
    except BaseException:
        remove_tree(tmp)
        raise
