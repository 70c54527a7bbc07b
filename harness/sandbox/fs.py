"""File-system operations on trees a submission controls: no recursion, no link ever followed.

A submission (or the code under test, in its worker's directory) can leave a tree thousands of
levels deep, with paths longer than ``PATH_MAX``, folders without permission bits, links to
``/`` and FIFOs. Every walk and every removal here works through directory file descriptors
(``dir_fd``, ``O_NOFOLLOW``) with an explicit stack, so depth costs memory, never the Python stack,
and never an ``ENAMETOOLONG``; nothing is opened through a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(name: str | bytes, dir_fd: int | None) -> int | None:
    """A directory's descriptor (made readable first if it was not); None if it is gone."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except PermissionError:
        with contextlib.suppress(OSError):
            os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None


def _unlink_all(fd: int) -> list[bytes]:
    """Remove every non-directory entry of the directory ``fd``; the names of its subdirectories."""
    subdirs: list[bytes] = []
    with os.scandir(fd) as entries:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for name, is_dir in names:
        encoded = os.fsencode(name)
        if is_dir:
            subdirs.append(encoded)
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(encoded, dir_fd=fd)
    return subdirs


def remove_tree(path: str | Path) -> bool:
    """Remove ``path`` and everything below it, however deep; True when it is gone.

    A link is removed, never followed (the link at ``path`` itself included). Only two directory
    descriptors are open at a time (the way back up is ``..``), so depth is bounded by memory,
    not by the descriptor limit. Never raises for what it cannot remove (a busy mount point,
    say): it removes what it can and says whether ``path`` is gone.
    """
    path = os.path.abspath(os.fspath(path))
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(mode):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return not os.path.lexists(path)
    top_parent = _open_dir(os.path.dirname(path) or "/", None)
    if top_parent is None:
        return not os.path.lexists(path)
    fd = _open_dir(os.path.basename(path), top_parent)
    # One entry per level below ``path``: (this directory's name, its subdirectories left to do).
    stack: list[tuple[bytes, list[bytes]]] = []
    pending = _subdirs_after_unlink(fd) if fd is not None else []
    try:
        while fd is not None:
            if pending:
                name = pending.pop()
                child = _open_dir(name, fd)
                if child is None:
                    continue
                stack.append((name, pending))
                os.close(fd)
                fd, pending = child, _subdirs_after_unlink(child)
                continue
            if not stack:  # back at ``path`` itself, now empty
                break
            name, pending = stack.pop()
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            _rmdir(name, fd)
    finally:
        if fd is not None:
            os.close(fd)
        _rmdir(os.fsencode(os.path.basename(path)), top_parent)
        os.close(top_parent)
    return not os.path.lexists(path)


def _subdirs_after_unlink(fd: int) -> list[bytes]:
    try:
        return _unlink_all(fd)
    except OSError:
        return []


def _rmdir(name: bytes, parent_fd: int) -> None:
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno == errno.ENOTEMPTY:  # something appeared meanwhile (no process should be left)
            with contextlib.suppress(OSError):
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
                try:
                    _unlink_all(fd)
                finally:
                    os.close(fd)
                os.rmdir(name, dir_fd=parent_fd)
