"""The diagnosis: which known mistake the code under test behaves like, on the calls where it errs.

After a failing check, every call the failing tests made (``record.Recorder``) is replayed on the
reference, in this process: where the reference's answer differs from the student's, the student
differs from the contract. The same calls are replayed on each of ol's mutants (trusted code,
in-process, each bounded by an alarm); a mutant *explains* a differing call when it answers
exactly as the student did. The mutant that explains the most differing calls names the first
pitfall; the calls it leaves are explained greedily by the next (two bugs name two pitfalls);
what no mutant explains is said so, with its first call. A mutant that errs where the student
does not (a *conflict*) ranks below one that does not, among those explaining as many calls.

Cost is bounded by sampling: at most ``MAX_PER_BATCH`` calls of a batch are compared (evenly
spaced; a batch whose calls depend on each other, through a uniform source or an object, is
compared on its first calls only, and the test's later batches are then left out), and each
mutant replays at most ``MAX_DIFFERING`` differing and ``MAX_AGREEING`` agreeing calls.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from harness.course import Module, load_course
from harness.diagnosis.outcome import call_text, describe, expected_words, outcome_key
from harness.diagnosis.record import Batch, Recorder
from harness.errors import MutantDoesNotApply
from harness.model import (
    CRASHED,
    EXITED,
    NOT_IMPLEMENTED,
    RAISED,
    TIMED_OUT,
    Diagnosis,
    RunResult,
)
from harness.sandbox.codec import Handle
from harness.sandbox.invoke import invoke
from harness.sources import RecordingSource, draw_count
from harness.target import IN_PROCESS_PASSTHROUGH, Result, TargetEscape, fits_contract, rebuild

MAX_PER_BATCH = 300
MAX_DIFFERING = 120
MAX_AGREEING = 60
SCREEN = 12  # every mutant first answers this many differing and agreeing calls ...
SHORTLIST = 6  # ... and the ones explaining most of them answer all the chosen calls
MAX_SEQUENTIAL_FOR_MUTANTS = 40  # of a batch whose calls depend on each other: its first calls
EXPENSIVE_S = 0.002  # a call the reference needs longer for (10000 tries): few are replayed
MAX_EXPENSIVE = 3
MUTANT_LIMIT_S = 1.0  # a safety net only: the caps above keep the whole diagnosis near 0.3 s
MAX_EXAMPLES = 2
MAX_ENTRIES = 3

_PLAIN_ARGS = (int, float, bool, str, bytes, type(None), tuple, list, np.ndarray, np.generic,
               RecordingSource)

CATEGORY_WORDS = {
    CRASHED: "your code crashed",
    EXITED: "your code tried to exit the interpreter",
    TIMED_OUT: "your code did not finish in time (an endless loop?)",
    NOT_IMPLEMENTED: "part of your code is not written yet",
    RAISED: "your code raised an exception it should not have",
}


@dataclass
class Probe:
    """One recorded call: where it was made and what the code under test answered."""

    test: str
    batch: Batch
    index: int
    key: Any
    violation: str = ""

    @property
    def args(self) -> tuple:
        return self.batch.calls[self.index]

    @property
    def words(self) -> str:
        """What the code under test did, in words."""
        if self.index < self.batch.answered:
            return describe(self.batch.results[self.index])
        return describe(Result(self.args), self.violation)


@dataclass
class Plan:
    """The probes of one failing test, and per batch the calls to replay (in order)."""

    test: str
    steps: list[tuple[Batch, list[int], bool]]  # (batch, indices, sequential)
    probes: list[Probe]


# -- what was recorded ---------------------------------------------------------------------------

def _sequential(batch: Batch) -> bool:
    if batch.sourced:
        return True
    return any(not isinstance(a, _PLAIN_ARGS) for args in batch.calls for a in args)


def _evenly(n: int, k: int) -> list[int]:
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def plan_test(test: str, batches: list[Batch]) -> Plan:
    steps, probes = [], []
    for batch in batches:
        n = batch.answered + (1 if batch.violation is not None else 0)
        n = min(n, len(batch.calls))
        sequential = _sequential(batch)
        indices = list(range(min(n, MAX_PER_BATCH))) if sequential else _evenly(n, MAX_PER_BATCH)
        steps.append((batch, indices, sequential))
        for i in indices:
            if i < batch.answered:
                probes.append(Probe(test, batch, i, outcome_key(batch.results[i])))
            else:
                kind = getattr(batch.violation, "kind", "") or "violation"
                probes.append(Probe(test, batch, i, ("violation", kind), kind))
        if sequential and len(indices) < len(batch.calls):
            break  # the later batches depend on calls not replayed
    return Plan(test, steps, probes)


# -- replaying on our own code -------------------------------------------------------------------

def _object_key(value: Any) -> Any:
    return ("handle", value.id) if isinstance(value, Handle) else ("object", id(value))


def _resolver(module: ModuleType) -> Callable[[str], Any]:
    def resolve(fn: str) -> Any:
        if "." not in fn:
            return getattr(module, fn)
        method = fn.split(".", 1)[1]
        return lambda obj, *a, **k: getattr(obj, method)(*a, **k)
    return resolve


def replay(module: ModuleType, plan: Plan, wanted: set[tuple[int, int]] | None,
           returns: dict[str, str],
           costs: dict[tuple[int, int], float] | None = None,
           ) -> dict[tuple[int, int], tuple[Any, Result, str]]:
    """Answers of ``module`` on the plan's calls: (key, result, violation) per (batch id, index).

    ``wanted``: only these calls are needed (a sequential batch still replays its prefix).
    ``costs``: filled with each call's duration."""
    resolve = _resolver(module)
    objects: dict[Any, Any] = {}
    answers: dict[tuple[int, int], tuple[Any, Result, str]] = {}
    last = len(plan.steps) - 1
    if wanted is not None:  # the last batch holding a wanted call: nothing after it is needed
        last = max((k for k, (b, idx, _) in enumerate(plan.steps)
                    if any((id(b), i) in wanted for i in idx)), default=-1)
    for batch, indices, sequential in plan.steps[:last + 1]:
        needed = indices
        if wanted is not None:
            mine = [i for i in indices if (id(batch), i) in wanted]
            if sequential:  # its calls set up the objects and sources of the later ones
                needed = [i for i in indices if i <= max(mine)] if mine else indices
            elif not mine:
                continue
            else:
                needed = mine
        calls, kwargs = (copy.deepcopy((batch.calls, batch.kwargs)) if batch.sourced
                         else (batch.calls, batch.kwargs))
        func = resolve(batch.fn)
        kind = returns.get(batch.fn, "any")
        for i in needed:
            args = tuple(objects.get(_object_key(a), a) if not isinstance(a, _PLAIN_ARGS) else a
                         for a in calls[i])
            args = tuple(a.copy() if isinstance(a, np.ndarray) else list(a) if type(a) is list
                         else a for a in args)
            sources = [a for a in (*args, *kwargs.values()) if isinstance(a, RecordingSource)]
            before = [draw_count(s) for s in sources]
            start = time.perf_counter()
            reply = invoke(func, args, kwargs, IN_PROCESS_PASSTHROUGH)
            if costs is not None:
                costs[(id(batch), i)] = time.perf_counter() - start
            draws = tuple(draw_count(s) - b for s, b in zip(sources, before))
            if reply.status == "returned":
                result = Result(calls[i], value=reply.value, draws=draws)
                violation = ("mutated" if reply.mutated else "aliased" if reply.aliased
                             else "" if fits_contract(kind, reply.value) else "type")
                student = batch.results[i].value if i < batch.answered else None
                if student is not None and not isinstance(student, _PLAIN_ARGS):
                    objects[_object_key(student)] = reply.value
            else:
                result, violation = Result(calls[i], error=rebuild(reply.error), draws=draws), ""
            answers[(id(batch), i)] = (outcome_key(result, violation), result, violation)
    return answers


@functools.cache
def _mutant_code(module_id: str) -> tuple[tuple[Any, Any], ...]:
    """Every mutant of the module that applies, compiled once per process."""
    from harness.lab_support import reference_source
    from harness.mutants import apply, load_mutants

    module = load_course().module(module_id)
    source = reference_source(module)
    compiled = []
    for mutant in load_mutants(module_id):
        try:
            text = apply(mutant, source)
        except MutantDoesNotApply:
            continue
        compiled.append((mutant, compile(text, f"<mutant {mutant.id}: {module.file}>", "exec")))
    return tuple(compiled)


def fresh_module(mutant: Any, code: Any) -> ModuleType:
    """A new module object running the mutant's code: no state left by an earlier replay (a
    mutant may keep state in its class or module, as a student's code may)."""
    from harness.loading import ensure_reference_path

    ensure_reference_path()
    mod = ModuleType(f"ol_diagnosis_{mutant.id}")
    mod.__file__ = code.co_filename
    exec(code, mod.__dict__)  # noqa: S102 - ol's own mutant of ol's own reference
    return mod


# -- the comparison ------------------------------------------------------------------------------

@dataclass
class Match:
    mutant: Any
    explains: set[int]  # probe numbers (in ``differing``) it answers as the student did
    conflicts: int  # calls where it errs and the student does not err that way


def _short(text: str) -> str:
    return text.split(":", 1)[0].strip()


def _example(probe: Probe, expected: Result) -> str:
    return (f"{call_text(probe.batch.fn, probe.args)} {probe.words}, expected "
            f"{expected_words(expected)}")


def diagnose(module: Module, run: RunResult, recorder: Recorder) -> tuple[Diagnosis, ...]:
    """The diagnosis of a failing ``run`` from the calls ``recorder`` kept (best first)."""
    from harness.loading import load_reference
    from harness.runner import alarm, quiet

    entries = _category_entries(run)
    failing = {t.name for t in run.failures() if t.category == "wrong" or t.category == RAISED}
    plans = [plan_test(name, batches) for name, batches in recorder.kept.items()
             if name in failing and batches]
    returns = load_course().returns
    reference = load_reference(module)
    ref_answers: dict[tuple[int, int], tuple[Any, Result, str]] = {}
    costs: dict[tuple[int, int], float] = {}
    with quiet():
        for plan in plans:
            ref_answers.update(replay(reference, plan, None, returns, costs))
    differing = [(plan, p) for plan in plans for p in plan.probes
                 if (id(p.batch), p.index) in ref_answers
                 and ref_answers[(id(p.batch), p.index)][0] != p.key]
    agreeing = [(plan, p) for plan in plans for p in plan.probes
                if (id(p.batch), p.index) in ref_answers
                and ref_answers[(id(p.batch), p.index)][0] == p.key]
    if not differing:
        return tuple(entries + _fallback(module, run))
    differing, agreeing = _affordable(differing, costs), _affordable(agreeing, costs, cheap=True)
    differing = [differing[i] for i in _evenly(len(differing), MAX_DIFFERING)]
    agreeing = [agreeing[i] for i in _evenly(len(agreeing), MAX_AGREEING)] if agreeing else []
    screen = ([differing[i] for i in _evenly(len(differing), SCREEN)],
              [agreeing[i] for i in _evenly(len(agreeing), SCREEN)] if agreeing else [])
    screened = [(m, code, _match(m, fresh_module(m, code), plans, *screen, ref_answers, returns,
                                 alarm, quiet))
                for m, code in _mutant_code(module.id)]
    screened = [x for x in screened if x[2] is not None and x[2].explains]
    screened.sort(key=lambda x: (-len(x[2].explains), x[2].conflicts))
    matches = [match for m, code, _ in screened[:SHORTLIST]
               if (match := _match(m, fresh_module(m, code), plans, differing, agreeing,
                                   ref_answers, returns, alarm, quiet)) is not None
               and match.explains]
    entries += _explain(module, run, differing, ref_answers, matches)
    return tuple(entries)


def _match(mutant: Any, mod: ModuleType, plans: list[Plan], differing: list[tuple[Plan, Probe]],
           agreeing: list[tuple[Plan, Probe]], ref_answers: dict, returns: dict[str, str],
           alarm: Any, quiet: Any) -> Match | None:
    """What ``mutant`` explains among ``differing`` and how often it errs otherwise (None: it
    did not finish within its limit)."""
    wanted_by_plan: dict[int, set[tuple[int, int]]] = {}
    for plan, p in differing + agreeing:
        wanted_by_plan.setdefault(id(plan), set()).add((id(p.batch), p.index))
    answers: dict[tuple[int, int], tuple[Any, Result, str]] = {}
    try:
        with alarm(MUTANT_LIMIT_S, f"mutant {mutant.id}'s replay"), quiet():
            for plan in plans:
                wanted = wanted_by_plan.get(id(plan))
                if wanted:
                    answers.update(replay(mod, plan, wanted, returns))
    except TargetEscape:
        return None
    explains = {id(p) for _, p in differing
                if answers.get((id(p.batch), p.index), (None,))[0] == p.key}
    conflicts = 0
    for _, p in differing + agreeing:
        got = answers.get((id(p.batch), p.index))
        ref = ref_answers[(id(p.batch), p.index)][0]
        if got is not None and got[0] != ref and got[0] != p.key:
            conflicts += 1
    return Match(mutant, explains, conflicts)


def _affordable(probes: list[tuple[Plan, Probe]], costs: dict[tuple[int, int], float],
                cheap: bool = False) -> list[tuple[Plan, Probe]]:
    """The probes each mutant replays: a sequential batch's first calls only, and few expensive
    calls (none among the agreeing ones)."""
    out, expensive = [], 0
    for plan, p in probes:
        sequential = next(seq for b, _, seq in plan.steps if b is p.batch)
        if sequential and p.index >= MAX_SEQUENTIAL_FOR_MUTANTS:
            continue
        if costs.get((id(p.batch), p.index), 0.0) > EXPENSIVE_S:
            if cheap or expensive >= MAX_EXPENSIVE:
                continue
            expensive += 1
        out.append((plan, p))
    return out


def _explain(module: Module, run: RunResult, differing: list[tuple[Plan, Probe]],
             ref_answers: dict, matches: list[Match]) -> list[Diagnosis]:
    """Greedy cover of the differing calls by mutants, best first."""
    out: list[Diagnosis] = []
    number = {id(p): j for j, (_, p) in enumerate(differing)}
    for m in matches:
        m.explains = {number[k] for k in m.explains if k in number}
    left = set(range(len(differing)))
    total = len(differing)
    while left and len(out) < MAX_ENTRIES:
        scored = [(len(m.explains & left), -m.conflicts, m) for m in matches if m.explains & left]
        if not scored:
            break
        best_count, best_conf, _ = max(scored, key=lambda s: (s[0], s[1]))
        group = sorted((m for c, nc, m in scored if c == best_count and nc == best_conf),
                       key=lambda m: (m.mutant.extended, m.mutant.id))
        covered = group[0].explains & left
        group = [m for m in group if m.explains & left == covered]
        lead = group[0].mutant
        pitfalls: list[int] = []
        for m in group:
            if m.mutant.pitfall not in pitfalls:
                pitfalls.append(m.mutant.pitfall)
        examples = [_example(differing[j][1], ref_answers[(id(differing[j][1].batch),
                                                            differing[j][1].index)][1])
                    for j in sorted(covered)[:MAX_EXAMPLES]]
        out.append(_pitfall_entry(module, pitfalls, [m.mutant.id for m in group],
                                  len(covered), total, examples))
        left -= covered
    if left:
        first = differing[min(left)][1]
        example = _example(first, ref_answers[(id(first.batch), first.index)][1])
        calls = f"{len(left)} call{'s' if len(left) != 1 else ''}"
        if out:
            out.append(Diagnosis("unexplained", f"{calls} where your code differs from the "
                                 f"contract match no known mistake; first: {example}",
                                 differing=total, evidence=(example,)))
            return out
        check = next((t for t in run.failures() if t.category == "wrong" and t.pitfall), None)
        text = (f"your code differs from the contract on {calls}, and no known mistake answers "
                f"as it does call for call; first: {example}")
        if check is None:
            out.append(Diagnosis("unexplained", text, differing=total, evidence=(example,)))
        else:  # the failing check still knows what it checks
            label = module.pitfall_label(check.pitfall)
            text += (f". The first failing check, {check.name}, points at {label} "
                     f"({_short(module.pitfall_text(check.pitfall))})")
            out.append(Diagnosis("failed", text, pitfall=check.pitfall, label=label,
                                 differing=total, evidence=(example,)))
    return out


def _pitfall_entry(module: Module, pitfalls: Sequence[int], mutants: list[str], explained: int,
                   total: int, examples: list[str]) -> Diagnosis:
    lead = pitfalls[0]
    names = " or ".join(f"{module.pitfall_label(p)} ({_short(module.pitfall_text(p))})"
                        for p in pitfalls)
    where = (f"on all {total} calls" if explained == total and total > 1 else
             "on the one call" if total == 1 else f"on {explained} of the {total} calls")
    text = (f"your code behaves like {names} {where} where it differs from the contract; "
            f"for example {examples[0]}")
    return Diagnosis("pitfall", text, pitfall=lead, label=module.pitfall_label(lead),
                     also=tuple(pitfalls[1:]), mutants=tuple(mutants), explained=explained,
                     differing=total, evidence=tuple(examples))


def _category_entries(run: RunResult) -> list[Diagnosis]:
    """One plain entry per category of trouble (crash, exit, time-out, stub, raise), first."""
    out, seen = [], set()
    for t in run.failures():
        if t.category in CATEGORY_WORDS and t.category not in seen:
            seen.add(t.category)
            first = t.message.strip().splitlines()[0] if t.message.strip() else t.outcome.value
            where = ""
            if t.frames:
                f = t.frames[-1]
                where = f" at {f.file}:{f.line} in {f.function}" + (f": {f.source}" if f.source else "")
            out.append(Diagnosis(t.category, f"{CATEGORY_WORDS[t.category]} in {t.name}: "
                                 f"{first}{where}", evidence=(first,)))
    return out


def _fallback(module: Module, run: RunResult) -> list[Diagnosis]:
    """A failure without a differing call to compare (a sampled law, a draw count): its check."""
    for t in run.failures():
        if t.category == "wrong":
            first = t.message.strip().splitlines()[0] if t.message.strip() else ""
            if t.pitfall is not None:
                text = (f"{t.name} failed, which is {module.pitfall_label(t.pitfall)} "
                        f"({_short(module.pitfall_text(t.pitfall))}): {first}")
            else:
                text = f"{t.name} failed, and no known mistake explains it: {first}"
            return [Diagnosis("failed", text, pitfall=t.pitfall,
                              label=module.pitfall_label(t.pitfall), evidence=(first,))]
    return []
