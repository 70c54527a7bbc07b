"""What a submissions folder holds: every submission in every shape, and every other entry named.

``intake(folder, module_file, staging)`` looks at each entry of ``folder`` (not below it, except
to find a submission's Python file) and returns the submissions sorted by name, and the entries
that are none, in the order of their names. It prints nothing: the caller says what was skipped.

**Submissions** (``Submission.shape``):

- ``workspace``: a folder holding ``python/tinyllm`` (a folder, or a link that staging will
  refuse; a ``python`` that is a link counts too, for the same reason). Graded in place, as
  before: its tree is not read here (``harness.sandbox.staging`` reads it, once, later).
- ``folder``: any other folder. It is walked (through directory descriptors, never following a
  link, at most ``MAX_DEPTH`` folders deep and ``MAX_ENTRIES`` entries; ``__pycache__`` and every
  name starting with a dot are passed over) for its ``.py`` files. When the only one is named as
  the module's file (``rejection.py``), wherever it is (``kate/Downloads/hw/rejection.py``), a
  workspace holding just that file at ``python/<module_file>`` is built in ``staging`` and
  graded (a check supplies its own empty package files, and ``--ref-deps`` the modules it
  needs). Otherwise the submission has a ``problem`` (its row is ``error``): no Python file,
  several, one with another name, a link, a FIFO or device, too deep, too many entries, a
  module file over ``MAX_FILE`` bytes.
- ``zip``, ``tar.gz``: a regular file ``NAME.zip``, ``NAME.tar.gz`` or ``NAME.tgz`` (the
  extension in any case) is the submission ``NAME``, unpacked into ``staging``. Used from it: a
  workspace at the archive's root, else one in its only top folder (``kate/python/tinyllm``),
  else the only ``.py`` file if it is named as the module's file, as for a folder. Members under
  ``__MACOSX/``, ``__pycache__`` or with any part starting with a dot are not unpacked; ``.``
  and empty parts are dropped; a zip's ``\\`` separators (Windows tools) are read as ``/``. The
  whole submission is refused (one line, its ``problem``) for: an archive file over
  ``MAX_ARCHIVE``; one that is corrupt, truncated or not of its kind (a tar.gz is read to the end
  of its gzip stream, so a cut one is caught); more than ``MAX_ENTRIES`` members (a zip's count
  is read from its end record before its directory is parsed); a member with an absolute path
  (``/x``, ``C:/x``), a ``..`` part, a NUL, a name that is not valid UTF-8 (tar), more than
  ``MAX_DEPTH`` folders; a link (symbolic or hard in a tar; a zip member whose Unix mode says
  link); a device, FIFO or socket; a sparse tar member; an encrypted zip member; the same path
  twice, or as a file and a folder; more than ``MAX_UNPACKED`` bytes unpacked in all; a zip
  member that unpacks to more than ``MAX_RATIO`` times its compressed size once past
  ``RATIO_FLOOR`` (a zip bomb). Sizes are counted on the bytes actually read, in chunks, and the
  reading stops at the cap: declared sizes are never trusted (only used to refuse early). A
  tar.gz's gzip stream is capped as a whole (``MAX_UNPACKED`` plus room for the tar headers); it
  has no ratio check, as a tar's padding makes small archives compress far more than 100 times.
  Nothing is written outside ``staging``: every path is checked first, no link is ever created
  there, and files are created exclusively (``O_EXCL | O_NOFOLLOW``). A refused archive's
  partial tree is removed.
- ``file``: a regular file ``NAME.py`` (any case) at the top is the submission ``NAME``, its
  whole stem (``leo_12345_rejection.py`` is ``leo_12345_rejection``): it is the module's file of
  a workspace built in ``staging``. Over ``MAX_FILE`` bytes it is a problem.

**Skipped** (``Skipped.why``), never graded: a name starting with a dot (``hidden``); a
symbolic link (never followed, whatever it points to); a FIFO, socket or device; any other file
(``not a submission: a .txt file``); an entry whose submission name an earlier entry, in the
byte order of the names, already has (``kate/`` is graded, ``kate.zip`` skipped: ``another
submission is named kate``). ``own``, the gradebook's folder, is neither a submission nor
skipped. Every name and message is valid text on one line (``staging.text_of_name``).

Each submission of another shape than ``workspace`` gets a folder of its own in ``staging``,
``NNNN`` (numbered in the order of the entries): the workspace built there (``folder``, ``file``), or the
archive unpacked in ``NNNN/unpacked`` and, when built from its one file, the workspace in
``NNNN/ws``. A built workspace holds only ``python/<module_file>``.

A failure of the machine (the folder cannot be listed; no space or descriptors left while
unpacking) raises ``HarnessError`` (``HostError`` for the latter), never a submission's problem.
"""

from __future__ import annotations

import gzip
import io
import lzma
import os
import shutil
import stat
import struct
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness.errors import HarnessError, HostError, host_failure
from harness.sandbox.staging import (
    DIR_FLAGS,
    MAX_DEPTH,
    MAX_ENTRIES,
    read_regular,
    text_of_name,
    walk_folders,
)

MAX_ARCHIVE = 16 << 20  # bytes of an archive file
MAX_UNPACKED = 16 << 20  # bytes unpacked from one archive, all members together
MAX_RATIO = 100  # a zip member's unpacked bytes per compressed byte...
RATIO_FLOOR = 1 << 20  # ...once it has unpacked this much (a tiny file may compress very well)
MAX_FILE = 1 << 20  # bytes of a loose .py file, or of the module file found in a folder
TAR_HEADROOM = (MAX_ENTRIES + 4) * 1024 + (64 << 10)  # a tar's headers and padding
CHUNK = 64 << 10
PYTHON = "python"

ARCHIVES = ((".tar.gz", "tar.gz"), (".tgz", "tar.gz"), (".zip", "zip"))
TAKES = "ol takes workspace folders, .zip, .tar.gz and .tgz archives and .py files"

_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# What reading a hostile archive can raise besides OSError (handled apart: the machine's or not).
_BAD_ARCHIVE = (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, zlib.error, lzma.LZMAError,
                EOFError, ValueError, NotImplementedError, RuntimeError, UnicodeError, struct.error,
                IndexError, KeyError, OverflowError)


@dataclass(frozen=True)
class Submission:
    """One submission: its name (the gradebook's key), its shape, the entry it came from, and
    the workspace to check (``None`` when ``problem`` says why it cannot be checked)."""

    name: str
    shape: str  # "workspace" | "folder" | "zip" | "tar.gz" | "file"
    origin: Path
    path: Path | None
    problem: str | None


@dataclass(frozen=True)
class Skipped:
    """An entry of the submissions folder that is no submission, and why (a short phrase)."""

    name: str
    why: str


class _Problem(Exception):
    """Why a submission cannot be checked: its one-line ``problem``."""


def intake(folder: Path, module_file: str, staging: Path,
           own: Path | None = None) -> tuple[list[Submission], list[Skipped]]:
    """Every submission of ``folder`` and every entry that is none (the module's docstring).

    ``module_file``: the module's file below ``python/`` (``tinyllm/prob/rejection.py``);
    ``staging``: an existing empty folder of ol's where the workspaces of the shapes other than
    ``workspace`` are built (the caller makes and removes it); ``own``: the gradebook's folder
    when it is inside ``folder``, left out.
    """
    parts = _module_parts(module_file)
    own_id = _identity(own)
    entries = _entries(folder)
    found: list[tuple[str, str, os.DirEntry[str]]] = []
    skipped: list[Skipped] = []
    names: set[str] = set()
    for entry in entries:
        shown = text_of_name(entry.name)
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed meanwhile
        except OSError as exc:
            raise _machine(f"cannot read {shown} in {text_of_name(str(folder))}", exc) from None
        if own_id is not None and (st.st_dev, st.st_ino) == own_id:
            continue
        if entry.name.startswith("."):
            skipped.append(Skipped(shown, "hidden"))
            continue
        kind = _kind(entry.name, st.st_mode)
        if isinstance(kind, Skipped):
            skipped.append(kind)
            continue
        name, shape = kind
        if name in names:
            skipped.append(Skipped(shown, f"another submission is named {name}"))
            continue
        names.add(name)
        found.append((name, shape, entry))
    places = _Places(staging)
    submissions = [_take(name, shape, Path(entry.path), parts, places) for name, shape, entry in found]
    return sorted(submissions, key=lambda s: s.name), skipped


# -- the entries of the folder ---------------------------------------------------------------------

def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError as exc:
        raise _machine(f"cannot list {text_of_name(str(folder))}", exc,
                       "give the folder that holds the submissions") from None
    return sorted(entries, key=lambda e: os.fsencode(e.name))


def _identity(own: Path | None) -> tuple[int, int] | None:
    if own is None:
        return None
    try:
        st = os.stat(own)
    except OSError:
        return None  # not made yet: not in the folder either
    return st.st_dev, st.st_ino


def _kind(raw: str, mode: int) -> tuple[str, str] | Skipped:
    """``(submission name, shape)`` of a top-level entry, or why it is skipped (``shape``
    ``dir`` is decided later: workspace or folder)."""
    shown = text_of_name(raw)
    if stat.S_ISLNK(mode):
        return Skipped(shown, "a symbolic link: never followed")
    if stat.S_ISDIR(mode):
        return shown, "dir"
    if not stat.S_ISREG(mode):
        return Skipped(shown, "a FIFO, socket or device: not a submission")
    lower = raw.lower()
    for ext, shape in (*ARCHIVES, (".py", "file")):
        if lower.endswith(ext) and len(raw) > len(ext):
            return text_of_name(raw[:-len(ext)]), shape
    suffix = text_of_name(Path(raw).suffix)
    what = f"a {suffix} file" if suffix else "a file with no extension"
    return Skipped(shown, f"not a submission: {what} ({TAKES})")


def _module_parts(module_file: str) -> list[str]:
    parts = module_file.split("/")
    if module_file.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a module file below python/: {module_file!r}")
    return [PYTHON, *parts]


class _Places:
    """Folders of their own in ``staging``, one per submission that needs one."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self.count = 0

    def new(self) -> Path:
        while True:
            self.count += 1
            place = self.staging / f"{self.count:04d}"
            try:
                os.mkdir(place, 0o700)
                return place
            except FileExistsError:
                continue
            except OSError as exc:
                raise _machine(f"cannot make {text_of_name(str(place))}", exc) from None


# -- one submission --------------------------------------------------------------------------------

def _take(name: str, shape: str, origin: Path, parts: list[str], places: _Places) -> Submission:
    shown = text_of_name(origin.name)
    if shape == "dir" and _holds_workspace(origin):
        return Submission(name, "workspace", origin, origin, None)
    shape = "folder" if shape == "dir" else shape
    place = places.new()
    try:
        if shape == "folder":
            path = _from_folder(origin, shown, parts, place, "a folder")
        elif shape == "file":
            path = _build(place, parts, _read_file(None, os.fspath(origin), shown))
        else:
            data = _read_file(None, os.fspath(origin), shown, MAX_ARCHIVE, "an archive")
            unpacked = place / "unpacked"
            os.mkdir(unpacked)
            (_unpack_zip if shape == "zip" else _unpack_tar)(data, unpacked, shown)
            path = _from_unpacked(unpacked, shown, parts, place / "ws")
    except _Problem as exc:
        shutil.rmtree(place, ignore_errors=True)  # the caller removes staging anyway
        return Submission(name, shape, origin, None, str(exc))
    return Submission(name, shape, origin, path, None)


def _holds_workspace(root: Path) -> bool:
    """Whether ``root`` holds ``python/tinyllm`` (a link there too: staging refuses it later,
    with its own line). Only looked at, never read or followed."""
    try:
        mode = os.lstat(root / PYTHON).st_mode
        if stat.S_ISLNK(mode):
            return True
        if not stat.S_ISDIR(mode):
            return False
        mode = os.lstat(root / PYTHON / "tinyllm").st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) or stat.S_ISLNK(mode)


def _from_folder(root: Path, shown: str, parts: list[str], place: Path, what: str) -> Path:
    """The workspace built in ``place`` from the only Python file of ``root``, if it is the
    module's file; else a ``_Problem``."""
    finder = _Finder(shown, parts[-1])
    finder.walk(root)
    if len(finder.python) == 1 and finder.data is not None:
        return _build(place, parts, finder.data)
    count = len(finder.python)
    listed = ", ".join(finder.python[:3]) + (", ..." if count > 3 else "")
    files = f"{count} Python file{'' if count == 1 else 's'}" + (f" ({listed})" if count else "")
    raise _Problem(f"{shown} holds no {PYTHON}/tinyllm and {files}: ol takes {what} as a "
                   f"submission when it is a workspace or its only Python file is {parts[-1]}")


def _from_unpacked(root: Path, shown: str, parts: list[str], place: Path) -> Path:
    """The workspace of an unpacked archive (at its root, in its only top folder, or built from
    its only Python file)."""
    if (root / PYTHON / "tinyllm").is_dir():  # ol's own tree: no link in it
        return root
    tops = [p for p in root.iterdir() if p.is_dir()]
    if len(tops) == 1 and (tops[0] / PYTHON / "tinyllm").is_dir():
        return tops[0]
    os.mkdir(place)
    return _from_folder(root, shown, parts, place, "an archive")


def _build(place: Path, parts: list[str], data: bytes) -> Path:
    """A workspace in ``place`` holding ``data`` as the module's file."""
    try:
        place.joinpath(*parts[:-1]).mkdir(parents=True)
        fd = os.open(place.joinpath(*parts), _NEW_FLAGS, 0o644)
        with open(fd, "wb", closefd=True) as fh:
            fh.write(data)
    except OSError as exc:
        raise _machine(f"cannot write in {text_of_name(str(place))}", exc) from None
    return place


def _read_file(dir_fd: int | None, name: str, shown: str, cap: int = MAX_FILE,
               what: str = "a module file") -> bytes:
    """A regular file's bytes (``staging.read_regular``: never through a link, never more than
    ``cap`` + 1 read)."""
    data = read_regular(dir_fd, name, shown, cap, lambda: _Problem(f"{shown} is not a regular file"),
                        _unreadable)
    if len(data) > cap:
        raise _Problem(f"{shown} is over {_size(cap)}: {what} of a submission is far smaller")
    return data


class _Finder:
    """A walk of a folder for its Python files: their paths (as text) and, when the first is
    named as the module's file, its bytes."""

    def __init__(self, shown: str, module_name: str) -> None:
        self.shown = shown
        self.module_name = module_name
        self.entries = 0
        self.python: list[str] = []
        self.data: bytes | None = None

    def walk(self, root: Path) -> None:
        try:
            top = os.open(root, DIR_FLAGS)
        except OSError as exc:
            raise _unreadable(self.shown, exc) from None
        walk_folders(top, self.shown, self.scan, _unreadable)

    def scan(self, fd: int, rel: str, depth: int) -> list[str]:
        """Look at the entries of the folder ``fd``; its subfolders to walk, last first."""
        names: list[str] = []
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    self.entries += 1
                    if self.entries > MAX_ENTRIES:
                        raise _Problem(f"{self.shown} holds more than {MAX_ENTRIES} files and folders")
                    names.append(entry.name)
        except OSError as exc:
            raise _unreadable(rel, exc) from None
        subdirs = []
        for name in sorted(names, key=os.fsencode):
            if name.startswith(".") or name == "__pycache__":
                continue
            shown = f"{rel}/{text_of_name(name)}"
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _unreadable(shown, exc) from None
            if stat.S_ISLNK(mode):
                raise _Problem(f"{shown} is a symbolic link: ol never follows links")
            if stat.S_ISDIR(mode):
                if depth + 1 > MAX_DEPTH:
                    raise _Problem(f"{shown} is more than {MAX_DEPTH} folders deep")
                subdirs.append(name)
            elif not stat.S_ISREG(mode):
                raise _Problem(f"{shown} is not a regular file or folder (a FIFO, socket or device)")
            elif name.endswith(".py"):
                self.python.append(shown.split("/", 1)[1])
                first = len(self.python) == 1 and name == self.module_name
                self.data = _read_file(fd, name, shown) if first else None
        subdirs.reverse()
        return subdirs


# -- archives --------------------------------------------------------------------------------------

def _member_parts(name: str, shown: str) -> list[str] | None:
    """The path of an archive member as parts, ``None`` when it is not unpacked, or a
    ``_Problem`` when no archive of a submission would hold it."""
    member = f"{shown}: member {text_of_name(name)}"
    if "\0" in name:
        raise _Problem(f"{member} has a NUL in its name")
    if name.startswith("/") or (name[1:3] == ":/" and name[0].isalpha()):
        raise _Problem(f"{member} has an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Problem(f"{member} has a .. in its path: it would be written outside the archive's folder")
    if not _is_utf8(name):
        raise _Problem(f"{member} has a name that is not valid UTF-8")
    if not parts or parts[0] == "__MACOSX" or "__pycache__" in parts:
        return None
    if any(p.startswith(".") for p in parts):
        return None
    if len(parts) - 1 > MAX_DEPTH:
        raise _Problem(f"{member} is more than {MAX_DEPTH} folders deep")
    return parts


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _make_dir(root: Path, parts: list[str], shown: str) -> None:
    try:
        root.joinpath(*parts).mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        shown_path = text_of_name("/".join(parts))
        raise _Problem(f"{shown}: {shown_path} is both a file and a folder in it") from None
    except OSError as exc:
        raise _unpacking(shown, parts, exc) from None


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


def _copy(root: Path, parts: list[str], shown: str, src: _Readable, budget: _Budget,
          allowance: int | None) -> None:
    """Write a member's bytes read from ``src`` in chunks, stopping at the caps."""
    _make_dir(root, parts[:-1], shown)
    member = text_of_name("/".join(parts))
    try:
        fd = os.open(root.joinpath(*parts), _NEW_FLAGS, 0o644)
    except FileExistsError:
        raise _Problem(f"{shown} holds {member} twice") from None
    except (IsADirectoryError, NotADirectoryError):
        raise _Problem(f"{shown}: {member} is both a file and a folder in it") from None
    except OSError as exc:
        raise _unpacking(shown, parts, exc) from None
    written = 0
    with open(fd, "wb", closefd=True) as out:
        while chunk := src.read(CHUNK):
            written += len(chunk)
            budget.spend(len(chunk))
            if allowance is not None and written > allowance:
                raise _Problem(f"{shown}: member {member} unpacks to more than {MAX_RATIO} times its "
                               "compressed size (a zip bomb?)")
            try:
                out.write(chunk)
            except OSError as exc:
                raise _unpacking(shown, parts, exc) from None


class _Budget:
    """The bytes an archive may still unpack."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.left = MAX_UNPACKED

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _Problem(f"{self.shown} unpacks to more than {_size(MAX_UNPACKED)}: a submission is "
                           "a few small files")


def _zip_count(data: bytes) -> int | None:
    """The member count a zip's end record declares (``None``: no record, or a zip64 one)."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 0xFFFF))
    if at < 0 or at + 22 > len(data):
        return None
    total: int = struct.unpack_from("<H", data, at + 10)[0]
    return None if total == 0xFFFF else total


def _unpack_zip(data: bytes, root: Path, shown: str) -> None:
    declared = _zip_count(data)
    if declared is not None and declared > MAX_ENTRIES:
        raise _Problem(f"{shown} holds more than {MAX_ENTRIES} members")
    budget = _Budget(shown)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ENTRIES:
                raise _Problem(f"{shown} holds more than {MAX_ENTRIES} members")
            for info in infos:
                parts = _member_parts(info.filename.replace("\\", "/"), shown)
                if parts is None:
                    continue
                member = f"{shown}: member {text_of_name(info.filename)}"
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise _Problem(f"{member} is a symbolic link: ol never follows links")
                if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise _Problem(f"{member} is a device, FIFO or socket")
                if info.flag_bits & 0x1:
                    raise _Problem(f"{member} is encrypted")
                if info.is_dir() or stat.S_ISDIR(mode):
                    _make_dir(root, parts, shown)
                    continue
                allowance = max(RATIO_FLOOR, MAX_RATIO * min(info.compress_size, len(data)))
                with zf.open(info) as src:
                    _copy(root, parts, shown, src, budget, allowance)
    except OSError as exc:
        raise _corrupt(shown, "zip", exc) from None
    except _BAD_ARCHIVE as exc:
        raise _Problem(_corrupt_line(shown, "zip", exc)) from None


class _Capped:
    """A stream that ends in a ``_Problem`` once more than ``cap`` bytes were read from it."""

    def __init__(self, raw: gzip.GzipFile, cap: int, shown: str) -> None:
        self.raw, self.left, self.shown = raw, cap, shown

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(min(n, self.left + 1) if n >= 0 else self.left + 1)
        self.left -= len(data)
        if self.left < 0:
            raise _Problem(f"{self.shown} unpacks to more than {_size(MAX_UNPACKED)}: a submission is "
                           "a few small files")
        return data


def _unpack_tar(data: bytes, root: Path, shown: str) -> None:
    budget = _Budget(shown)
    stream = _Capped(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), MAX_UNPACKED + TAR_HEADROOM,
                     shown)
    count = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8",  # type: ignore[call-overload]
                          errors="surrogateescape") as tar:
            for m in tar:
                count += 1
                if count > MAX_ENTRIES:
                    raise _Problem(f"{shown} holds more than {MAX_ENTRIES} members")
                parts = _member_parts(m.name, shown)
                if parts is None:
                    continue
                member = f"{shown}: member {text_of_name(m.name)}"
                if m.issym():
                    raise _Problem(f"{member} is a symbolic link: ol never follows links")
                if m.islnk():
                    raise _Problem(f"{member} is a hard link: ol takes only files and folders")
                if m.isdev():
                    raise _Problem(f"{member} is a device or FIFO")
                if m.isdir():
                    _make_dir(root, parts, shown)
                    continue
                if not m.isreg() or m.issparse():
                    raise _Problem(f"{member} is not a regular file or folder")
                if m.size > budget.left:
                    budget.spend(m.size)  # refused now: no need to read what it declares
                src = tar.extractfile(m)
                assert src is not None, "a regular member has data"
                _copy(root, parts, shown, src, budget, None)
            while stream.read(CHUNK):  # to the end of the gzip stream: a cut one is refused
                pass
    except OSError as exc:
        raise _corrupt(shown, "tar.gz", exc) from None
    except _BAD_ARCHIVE as exc:
        raise _Problem(_corrupt_line(shown, "tar.gz", exc)) from None


# -- messages --------------------------------------------------------------------------------------

def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def _reason(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    text = text_of_name(text or type(exc).__name__)
    return text if len(text) <= 160 else text[:157] + "..."


def _corrupt_line(shown: str, kind: str, exc: BaseException) -> str:
    return f"{shown} is not a readable {kind} archive (corrupt, truncated or another kind): {_reason(exc)}"


def _corrupt(shown: str, kind: str, exc: OSError) -> HarnessError | _Problem:
    if host_failure(exc):
        return _machine(f"cannot unpack {shown}", exc)
    return _Problem(_corrupt_line(shown, kind, exc))


def _unpacking(shown: str, parts: list[str], exc: OSError) -> HarnessError | _Problem:
    if host_failure(exc):
        return _machine(f"cannot unpack {shown}", exc)
    return _Problem(f"{shown}: cannot unpack {text_of_name('/'.join(parts))}: {_reason(exc).lower()}")


def _unreadable(shown: str, exc: OSError) -> HarnessError | _Problem:
    if host_failure(exc):
        return _machine(f"cannot read {shown}", exc)
    return _Problem(f"cannot read {shown}: {_reason(exc).lower()}")


def _machine(what: str, exc: OSError, hint: str = "") -> HarnessError:
    reason = _reason(exc).lower()
    if host_failure(exc):
        return HostError(f"{what}: {reason}", hint or "the machine running ol is out of resources; "
                         "run the same command again")
    return HarnessError(f"{what}: {reason}", hint or "check that it is readable and writable")
