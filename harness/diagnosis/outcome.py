"""One call's outcome as a comparable key, and as words a student reads.

Two outcomes are the same when a reader of the contract could not tell them apart: equal values
bit for bit (numpy scalars equal to Python ones, NaN equal to NaN, arrays by dtype, shape and
every bit), exceptions of the same family (a subclass counts as its base: a ``ValueError``
subclass is a ``ValueError``), the same contract violation, the same uniforms drawn. A non-number
argument may be refused with ``TypeError`` or ``ValueError``: both are the same outcome there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from harness.engine.target import show_args
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


def error_bases(error: BaseException) -> tuple[str, ...]:
    """The class names of an exception, most specific first (a worker's as it sent them)."""
    if isinstance(error, RemoteError):
        return tuple(error.bases) or (error.type,)
    remote = getattr(error, "ol_remote", None) or getattr(error, "remote", None)
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


def describe(result: Any, violation: str = "") -> str:
    """``returned (2, False)``, ``raised ValueError: ...``, ``modified an argument in place``."""
    if violation:
        return {"mutated": "modified an argument in place",
                "aliased": "returned an array that shares memory with an argument",
                "type": f"returned {_show(result.value)}, not the type the contract promises",
                "narrow": f"returned {_show(result.value)}, a float32 array where the contract "
                          "promises float64"
                }.get(violation, violation)
    if result.error is not None:
        message = str(result.error)
        name = error_name(result.error)
        return f"raised {name}: {message}" if message else f"raised {name}"
    return f"returned {_show(result.value)}"


def expected_words(result: Any) -> str:
    """The reference's answer as the contract's: ``(2, False)``, ``ValueError``."""
    if result.error is not None:
        name = family(result.error)
        if name in _BAD_ARGUMENT and non_number_argument(result.args):
            return "TypeError or ValueError"
        return name
    return _show(result.value)


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        items = value.reshape(-1).tolist()
        shown = ", ".join(repr(v) for v in items[:12]) + (", ..." if len(items) > 12 else "")
        dtype = "" if value.dtype == np.float64 and value.ndim == 1 else f", dtype={value.dtype}"
        return f"[{shown}]{dtype}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (np.bool_,)):
        return repr(bool(value))
    if isinstance(value, np.floating):
        return repr(float(value))
    if isinstance(value, np.integer):
        return repr(int(value))
    if isinstance(value, (Handle, Opaque)):
        return f"a {value.cls} object"
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def call_text(fn: str, args: tuple) -> str:
    """``speculative_step([0.5, ...], ..., 1, 0.75, 0.25)`` with a scripted source's uniforms;
    a method call as ``PCG32(...).next_u32()``, the object by its class."""
    if "." in fn and args:
        cls, method = fn.split(".", 1)
        return f"{cls}(...).{method}({show_args(args[1:])})"
    shown = show_args(args)
    if len(shown) > 300:
        shown = shown[:300] + "..."
    scripts = [a for a in args if hasattr(a, "values") and hasattr(a, "drawn")]
    extra = f" with uniforms {[float(v) for v in scripts[0].values[:8]]}" if scripts else ""
    return f"{fn}({shown}){extra}"
