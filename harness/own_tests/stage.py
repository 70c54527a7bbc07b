"""``ol tests MODULE --mine PATH``: the student's suite, staged where the fork server reads it.

``resolve_suite`` checks ``--mine PATH``; ``stage`` copies a snapshot of the suite, the reference
dependencies and an empty ``pytest.ini`` into a temporary folder, rewrites the suite's assertions
once for every run and says which slow imports (``PRELOAD``) the server should do up front. What
it returns is the staging part of the server's configuration (``harness.own_tests.engine``).
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path
from typing import Any

from harness.engine.course import REFERENCE_PYTHON, Module
from harness.errors import HarnessError
from harness.sandbox.fs import remove_tree
from harness.sandbox.rundirs import run_dir

SUITE_FILES, SUITE_BYTES = 2000, 32 << 20
SKIPPED_DIRS = {"__pycache__", ".git", ".pytest_cache", ".hypothesis", ".tox", ".venv", "venv",
                ".mypy_cache", ".ruff_cache", "node_modules"}
# Installed modules a suite may import that are slow to import: imported once in the server.
PRELOAD = ("scipy", "scipy.stats", "scipy.special", "hypothesis", "hypothesis.strategies",
           "hypothesis.extra.numpy")


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
        _rewrite_ahead(snap)
        (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        args = ["-c", str(root / "pytest.ini"), "--rootdir", str(snap), "--confcutdir", str(snap),
                "-p", "no:cacheprovider", "--tb=short"]
        return root, {"snapshot": str(snap), "lib": str(lib), "deps": deps,
                      "targets": [str(snap / suite.name)], "pytest_args": args,
                      "preload": _preloads(snap)}
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


def _rewrite_ahead(snap: Path) -> None:
    """pytest's assertion rewriting of the suite's files, once here rather than in every child.

    Rewriting parses and compiles, it runs nothing. The result goes where pytest looks for it
    (``__pycache__`` beside each file, named for this pytest), which ``_copy_suite`` never fills
    from the student's folder. A file that does not parse is left for pytest to report.
    """
    try:
        from _pytest.assertion import rewrite
    except ImportError:  # pragma: no cover - pytest is a dependency
        return
    for path in snap.rglob("*.py"):
        try:
            # pytest's private API is typed for a Config; it takes None (no config) as well.
            stat, code = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]
            cache = path.parent / "__pycache__"
            cache.mkdir(exist_ok=True)
            with open(cache / (path.name[:-3] + rewrite.PYC_TAIL), "wb") as fh:
                rewrite._write_pyc_fp(fh, stat, code)
        except (SyntaxError, ValueError, OSError, AttributeError, TypeError):
            continue


def _preloads(snap: Path) -> list[str]:
    """Which of PRELOAD the suite imports (read with ``ast``; nothing of it runs here)."""
    names: set[str] = set()
    for path in snap.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{a.name}" for a in node.names)
    return [name for name in PRELOAD if name in names]
