"""Whether the code under test answers the same call the same way twice.

The contract's functions are functions of their arguments and uniforms. A few of the calls the
diagnosis found differing from the contract are asked of the code again, exactly as they were
made, under two other seeds of the global generators (``random`` and ``numpy.random``, which a
target seeds before every batch of calls): code whose answer depends on anything else (a
generator of its own, state kept between calls) answers differently, and the diagnosis says so
at once, with both answers, instead of matching noise against ol's mutants.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.diagnosis.record import Batch
from harness.engine.outcome import outcome_key
from harness.engine.target import ContractViolation, Result, Target, TargetEscape
from harness.sandbox.codec import Handle

PROBES = 4  # differing calls asked again, at most ...
PER_FUNCTION = 2  # ... and at most this many of one function
SEEDS = (1, 2)  # the seeds of the global generators they are asked under (a target's own is 0)

# ``ask(batch, index, seed)``: the code's answer to that recorded call, asked again as it was made
# with the global generators seeded ``seed``: (outcome key, result, violation kind), or None when
# it could not answer (an escape).
Ask = Callable[[Batch, int, int], "tuple[Any, Result, str] | None"]


@dataclass(frozen=True)
class Unstable:
    """A call the code answered differently when asked again with the same arguments."""

    test: str
    batch: Batch
    index: int
    again: Result
    violation: str = ""


def askable(batch: Batch, index: int) -> bool:
    """Whether a recorded call can be asked again on its own: no object of the code's (a method
    call's state is its own), and no uniform source it shares with another call of its batch."""
    args = batch.calls[index]
    if "." in batch.fn or any(isinstance(a, Handle) for a in args):
        return False
    if not batch.sourced:
        return True
    mine = {id(a) for a in (*args, *batch.kwargs.values()) if hasattr(a, "drawn")}
    return not any(id(a) in mine for j, other in enumerate(batch.calls) if j != index
                   for a in other)


def asker(target: Target) -> Ask:
    """``Ask`` on ``target``: its global generators seeded as asked, nothing recorded."""

    def ask(batch: Batch, index: int, seed: int) -> tuple[Any, Result, str] | None:
        args, kwargs = batch.calls[index], batch.kwargs
        if batch.sourced:  # the recorded copy stands where the call started: draw from a copy
            args, kwargs = copy.deepcopy((args, kwargs))
        saved = (target.recorder, getattr(target, "rng_seed", 0))
        target.recorder, target.rng_seed = None, seed
        target.begin_test()
        try:
            result = target.map(batch.fn, [args], **kwargs)[0]
        except ContractViolation as exc:
            return ("violation", exc.kind), Result(args), exc.kind
        except (TargetEscape, Exception):  # noqa: BLE001 - no answer: nothing to compare
            return None
        finally:
            target.recorder, target.rng_seed = saved
            target.begin_test()
        return outcome_key(result), result, ""

    return ask


def find_unstable(probes: list[Any], ask: Ask) -> Unstable | None:
    """The first of ``probes`` (``engine.Probe``: a recorded differing call with its key) that the
    code answers differently when asked again, if any."""
    asked: dict[str, int] = {}
    for probe in probes:
        if sum(asked.values()) >= PROBES:
            break
        batch, index = probe.batch, probe.index
        if asked.get(batch.fn, 0) >= PER_FUNCTION or not askable(batch, index):
            continue
        asked[batch.fn] = asked.get(batch.fn, 0) + 1
        for seed in SEEDS:
            answer = ask(batch, index, seed)
            if answer is None:
                return None  # it hung or crashed when asked again: no comparison to make
            if answer[0] != probe.key:
                return Unstable(probe.test, batch, index, answer[1], answer[2])
    return None
