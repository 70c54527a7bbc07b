"""The diagnosis: which known mistake the code under test behaves like, on the calls where it errs.

After a failing check, every call the failing tests made (``record.Recorder``) is replayed on the
reference, in this process: where the reference's answer differs from the student's, the student
differs from the contract. The same calls are replayed on each of ol's mutants (trusted code,
in-process, each bounded by an alarm); a mutant *explains* a differing call when it answers
exactly as the student did. The mutant that explains the most differing calls names the first
pitfall; the calls it leaves are explained greedily by the next (two bugs name two pitfalls);
a failing test that no mutant explains (on at least ``EXPLAINS_TEST`` of its differing calls) is
told by the pitfall of its own failing check, or said to match no known mistake, with its first
differing call. A mutant that errs where the student does not (a *conflict*) ranks below one that
does not; a mutant whose designated test the code passes is not the code's mistake and is left out.

Cost is bounded by sampling: at most ``MAX_PER_BATCH`` calls of a batch are compared (evenly
spaced; a batch whose calls depend on each other, through a uniform source or an object, is
compared on its first calls only, and the test's later batches are then left out), and each
mutant replays at most ``MAX_DIFFERING`` differing and ``MAX_AGREEING`` agreeing calls.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from harness.diagnosis.outcome import call_text, describe, expected_words, outcome_key
from harness.diagnosis.record import Batch, Recorder
from harness.engine.course import Module, load_course
from harness.engine.results import (
    CRASHED,
    EXITED,
    NOT_IMPLEMENTED,
    RAISED,
    TIMED_OUT,
    Diagnosis,
    RunResult,
)
from harness.engine.target import (
    Result,
    TargetEscape,
    fits_contract,
    invoke_on_copies,
    misfit_kind,
    rebuild,
    resolve_in,
    show_args,
)
from harness.engine.uniforms import RecordingSource
from harness.errors import MutantDoesNotApply
from harness.sandbox.codec import Handle

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
EXPLAINS_TEST = 0.8  # a mutant explains a failing test when it answers so on this share of its calls

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
        said = str(self.batch.violation or "")  # "fn(args) returned an int64 array ... where ..."
        call = f"{self.batch.fn}({show_args(self.args)}) "
        if said.startswith(call):  # the target's own words: what came back, not a placeholder
            return said[len(call):].split(";")[0]
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


def replay(module: ModuleType, plan: Plan, wanted: set[tuple[int, int]] | None,
           returns: dict[str, str],
           costs: dict[tuple[int, int], float] | None = None,
           ) -> dict[tuple[int, int], tuple[Any, Result, str]]:
    """Answers of ``module`` on the plan's calls: (key, result, violation) per (batch id, index).

    ``wanted``: only these calls are needed (a sequential batch still replays its prefix).
    ``costs``: filled with each call's duration."""
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
        func = resolve_in(module, batch.fn)
        kind = returns.get(batch.fn, "any")
        for i in needed:
            args = tuple(objects.get(_object_key(a), a) if not isinstance(a, _PLAIN_ARGS) else a
                         for a in calls[i])
            start = time.perf_counter()
            reply = invoke_on_copies(func, args, kwargs)
            if costs is not None:
                costs[(id(batch), i)] = time.perf_counter() - start
            draws = tuple(reply.draws)
            if reply.status == "returned":
                result = Result(calls[i], value=reply.value, draws=draws)
                violation = ("mutated" if reply.mutated else "aliased" if reply.aliased
                             else "" if fits_contract(kind, reply.value)
                             else misfit_kind(kind, reply.value))
                student = batch.results[i].value if i < batch.answered else None
                if student is not None and not isinstance(student, _PLAIN_ARGS):
                    objects[_object_key(student)] = reply.value
            else:
                assert reply.error is not None, "a reply that did not return has its error"
                result, violation = Result(calls[i], error=rebuild(reply.error), draws=draws), ""
            answers[(id(batch), i)] = (outcome_key(result, violation), result, violation)
    return answers


@functools.cache
def _mutant_code(module_id: str) -> tuple[tuple[Any, Any], ...]:
    """Every mutant of the module that applies, compiled once per process."""
    from harness.engine.mutants import load_mutants, mutant_code
    from harness.engine.own_code import reference_source

    module = load_course().module(module_id)
    source = reference_source(module)
    compiled = []
    for mutant in load_mutants(module_id):
        try:
            compiled.append((mutant, mutant_code(mutant, source)))
        except MutantDoesNotApply:
            continue
    return tuple(compiled)


def fresh_module(mutant: Any, code: Any) -> ModuleType:
    """A new module object running the mutant's code: no state left by an earlier replay (a
    mutant may keep state in its class or module, as a student's code may)."""
    from harness.engine.own_code import ensure_reference_path

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
    from harness.engine.own_code import load_reference
    from harness.engine.runner import alarm, quiet

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
        return tuple(entries + _explain(module, run, [], ref_answers, []))
    differing, agreeing = _affordable(differing, costs), _affordable(agreeing, costs, cheap=True)
    differing = [differing[i] for i in _evenly(len(differing), MAX_DIFFERING)]
    agreeing = [agreeing[i] for i in _evenly(len(agreeing), MAX_AGREEING)] if agreeing else []
    screen = ([differing[i] for i in _evenly(len(differing), SCREEN)],
              [agreeing[i] for i in _evenly(len(agreeing), SCREEN)] if agreeing else [])
    passed = {t.name for t in run.tests if t.ok}
    tried = [(m, code, _match(m, fresh_module(m, code), plans, *screen, ref_answers, returns,
                                 alarm, quiet))
                for m, code in _mutant_code(module.id)
                if not passed.intersection(m.designated)]  # it fails a test the code passes
    screened = [(m, code, match) for m, code, match in tried if match is not None and match.explains]
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
    """The explanations: mutants that answer as the student did on (almost) all of a failing
    test's differing calls explain that test (greedily, most calls first); a failing test that no
    mutant explains is told by its failing check's own pitfall. Listed with the explanation most
    failing tests point to first, then the one covering most calls."""
    number = {id(p): j for j, (_, p) in enumerate(differing)}
    for m in matches:
        m.explains = {number[k] for k in m.explains if k in number}
    by_test: dict[str, set[int]] = {}
    for j, (_, p) in enumerate(differing):
        by_test.setdefault(p.test, set()).add(j)
    total = len(differing)

    def expected(j: int) -> Result:
        probe = differing[j][1]
        return ref_answers[(id(probe.batch), probe.index)][1]

    ranked: list[tuple[int, int, Diagnosis]] = []
    left = set(by_test)
    while left:
        options = []
        for m in matches:
            tests = frozenset(t for t in left
                              if len(m.explains & by_test[t]) >= EXPLAINS_TEST * len(by_test[t]))
            if tests:
                calls = frozenset(j for t in tests for j in m.explains & by_test[t])
                options.append((len(calls), -m.conflicts, tests, calls, m))
        if not options:
            break
        best = max(options, key=lambda o: (o[0], o[1]))
        group = sorted((o[4] for o in options if o[2] == best[2] and o[3] == best[3]
                        and o[1] == best[1]), key=lambda m: (m.mutant.extended, m.mutant.id))
        pitfalls: list[int] = []
        for m in group:
            if m.mutant.pitfall not in pitfalls:
                pitfalls.append(m.mutant.pitfall)
        shown = sorted(best[3])[:MAX_EXAMPLES]
        examples = [_example(differing[j][1], expected(j)) for j in shown]
        ranked.append((len(best[2]), best[0], _pitfall_entry(module, pitfalls,
                                                             [m.mutant.id for m in group],
                                                             best[0], total, examples)))
        left -= best[2]
    failing = {t.name: t for t in run.failures()}
    told: dict[int | None, list[str]] = {}
    for name in [t.name for t in run.failures() if t.name in left or t.name not in by_test]:
        if failing[name].category == "wrong":
            told.setdefault(failing[name].pitfall, []).append(name)
    for pitfall, names in told.items():
        told_calls = sorted(j for n in names for j in by_test.get(n, ()))
        example = _example(differing[told_calls[0]][1], expected(told_calls[0])) if told_calls else ""
        ranked.append((len(names), len(told_calls),
                       _check_entry(module, pitfall, [failing[n] for n in names], len(told_calls),
                                    total, example)))
    # The mistake that most failing tests point to first, then the one with most calls (a law test
    # makes thousands of calls, a unit test a few); stable: among equals, mutants first, then test order.
    ranked.sort(key=lambda r: (-r[0], -r[1]))
    return [d for *_, d in ranked[:MAX_ENTRIES + 1]]


def _check_entry(module: Module, pitfall: int | None, tests: list, calls: int, total: int,
                 example: str) -> Diagnosis:
    """Failing tests no mutant explains, told by what their failing check checks."""
    first = tests[0]
    message = first.message.strip().splitlines()[0] if first.message.strip() else ""
    names = ", ".join(t.name for t in tests[:3]) + (", ..." if len(tests) > 3 else "")
    where = f" on {calls} call{'s' if calls != 1 else ''}" if calls else ""
    differs = (f"your code differs from the contract{where} in {names}, and no known mistake "
               "answers as it does call for call")
    if pitfall is None:
        text = f"{differs}; " + (f"first: {example}" if example else f"the check says: {message}")
        return Diagnosis("unexplained", text, differing=total,
                         evidence=(example or message,))
    label = module.pitfall_label(pitfall)
    text = (f"{first.name} fails where {label} ({_short(module.pitfall_text(pitfall))}) shows: "
            f"{message}" + (f" ({differs})" if calls else ""))
    return Diagnosis("failed", text, pitfall=pitfall, label=label, differing=total,
                     evidence=tuple(x for x in (example, message) if x))


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
            first = first.removeprefix("not implemented yet: ")
            where = ""
            if t.frames:
                f = t.frames[-1]
                where = f" at {f.file}:{f.line} in {f.function}" + (f": {f.source}" if f.source else "")
            out.append(Diagnosis(t.category, f"{CATEGORY_WORDS[t.category]} in {t.name}: "
                                 f"{first}{where}", evidence=(first,)))
    return out
