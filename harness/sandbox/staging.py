"""Staging a submission: the one reader of a workspace's ``python/`` tree.

``stage(root)`` walks ``root/python`` and returns its Python source files as ``{relative posix
path: bytes}`` with their digest. Everything else that needs a submission's files (the worker's
copy under ``ol check``, the gradebook's content hash, the files a Dask task carries) takes them
from here, so every path sees the same tree and refuses the same things, with the same line.
The worker's copy is not this whole tree: ``harness.engine.workspace.read_submission`` takes from
it only the contract's files (the module's and those of the modules it needs), checks those
bytes, and writes them under ol's own package files.

The walk works through directory descriptors with an explicit stack, opens nothing through a
link (``O_NOFOLLOW``) and never recurses, like ``harness.sandbox.fs.remove_tree``. What it decides:

- **Only ``.py`` files are staged.** Nothing else reaches the worker's copy, so no extension
  module, ``.pth`` file or data file anywhere in the tree can be imported or read by the code
  under test. Other regular files are skipped (not read, not hashed).
- **Skipped silently:** ``__pycache__`` folders (a stale cache is normal in a workspace; the
  worker runs ``python -I`` on a copy without it) and folders whose name starts with a dot
  (``.mypy_cache``, ``.pytest_cache``: not importable as a package). They are not walked.
- **Refused** with a ``HarnessError`` (one line, exit 2 in the CLI, verdict ``error`` in a
  gradebook): a symbolic link anywhere (never followed); anything that is neither a folder nor a
  regular file (FIFO, socket, device); a folder more than ``MAX_DEPTH`` levels below ``python/``
  (the walk stops there, it never descends further); more than ``MAX_ENTRIES`` entries or
  ``MAX_BYTES`` of Python source; a name that is not valid UTF-8 (shown escaped); and what Python
  would import instead of the ``.py`` files ol reads: a folder ``X/`` beside ``X.py``, bytecode
  ``X.pyc`` beside ``X.py``, and a compiled extension (``*.so``, ``*.pyd``) anywhere.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError, HostError, host_failure
from harness.escape import valid_text

PYTHON = "python"
MAX_DEPTH = 16  # folders below python/; the course's package is two deep
MAX_ENTRIES = 1000  # files and folders walked (skipped folders count once, not their contents)
MAX_BYTES = 16 << 20  # of Python source; a workspace's modules are a few KiB each
SKIPPED_DIRS = ("__pycache__",)  # and every folder whose name starts with a dot
COMPILED = (".so", ".pyd")

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO never blocks


@dataclass(frozen=True)
class Staged:
    """A submission's Python source: ``python/...`` paths to bytes, and their digest."""

    files: dict[str, bytes]
    digest: str


def digest(files: dict[str, bytes]) -> str:
    """sha256 over every (path, size, bytes) in path order: the same tree, the same digest."""
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def text_of_name(name: str | bytes) -> str:
    """A file name as text that can be shown and written anywhere, on one line: bytes that are
    not UTF-8 as ``\\xff``, control characters as ``\\n`` or ``\\x1b``."""
    text = valid_text(os.fsdecode(name))
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def stage(root: Path | str) -> Staged:
    """The Python source of ``root/python`` (empty when there is no ``python/``).

    Raises ``HarnessError`` for what the module's docstring says is refused; reads nothing else.
    """
    root = os.fspath(root)
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        if host_failure(exc):
            raise _unreadable(f"the workspace {text_of_name(root)}", exc) from None
        raise HarnessError(f"cannot read the workspace {text_of_name(root)}: {_reason(exc)}",
                           "check that the folder exists and is readable") from None
    try:
        return _Walk().run(root_fd)
    finally:
        os.close(root_fd)


class _Walk:
    """One walk of ``python/``: what was counted and read so far."""

    def __init__(self) -> None:
        self.entries = 0
        self.size = 0
        self.files: dict[str, bytes] = {}

    def run(self, root_fd: int) -> Staged:
        try:
            mode = os.stat(PYTHON, dir_fd=root_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return Staged({}, digest({}))
        except OSError as exc:
            raise _unreadable(PYTHON, exc) from None
        if stat.S_ISLNK(mode):
            raise _link(PYTHON)
        if not stat.S_ISDIR(mode):
            raise HarnessError(f"{PYTHON} is not a folder", "python/ holds the package tinyllm/")
        walk_folders(_open_dir(PYTHON, root_fd, PYTHON), PYTHON, self.scan)
        files = dict(sorted(self.files.items()))
        return Staged(files, digest(files))

    def scan(self, fd: int, rel: str, depth: int) -> list[str]:
        """Check the entries of the folder ``fd`` (at ``depth`` below python/), read its Python
        files; its subfolders to walk, last first."""
        names: list[str] = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    self.entries += 1
                    if self.entries > MAX_ENTRIES:
                        raise HarnessError(f"{PYTHON}/ holds more than {MAX_ENTRIES} files and "
                                           "folders", "a workspace is a few small files; "
                                           "remove the rest")
                    names.append(entry.name)
        except OSError as exc:
            raise _unreadable(rel, exc) from None
        names.sort()
        kinds: dict[str, str] = {}
        for name in names:
            shown = f"{rel}/{text_of_name(name)}"
            if not _is_utf8(name):
                raise HarnessError(f"{shown} has a name that is not valid UTF-8",
                                   "rename it: ol records file and folder names as text")
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue  # removed meanwhile
            except OSError as exc:
                raise _unreadable(shown, exc) from None
            if stat.S_ISLNK(mode):
                raise _link(shown)
            if stat.S_ISDIR(mode):
                kinds[name] = "dir"
            elif stat.S_ISREG(mode):
                kinds[name] = "file"
            else:
                raise HarnessError(f"{shown} is not a regular file or folder (a FIFO, socket "
                                   "or device)", "remove it: a workspace holds files and folders")
        modules = {n[:-3] for n, kind in kinds.items() if kind == "file" and n.endswith(".py")}
        subdirs = []
        for name, kind in kinds.items():
            key, shown = f"{rel}/{name}", f"{rel}/{text_of_name(name)}"
            if kind == "dir":
                if name in SKIPPED_DIRS or name.startswith("."):
                    continue
                if name in modules:
                    raise HarnessError(f"{shown}/ is a folder beside {name}.py: Python would "
                                       f"import the folder instead of the {name}.py ol reads",
                                       "rename or remove the folder")
                if depth + 1 > MAX_DEPTH:
                    raise HarnessError(f"{shown} is more than {MAX_DEPTH} folders deep below "
                                       f"{PYTHON}/", "a workspace's package is a few folders "
                                       "deep; remove the nested folders")
                subdirs.append(name)
            elif name.endswith(COMPILED):
                stem = name.split(".", 1)[0]
                instead = (f"; Python would import it instead of {stem}.py"
                           if stem in modules else "")
                raise HarnessError(f"{shown} is a compiled extension: ol imports only Python "
                                   f"source (.py files){instead}", "remove it")
            elif name.endswith(".pyc") and name[:-4] in modules:
                raise HarnessError(f"{shown} is bytecode beside {name[:-4]}.py: ol imports only "
                                   "Python source (.py files)", "remove it")
            elif name.endswith(".py"):
                self.read(fd, name, key, shown)
        subdirs.reverse()
        return subdirs

    def read(self, dir_fd: int, name: str, key: str, shown: str) -> None:
        data = read_regular(dir_fd, name, shown, MAX_BYTES - self.size,
                            lambda: HarnessError(f"{shown} is not a regular file", "remove it"))
        self.size += len(data)
        if self.size > MAX_BYTES:
            raise HarnessError(f"the Python files of {PYTHON}/ hold more than "
                               f"{MAX_BYTES >> 20} MiB", "a workspace is a few small files; "
                               "remove the rest")
        self.files[key] = data


Unreadable = Callable[[str, OSError], Exception]


def walk_folders(top: int, rel: str, scan: Callable[[int, str, int], list[str]],
                 unreadable: Unreadable | None = None) -> None:
    """Walk the open folder ``top`` (shown as ``rel``) and every subfolder ``scan`` names, depth
    first, through directory descriptors: no recursion, nothing opened through a link
    (``O_NOFOLLOW``), each descriptor closed (``top`` too) however the walk ends.
    ``scan(fd, rel, depth)`` looks at one folder and returns the subfolders to walk, last first;
    a subfolder that cannot be opened raises ``unreadable(its rel, error)``."""
    unreadable = unreadable or _unreadable
    # One entry per open level: (its descriptor, its path, its subfolders left to walk).
    stack: list[tuple[int, str, list[str]]] = [(top, rel, [])]
    try:
        stack[-1] = (top, rel, scan(top, rel, 0))
        while stack:
            fd, rel, pending = stack[-1]
            if not pending:
                stack.pop()
                os.close(fd)
                continue
            name = pending.pop()
            child_rel = f"{rel}/{text_of_name(name)}"
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:  # ELOOP/ENOTDIR: replaced by a link or a file meanwhile
                raise unreadable(child_rel, exc) from None
            stack.append((child, child_rel, []))
            stack[-1] = (child, child_rel, scan(child, child_rel, len(stack) - 1))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def read_regular(dir_fd: int | None, name: str, shown: str, limit: int,
                 not_regular: Callable[[], Exception], unreadable: Unreadable | None = None) -> bytes:
    """At most ``limit`` + 1 bytes of the file ``name`` in ``dir_fd`` (the caller tells more
    than ``limit`` apart): never through a link, a FIFO never blocks, anything but a regular
    file raises ``not_regular()``."""
    unreadable = unreadable or _unreadable
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:  # ELOOP: replaced by a link since it was looked at
        raise unreadable(shown, exc) from None
    with open(fd, "rb", closefd=True) as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular()
        try:
            return fh.read(limit + 1)
        except OSError as exc:
            raise unreadable(shown, exc) from None


def _open_dir(name: str, dir_fd: int, shown: str) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:  # ELOOP/ENOTDIR: replaced by a link or a file since it was looked at
        raise _unreadable(shown, exc) from None


def _link(shown: str) -> HarnessError:
    return HarnessError(f"{shown} is a symbolic link",
                        "ol never follows links: put the file or folder itself there")


def _unreadable(shown: str, exc: OSError) -> HarnessError:
    if host_failure(exc):  # the machine's doing (no descriptors, no memory): graded again later
        return HostError(f"cannot read {shown}: {_reason(exc)}", "the machine running ol is out "
                         "of resources; run the same command again")
    return HarnessError(f"cannot read {shown}: {_reason(exc)}", "check that it is readable")


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def materialize(files: dict[str, bytes], dest: Path | str) -> None:
    """Write a staged tree below the folder ``dest`` (its paths are relative posix paths).

    An absolute path, an empty, ``.`` or ``..`` component raises ``ValueError``: staged trees
    never hold one, so it is a bug, not a submission's doing. Files are created, never
    overwritten, and nothing is written through a link.
    """
    dest = Path(dest)
    for rel, data in files.items():
        parts = rel.split("/")
        if (not rel or rel.startswith("/") or "\0" in rel
                or any(p in ("", ".", "..") for p in parts)):
            raise ValueError(f"refusing to write {rel!r} outside {dest}")
        path = dest.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
        with open(fd, "wb", closefd=True) as fh:
            fh.write(data)
