"""What catalog tests share: failures that carry a pitfall, and readable values."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from harness.target import show_args


class CatalogFailure(AssertionError):
    """A catalog check that failed; ``pitfall`` is the chapter's pitfall this failure matches."""

    def __init__(self, message: str, pitfall: int | None = None) -> None:
        super().__init__(message)
        self.pitfall = pitfall


def expect(condition: bool, message: str, pitfall: int | None = None) -> None:
    if not condition:
        raise CatalogFailure(message, pitfall)


def called(fn: str, args: Sequence[Any]) -> str:
    return f"{fn}({show_args(args)})"


def fmt(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ", precision=17, threshold=20)
    if isinstance(value, Fraction):
        return f"{value} (= {float(value):.17g})" if value.denominator != 1 else str(value)
    if isinstance(value, BaseException):
        remote = getattr(value, "remote", None)  # a class the harness does not rebuild
        if remote is not None:
            return f"raised {remote}"
        return f"raised {type(value).__name__}: {value}"
    return repr(value)


def law_table(observed: dict[int, Any], expected: dict[int, Any]) -> str:
    """Per-id observed vs expected, one line each."""
    ids = sorted(set(observed) | set(expected))
    return "\n".join(
        f"    id {i}: observed {fmt(observed.get(i, 0))}, expected {fmt(expected.get(i, 0))}"
        for i in ids
    )


def returns_value(result: Any, what: str, pitfall: int | None = None) -> Any:
    """The value of a ``Target.map`` result, or a failure saying what it raised instead."""
    if result.error is not None:
        raise CatalogFailure(f"{what} raised {type(result.error).__name__}: {result.error}; "
                             "expected a value", pitfall)
    return result.value
