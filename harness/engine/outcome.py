"""One call's outcome as a comparable key, and as words a student reads.

Two outcomes are the same when a reader of the contract could not tell them apart: equal values
bit for bit (numpy scalars equal to Python ones, NaN equal to NaN, arrays by dtype, shape and
every bit), exceptions of the same family (a subclass counts as its base: a ``ValueError``
subclass is a ``ValueError``), the same contract violation, the same uniforms drawn. A non-number
argument may be refused with ``TypeError`` or ``ValueError``: both are the same outcome there.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from harness.sandbox.codec import Handle, Opaque, RemoteError

# Checked in this order: the first base class of the exception found here names its family.
_FAMILIES = ("NotImplementedError", "RecursionError", "ValueError", "TypeError", "RuntimeError",
             "ZeroDivisionError", "OverflowError", "FloatingPointError", "ArithmeticError",
             "IndexError", "KeyError", "LookupError", "AttributeError", "NameError",
             "ImportError", "MemoryError", "AssertionError")
# A programming error, not a behaviour: "your code raised ...", never a pitfall.
PROGRAMMING_ERRORS = frozenset({"NameError", "UnboundLocalError", "AttributeError", "ImportError",
                                "ModuleNotFoundError", "SyntaxError", "RecursionError",
                                "MemoryError"})
_BAD_ARGUMENT = frozenset({"TypeError", "ValueError"})
MESSAGE_CHARS = 160  # of an exception's message in a diagnosis (the failure below has it whole)
LONG_CALL = 640  # a call longer than this is shown with its long vectors summarised
SHOWN_ENTRIES = 3  # differing entries of a returned array named in an example


def remote_of(error: BaseException) -> RemoteError | None:
    """What the code under test raised, as its target reported it (class names, message, frames):
    the ``ol_remote`` of a ``TargetError`` and of an exception rebuilt as itself
    (``harness.engine.target.rebuild``); None for any other exception (one of ol's own)."""
    remote = getattr(error, "ol_remote", None)
    return remote if isinstance(remote, RemoteError) else None


def error_bases(error: BaseException) -> tuple[str, ...]:
    """The class names of an exception, most specific first (a worker's as it sent them)."""
    if isinstance(error, RemoteError):
        return tuple(error.bases) or (error.type,)
    remote = remote_of(error)
    if remote is not None:
        return tuple(remote.bases) or (remote.type,)
    return tuple(k.__name__ for k in type(error).__mro__)


def error_name(error: BaseException) -> str:
    return error_bases(error)[0]


def family(error: BaseException) -> str:
    bases = error_bases(error)
    for name in _FAMILIES:
        if name in bases:
            return name
    return bases[0]


def _value_key(value: Any) -> Any:
    """A value's part of ``outcome_key``: the one key of "the same answer" to a reader of the
    contract (numbers by class family and bits, NaN equal to NaN, a float by its dtype, arrays by
    dtype, shape and every entry). Not the sandbox's keys (``codec.plain_key`` and the worker's
    ``_value_key``), which tell when two replies have the same encoding (NaN never equal, every
    class apart), nor the M07.6 catalog's ``answer_key``/``zero_key``, a test's own relations."""
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("int", int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return ("float", "nan" if math.isnan(v) else v.hex(), str(np.asarray(value).dtype))
    if isinstance(value, np.ndarray):
        flat = tuple(_value_key(v.item()) if v.dtype.kind in "fc" or v.dtype.kind in "biu"
                     else repr(v) for v in value.reshape(-1))
        return ("array", value.dtype.str, value.shape, flat)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_value_key(v) for v in value))
    if isinstance(value, Handle):
        return ("object", value.cls)
    if isinstance(value, Opaque):
        return ("object", value.cls)
    if value is None or isinstance(value, str):
        return ("plain", value)
    return ("object", type(value).__name__)


def non_number_argument(args: tuple) -> bool:
    """Whether a call passes something that is not a number where numbers go (None, a string)."""
    def bad(a: Any, depth: int = 0) -> bool:
        if a is None or isinstance(a, (str, bytes, dict, set)):
            return True
        if isinstance(a, (list, tuple)) and depth < 2:
            return any(bad(v, depth + 1) for v in a)
        return False
    return any(bad(a) for a in args)


def outcome_key(result: Any, violation: str = "") -> Any:
    """The comparable key of a ``harness.engine.target.Result`` (or a violation's kind)."""
    if violation:
        return ("violation", violation)
    if result.error is not None:
        fam = family(result.error)
        if fam in _BAD_ARGUMENT and non_number_argument(result.args):
            fam = "TypeError|ValueError"
        return ("raised", fam, result.draws)
    return ("returned", _value_key(result.value), result.draws)


def outcome_words(result: Any, violation: str = "") -> str:
    """``returned (2, False)``, ``raised ValueError: ...``, ``modified an argument in place``."""
    if violation:
        return {"mutated": "modified an argument in place",
                "aliased": "returned an array that shares memory with an argument",
                "type": f"returned {_show(result.value)}, not the type the contract promises",
                "narrow": f"returned {_show(result.value)}, a float32 array where the contract "
                          "promises float64"
                }.get(violation, violation)
    if result.error is not None:
        return "raised " + error_words(result.error)
    return f"returned {_show(result.value)}"


def error_words(error: BaseException) -> str:
    """``ValueError: m must be >= 1``: the class the code raised and its message, once (a
    message that already starts with the class name, or a wrapper's, is not repeated)."""
    name = error_name(error)
    remote = error if isinstance(error, RemoteError) else remote_of(error)
    message = str(remote.message if remote is not None else error).strip()
    for prefix in (f"{name}: ", f"{type(error).__name__}: "):
        message = message.removeprefix(prefix)
    message = message.splitlines()[0] if message else ""
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS].rsplit(" ", 1)[0] + " [...]"
    return f"{name}: {message}" if message else name


def expected_words(result: Any) -> str:
    """The reference's answer as the contract's: ``(2, False)``, ``ValueError``."""
    if result.error is not None:
        name = family(result.error)
        if name in _BAD_ARGUMENT and non_number_argument(result.args):
            return "TypeError or ValueError"
        return name
    return _show(result.value)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")  # in a default repr: a different one every run


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        items = value.reshape(-1).tolist()
        shown = ", ".join(repr(v) for v in items[:12]) + (
            f", ... ({len(items)} entries)" if len(items) > 12 else "")
        dtype = "" if value.dtype == np.float64 and value.ndim == 1 else f", dtype={value.dtype}"
        return f"[{shown}]{dtype}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (np.bool_,)):
        return repr(bool(value))
    if isinstance(value, np.floating):
        return repr(float(value)) if value.dtype == np.float64 else repr(value)
    if isinstance(value, np.integer):
        return repr(int(value))
    if isinstance(value, (Handle, Opaque)):
        return f"a {value.cls} object"
    text = _ADDRESS.sub(">", repr(value))  # an address changes from run to run; the words must not
    return text if len(text) <= 200 else text[:200] + " [...]"


def differing_entries(got: Any, want: Any) -> str:
    """Where two arrays of the same shape differ, as ``at 2 of 8 ids: id 1 is 0.25 (the contract:
    0.0), ...``; "" when they are not two such arrays or agree."""
    if not (isinstance(got, np.ndarray) and isinstance(want, np.ndarray)) or got.shape != want.shape:
        return ""
    a, b = got.reshape(-1).tolist(), want.reshape(-1).tolist()
    ids = [i for i, (x, y) in enumerate(zip(a, b, strict=True))
           if _value_key(x) != _value_key(y)]
    if not ids or len(a) <= SHOWN_ENTRIES:
        return ""
    shown = "; ".join(f"id {i} is {a[i]!r} (the contract: {b[i]!r})" for i in ids[:SHOWN_ENTRIES])
    more = f"; and {len(ids) - SHOWN_ENTRIES} more" if len(ids) > SHOWN_ENTRIES else ""
    return f"differs at {len(ids)} of {len(a)} ids: {shown}{more}"


def argument_text(value: Any, summary: bool = False) -> str:
    """One argument as Python that rebuilds it (floats by ``repr``, float64 vectors as lists);
    ``summary``: a vector of more than 8 entries as its first two and its length."""
    if isinstance(value, np.ndarray):
        items = value.tolist()
        if summary and value.size > 8:
            flat = value.reshape(-1).tolist()
            return f"[{flat[0]!r}, {flat[1]!r}, ... {value.size} entries]"
        if value.dtype == np.float64 and value.ndim == 1:
            return repr(items)
        return f"np.array({items!r}, dtype=np.{value.dtype})"
    if isinstance(value, (list, tuple)) and summary and len(value) > 8:
        return f"[{value[0]!r}, {value[1]!r}, ... {len(value)} entries]"
    if hasattr(value, "drawn") and hasattr(value, "uniform"):
        return "rng"
    return repr(value)


def call_text(fn: str, args: tuple, whole: bool = False) -> str:
    """``speculative_step([0.5, 0.25, 0.25, 0.0], [...], 1, 0.75, 0.25)``: a call a student can
    paste and run, with a scripted source's uniforms; a method call as ``PCG32(...).next_u32()``,
    the object by its class. A call longer than ``LONG_CALL`` characters shows its long vectors
    as their first entries and length, unless ``whole``."""
    if "." in fn and args:
        cls, method = fn.split(".", 1)
        fn, args = f"{cls}(...).{method}", args[1:]
    shown = ", ".join(argument_text(a) for a in args)
    if len(shown) > LONG_CALL and not whole:
        shown = ", ".join(argument_text(a, summary=True) for a in args)
    scripts = [a for a in args if hasattr(a, "values") and hasattr(a, "drawn")]
    extra = ""
    if scripts:
        values = [float(v) for v in scripts[0].values]
        extra = f" with uniforms {values[:16]}" if whole or len(values) <= 16 else (
            f" with uniforms {values[:16]} and {len(values) - 16} more")
    return f"{fn}({shown}){extra}"


def reordered(got: Any, want: Any) -> bool:
    """Whether ``got`` holds exactly the values of the tuple ``want``, in another order: the right
    answer in the wrong places (``(False, 2)`` for ``(2, False)``), a mistake of structure."""
    if not isinstance(want, tuple) or not isinstance(got, (tuple, list)) or len(got) != len(want):
        return False
    mine, theirs = [repr(_value_key(v)) for v in got], [repr(_value_key(v)) for v in want]
    return mine != theirs and sorted(mine) == sorted(theirs)
