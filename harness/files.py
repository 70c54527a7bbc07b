"""The one place that owns report paths, temp files and atomic renames.

Reporters only build strings; whatever writes a report to disk goes through ``write_atomic``,
so an interrupted run leaves either the old file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from harness.errors import HarnessError
from harness.paths import REPORTS_DIR

HINT = "choose a writable path"
NEW_FILE_MODE = 0o644  # mkstemp creates 0600; a report is meant to be read by others


def default_reports_dir() -> Path:
    """``<repo>/reports``: where generated output goes unless a path is given."""
    return REPORTS_DIR


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temp file in the same directory and ``os.replace``.

    Text is written as UTF-8, byte for byte (no newline translation). Missing parent directories
    are created. The temp file is fsynced before the rename, so after a crash the path holds the
    old content or the new, and the temp file is removed on any failure. An unwritable or invalid
    path raises ``HarnessError``.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    refuse_special(target)  # a FIFO, a device or a folder put there meanwhile is never replaced
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.is_file() else NEW_FILE_MODE
        _replace_with(target, payload, mode)
    except (OSError, ValueError) as exc:  # ValueError: an embedded NUL in the path
        raise HarnessError(f"cannot write {path}: {_reason(exc)}", HINT) from exc
    _sync_directory(target.parent)
    return target


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a regular file"))  # (modes exclude each other)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (an ``st_mode``) is, as a message names it: ``"a symbolic link"``
    (``lstat``'s mode), ``"a regular file"``, ``"a directory"``, ``"a FIFO"``, ``"a socket"``,
    ``"a character device"``, ``"a block device"``; ``"not a regular file"`` for any other."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def special_kind(path: Path | str) -> str | None:
    """What ``path`` is when it exists and is not a regular file (``"a FIFO"``, ``"a symbolic
    link to a directory"``), else None. Only ``lstat`` and ``stat``: nothing is opened, so a FIFO
    cannot block. A dangling link is None: writing replaces the link."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None  # missing (or an invalid path: the write says why)
    link = stat.S_ISLNK(info.st_mode)
    if link:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return None
    if stat.S_ISREG(info.st_mode):
        return None
    kind = file_kind(info.st_mode)
    return f"a symbolic link to {kind}" if link else kind


def refuse_special(path: Path | str) -> None:
    """A ``HarnessError`` when ``path`` exists and is not a regular file (see ``special_kind``)."""
    kind = special_kind(path)
    if kind is not None:
        hint = "give a file name" if kind.endswith("directory") else "give the path of a regular file"
        raise HarnessError(f"cannot write {path}: it is {kind}", hint)


def ensure_writable(path: Path | str) -> Path:
    """Fail now, before a long run, if ``path`` could not be written later (creates its folder).

    A path that exists and is not a regular file (a folder, a FIFO, a device, a link to one) is
    refused without being opened: the report would replace it (``/dev/null`` as root) or hang.
    """
    path = Path(path)
    refuse_special(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise HarnessError(f"cannot write {path}: {_reason(exc)}", "choose a writable path") from None
    return path


def write_report(path: Path | str, text: str | bytes, base: Path | None = None) -> Path:
    """``write_atomic`` with a relative ``path`` taken under ``base`` (default: ``reports/``)."""
    p = Path(path)
    if not p.is_absolute():
        p = (base if base is not None else default_reports_dir()) / p
    return write_atomic(p, text)


def _replace_with(target: Path, payload: bytes, mode: int) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        # Whatever stopped us (an error, a KeyboardInterrupt), leave no temp file behind.
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable; best effort (not every platform opens directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() else exc.strerror
    return str(exc)
