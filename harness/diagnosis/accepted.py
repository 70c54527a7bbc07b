"""Which of the code's exceptions the catalog accepts where the reference raises another class.

The contract allows some argument errors to be either ``TypeError`` or ``ValueError`` (M07.6: a
non-integer ``max_tries`` may raise ``TypeError``, as ``range(2.5)`` does; a non-number anywhere),
and the catalog's checks say where (``isinstance(r.error, (TypeError, ValueError))``). The
diagnosis compares outcomes exactly, so a ``TypeError`` answered where the reference raises
``ValueError`` would count as a difference from the contract although the catalog accepted it.
Rather than keep a second copy of those rules, the catalog itself is asked: the failing test is
run again on the reference, whose function raises the code's class (with the reference's
message) on exactly those calls; if the test still passes, the catalog accepts that class there
and the calls are no difference. Each question is one run of one catalog test on ol's own code,
capped in number (``MAX_QUESTIONS``), never by a clock.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection
from types import ModuleType
from typing import Any

import numpy as np

from harness.diagnosis.record import Batch
from harness.engine.course import Module, load_course
from harness.engine.outcome import family

INTERCHANGEABLE = frozenset({"TypeError", "ValueError"})  # the classes the contracts let vary
MAX_QUESTIONS = 6  # runs of a catalog test on the reference, per diagnosis
QUESTION_LIMIT_S = 10.0  # a safety net for one run, as for a mutant's replay

_PLAIN = (int, float, bool, str, bytes, type(None), tuple, list, np.ndarray, np.generic)


def other_class(student: Any, reference: Any) -> str | None:
    """The class the code raised when it and the reference both raised ``TypeError`` or
    ``ValueError``, but not the same one, after drawing the same uniforms; else None."""
    if student is None or reference is None or student.error is None or reference.error is None:
        return None
    mine, theirs = family(student.error), family(reference.error)
    if mine == theirs or not {mine, theirs} <= INTERCHANGEABLE:
        return None
    return mine if tuple(student.draws) == tuple(reference.draws) else None


def args_key(args: tuple) -> tuple:
    """A call's arguments as the catalog makes them again on another run of the same cases: the
    values by their text, a uniform source or an object of the code's by its place alone."""
    return tuple(repr(a) if isinstance(a, _PLAIN) else "<object>" for a in args)


def _swapped(reference: ModuleType, fn: str, raises: dict[tuple, str]) -> ModuleType:
    """The reference, with ``fn`` raising the given class instead of its own argument error on
    the calls ``raises`` names (by ``args_key``); every other call answers as the reference."""
    real = getattr(reference, fn)

    def swapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return real(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            name = raises.get(args_key(args))
            if name is None or type(exc).__name__ == name:
                raise
            raise getattr(builtins, name)(str(exc)) from None

    mod = ModuleType(reference.__name__)
    mod.__dict__.update(reference.__dict__)
    setattr(mod, fn, swapped)
    return mod


def accepted(module: Module, reference: ModuleType, test: str, seed: int | None,
             calls: Collection[tuple[Batch, int, str]]) -> bool:
    """Whether catalog test ``test`` passes on the reference when it raises, on each of
    ``calls`` (batch, index, the code's class), the code's class instead of its own."""
    from harness.engine.runner import run_named
    from harness.engine.target import InProcessTarget

    by_fn: dict[str, dict[tuple, str]] = {}
    for batch, index, name in calls:
        if "." in batch.fn:
            return False  # a method: its receiver is the code's object, not asked here
        by_fn.setdefault(batch.fn, {})[args_key(batch.calls[index])] = name
    mod = reference
    for fn, raises in by_fn.items():
        mod = _swapped(mod, fn, raises)
    target = InProcessTarget(f"reference ({test}, asked)", mod, module.functions,
                             load_course().returns)
    result = run_named(module, test, target, seed, QUESTION_LIMIT_S)
    return result is not None and result.ok
