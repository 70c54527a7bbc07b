"""The lab's cache: every cell of the kill matrix kept under a key of everything that decides it.

A cell (one catalog test against one mutant, or against the reference) is a function of
- the test: its own source (decorators included) and, transitively, the top-level definitions
  and assignments of its catalog module that it names; every other top-level statement of that
  module (imports, ``if``, an augmented assignment...); and the full text of every other file of
  ``harness/catalogs`` (the shared checks, the contract, another module's catalog it borrows
  from), which with ``engine_digest`` covers every harness module it imports (``test_digests``);
- the code under test: the whole reference tree (``reference/python``, every ``.py``) and, for a
  mutant, its id, file, function, edits and its applied source;
- the cases: the run seed (or the public cases) and the per-test time limit;
- ol itself (``engine_digest``): its version, every file of the ``harness`` package outside the
  catalog modules (the engine, the course, the catalogs' shared checks...), and the Python,
  numpy and scipy that run it.

Any of these changing changes the key, so a stale cell is never read: it is a miss. Editing one
catalog test changes that test's key only (one column is run again), adding a mutant adds one row.
The cells are stored one file per row (``row-KEY.json``: the cells of one mutant, by test key;
``ref-KEY.json``: the reference's cells with what each test reaches), in ``$OL_CACHE_DIR/lab``,
else ``$XDG_CACHE_HOME/ol/lab``, else ``~/.cache/ol/lab``; ``OL_NO_CACHE=1`` turns it off.

The cache is a convenience, never a source of truth: every entry is plain JSON written through a
temporary file and ``os.replace``, read with a size cap, and checked (its format, its key, each
cell's test name and fields); anything wrong with it is a miss, never an error or a wrong cell. A
folder that cannot be written leaves the lab uncached, silently. The folder is bounded: after a
run that wrote to it, the oldest entries (by last use) are removed until it holds at most
``BOUND_BYTES``.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import harness
from harness.engine.course import Module, load_course
from harness.engine.mutants import Mutant, apply
from harness.engine.own_code import reference_source
from harness.engine.results import TestResult
from harness.paths import REFERENCE_PYTHON

FORMAT = 1  # of an entry; part of every key too
BOUND_BYTES = 256 * 1024 * 1024  # the whole folder, after a run that wrote to it
MAX_ENTRY_BYTES = 16 * 1024 * 1024  # a larger entry is not read (a miss)
MODES = ("use", "fresh", "off")  # read and write; write only (--fresh); neither
HARNESS_DIR = Path(harness.__file__).resolve().parent
_DYNAMIC = ("globals(", "vars(", "eval(", "exec(", "__dict__", "sys.modules", "getattr(")


def cache_dir() -> Path | None:
    """Where the lab's cache lives, or None when ``OL_NO_CACHE`` is set (to anything but "" or 0)."""
    if os.environ.get("OL_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("OL_CACHE_DIR")
    if base:
        return Path(os.path.abspath(base)) / "lab"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "ol" / "lab"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "ol" / "lab" if os.path.isabs(home) else None


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _catalog_file(dotted: str) -> Path:
    return HARNESS_DIR.parent.joinpath(*dotted.split(".")).with_suffix(".py")


def engine_digest() -> str:
    """"ol's version": its package version, every ``.py``/``.toml``/``.json`` file of the package
    except the course's catalog modules (each test's own key covers those), and the Python, numpy
    and scipy that run it. Conservative: any change of ol's own code makes every cell a miss."""
    catalogs = {_catalog_file(m.catalog_module) for m in load_course().modules.values()}
    parts: list[Any] = [FORMAT, harness.__version__, sys.version, platform.machine(),
                        platform.system()]
    for dist in ("numpy", "scipy"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} none")
    files = sorted(p for suffix in ("py", "toml", "json") for p in HARNESS_DIR.rglob(f"*.{suffix}")
                   if p not in catalogs and "__pycache__" not in p.parts)
    for path in files:
        parts += [path.relative_to(HARNESS_DIR).as_posix(), path.read_bytes()]
    return _digest(*parts)


def reference_digest() -> str:
    """Every ``.py`` file of the reference tree, by path and bytes."""
    files = sorted(p for p in REFERENCE_PYTHON.rglob("*.py") if "__pycache__" not in p.parts)
    return _digest(*[x for p in files for x in (p.relative_to(REFERENCE_PYTHON).as_posix(),
                                                p.read_bytes())])


def mutant_digest(mutant: Mutant, module: Module) -> str:
    """The mutant as it runs: its id (its frames' file name), file, function (what reaches it),
    edits, and the reference file with the edits applied."""
    edits = [(e.find, e.replace) for e in mutant.edits]
    return _digest("mutant", mutant.id, mutant.file, mutant.function, repr(edits),
                   apply(mutant, reference_source(module)))


# -- a test's key ----------------------------------------------------------------------------------

def _binds(node: ast.stmt) -> set[str] | None:
    """The names a top-level definition or plain assignment binds; None for any other statement
    (which goes into every test's key), or a definition that writes module globals."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(node)):
            return None
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    if targets and all(isinstance(t, ast.Name) for t in targets):
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return None


def _segment(lines: list[str], node: ast.stmt) -> str:
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return "".join(lines[first - 1:node.end_lineno])


def _catalog_package_files(own: Path) -> list[Any]:
    """Every file of ``harness/catalogs`` but ``own``, by path and bytes: what a catalog module
    imports of the harness outside the engine (its shared checks, its contract, another module's
    catalog it borrows cases from), and more; conservative, and cheap (nothing is parsed)."""
    root = HARNESS_DIR / "catalogs"
    files = sorted(p for suffix in ("py", "toml", "json") for p in root.rglob(f"*.{suffix}")
                   if p != own and "__pycache__" not in p.parts)
    return [x for p in files for x in (p.relative_to(HARNESS_DIR).as_posix(), p.read_bytes())]


def test_digests(module: Module, names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Each catalog test's key: its source and what it names of its module, the module's other
    statements, and the full text of every other file of ``harness/catalogs`` (a superset of the
    harness modules the catalog imports that ``engine_digest`` leaves out: the catalogs' shared
    checks, the contract, another module's catalog)."""
    path = _catalog_file(module.catalog_module)
    common = [path.relative_to(HARNESS_DIR.parent).as_posix(), *_catalog_package_files(path)]
    return source_digests(path.read_text(encoding="utf-8"), names, common)


def source_digests(text: str, names: list[str] | tuple[str, ...],
                   common: list[Any] | tuple[Any, ...] = ()) -> dict[str, str]:
    """The key of each test ``names`` of the module source ``text``: the test's own definition
    and, transitively, every top-level definition or plain assignment it names (an ``ast`` walk
    of its names), with every other top-level statement and ``common``.

    A module that looks names up dynamically (``globals()``, ``getattr``...) gives every test
    the whole text instead, as does a test that is not a top-level definition of it: a narrower
    key could miss what a test uses."""
    lines = text.splitlines(keepends=True)
    nodes = ast.parse(text).body
    shared = list(common)
    dynamic = any(word in text for word in _DYNAMIC)
    binders: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        bound = _binds(node)
        if bound is None or dynamic:
            shared.append(_segment(lines, node))
        else:
            for name in bound:
                binders.setdefault(name, []).append(i)
    uses: dict[int, set[int]] = {}  # a definition -> the definitions it names
    for i in {i for found in binders.values() for i in found}:
        named = {n.id for n in ast.walk(nodes[i]) if isinstance(n, ast.Name)}
        uses[i] = {j for name in named for j in binders.get(name, ())}
    digests = {}
    for name in names:
        found = binders.get(name)
        if not found:
            digests[name] = _digest("test", name, *shared, text)
            continue
        closure: set[int] = set()
        todo = list(found)
        while todo:
            i = todo.pop()
            if i not in closure:
                closure.add(i)
                todo += uses[i]
        digests[name] = _digest("test", name, *shared,
                                *(_segment(lines, nodes[i]) for i in sorted(closure)))
    return digests


# -- the store -------------------------------------------------------------------------------------

@dataclass
class LabCache:
    """One lab run's view of the cache: ``mode`` is one of ``MODES``; ``folder`` None when the
    cache is off or cannot be used."""

    folder: Path | None
    mode: str
    base: str  # what every key of this run shares: ol, the reference, the module, seed, limit
    tests: dict[str, str]  # test name -> its key
    wrote: bool = False
    stats: dict[str, int] = field(default_factory=lambda: {
        "cells_cached": 0, "cells_run": 0, "reference_cached": 0, "reference_run": 0})

    @classmethod
    def open(cls, mode: str, module: Module, names: list[str] | tuple[str, ...],
             seed: int | None, limit: float) -> LabCache:
        folder = cache_dir() if mode != "off" else None
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                if not os.access(folder, os.W_OK | os.X_OK):
                    folder = None
            except (OSError, ValueError):
                folder = None
        if folder is None:
            return cls(None, "off", "", {})
        base = _digest(FORMAT, engine_digest(), reference_digest(), module.id,
                       "public" if seed is None else seed, repr(float(limit)))
        return cls(folder, mode, base, test_digests(module, names))

    @property
    def reads(self) -> bool:
        return self.folder is not None and self.mode == "use"

    def _path(self, kind: str, key: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{kind}-{key}.json"

    def _read(self, path: Path, key: str) -> dict[str, Any]:
        """The cells of the entry at ``path`` made under ``key``; {} for a miss of any kind."""
        try:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size > MAX_ENTRY_BYTES:
                    return {}
                data = json.loads(f.read(MAX_ENTRY_BYTES + 1))
            if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
                return {}
            cells = data.get("cells")
            with contextlib.suppress(OSError):
                os.utime(path)  # last used: the bound removes the oldest first
            return cells if isinstance(cells, dict) else {}
        except (OSError, ValueError, RecursionError):
            return {}

    def _write(self, path: Path, key: str, cells: dict[str, Any]) -> None:
        if self.folder is None:
            return
        text = json.dumps({"format": FORMAT, "key": key, "cells": cells}, separators=(",", ":"))
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
            tmp = None
            self.wrote = True
        except (OSError, ValueError):
            self.folder = None  # cannot write here: the rest of the run is uncached
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def _cells(self, kind: str, key: str) -> dict[str, Any]:
        """The entry's cells of the tests of this catalog, by test name, each checked (a
        reference's cell must say what its test reaches)."""
        if not self.reads:
            return {}
        raw = self._read(self._path(kind, key), key)
        found = {}
        for name, test_key in self.tests.items():
            cell = raw.get(test_key)
            if not isinstance(cell, dict):
                continue
            with contextlib.suppress(Exception):  # a malformed cell is a miss
                result = TestResult.from_json(cell["result"])
                covered = cell.get("covered")
                if result.name == name and (covered is None if kind == "row" else (
                        isinstance(covered, list) and all(isinstance(c, str) for c in covered))):
                    found[name] = (result, None if covered is None else frozenset(covered))
        return found

    def _store(self, kind: str, key: str, cells: dict[str, tuple[TestResult, Any]]) -> None:
        if self.folder is None or not cells:
            return
        self._write(self._path(kind, key), key, {
            self.tests[name]: {"result": result.to_json(),
                               **({"covered": sorted(covered)} if covered is not None else {})}
            for name, (result, covered) in cells.items() if name in self.tests})

    def reference_key(self) -> str:
        return _digest("reference", self.base)

    def row_key(self, mutant_key: str) -> str:
        return _digest("row", self.base, mutant_key)

    def reference(self) -> dict[str, tuple[TestResult, frozenset[str]]]:
        """The reference's cached cells: test name -> (its result, the functions it reaches)."""
        return self._cells("ref", self.reference_key())

    def store_reference(self, cells: dict[str, tuple[TestResult, frozenset[str]]]) -> None:
        self._store("ref", self.reference_key(), cells)

    def row(self, mutant_key: str) -> dict[str, TestResult]:
        """One mutant's cached cells, by test name."""
        return {name: result for name, (result, _) in self._cells("row", self.row_key(mutant_key)).items()}

    def store_row(self, mutant_key: str, cells: dict[str, TestResult]) -> None:
        self._store("row", self.row_key(mutant_key), {n: (r, None) for n, r in cells.items()})

    def bound(self, limit: int | None = None) -> None:
        """Remove the least recently used entries until the folder holds at most ``limit``
        bytes (``BOUND_BYTES``); left temporary files go too."""
        if self.folder is None or not self.wrote:
            return
        limit = BOUND_BYTES if limit is None else limit
        entries = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if entry.is_file(follow_symlinks=False) and entry.name.endswith(".json"):
                        entries.append((info.st_mtime, info.st_size, entry.path, entry.name))
        total = sum(size for _, size, _, _ in entries)
        for _, size, path, _ in sorted(entries):
            if total <= limit:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
