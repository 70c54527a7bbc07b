"""The wire format between ol and its isolated worker, encoder and decoder side by side: plain-data
values, exceptions and replies, and the two messages of a call, a request's pieces (the parent
writes them: ``request_frames``; the worker reads them: ``calls_of``, ``lean_piece``) and a
chunk of replies (the worker writes it: ``chunk_texts``; the parent reads it: ``decode_chunk``,
``printed_of``). Each message is a JSON object in ``protocol``'s frames. The worker binds what it
uses of this module before the student's import (``worker.Server``).

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

import array
import base64
import binascii
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.escape import valid_text
from harness.sandbox import protocol
from harness.uniforms import RecordingSource, source_from_spec

MAX_DEPTH = 8
MAX_ITEMS = 100_000
MAX_TEXT = 2000
MAX_INT_BITS = 4096  # an int crosses as itself up to this size, a larger one as an opaque object
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
    """``text`` cut at ``limit`` characters and made encodable (``escape.valid_text``: a lone
    surrogate, which no UTF-8 writer accepts, is shown as its escape)."""
    if len(text) > limit:
        text = text[:limit] + "... [cut]"
    return valid_text(text)


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
        number = int(value)
        if number.bit_length() > MAX_INT_BITS:  # str() refuses past 4300 digits; no answer is one
            return {"t": "object", "cls": f"{_class_name(value)} of {number.bit_length()} bits"}
        return {"t": "int", "cls": _class_name(value), "v": str(number)}
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
        # The code returned: what it returned crosses as an object of its class (no answer a
        # test expects), never as the encoder's error, which a test expecting that error would
        # take for the code's own raise.
        data["value"] = {"t": "object",
                         "cls": f"{_text(type(reply.value).__name__)} (not encodable: "
                                f"{_text(type(exc).__name__)})"}
        data["aliased"] = False
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


# -- The messages of a call ---------------------------------------------------------------------
#
# A request (parent -> worker: ``request_frames``, read back by ``calls_of`` and ``lean_piece``)
# travels in pieces, and its replies (worker -> parent: ``chunk_texts``, read back by
# ``decode_chunk`` and ``printed_of``) in chunks; both are JSON messages in ``protocol``'s frames.

FIRST_PIECE, PIECE, FRAME_BYTES = 256, 4096, 1 << 20  # how the parent cuts a request into frames
COLUMNS_FROM = 16  # calls in a piece, to send it by column
CHUNK_BYTES = 1 << 20  # a chunk of replies larger than this is halved
_JSON_SCALARS = (float, int, bool)  # what travels as a JSON number, and what one decodes to
_JSON_SCALAR_SET = frozenset(_JSON_SCALARS)
_SENT_ONCE = (tuple, list, np.ndarray)  # per request, as a value that each call refers to
_DUMPS = json.JSONEncoder(separators=(",", ":")).encode

_FROZEN: dict[int, tuple[tuple, dict]] = {}  # id of a tuple of numbers -> (the tuple, its encoding)
FROZEN_KEPT, FROZEN_ITEMS = 256, 256  # entries, then the cache starts again; items of one tuple


def encoded_value(value: Any) -> dict:
    """``encode(value)``, once per short tuple of plain numbers: a test passes the same p and q to
    many requests, and such a tuple cannot change. The cache holds the tuple itself, so its id
    stays its own; it keeps at most ``FROZEN_KEPT`` tuples of ``FROZEN_ITEMS`` numbers (a grading
    slot lives for a hundred submissions)."""
    if type(value) is not tuple:
        return encode(value)
    kept = _FROZEN.get(id(value))
    if kept is not None and kept[0] is value:
        return kept[1]
    encoded = encode(value)
    if len(value) <= FROZEN_ITEMS and all(type(v) in _JSON_SCALARS for v in value):
        if len(_FROZEN) >= FROZEN_KEPT:
            _FROZEN.clear()
        _FROZEN[id(value)] = (value, encoded)
    return encoded


def request_frames(rid: int, fn: str, calls: Sequence[tuple], kwargs: dict,
                   seed: int = 0) -> Iterator[bytes]:
    """The request as frames: a small first piece so the worker starts at once, then larger ones.

    A frame ends after ``PIECE`` calls or about ``FRAME_BYTES`` of arrays. A source passed several
    times is sent once and shared by the calls, as in-process; an array, list or tuple is sent once
    per request as a value, which each call refers to as ``[index]`` (no argument travels as a
    bare JSON array otherwise), and the worker hands each call its own copy (as in-process; a
    tuple of numbers, which nothing can change, is shared, and encoded once per process:
    ``encoded_value``); plain floats, ints and bools travel as JSON numbers (exact: ``repr``
    round-trips) or, in a piece sent by column, floats as their bytes (``piece_of_rows``);
    anything else as an encoded object.
    """
    shared: list[RecordingSource] = []
    values: list[dict] = []  # arrays, lists and tuples: encoded once, copied per call by the worker
    refs: dict[int, Any] = {}  # id of an argument already sent -> its reference (calls keep it alive)
    size = 0

    def arg(value: Any) -> Any:
        nonlocal size
        if type(value) in _JSON_SCALARS:
            return value
        ref = refs.get(id(value))
        if ref is not None:
            return ref
        if isinstance(value, RecordingSource):
            ref = refs[id(value)] = {"t": "sref", "i": len(shared)}
            shared.append(value)
            return ref
        if type(value) in _SENT_ONCE:
            ref = refs[id(value)] = [len(values)]  # a value reference: [index] (no other arg is a list)
            encoded = encoded_value(value)
            values.append(encoded)
            size += len(encoded.get("data", "")) + 64
            return ref
        encoded = encode(value)
        size += len(encoded.get("data", "")) + 64
        return encoded

    message: dict[str, Any] = {"op": "call", "id": rid, "fn": fn, "count": len(calls), "seed": seed,
                               "kwargs": {str(k): arg(v) for k, v in kwargs.items()}}
    known, known_values, step, at = 0, 0, FIRST_PIECE, 0
    piece: list[list] = []
    while at < len(calls):
        columns = None if piece else columns_of_calls(calls[at:at + step], arg)
        if columns is not None:  # the common batch: a whole piece by column, no row built
            message.update(columns)
            at += columns["n"]
        else:
            args = calls[at]
            piece.append([a if type(a) in _JSON_SCALARS else refs.get(id(a)) or arg(a) for a in args])
            at += 1
            if len(piece) < step and size < FRAME_BYTES and at < len(calls):
                continue
            message.update(piece_of_rows(piece))
        message["sources"] = [s.spec() for s in shared[known:]]
        message["values"] = values[known_values:]
        yield protocol.frame(message)
        known, known_values, step, piece, size = len(shared), len(values), PIECE, [], 0
        message = {"op": "more", "id": rid}


def columns_of_calls(calls: Sequence[tuple], arg: Callable[[Any], Any]) -> dict | None:
    """A piece of calls by column straight from their arguments, as ``piece_of_rows`` would send
    their rows, for the common batch: at least ``COLUMNS_FROM`` calls of one width whose every
    column is floats (``f64``), JSON numbers (``json``) or one array, list, tuple or source that
    every call passes (``same``: its reference, the value sent once). None for anything else (an
    array per call, an encoded object), which goes by rows, each call's arguments encoded in
    turn: the frames are byte for byte those of the rows. A column's classes and identities are
    found with C-level passes (``set(map(...))``), not a Python loop per argument."""
    if len(calls) < COLUMNS_FROM or len(set(map(len, calls))) != 1:
        return None
    columns: list[dict] = []
    for column in zip(*calls, strict=True):
        kinds = set(map(type, column))
        if kinds == {float}:
            data = array.array("d", column)
            if sys.byteorder != "little":
                data.byteswap()
            columns.append({"f64": base64.b64encode(data.tobytes()).decode("ascii")})
        elif kinds <= _JSON_SCALAR_SET:
            columns.append({"json": list(column)})
        elif len(set(map(id, column))) == 1 and (type(column[0]) in _SENT_ONCE
                                                  or isinstance(column[0], RecordingSource)):
            columns.append({"same": arg(column[0])})
        else:
            return None
    return {"columns": columns, "n": len(calls)}


def piece_of_rows(rows: list[list]) -> dict:
    """A piece of calls as the members of its frame: by column when every call has as many
    arguments, else as rows (``calls``).

    A piece of fewer than ``COLUMNS_FROM`` calls goes as rows, which cost less for so few. A
    column (``columns``, with the piece's count ``n``) is one of: ``{"f64": ...}``, floats as
    their little-endian float64 bytes in base64 (exact to the bit, and far cheaper to write and
    read than JSON numbers: a chi-square sends 20000 calls); ``{"same": arg}``, one argument object
    every call passes (a value or source reference); ``{"json": [...]}``, anything else, each
    item as a row would carry it.
    """
    width = len(rows[0])
    if len(rows) < COLUMNS_FROM or any(len(row) != width for row in rows):
        return {"calls": rows}
    columns: list[dict] = []
    for column in zip(*rows, strict=True):
        first = column[0]
        if all(type(a) is float for a in column):
            data = array.array("d", column)
            if sys.byteorder != "little":
                data.byteswap()
            columns.append({"f64": base64.b64encode(data.tobytes()).decode("ascii")})
        elif type(first) in (list, dict) and all(a is first for a in column):
            columns.append({"same": first})
        else:
            columns.append({"json": list(column)})
    return {"columns": columns, "n": len(rows)}


def calls_of(piece: dict, floats: Any = array.array, from_base64: Any = binascii.a2b_base64,
             swap: bool = sys.byteorder != "little") -> list:
    """A piece's calls, each its encoded arguments (a list, or a tuple from columns), from its rows
    (``calls``) or its columns (``piece_of_rows``, ``columns_of_calls``): ``f64`` floats as
    float64 bytes, ``same`` one argument for every call, ``json`` a list. ``SystemExit(3)`` for
    columns of unequal lengths (the worker's end: the parent never sends them).

    Bound in the worker before the student's import (``floats``, ``from_base64``)."""
    if "calls" in piece:
        return piece["calls"]
    count, columns = piece["n"], []
    for column in piece["columns"]:
        if "f64" in column:
            data = floats("d", from_base64(column["f64"]))
            if swap:
                data.byteswap()
            columns.append(data.tolist())
        elif "same" in column:
            columns.append([column["same"]] * count)
        else:
            columns.append(column["json"])
    if any(len(items) != count for items in columns):
        raise SystemExit(3)  # the parent never sends this: end, and it sees a crash
    return list(zip(*columns, strict=True)) if columns else [()] * count


def lean_piece(piece: dict, values: list, frozen: list[bool]) -> dict | None:
    """A piece by column whose every argument is a number or a tuple of numbers sent once (in
    ``values``, each with whether it is such a tuple in ``frozen``), with each reference (``[i]``)
    replaced by that tuple; None for any other piece (the worker then resolves each call's
    arguments in turn). Found column by column (C-level passes over a JSON column's classes),
    not argument by argument."""
    if "columns" not in piece:
        return None
    columns = []
    for column in piece["columns"]:
        if "same" in column:
            ref = column["same"]
            if type(ref) is not list or not frozen[ref[0]]:
                return None
            column = {"same": values[ref[0]]}
        elif "json" in column and not _JSON_SCALAR_SET.issuperset(map(type, column["json"])):
            return None
        columns.append(column)
    return {"columns": columns, "n": piece["n"]}


def value_key(value: dict) -> object:
    """A hashable form of a small encoded scalar or tuple of scalars; None for anything else."""
    tag = value.get("t")
    if tag in ("bool", "int", "float"):
        return (tag, value.get("cls"), value.get("v"))
    if tag == "none":
        return ("none",)
    if tag == "tuple" and len(value.get("items", ())) <= 4:
        items = tuple(value_key(item) for item in value["items"])
        return None if None in items else ("tuple", items)
    return None


def reply_key(reply: dict) -> object:
    """Equal keys mean equal replies; None: send this reply on its own."""
    if reply.get("status") != "returned" or reply.get("mutated") or reply.get("aliased"):
        return None
    value = value_key(reply["value"])
    return None if value is None else (value, tuple(reply.get("draws", ())))


def chunk_texts(rid: int, start: int, replies: list[dict], printed: str,
                dumps: Any = _DUMPS) -> list[str]:
    """A chunk of replies as the JSON text of its message (or two or more, halved): the distinct
    replies once (``table``) and, per call, its entry (``index``), and ``printed`` (the worker's
    ``printed()``: what the calls printed, as JSON members of the message, or "").

    Cheap calls mostly repeat a few small answers (True, False, (2, True)), so the parent
    decodes each once. A chunk too large is halved, so a message stays far below the cap.
    """
    table: list[dict] = []
    index: list[int] = []
    seen: dict[object, int] = {}
    by_id: dict[int, int] = {}  # one reply object shared by calls (invoke_immutable's)
    for reply in replies:
        slot = by_id.get(id(reply))
        if slot is None:
            key = reply_key(reply)
            slot = seen.get(key) if key is not None else None
            if slot is None:
                slot = len(table)
                table.append(reply)
                if key is not None:
                    seen[key] = slot
            by_id[id(reply)] = slot
        index.append(slot)
    text = dumps(table)
    if len(text) > CHUNK_BYTES and len(replies) > 1:
        half = len(replies) // 2
        return (chunk_texts(rid, start, replies[:half], printed, dumps)
                + chunk_texts(rid, start + half, replies[half:], "", dumps))
    return [f'{{"op":"replies","id":{rid},"start":{start},'
            f'"index":{dumps(index)},"table":{text}{printed}}}']


def decode_chunk(message: dict, room: int) -> list[Reply]:
    """The replies of one chunk: each distinct reply decoded once, then one per call, in order."""
    table, index = message.get("table"), message.get("index")
    if not isinstance(table, list) or not isinstance(index, list) or not 0 < len(index) <= room:
        raise MalformedReply("the worker sent a malformed chunk of replies")
    decoded = [decode_reply(item) for item in table]
    if set(map(type, index)) != {int} or min(index) < 0 or max(index) >= len(decoded):
        raise MalformedReply("the worker sent a malformed chunk of replies")
    if len(index) > len(decoded) and not all(immutable(r.value) for r in decoded):
        for i, uses in Counter(index).items():  # one Reply for several calls: only an immutable value
            if uses > 1 and not immutable(decoded[i].value):
                raise MalformedReply("the worker shared a mutable reply between calls")
    return [decoded[i] for i in index]


def printed_of(message: dict) -> tuple[str, int] | None:
    """A message's ``out`` (text printed) and ``dropped`` (characters not sent), or None."""
    if "out" not in message and "dropped" not in message:
        return None
    text, dropped = message.get("out", ""), message.get("dropped", 0)
    if type(text) is not str or type(dropped) is not int or dropped < 0:
        raise MalformedReply("the worker sent malformed output")
    return text, dropped


def immutable(value: Any) -> bool:
    """Whether nothing can change ``value`` (None, a number, a tuple of them): the only reply a
    chunk may hand to several calls."""
    if type(value) is tuple:
        return all(immutable(v) for v in value)
    return value is None or type(value) in (bool, int, float) or isinstance(value, np.generic)
