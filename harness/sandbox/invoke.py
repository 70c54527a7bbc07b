"""The one call path: every call of code under test, in any target, goes through here.

``call`` is the only place that decides whether a call *returned*, *raised* or *exited*; ``invoke``
adds what the contract checks need (which arguments changed in place, whether the result shares
memory with an argument). The isolated worker encodes what ``invoke`` returns (``codec.encode_reply``);
in-process targets (the reference, the mutants) use it as it is. Both pass ``passthrough``: the
exceptions that are never an answer of the code under test. In process, that is the runner's own
time-out (raised into the call by its alarm) and ``KeyboardInterrupt`` (the user's Ctrl-C), which
must stop the call, not be recorded as what the function raised; in the worker nothing is passed
through (a ``KeyboardInterrupt`` there can only come from the student's code: it is an answer).
An exception also carries where it was raised in the student's own files (``files``: see
``harness.sandbox.frames``); only the raising path computes that.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from harness.sandbox.codec import (
    RemoteError,
    Reply,
    encode,
    encode_reply,
    error_info,
    plain_key,
)
from harness.sandbox.frames import Files, own_frames

RETURNED, RAISED, EXITED = "returned", "raised", "exited"
NOTHING: tuple[type[BaseException], ...] = ()


def call(fn: Any, args: tuple, kwargs: dict,
         passthrough: tuple[type[BaseException], ...] = NOTHING) -> tuple[str, Any]:
    """``(RETURNED, value)``, ``(RAISED, exception)`` or ``(EXITED, SystemExit)``; an exception in
    ``passthrough`` propagates."""
    try:
        return RETURNED, fn(*args, **kwargs)
    except passthrough:
        raise
    except SystemExit as exc:
        return EXITED, exc
    except BaseException as exc:  # noqa: BLE001 - whatever the code under test raises is its answer
        return RAISED, exc


def remote_error(exc: BaseException, files: Files | None = None) -> RemoteError:
    """An exception as plain data: its class name, the names of its bases, its message, and its
    frames in the files ``files`` accepts (none without ``files``)."""
    name, mro, message = error_info(exc)
    return RemoteError(name, mro, message, own_frames(exc, files) if files else ())


def invoke(fn: Any, args: tuple, kwargs: dict | None = None,
           passthrough: tuple[type[BaseException], ...] = NOTHING,
           immutable: bool = False, files: Files | None = None) -> Reply:
    """Call ``fn`` once: its reply, with the arguments it changed in place and whether its result
    aliases one. ``immutable``: the caller knows no argument can change (numbers, tuples of
    numbers), so no snapshot is taken. The arguments must be the callee's own copies."""
    snaps = () if immutable else snapshot(args)
    reply = answer(*call(fn, args, kwargs or {}, passthrough), args, files)
    if snaps:
        reply.mutated = [i for i, snap in snaps if changed(args[i], snap)]
    return reply


def answer(status: str, value: Any, args: tuple, files: Files | None = None) -> Reply:
    """What ``call`` returned, as a reply (the exception as plain data, the result's aliasing)."""
    if status != RETURNED:
        return Reply(status, error=remote_error(value, files))
    return Reply(RETURNED, value=value, aliased=aliases(value, args))


def invoke_encoded(fn: Any, args: tuple, kwargs: dict | None = None, register: Any = None,
                   files: Files | None = None) -> dict:
    """``invoke`` as the isolated worker sends it (``codec.encode_reply``)."""
    return encode_reply(invoke(fn, args, kwargs, files=files), register)


def invoke_immutable(fn: Any, args: tuple, kwargs: dict, register: Any, replies: dict,
                     files: Files | None = None) -> dict:
    """``invoke_encoded`` for calls whose arguments nothing can change (numbers, tuples of
    numbers) and that pass no source: no snapshots, no draw counts, and a plain result (a number,
    a short tuple of numbers: never an alias) gets the one reply ``replies`` keeps for it."""
    status, value = call(fn, args, kwargs)
    key = plain_key(value) if status == RETURNED else None
    if key is None:
        return encode_reply(answer(status, value, args, files), register)
    reply = replies.get(key)
    if reply is None:
        encoded = encode(value)
        if encoded["t"] == "object" or any(item["t"] == "object" for item in encoded.get("items", ())):
            # an int too large to carry crosses as an object, which no two calls may share
            return encode_reply(answer(status, value, args, files), register)
        reply = replies[key] = {"status": RETURNED, "value": encoded, "aliased": False,
                                "mutated": [], "draws": []}
    return reply


# The checks below run next to the code under test. Everything they call is bound here, when the
# worker imports this module, before the student's module loads: replacing ``numpy.shares_memory``,
# ``builtins.isinstance`` or ``operator.is_not`` afterwards changes nothing they do (what remains
# possible is in docs/isolation.md).
_ndarray, _list, _tuple, _shares_memory = np.ndarray, list, tuple, np.shares_memory
_tobytes, _dtype_str = np.ndarray.tobytes, np.dtype.str.__get__
_type, _len, _enumerate, _any, _map, _is_not = type, len, enumerate, any, map, operator.is_not
_isinstance, _all = isinstance, all
_shape = np.ndarray.shape.__get__
_dtype = np.ndarray.dtype.__get__
_flags = np.ndarray.flags.__get__
# What no call can change: returning the caller's own one is not aliasing (a numpy scalar is
# immutable, as a Python number is; np.shares_memory is False for it).
_SCALARS = (int, float, bool, np.generic)


def _is_array(value: Any) -> bool:
    return _isinstance(value, _ndarray)


def own_copy(value: Any) -> Any:
    """A call's own copy of one argument, as the caller passed it: an array or a list copied (a
    read-only array stays read-only), anything else as it is. Used in-process and in the worker."""
    if _type(value) is _ndarray:
        copied = value.copy()
        copied.flags.writeable = _flags(value).writeable
        return copied
    return _list(value) if _type(value) is _list else value


def _array_state(arr: Any) -> tuple:
    """What a call must leave as it was: shape, dtype, bytes, and whether it is writeable (making
    the caller's array read-only changes it too)."""
    return _shape(arr), _dtype_str(_dtype(arr)), _tobytes(arr), _flags(arr).writeable


def snapshot(args: tuple) -> list[tuple[int, Any]]:
    """Copies of the mutable arguments (arrays, lists), to tell afterwards if one was changed."""
    snaps: list[tuple[int, Any]] = []
    for i, arg in _enumerate(args):
        if _is_array(arg):
            snaps.append((i, _array_state(arg)))
        elif _type(arg) is _list:
            snaps.append((i, _list(arg)))
    return snaps


def changed(arg: Any, snap: Any) -> bool:
    if _is_array(arg):
        return _array_state(arg) != snap
    # A list changed in place if any element was replaced (or added, or removed).
    return _len(arg) != _len(snap) or _any(_map(_is_not, arg, snap))


PLAIN = (int, float, bool, np.bool_, np.int64, np.float64)


def aliases(result: Any, args: tuple, depth: int = 0) -> bool:
    """Whether ``result`` is, holds, or shares memory with one of ``args``."""
    if depth > 2 or _type(result) in PLAIN:
        return False
    if _type(result) is _tuple and _all(_type(r) in PLAIN for r in result):
        return False
    if _isinstance(result, (_tuple, _list)) and not _any(result is a for a in args):
        return _any(aliases(r, args, depth + 1) for r in result[:16])
    for arg in args:
        if result is arg and not _isinstance(arg, _SCALARS):
            return True
        # numpy's stubs allow max_work only -1 or 0; numpy itself takes any bound on the work.
        if _is_array(result) and _is_array(arg) and _shares_memory(result, arg, max_work=10**6):  # type: ignore[arg-type]
            return True
    return False
