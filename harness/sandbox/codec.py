"""Plain-data encoding of arguments, results and exceptions between the harness and a target.

What crosses from code under test to the process that decides a verdict is only this data:
numbers, bools, numeric arrays (dtype, shape and bytes), tuples, lists, exception type and
message (and where in the student's own files it was raised: ``Frame``), and the *name* of any
other class. It is decoded without pickle or eval, and only as ``encode`` writes it: at most
``MAX_ITEMS`` items in a list or an array, ``MAX_DEPTH`` levels, a dtype by its short name (the
frame that carries it was bounded before it was parsed: ``protocol.measure``). In-process
targets skip the encoding (their values are ours), but every target's calls go through
``harness.sandbox.invoke`` and every reply through the same contract checks (``harness.engine.target``).
Every text that crosses is made valid Unicode (a lone surrogate becomes ``\\ud800``), so no
writer of a report can fail on it.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.uniforms import RecordingSource, source_from_spec

MAX_DEPTH = 8
MAX_ITEMS = 100_000
MAX_TEXT = 2000
MAX_STR = 200  # a str value crosses as itself up to this length, a longer one as an opaque object
MAX_FRAMES = 10  # of a traceback: the innermost ones in the student's files, as pytest shows them
MAX_SOURCE = 200  # characters of a frame's source line
MAX_PATH = 300  # characters of a frame's file name (relative to the workspace's python/ dir)
_NUMERIC_KINDS = "biuf"
_MAX_ARRAY_TEXT = (MAX_ITEMS * 16 + 2) // 3 * 4  # base64 of MAX_ITEMS items of 16 bytes (float128)


class MalformedReply(Exception):
    """Data that does not decode: a failure of the call, never a pass."""


@dataclass(frozen=True)
class Opaque:
    """A value of a class the codec does not carry: only its class name crosses."""

    cls: str

    def __repr__(self) -> str:
        return f"<object of class {self.cls}>"


@dataclass(frozen=True)
class Frame:
    """One frame of a traceback in the student's own code, as pytest's ``--tb=short`` shows it:
    the file (relative to the workspace's ``python/`` dir, e.g. ``tinyllm/prob/rejection.py``),
    the line number, the function's name and that line of source (stripped; may be empty)."""

    file: str
    line: int
    function: str
    source: str


@dataclass(frozen=True)
class RemoteError:
    """An exception raised by code under test: its type name, base class names and message, and
    where it was raised (``frames``: the last ``MAX_FRAMES`` frames of its traceback that lie in
    the student's own files, outermost first; empty when none is known). The frames are evidence
    for the student, not part of what the error is: two errors compare equal without them."""

    type: str
    bases: tuple[str, ...]
    message: str
    frames: tuple[Frame, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(frozen=True)
class Handle:
    """An object that lives in the target (an instance of the module's class, e.g. ``PCG32``).

    Only its number and class name cross; methods are called through the target by name.
    """

    id: int
    cls: str


@dataclass
class Reply:
    """The outcome of one call: returned a value, raised, or exited the interpreter."""

    status: str  # "returned" | "raised" | "exited"
    value: Any = None
    error: RemoteError | None = None
    mutated: list[int] = field(default_factory=list)
    aliased: bool = False
    draws: list[int] = field(default_factory=list)


def _class_name(obj: object) -> str:
    cls = type(obj)
    module = getattr(cls, "__module__", "?")
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def clean_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut at ``limit`` characters and made encodable: a lone surrogate (which no UTF-8
    writer accepts) is shown as its escape."""
    if len(text) > limit:
        text = text[:limit] + "... [cut]"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _text(obj: object) -> str:
    try:
        text = str(obj)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not break the encoder
        text = "<unprintable>"
    if not isinstance(text, str):
        return "<unprintable>"
    return clean_text(str.__str__(text))


def encode(value: Any, depth: int = 0) -> dict:
    """``value`` as JSON-able plain data; classes not listed here cross as their name only.

    ``value`` is any object, told apart by its exact class (``type(value) is ...``, which mypy
    does not narrow on; hence ``Any``)."""
    cls = type(value)
    if depth > MAX_DEPTH:
        return {"t": "object", "cls": "<nested too deep>"}
    if value is None:
        return {"t": "none"}
    if cls is bool or cls is np.bool_:
        return {"t": "bool", "cls": _class_name(value), "v": bool(value)}
    if cls is int or (isinstance(value, np.integer) and cls.__module__ == "numpy"):
        return {"t": "int", "cls": _class_name(value), "v": str(int(value))}
    if cls is float or (isinstance(value, np.floating) and cls.__module__ == "numpy"):
        return {"t": "float", "cls": _class_name(value), "v": float(value).hex()}
    if cls is str and len(value) <= MAX_STR:  # a string argument reaches the code under test as one
        return {"t": "str", "v": clean_text(value, MAX_STR)}
    if cls is tuple or cls is list:
        if len(value) > MAX_ITEMS:
            return {"t": "object", "cls": f"{cls.__name__} of {len(value)} items"}
        return {"t": cls.__name__, "items": [encode(v, depth + 1) for v in value]}
    if cls is np.ndarray and value.dtype.kind in _NUMERIC_KINDS and value.size <= MAX_ITEMS:
        data = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<"), copy=False)
        return {
            "t": "ndarray",
            "dtype": value.dtype.newbyteorder("<").str,
            "shape": list(value.shape),
            "data": base64.b64encode(data.tobytes()).decode("ascii"),
            "readonly": not value.flags.writeable,
        }
    if isinstance(value, RecordingSource):
        return {"t": "source", "spec": value.spec()}
    if cls is Handle:
        return {"t": "handle", "id": value.id, "cls": value.cls}
    return {"t": "object", "cls": _class_name(value)}


def error_info(exc: BaseException) -> tuple[str, tuple[str, ...], str]:
    """An exception's class name, the names of its classes in method resolution order, its message."""
    mro = []
    for klass in type(exc).__mro__:
        name = getattr(klass, "__name__", "?")
        mro.append(clean_text(str.__str__(name), 100) if isinstance(name, str) else "?")
    return mro[0], tuple(mro), _text(exc)


def encode_error(exc: BaseException | RemoteError) -> dict:
    if not isinstance(exc, RemoteError):
        name, mro, message = error_info(exc)
        return {"type": name, "mro": list(mro), "message": message}
    data: dict[str, Any] = {"type": exc.type, "mro": list(exc.bases), "message": exc.message}
    if exc.frames:
        data["frames"] = [[f.file, f.line, f.function, f.source] for f in exc.frames]
    return data


def encode_reply(reply: Reply, register: Any = None) -> dict:
    """``invoke``'s reply as plain data. ``register(obj)`` keeps an object of the module's own
    classes and returns its handle number (or None for any other object): such a result crosses
    as a handle, not as a class name. A result that breaks the encoder is an answer too."""
    data: dict[str, Any] = {"status": reply.status, "mutated": reply.mutated, "draws": reply.draws}
    if reply.status != "returned":
        assert reply.error is not None, "a reply that did not return has its error"
        data["error"] = encode_error(reply.error)
        return data
    try:
        number = register(reply.value) if register is not None else None
        data["value"] = encode(reply.value) if number is None else {
            "t": "handle", "id": number, "cls": _text(type(reply.value).__name__)}
        data["aliased"] = reply.aliased
    except BaseException as exc:  # noqa: BLE001 - a result that breaks the encoder is an answer too
        return {"status": "raised", "error": encode_error(exc), "unencodable": True,
                "mutated": reply.mutated, "draws": reply.draws}
    return data


def decode(data: Any) -> Any:
    """Rebuild a value from ``encode`` output; ``MalformedReply`` for anything else."""
    try:
        return _decode(data, 0)
    except MalformedReply:
        raise
    except Exception as exc:  # noqa: BLE001 - KeyError, TypeError, ValueError from hostile data
        raise MalformedReply(f"malformed value: {type(exc).__name__}: {exc}") from None


_SCALARS = {
    "bool": bool, "numpy.bool": np.bool_, "numpy.bool_": np.bool_,
    "int": int, "float": float,
}


def _scalar_type(cls: str, t: str) -> Any:
    if cls in _SCALARS:
        return _SCALARS[cls]
    if cls.startswith("numpy."):
        numpy_type = getattr(np, cls.split(".", 1)[1], None)
        if isinstance(numpy_type, type) and issubclass(numpy_type, np.generic):
            return numpy_type
    raise MalformedReply(f"unexpected {t} class {cls!r}")


def _decode(data: Any, depth: int) -> Any:
    if not isinstance(data, dict) or depth > MAX_DEPTH + 1:
        raise MalformedReply("expected an encoded value")
    t = data["t"]
    if t == "none":
        return None
    if t in ("bool", "int", "float"):
        kind = _scalar_type(data["cls"], t)
        v = data["v"]
        raw = bool(v) if t == "bool" else int(v) if t == "int" else float.fromhex(v)
        if t == "bool" and not isinstance(v, bool):
            raise MalformedReply("bool value is not a bool")
        return kind(raw)
    if t == "str":
        if not isinstance(data.get("v"), str):
            raise MalformedReply("str value is not a string")
        return clean_text(data["v"], MAX_STR)
    if t in ("tuple", "list"):
        if type(data["items"]) is not list or len(data["items"]) > MAX_ITEMS:
            raise MalformedReply(f"a {t} that is not a list of at most {MAX_ITEMS} items")
        items = [_decode(v, depth + 1) for v in data["items"]]
        return tuple(items) if t == "tuple" else items
    if t == "ndarray":
        # ``encode``'s arrays only: a short dtype name (a long one can describe a million fields,
        # seconds of numpy's time) and at most MAX_ITEMS items of at most 16 bytes.
        name, shape, text = data["dtype"], data["shape"], data["data"]
        if (type(name) is not str or len(name) > 8 or type(shape) is not list or len(shape) > 32
                or type(text) is not str or len(text) > _MAX_ARRAY_TEXT):
            raise MalformedReply("a malformed array")
        dtype = np.dtype(name)
        if dtype.kind not in _NUMERIC_KINDS:
            raise MalformedReply(f"array dtype {dtype} is not numeric")
        shape = tuple(int(n) for n in shape)
        buffer = base64.b64decode(text, validate=True)
        arr = np.frombuffer(buffer, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)
        if arr.size > MAX_ITEMS:
            raise MalformedReply(f"an array of more than {MAX_ITEMS} items")
        if data.get("readonly") is True:  # the caller's array was read-only: so is the callee's
            arr.flags.writeable = False
        return arr
    if t == "source":
        return source_from_spec(data["spec"])
    if t == "handle":
        return Handle(int(data["id"]), clean_text(str(data["cls"]), 200))
    if t == "object":
        return Opaque(clean_text(str(data["cls"]), 200))
    raise MalformedReply(f"unknown tag {t!r}")


def decode_error(data: Any) -> RemoteError:
    try:
        mro = tuple(clean_text(str(n), 100) for n in data["mro"][:50])
        return RemoteError(clean_text(str(data["type"]), 100), mro,
                           clean_text(str(data["message"]), MAX_TEXT + 20),
                           decode_frames(data.get("frames", [])))
    except MalformedReply:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever hostile data raises is a malformed reply
        raise MalformedReply(f"malformed error: {exc}") from None


def decode_frames(data: Any) -> tuple[Frame, ...]:
    """``encode_error``'s frames: a list of at most ``MAX_FRAMES`` ``[file, line, function,
    source]``, each text a str (cut and cleaned here), each line a non-negative int; anything
    else is ``MalformedReply`` (a worker that sends it is broken or hostile: fail closed)."""
    if type(data) is not list or len(data) > MAX_FRAMES:
        raise MalformedReply("malformed error: frames is not a list of at most "
                             f"{MAX_FRAMES} frames")
    frames = []
    for item in data:
        if (type(item) is not list or len(item) != 4 or type(item[1]) is not int
                or not 0 <= item[1] < 1 << 31 or not all(type(item[i]) is str for i in (0, 2, 3))):
            raise MalformedReply("malformed error: a frame is not [file, line, function, source]")
        frames.append(Frame(clean_text(item[0], MAX_PATH), item[1], clean_text(item[2], 200),
                            clean_text(item[3], MAX_SOURCE)))
    return tuple(frames)


# Results whose encoding is a function of (class, value): ``plain_key`` may stand for them.
_KEYED = frozenset({int, bool, np.int64, np.bool_})
_KEYED_FLOATS = frozenset({float, np.float64})


def plain_key(value: Any) -> Any:
    """A hashable key with equal keys for equal encodings: a plain number (floats by their bits,
    so -0.0 is not 0.0) or a tuple of up to four; None for anything else (NaN: never equal)."""
    cls = type(value)
    if cls in _KEYED:
        return (cls, value)
    if cls in _KEYED_FLOATS:
        return None if math.isnan(value) else (cls, value.hex())
    if cls is tuple and len(value) <= 4:
        kinds = tuple(map(type, value))
        if _KEYED.issuperset(kinds):  # (2, True): the common answer, keyed without a loop
            return (tuple, kinds, value)
        key: list = [tuple]  # flat: (tuple, class, value, class, value, ...)
        for item in value:
            kind = type(item)
            if kind in _KEYED:
                key += (kind, item)
            elif kind in _KEYED_FLOATS and not math.isnan(item):
                key += (kind, item.hex())
            else:
                return None
        return tuple(key)
    return None


def decode_reply(data: Any) -> Reply:
    """The parent's view of ``invoke``'s reply; ``MalformedReply`` if it is not one."""
    if not isinstance(data, dict):
        raise MalformedReply("reply is not an object")
    status = data.get("status")
    if status not in ("returned", "raised", "exited"):
        raise MalformedReply(f"reply has unknown status {status!r}")
    mutated, draws = data.get("mutated", []), data.get("draws", [])
    if not (isinstance(mutated, list) and isinstance(draws, list)
            and all(type(i) is int and i >= 0 for i in mutated + draws)):
        raise MalformedReply("malformed reply: mutated and draws must be lists of counts")
    reply = Reply(status=status, mutated=mutated, draws=draws, aliased=data.get("aliased") is True)
    if status == "returned":
        reply.value = decode(data.get("value"))
    else:
        reply.error = decode_error(data.get("error"))
    return reply
