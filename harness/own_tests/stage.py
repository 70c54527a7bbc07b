"""``ol tests MODULE --mine PATH``: the student's suite, staged where the fork server reads it.

``resolve_suite`` checks ``--mine PATH``; ``stage`` copies a snapshot of the suite, the reference
dependencies and an empty ``pytest.ini`` into a temporary folder, rewrites the suite's assertions
once for every run and says which slow imports (``PRELOAD``) the server should do up front. What
it returns is the staging part of the server's configuration (``harness.own_tests.engine``).

Reading the suite (parsing, rewriting and compiling the student's files) runs nothing of it, but
its cost is the student's to choose: a 2 MiB list literal is a syntax tree of a gigabyte, a long
chain of ``+`` a ``RecursionError``. So it happens in a process of its own (``read_suite``) with
``READ_MEMORY`` of address space and ``READ_LIMIT_S`` seconds; a file it cannot read within them
is a usage error, one line (exit 2), never a traceback in ol's own process. So is a test file (or
``conftest.py``) that does not parse: its file, line and what is wrong, instead of pytest's
collection traceback, once per implementation.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.engine.course import Module
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON, REPO_ROOT
from harness.sandbox.fs import remove_tree
from harness.sandbox.rundirs import run_dir

SUITE_FILES, SUITE_BYTES = 2000, 32 << 20
SKIPPED_DIRS = {"__pycache__", ".git", ".pytest_cache", ".hypothesis", ".tox", ".venv", "venv",
                ".mypy_cache", ".ruff_cache", "node_modules"}
# Installed modules a suite may import that are slow to import: imported once in the server.
PRELOAD = ("scipy", "scipy.stats", "scipy.special", "hypothesis", "hypothesis.strategies",
           "hypothesis.extra.numpy", "fractions", "statistics")
# Reading the suite: a process's address space (the interpreter and pytest take about 60 MiB; a
# hand-written test file of a few thousand lines a few MiB more), its wall clock and CPU time.
READ_MEMORY = 512 << 20
READ_LIMIT_S = 60.0
READ = ("import sys; sys.path.insert(0, sys.argv[1]); "
        "from harness.own_tests.stage import read_suite; read_suite(sys.argv[2:])")


def resolve_suite(path_arg: str, workspace_arg: str | None) -> Path:
    """``--mine PATH`` as a file or folder of pytest tests; relative to ``--workspace`` if given."""
    path = Path(path_arg).expanduser()
    if not path.is_absolute() and workspace_arg:
        from harness.engine.workspace import resolve_workspace

        path = resolve_workspace(workspace_arg).root / path
    hint = "give the test file or the folder of your pytest tests"
    if not path.exists():
        raise HarnessError(f"--mine {path_arg}: {path} does not exist", hint)
    if path.is_file() and path.suffix != ".py":
        raise HarnessError(f"--mine {path_arg} is not a Python file", hint)
    if path.is_dir() and not any(_is_test_file(Path(name)) for _, _, names in _walk(path)
                                 for name in names):
        raise HarnessError(f"--mine {path_arg} holds no test file (test_*.py or *_test.py)", hint)
    return path.resolve()


MAX_SUITE_DEPTH = 16  # folders below --mine's folder: os.walk recurses, so it never goes deeper


def _walk(src: Path):
    """``os.walk`` top-down without links, caches, or more than MAX_SUITE_DEPTH levels (a
    deeper folder is a usage error: a student's tests are a few folders deep)."""
    base = len(src.parts)
    for folder, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS
                         and not os.path.islink(os.path.join(folder, d)))
        if dirs and len(Path(folder).parts) - base >= MAX_SUITE_DEPTH:
            raise HarnessError(f"{src} is more than {MAX_SUITE_DEPTH} folders deep",
                               "point --mine at the folder of your tests")
        yield folder, dirs, names


def _is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py")


def stage(module: Module, suite: Path) -> tuple[Path, dict[str, Any]]:
    """A temporary folder with a snapshot of the suite, the dependencies and an empty pytest.ini.

    The children read only this snapshot (the student's files can change meanwhile) and none of
    the student's pytest configuration files: their options could break the protocol. Returns
    the folder and the part of the server's configuration that describes it.
    """
    root = run_dir("mine-stage")
    try:
        lib = root / "lib"
        deps = _copy_dependencies(module, lib)
        snap = root / "suite"
        snap.mkdir()
        if suite.is_file():
            shutil.copyfile(suite, snap / suite.name)
            if (suite.parent / "conftest.py").is_file() and suite.name != "conftest.py":
                shutil.copyfile(suite.parent / "conftest.py", snap / "conftest.py")
        else:
            _copy_suite(suite, snap / suite.name)
        preload = _read(snap, suite, module.id)
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        args = ["-c", str(root / "pytest.ini"), "--rootdir", str(snap), "--confcutdir", str(snap),
                "-p", "no:cacheprovider", "--tb=short"]
        return root, {"snapshot": str(snap), "lib": str(lib), "deps": deps,
                      "targets": [str(snap / suite.name)], "pytest_args": args,
                      "preload": preload}
    except OSError as exc:
        remove_tree(root)
        raise HarnessError(f"cannot copy your tests {suite}: {exc.strerror or exc}",
                           "check the files are readable") from None
    except BaseException:
        remove_tree(root)
        raise


def _copy_dependencies(module: Module, lib: Path) -> list[str]:
    """The reference ``tinyllm`` package without the module's own file; the modules' names."""
    names = []
    for src in sorted(REFERENCE_PYTHON.rglob("*.py")):
        rel = src.relative_to(REFERENCE_PYTHON)
        if rel.as_posix() == module.file or "__pycache__" in rel.parts:
            continue
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, lib / rel)
        names.append(".".join(rel.with_suffix("").parts).removesuffix(".__init__"))
    return names


def _copy_suite(src: Path, dest: Path) -> None:
    """Regular files only (no symbolic links), caches skipped, at most SUITE_FILES / SUITE_BYTES."""
    files = size = 0
    for folder, _, names in _walk(src):
        target = dest / Path(folder).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file() or name.endswith(".pyc"):
                continue
            files, size = files + 1, size + path.stat().st_size
            if files > SUITE_FILES or size > SUITE_BYTES:
                raise HarnessError(f"{src} holds more than {SUITE_FILES} files or "
                                   f"{SUITE_BYTES >> 20} MB",
                                   "point --mine at the folder of your tests")
            shutil.copyfile(path, target / name)


def _read(snap: Path, suite: Path, module_id: str) -> list[str]:
    """Read the snapshot's files in a process of their own (``read_suite``): which of PRELOAD
    they import. HarnessError naming the file it could not read within its limits."""
    command = [sys.executable, "-I", "-c", READ, str(REPO_ROOT), str(snap), str(READ_MEMORY),
               str(int(READ_LIMIT_S))]
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as child:
        try:
            out = child.communicate(timeout=READ_LIMIT_S)[0]
        except subprocess.TimeoutExpired:
            child.kill()
            out = child.communicate()[0]
    lines = []
    for line in out.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError):  # the last line cut short by a kill
            lines.append(json.loads(line))
    last = lines[-1] if lines and isinstance(lines[-1], dict) else {}
    if child.returncode == 0 and isinstance(last.get("preload"), list):
        return [name for name in PRELOAD if name in last["preload"]]
    file = last.get("refused") or last.get("file")
    shown = suite.parent / file if file else suite  # the snapshot holds the suite by its name
    if child.returncode == 0 and isinstance(last.get("syntax"), str) and file:
        lineno, text = last.get("line"), last.get("text")
        where = f", line {lineno}" if type(lineno) is int else ""
        near = f" at `{_printable(text)}`" if isinstance(text, str) and text else ""
        raise HarnessError(f"--mine: {shown}{where}: {_printable(last['syntax'])}{near}",
                           f"no test runs until every test file parses: fix it, then run "
                           f"`ol tests {module_id} --mine {suite}` again")
    why = last.get("why") or (f"reading it took more than {READ_LIMIT_S:g} s or "
                              f"{READ_MEMORY >> 20} MiB")
    raise HarnessError(f"--mine: ol cannot read {shown}: {why}",
                       "split the file, and build large or deeply nested data in a fixture "
                       "when the tests run, not as a literal")


def _printable(text: str) -> str:
    """A line of the student's source, shown on one line: controls and escapes as their escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def read_suite(argv: list[str]) -> None:  # pragma: no cover - runs in its own process
    """The reading process (``READ``; argv: the snapshot, the address space, the CPU seconds).

    For each file, in order: a line naming it, then its syntax tree read for imports and
    pytest's assertion rewriting written where pytest looks for it (``__pycache__`` beside it,
    named for this pytest, which ``_copy_suite`` never fills from the student's folder). A file
    that does not parse is left for pytest to report; one too large or too deep ends the reading
    (``refused``). A test file or ``conftest.py`` that does not parse ends it too (``syntax``:
    what is wrong, at which line). Last, the imports: which of PRELOAD the suite imports.
    """
    import resource

    snap, memory, cpu = Path(argv[0]), int(argv[1]), int(argv[2])
    import importlib

    rewrite: Any = None
    with contextlib.suppress(ImportError):  # pytest is a dependency
        rewrite = importlib.import_module("_pytest.assertion.rewrite")
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    names: set[str] = set()
    for path in sorted(snap.rglob("*.py")):
        rel = path.relative_to(snap).as_posix()
        print(json.dumps({"file": rel}), flush=True)
        try:
            names |= _imports(path)
            if rewrite is not None:
                _rewrite(rewrite, path)
        except SyntaxError as exc:  # also IndentationError, TabError
            if _is_test_file(path) or path.name == "conftest.py":
                print(json.dumps(_syntax(exc, rel)), flush=True)
                return
        except (MemoryError, RecursionError) as exc:
            why = (f"its syntax tree needs more than {memory >> 20} MiB"
                   if isinstance(exc, MemoryError) else "it is nested too deep to parse")
            print(json.dumps({"refused": rel, "why": why}), flush=True)
            return
    print(json.dumps({"preload": [name for name in PRELOAD if name in names]}), flush=True)


def _syntax(exc: SyntaxError, rel: str) -> dict[str, Any]:
    """A file that does not parse, for the parent's one line: the error, its line, the code."""
    text = (exc.text or "").strip()
    return {"file": rel, "syntax": f"{type(exc).__name__}: {exc.msg}", "line": exc.lineno,
            "text": text if len(text) <= 60 else text[:57] + "..."}


def _imports(path: Path) -> set[str]:
    """The modules a file imports (read with ``ast``; nothing of it runs); none if it cannot be
    read; SyntaxError if it does not parse."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (ValueError, OSError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _rewrite(rewrite: Any, path: Path) -> None:
    """pytest's assertion rewriting of one file, once here rather than in every child: parsed
    and compiled, nothing runs. A file that does not parse is left for pytest to report."""
    try:
        # pytest's private API is typed for a Config; it takes None (no config) as well.
        stat, code = rewrite._rewrite_test(path, None)
        cache = path.parent / "__pycache__"
        cache.mkdir(exist_ok=True)
        with open(cache / (path.name[:-3] + rewrite.PYC_TAIL), "wb") as fh:
            rewrite._write_pyc_fp(fh, stat, code)
    except (SyntaxError, ValueError, OSError, AttributeError, TypeError):
        return
