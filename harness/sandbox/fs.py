"""File-system operations on trees a submission controls: no recursion, no link ever followed,
and never a step outside the tree, whatever is renamed while the walk is inside it.

A submission (or the code under test, in its worker's directory) can leave a tree thousands of
levels deep, with paths longer than ``PATH_MAX``, folders without permission bits, links to
``/`` and FIFOs; and a folder that someone else can write to can be rearranged while ol removes
it. Every walk and every removal here works through directory file descriptors with an explicit
stack: a folder is opened by one name relative to its parent's descriptor (``O_NOFOLLOW``,
``O_DIRECTORY``), entries are unlinked and folders removed relative to the descriptor of the
folder that holds them, and the walk never climbs with ``..`` nor resolves a path again. So depth
costs memory, never the Python stack, and never an ``ENAMETOOLONG``; nothing is opened through a
link; and a folder renamed away while the walk is inside it takes the walk nowhere else.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import stat
from collections.abc import Callable
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# Descriptors one removal holds at most besides its top: the window of the deepest levels of the
# current path (see ``_Walk``), fewer if the process may open few files; plus about log2(depth).
_WINDOW = 64


# How many times in all one removal walks again a folder found not empty after a clean walk.
_RETRIES = 8


class _Moved(Exception):
    """A folder the walk had left is no longer where it was: the removal stops."""


def _open_dir(name: str, dir_fd: int) -> int | None:
    """A directory's descriptor (made readable first if it was not); None if it is gone. Raises
    ``OSError`` (``ENOTDIR``, ``ELOOP``) if ``name`` is not a directory, or not any more."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except PermissionError:
        with contextlib.suppress(OSError, ValueError, NotImplementedError):
            os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None


def _unlink_all(fd: int, mode: int) -> list[str]:
    """Remove every non-directory entry of the directory ``fd`` (of mode ``mode``, given full
    access for its owner first); the names of its subdirectories."""
    if mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o700)
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as entries:
            names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    except OSError:
        return subdirs
    for name, is_dir in names:
        if is_dir:
            subdirs.append(name)
            continue
        try:
            os.unlink(name, dir_fd=fd)
        except IsADirectoryError:  # became a folder since the listing
            subdirs.append(name)
        except OSError:
            pass  # gone already, or not ours to remove: the folder's rmdir will say
    return subdirs


def _same(parent_fd: int, name: str, st: os.stat_result) -> bool:
    """Whether ``name`` in ``parent_fd`` is still the folder ``st`` (device and inode)."""
    try:
        now = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def _rmdir(parent_fd: int, name: str, st: os.stat_result) -> int | None:
    """Remove the folder ``name`` of ``parent_fd`` if it is still the folder ``st``: None when
    removed, else why not (an errno; ``ESTALE``: renamed away or replaced, not the one emptied)."""
    if not _same(parent_fd, name, st):
        return errno.ESTALE
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except OSError as exc:
        return exc.errno
    return None


class _Level:
    """One folder of the path from the top to where the walk is: its name in the folder above,
    its identity, its descriptor (None while closed), its subfolders left to do, and whether
    everything below it went so far."""

    __slots__ = ("name", "st", "fd", "pending", "clean")

    def __init__(self, name: str, st: os.stat_result, fd: int | None, pending: list[str]):
        self.name, self.st, self.fd, self.pending = name, st, fd, pending
        self.clean = True


class _Walk:
    """Empties the folder open as ``top`` (left open): depth first, one level per folder of the
    current path, all on an explicit stack.

    Every unlink and rmdir is relative to the descriptor of the folder that holds the entry
    (the current folder, or for its own rmdir the folder above it). A tree deeper than the
    descriptor limit must still go, so not every level keeps its descriptor (``_keep``): the
    ``window`` deepest levels of the current path do, and above them a few checkpoints whose
    distances grow geometrically (about one per power of two of the depth). A closed level is
    opened again on the way back up, name by name from the nearest open level above it, each
    checked to be the folder (device and inode) the walk left there; if one is not, the walk stops
    (``_Moved``). Each level is so opened again about log2(depth / window) times at most. Folders
    on another device (a mount point) are not entered. A folder that is not empty after its walk
    went cleanly (something appeared meanwhile) is walked again, ``_RETRIES`` times in all.
    """

    def __init__(self, top: int, st: os.stat_result) -> None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        room = _WINDOW if soft == resource.RLIM_INFINITY else max(2, min(_WINDOW, soft // 16))
        self.window = 1 << (room.bit_length() - 1)  # a power of two (see ``_keep``)
        self.levels = [_Level("", st, top, _unlink_all(top, st.st_mode))]
        self.retries = _RETRIES

    def again(self) -> bool:
        """Whether the top may be walked again (its rmdir found it not empty after a clean walk);
        if so, it is listed again for ``empty``."""
        top = self.levels[0]
        if not top.clean or self.retries <= 0:
            return False
        self.retries -= 1
        assert top.fd is not None
        top.pending = _unlink_all(top.fd, top.st.st_mode)
        return True

    def empty(self) -> bool:
        """Remove everything below the top; whether all of it is gone."""
        try:
            while True:
                here = self.levels[-1]
                if here.pending:
                    self._descend(here, here.pending.pop())
                elif len(self.levels) == 1:
                    return here.clean
                else:
                    self._ascend()
        except _Moved:
            self.levels[0].clean = False
            return False
        finally:
            for level in self.levels[1:]:
                if level.fd is not None:
                    os.close(level.fd)
            del self.levels[1:]

    def _keep(self, k: int, depth: int) -> bool:
        """Whether level ``k`` stays open at ``depth``: the top, the window, and the checkpoints:
        for every power of two ``p`` >= the window, the deepest multiple of ``p`` above the
        window (``k & -k`` is the largest power of two dividing ``k``)."""
        edge = depth - self.window
        return k == 0 or k >= edge or (k & -k >= self.window and k + (k & -k) > edge)

    def _descend(self, here: _Level, name: str) -> None:
        assert here.fd is not None
        try:
            fd = _open_dir(name, here.fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):  # not a folder (any more): unlink it
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=here.fd)
            else:
                here.clean = False
            return
        if fd is None:
            return
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        if st.st_dev != self.levels[0].st.st_dev:  # a mount point: not ours to empty
            os.close(fd)
            here.clean = False
            return
        self.levels.append(_Level(name, st, fd, _unlink_all(fd, st.st_mode)))
        # What the new depth no longer keeps: the level that left the window, and each
        # checkpoint that the one just below it replaced.
        depth = len(self.levels) - 1
        edge = depth - self.window
        self._close_unless_kept(edge - 1, depth)
        power = self.window
        while edge > 0 and edge % power == 0:
            self._close_unless_kept(edge - power, depth)
            power *= 2

    def _ascend(self) -> None:
        """The current folder is empty: remove it, from the folder above (opened again if need
        be), and make that one current."""
        child, parent = self.levels[-1], self.levels[-2]
        assert child.fd is not None
        if parent.fd is None:
            self._reopen(len(self.levels) - 2)
        assert parent.fd is not None
        error = _rmdir(parent.fd, child.name, child.st)
        if error == errno.ENOTEMPTY and child.clean and self.retries > 0:
            self.retries -= 1
            child.pending = _unlink_all(child.fd, child.st.st_mode)
            return
        self.levels.pop()
        os.close(child.fd)
        if error is not None or not child.clean:
            parent.clean = False

    def _reopen(self, depth: int) -> None:
        """Open level ``depth`` again, from the nearest level above it still open."""
        start = max(k for k in range(depth) if self.levels[k].fd is not None)
        for k in range(start + 1, depth + 1):
            above, level = self.levels[k - 1], self.levels[k]
            assert above.fd is not None
            try:
                fd = os.open(level.name, _DIR_FLAGS, dir_fd=above.fd)
            except OSError as exc:
                raise _Moved from exc
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (level.st.st_dev, level.st.st_ino):
                os.close(fd)
                raise _Moved
            level.fd = fd
            if k - 1 > start:
                self._close_unless_kept(k - 1, depth)

    def _close_unless_kept(self, k: int, depth: int) -> None:
        if k >= 1 and not self._keep(k, depth):
            fd = self.levels[k].fd
            if fd is not None:
                os.close(fd)
                self.levels[k].fd = None


def remove_at(parent_fd: int, name: str,
              accept: Callable[[os.stat_result], bool] | None = None) -> bool:
    """Remove the entry ``name`` of the folder open as ``parent_fd`` and everything below it.

    Without ``accept``: whatever ``name`` is (a link is removed, never followed); True when no
    entry ``name`` is left. With ``accept``: only a real folder (opened with ``O_NOFOLLOW``)
    whose ``fstat`` ``accept`` approves is emptied and removed, nothing else is touched; True when
    that folder was removed. Never raises for what it cannot remove.
    """
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return accept is None
    except OSError:
        return False
    fd, unlink = None, not stat.S_ISDIR(st.st_mode)
    if not unlink:
        try:
            fd = (os.open(name, _DIR_FLAGS, dir_fd=parent_fd) if accept is not None
                  else _open_dir(name, parent_fd))
        except OSError as exc:  # replaced by a file or a link since the lstat: unlinked too
            unlink = exc.errno in (errno.ENOTDIR, errno.ELOOP)
    if fd is None:
        if accept is not None:
            return False
        if unlink:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=parent_fd)
        return not _exists(parent_fd, name)
    try:
        st = os.fstat(fd)
        if accept is not None and not (stat.S_ISDIR(st.st_mode) and accept(st)):
            return False
        walk = _Walk(fd, st)
        while True:
            walk.empty()
            error = _rmdir(parent_fd, name, st)
            if error != errno.ENOTEMPTY or not walk.again():
                break
        removed = error is None
    except OSError:
        removed = False
    finally:
        os.close(fd)
    return removed if accept is not None else not _exists(parent_fd, name)


def _exists(parent_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def remove_tree(path: str | Path) -> bool:
    """Remove ``path`` and everything below it, however deep; True when it is gone.

    A link is removed, never followed (the link at ``path`` itself included); the folder that
    holds ``path`` is the one its path names now (the caller's), everything below it is reached
    through descriptors only (see ``_Walk``). Never raises for what it cannot remove (a busy
    mount point, say): it removes what it can and says whether ``path`` is gone.
    """
    head, name = os.path.split(os.path.abspath(os.fspath(path)))
    if not name:
        return False  # "/"
    try:
        parent = os.open(head, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError:
        return not os.path.lexists(os.path.join(head, name))
    try:
        return remove_at(parent, name)
    finally:
        os.close(parent)
