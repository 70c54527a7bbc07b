"""Where code under test raised: the frames of a traceback that lie in the student's own files.

A student whose function raised needs to see where, as pytest's ``--tb=short`` shows it: file,
line, function, source line; and only their own frames (the harness's call path, numpy's and the
standard library's frames are noise to them, and the harness's paths are none of their business).
``own_frames`` keeps the last ``MAX_FRAMES`` of them, so a ``RecursionError`` costs one walk of
its traceback and crosses as ten frames. Which files are the student's is a ``Files``:
``under(python_dir)`` in the isolated worker (the staged copy it imports from: the file that ran,
so its source line is read back with ``linecache``), ``exactly(module.__file__, shown)`` in
process (the reference, a mutant compiled under a name such as ``<mutant s01: ...>``, whose
source line is then empty). Only an exception's path pays for this (a call that returns never
does), and a place seen before costs a look-up: a few microseconds per exception raised.

In the worker this runs next to the student's code, after it raised: everything it calls is bound
when the module is imported (before the student's import), and whatever still goes wrong (a
patched ``linecache``, a hostile traceback) gives no frames rather than a broken reply.
"""

from __future__ import annotations

import linecache
from collections import deque
from collections.abc import Callable
from typing import Any

from harness.sandbox.codec import MAX_FRAMES, MAX_PATH, MAX_SOURCE, Frame, clean_text

_getline, _deque, _str, _type, _Frame = linecache.getline, deque, str, type, Frame
# Not a subclass's own __traceback__. (mypy types the class's descriptor as its instances' value.)
_traceback_of = BaseException.__traceback__.__get__  # type: ignore[union-attr]
_NOT_OURS = object()  # a cached "not the student's file"
CACHED = 4096  # places remembered per ``Files``; then it starts afresh


class Files:
    """Which files are the student's: ``shown(filename)`` is the name to show, or None for a file
    that is not theirs. Remembers each place seen (code object, line) with its ``Frame``, so the
    same exception raised again (the same bug on every call of a batch) costs a walk of the
    traceback and a look-up per frame."""

    __slots__ = ("places", "shown")

    def __init__(self, shown: Callable[[str], str | None]) -> None:
        self.shown = shown
        self.places: dict = {}


def under(root: str) -> Files:
    """Files below the directory ``root``, shown relative to it (``tinyllm/prob/rejection.py``)."""
    prefix = root.rstrip("/") + "/"
    cut = len(prefix)
    return Files(lambda filename: filename[cut:] if filename.startswith(prefix) else None)


def exactly(filename: str, name: str) -> Files:
    """The one file ``filename``, shown as ``name``."""
    return Files(lambda candidate: name if candidate == filename else None)


def own_frames(exc: BaseException, files: Files | None) -> tuple[Frame, ...]:
    """The last ``MAX_FRAMES`` frames of ``exc``'s traceback whose file ``files`` accepts,
    outermost first."""
    if files is None:
        return ()
    try:
        places = files.places
        if len(places) > CACHED:
            places.clear()
        tb = _traceback_of(exc)
        kept: deque = _deque(maxlen=MAX_FRAMES)
        seen = 0
        while tb is not None and seen < 100_000:  # a traceback is finite; the bound is for a loop
            code, line = tb.tb_frame.f_code, tb.tb_lineno
            frame = places.get((code, line))
            if frame is None:
                frame = places[(code, line)] = _place(files, code, line)
            if frame is not _NOT_OURS:
                kept.append(frame)
            tb, seen = tb.tb_next, seen + 1
        return tuple(kept)
    except Exception:  # noqa: BLE001 - no frames is a smaller loss than a broken reply
        return ()


def _place(files: Files, code: Any, line: Any) -> object:
    """The ``Frame`` of line ``line`` of ``code``, or ``_NOT_OURS``. (``Any``: a frame's code
    and line, checked here by exact class, which mypy does not narrow on.)"""
    filename = code.co_filename
    name = files.shown(filename) if _type(filename) is _str else None
    if name is None:
        return _NOT_OURS
    line = line if _type(line) is int and 0 <= line < 1 << 31 else 0  # None: no line known
    source = _getline(filename, line).strip() if line else ""
    function = code.co_name if _type(code.co_name) is _str else "?"
    return _Frame(clean_text(name, MAX_PATH), line, clean_text(function, 200),
                  clean_text(source, MAX_SOURCE))
