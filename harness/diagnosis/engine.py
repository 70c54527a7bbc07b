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

import ast
import copy
import dataclasses
import functools
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from harness.diagnosis.accepted import MAX_QUESTIONS, accepted, other_class
from harness.diagnosis.determinism import Ask, Unstable, find_unstable
from harness.diagnosis.record import Batch, Recorder
from harness.engine.course import Module, load_course
from harness.engine.outcome import (
    MESSAGE_CHARS,
    call_text,
    differing_entries,
    expected_words,
    outcome_key,
    outcome_words,
    reordered,
)
from harness.engine.results import (
    CRASHED,
    EXITED,
    NOT_IMPLEMENTED,
    RAISED,
    TIMEOUT,
    WRONG,
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
from harness.errors import MutantDoesNotApply
from harness.sandbox.codec import Handle
from harness.uniforms import RecordingSource

MAX_PER_BATCH = 300
MAX_DIFFERING = 120
MAX_AGREEING = 60
PER_TEST = 4  # differing calls of every failing test kept, at least, when they are sampled
SCREEN = 12  # every mutant first answers this many differing and agreeing calls ...
SHORTLIST = 6  # ... and the ones explaining most of them answer all the chosen calls
MAX_SEQUENTIAL_FOR_MUTANTS = 40  # of a batch whose calls depend on each other: its first calls
EXPENSIVE_DRAWS = 200  # a call for which the reference draws more uniforms (100 tries and more):
MAX_EXPENSIVE = 3  # ... few of them are replayed (counted in draws, not timed: the same on every run)
MUTANT_LIMIT_S = 10.0  # a safety net for a mutant that loops: the caps above keep a diagnosis near 0.3 s
MAX_EXAMPLES = 2
MAX_ENTRIES = 4  # entries shown; the rest are named in one last entry ("and 2 more: ...")
EXPLAINS_TEST = 0.8  # a mutant explains a failing test when it answers so on this share of its calls

_PLAIN_ARGS = (int, float, bool, str, bytes, type(None), tuple, list, np.ndarray, np.generic,
               RecordingSource)

CATEGORY_WORDS: dict[str, str] = {
    CRASHED: "your code crashed",
    EXITED: "your code tried to exit the interpreter",
    TIMEOUT: "your code did not finish in time (an endless loop?)",
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
    def value(self) -> Any:
        """What the code under test returned (also where that broke the contract's type)."""
        if self.index < self.batch.answered:
            result = self.batch.results[self.index]
            return None if result.error is not None else result.value
        return getattr(self.batch.violation, "value", None)

    @property
    def words(self) -> str:
        """What the code under test did, in words."""
        if self.index < self.batch.answered:
            return outcome_words(self.batch.results[self.index])
        said = str(self.batch.violation or "")  # "fn(args) returned an int64 array ... where ..."
        call = f"{self.batch.fn}({show_args(self.args)}) "
        if said.startswith(call):  # the target's own words: what came back, not a placeholder
            return said[len(call):].split(";")[0]
        return outcome_words(Result(self.args), self.violation)


@dataclass
class Plan:
    """The probes of one failing test, and per batch the calls to replay (in order)."""

    test: str
    steps: list[tuple[Batch, list[int], bool]]  # (batch, indices, sequential)
    probes: list[Probe]
    # By batch id: its step's position and whether it is sequential. A test of one call per
    # batch has thousands of steps (a bisection: 11000), and a scan per probe was quadratic.
    step_of: dict[int, int] = field(init=False, repr=False)
    sequential_of: dict[int, bool] = field(init=False, repr=False)
    sequential_steps: list[int] = field(init=False, repr=False)  # their positions, in order

    def __post_init__(self) -> None:
        self.step_of = {id(batch): k for k, (batch, _, _) in enumerate(self.steps)}
        self.sequential_of = {id(batch): seq for batch, _, seq in self.steps}
        self.sequential_steps = [k for k, (_, _, seq) in enumerate(self.steps) if seq]


# -- what was recorded ---------------------------------------------------------------------------

def _sequential(batch: Batch) -> bool:
    if batch.sourced:
        return True
    return any(not isinstance(a, _PLAIN_ARGS) for args in batch.calls for a in args)


def _evenly(n: int, k: int) -> list[int]:
    """``k`` of the indices ``0 .. n - 1``, evenly spaced, the first and the last among them."""
    if n <= k:
        return list(range(n))
    if k <= 1:
        return [0] if k == 1 else []
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
           returns: dict[str, str]) -> dict[tuple[int, int], tuple[Any, Result, str]]:
    """Answers of ``module`` on the plan's calls: (key, result, violation) per (batch id, index).

    ``wanted``: only these calls are needed (a sequential batch still replays its prefix)."""
    objects: dict[Any, Any] = {}
    answers: dict[tuple[int, int], tuple[Any, Result, str]] = {}
    visit: Iterable[int] = range(len(plan.steps))
    if wanted is not None:  # the steps holding a wanted call, and the sequential ones before the
        # last of those (nothing after it is needed): not a pass over every step per mutant
        holding = {k for b, i in wanted
                   if (k := plan.step_of.get(b)) is not None and i in plan.steps[k][1]}
        last = max(holding, default=-1)
        visit = sorted(holding.union(k for k in plan.sequential_steps if k <= last))
    for k in visit:
        batch, indices, sequential = plan.steps[k]
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
            reply = invoke_on_copies(func, args, kwargs)
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
    errs: set[int] = dataclasses.field(default_factory=set)  # of ``differing``: where it differs
    # from the contract (as the student's code does there, or otherwise)


@dataclass
class Finding:
    """One explanation while the diagnosis is built: what it accounts for, before it is worded."""

    kind: str  # "unstable" | "structure" | "pitfall" | "unexplained" | "failed"
    pitfalls: list[int]
    tests: list[str]  # the failing tests it accounts for, in the order they ran
    calls: set[int] = dataclasses.field(default_factory=set)  # numbers in ``differing``
    functions: set[str] = dataclasses.field(default_factory=set)  # of those calls
    mutants: list[str] = dataclasses.field(default_factory=list)
    examples: list[str] = dataclasses.field(default_factory=list)
    message: str = ""  # a failed check's own words (kind "failed")
    followers: list[str] = dataclasses.field(default_factory=list)  # tests that fail as a result
    errs: set[int] = dataclasses.field(default_factory=set)  # calls its mutants get wrong too

    @property
    def pitfall(self) -> int | None:
        return self.pitfalls[0] if self.pitfalls else None


def _short(text: str) -> str:
    """A pitfall's text up to its first colon outside brackets: its name."""
    depth = 0
    for at, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if char == ":" and depth <= 0:
            return text[:at].strip()
    return text.strip()


def _draws(result: Any) -> int:
    return sum(result.draws) if result is not None else 0


def _example(probe: Probe, expected: Result) -> str:
    """``CALL returned X, expected Y``, with how many uniforms each drew where that differs, and a
    returned array's differing entries by id."""
    got, want = probe.words, expected_words(expected)
    student = probe.batch.results[probe.index] if probe.index < probe.batch.answered else None
    if student is not None and student.error is None and expected.error is None:
        where = differing_entries(student.value, expected.value)
        if where:
            got = f"returned an array that {where}"
            want = ""
    if student is not None and _draws(student) != _draws(expected):
        got += f" after drawing {_plural(_draws(student), 'uniform')}"
        want += f" after drawing {_plural(_draws(expected), 'uniform')}"
    return f"{call_text(probe.batch.fn, probe.args)} {got}" + (f", expected {want.strip()}"
                                                                 if want.strip() else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _examples(numbers: list[int], differing: list[tuple[Plan, Probe]],
              expected: Any) -> list[str]:
    """Up to ``MAX_EXAMPLES`` examples among ``numbers``, the shortest calls first (a student
    replays them), ties in the order the calls were made."""
    texts = [(len(call_text(differing[j][1].batch.fn, differing[j][1].args)), j) for j in numbers]
    return [_example(differing[j][1], expected(j)) for _, j in sorted(texts)[:MAX_EXAMPLES]]


@functools.cache
def _callers(module_id: str) -> dict[str, frozenset[str]]:
    """Per function of the contract, the functions of the contract whose answer depends on its
    answer in the reference (those that call it, directly or through another): a wrong residual
    also makes ``speculative_step`` wrong, and that is not a second mistake."""
    from harness.engine.own_code import reference_source

    module = load_course().module(module_id)
    functions = set(module.functions)
    calls: dict[str, set[str]] = {}
    for node in ast.parse(reference_source(module)).body:
        if isinstance(node, ast.FunctionDef):
            calls[node.name] = {n.func.id for n in ast.walk(node)
                                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}

    def reaches(caller: str, callee: str, seen: frozenset[str] = frozenset()) -> bool:
        direct = calls.get(caller, set())
        return callee in direct or any(reaches(c, callee, seen | {caller}) for c in direct
                                       if c in calls and c not in seen)

    return {f: frozenset(g for g in functions if g != f and reaches(g, f)) for f in functions}


def _reach(module: Module, functions: set[str]) -> set[str]:
    callers = _callers(module.id)
    return set(functions).union(*(callers.get(f, frozenset()) for f in functions))


def diagnose(module: Module, run: RunResult, recorder: Recorder,
             ask: Ask | None = None) -> tuple[Diagnosis, ...]:
    """The diagnosis of a failing ``run`` from the calls ``recorder`` kept (best first). With
    ``ask`` (``determinism.asker`` of the target, still open), a few differing calls are asked
    again, to tell code that answers differently each time."""
    from harness.engine.own_code import load_reference
    from harness.engine.runner import alarm, quiet

    entries = _category_entries(run)
    failing = {t.name for t in run.failures() if t.category in (WRONG, RAISED)}
    plans = [plan_test(name, batches) for name, batches in recorder.kept.items()
             if name in failing and batches]
    returns = load_course().returns
    reference = load_reference(module)
    ref_answers: dict[tuple[int, int], tuple[Any, Result, str]] = {}
    with quiet():
        for plan in plans:
            ref_answers.update(replay(reference, plan, None, returns))
    differing = [(plan, p) for plan in plans for p in plan.probes
                 if (id(p.batch), p.index) in ref_answers
                 and ref_answers[(id(p.batch), p.index)][0] != p.key]
    agreeing = [(plan, p) for plan in plans for p in plan.probes
                if (id(p.batch), p.index) in ref_answers
                and ref_answers[(id(p.batch), p.index)][0] == p.key]
    alike = _accepted_classes(module, run, reference, differing, ref_answers)
    if alike:  # another exception class the catalog accepts there: the contract's answer too
        order = {id(p): k for k, (_, p) in enumerate(_probes(plans))}
        agreeing = sorted(agreeing + [(plan, p) for plan, p in differing if id(p) in alike],
                          key=lambda x: order[id(x[1])])
        differing = [(plan, p) for plan, p in differing if id(p) not in alike]
    unstable = find_unstable([p for _, p in differing], ask) if ask is not None else None
    differing = _affordable(differing, ref_answers)
    agreeing = _affordable(agreeing, ref_answers, cheap=True)
    differing = _sample(differing, MAX_DIFFERING)
    agreeing = [agreeing[i] for i in _evenly(len(agreeing), MAX_AGREEING)] if agreeing else []
    matches: list[Match] = []
    chosen = differing
    if unstable is not None:  # no mutant is matched against answers that change from run to run
        shaken = _reach(module, {unstable.batch.fn})
        shaken_tests = {t for t in {p.test for _, p in differing}
                        if {p.batch.fn for _, p in differing if p.test == t} <= shaken}
        chosen = [(plan, p) for plan, p in differing if p.test not in shaken_tests]
    if chosen:
        matches = _matches(module, run, plans, chosen, agreeing, ref_answers, returns, alarm, quiet)
    entries += _explain(module, run, differing, ref_answers, matches, unstable)
    return tuple(entries)


def _probes(plans: list[Plan]) -> list[tuple[Plan, Probe]]:
    return [(plan, p) for plan in plans for p in plan.probes]


def _accepted_classes(module: Module, run: RunResult, reference: ModuleType,
                      differing: list[tuple[Plan, Probe]], ref_answers: dict) -> set[int]:
    """The differing calls (by probe id) where the code raised ``TypeError`` and the reference
    ``ValueError`` (or the reverse) and the catalog accepts the code's class
    (``accepted.accepted``): per failing test, all such calls asked at once, then one by one."""
    asked: dict[str, list[tuple[Probe, str]]] = {}
    for _, p in differing:
        mine = p.batch.results[p.index] if p.index < p.batch.answered else None
        name = other_class(mine, ref_answers[(id(p.batch), p.index)][1])
        if name is not None:
            asked.setdefault(p.test, []).append((p, name))
    out: set[int] = set()
    questions = 0
    for test, probes in asked.items():
        groups = [probes] + ([[x] for x in probes] if len(probes) > 1 else [])
        for group in groups:
            if questions >= MAX_QUESTIONS:
                return out
            if any(id(p) in out for p, _ in group):
                continue
            questions += 1
            if accepted(module, reference, test, run.seed,
                        [(p.batch, p.index, name) for p, name in group]):
                out |= {id(p) for p, _ in group}
                if group is probes:
                    break
    return out


def _matches(module: Module, run: RunResult, plans: list[Plan], differing: list[tuple[Plan, Probe]],
             agreeing: list[tuple[Plan, Probe]], ref_answers: dict, returns: dict[str, str],
             alarm: Any, quiet: Any) -> list[Match]:
    """The mutants that answer as the code did on some of ``differing``: every mutant on a few
    calls first, the best of them on all the chosen calls."""
    screen = ([differing[i] for i in _evenly(len(differing), SCREEN)],
              [agreeing[i] for i in _evenly(len(agreeing), SCREEN)] if agreeing else [])
    passed = {t.name for t in run.tests if t.ok}
    tried = [(m, code, _match(m, fresh_module(m, code), plans, *screen, ref_answers, returns,
                              alarm, quiet))
             for m, code in _mutant_code(module.id)
             if not passed.intersection(m.designated)]  # it fails a test the code passes
    screened = [(m, code, match) for m, code, match in tried if match is not None and match.explains
                and not _wrong_at_home(m, match, screen[0])]  # judged on the calls it answered
    screened.sort(key=lambda x: (-len(x[2].explains), x[2].conflicts, x[0].id))
    return [match for m, code, _ in screened[:SHORTLIST]
            if (match := _match(m, fresh_module(m, code), plans, differing, agreeing,
                                ref_answers, returns, alarm, quiet)) is not None
            and match.explains and not _wrong_at_home(m, match, differing)]


def _wrong_at_home(mutant: Any, match: Match, differing: list[tuple[Plan, Probe]]) -> bool:
    """Whether the code differs from the contract in the mutant's own function yet the mutant
    answers none of those calls alike: its mistake lives there, so it is not the code's, however
    many calls of the functions that call it it happens to match (an unnormalised residual and a
    float32 one both make ``speculative_step`` raise; only their own answers tell them apart)."""
    home = [id(p) for _, p in differing if p.batch.fn == mutant.function]
    return bool(home) and not match.explains.intersection(home)


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
    errs = {id(p) for _, p in differing
            if (got := answers.get((id(p.batch), p.index))) is not None
            and got[0] != ref_answers[(id(p.batch), p.index)][0]}
    return Match(mutant, explains, conflicts, errs)


def _sample(probes: list[tuple[Plan, Probe]], most: int) -> list[tuple[Plan, Probe]]:
    """At most ``most`` of ``probes``, in their order: a few of every test's first (a test of
    one call is never sampled away behind a law test of thousands), the rest evenly spaced."""
    if len(probes) <= most:
        return probes
    per_test: dict[str, list[int]] = {}
    for i, (_, p) in enumerate(probes):
        per_test.setdefault(p.test, []).append(i)
    floor = max(1, min(PER_TEST, most // max(1, len(per_test))))
    kept = {ids[k] for ids in per_test.values() for k in _evenly(len(ids), floor)}
    others = [i for i in range(len(probes)) if i not in kept]
    room = max(0, most - len(kept))
    kept |= {others[k] for k in _evenly(len(others), room)} if room and others else set()
    return [probes[i] for i in sorted(kept)]


def _affordable(probes: list[tuple[Plan, Probe]], ref_answers: dict,
                cheap: bool = False) -> list[tuple[Plan, Probe]]:
    """The probes each mutant replays: a sequential batch's first calls only, and few expensive
    calls (none among the agreeing ones). A call's cost is the uniforms the reference drew for
    it, a count: the same on every run and every machine, as the diagnosis must be."""
    out, expensive = [], 0
    for plan, p in probes:
        sequential = plan.sequential_of[id(p.batch)]
        if sequential and p.index >= MAX_SEQUENTIAL_FOR_MUTANTS:
            continue
        if _draws(ref_answers[(id(p.batch), p.index)][1]) > EXPENSIVE_DRAWS:
            if cheap or expensive >= MAX_EXPENSIVE:
                continue
            expensive += 1
        out.append((plan, p))
    return out


def _explain(module: Module, run: RunResult, differing: list[tuple[Plan, Probe]],
             ref_answers: dict, matches: list[Match], unstable: Unstable | None) -> list[Diagnosis]:
    """The findings, worded, best first.

    In order: code that answers the same call differently (``unstable``) accounts for every
    failing test whose differing calls lie in that function or in one that calls it; mutants
    that answer as the code did on (almost) all of a failing test's differing calls explain that
    test (greedily, most calls first); a failing test left whose differing calls lie where an
    earlier finding's do (or in a function that calls one of them) fails as a result of it, and
    is named there, not blamed on a pitfall of its own; the rest are told by their failing check,
    one entry per pitfall, and where calls differ that no mutant explains, that is said first.
    """
    number = {id(p): j for j, (_, p) in enumerate(differing)}
    for m in matches:
        m.explains = {number[k] for k in m.explains if k in number}
        m.errs = {number[k] for k in m.errs if k in number}
    by_test: dict[str, set[int]] = {}
    for j, (_, p) in enumerate(differing):
        by_test.setdefault(p.test, set()).add(j)
    order = [t.name for t in run.failures()]
    failing = {t.name: t for t in run.failures()}

    def expected(j: int) -> Result:
        probe = differing[j][1]
        return ref_answers[(id(probe.batch), probe.index)][1]

    def functions(calls: Collection[int]) -> set[str]:
        return {differing[j][1].batch.fn for j in calls}

    findings: list[Finding] = []
    left = [t for t in order if t in by_test]
    if unstable is not None:
        found = Finding("unstable", _unstable_pitfalls(module), [], functions={unstable.batch.fn})
        reach = _reach(module, found.functions)
        for t in list(left):
            if functions(by_test[t]) <= reach:
                found.tests.append(t)
                found.calls |= by_test[t]
                left.remove(t)
        findings.append(found)
    reordered_tests = [t for t in left
                       if sum(reordered(differing[j][1].value, expected(j).value) for j in by_test[t]
                              if expected(j).error is None) >= EXPLAINS_TEST * len(by_test[t])]
    if reordered_tests:
        calls_of = set().union(*(by_test[t] for t in reordered_tests))
        first = min(calls_of, key=lambda j: (len(call_text(differing[j][1].batch.fn,
                                                           differing[j][1].args)), j))
        probe = differing[first][1]
        example = (f"{call_text(probe.batch.fn, probe.args)} "
                   f"{outcome_words(Result(probe.args, value=probe.value))}, expected "
                   f"{expected_words(expected(first))}")
        findings.append(Finding("structure", [], reordered_tests, calls_of, functions(calls_of),
                                examples=[example]))
        left = [t for t in left if t not in reordered_tests]
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
        chosen_calls = set(best[3])
        findings.append(Finding("pitfall", pitfalls, [t for t in left if t in best[2]], chosen_calls,
                                functions(chosen_calls), [m.mutant.id for m in group],
                                _examples(sorted(chosen_calls), differing, expected),
                                errs=set().union(*(m.errs for m in group))))
        left = [t for t in left if t not in best[2]]
    claimed = {t for f in findings for t in f.tests}
    rest = [t for t in order if t not in claimed and failing[t].category == WRONG]
    # Upstream first: a test of a function others call is told before the tests of its callers.
    rest.sort(key=lambda t: -len(_reach(module, functions(by_test.get(t, set())))))
    for name in rest:
        test, mine = failing[name], by_test.get(name, set())
        host = next((f for f in findings if mine and _follows(module, f, mine, functions(mine))),
                    None)
        if host is not None and host.kind == "pitfall" and test.pitfall is not None \
                and test.pitfall not in host.pitfalls \
                and not _fails_alike(module, host.mutants[0], name, test.pitfall, run.seed):
            host = None  # its mutant fails this test otherwise: a second mistake, told below
        if host is None and test.pitfall is not None:
            host = next((f for f in findings if test.pitfall in f.pitfalls), None)
        if host is not None:
            host.followers.append(name)
            continue
        kind = "unexplained" if mine else "failed"
        group_of = next((f for f in findings if f.kind == kind and f.pitfall == test.pitfall),
                        None)
        if group_of is not None:  # one entry per pitfall: its tests and calls together
            group_of.tests.append(name)
            group_of.calls |= mine
            group_of.functions |= functions(mine)
            continue
        message = test.message.strip().splitlines()[0] if test.message.strip() else ""
        findings.append(Finding(kind, [test.pitfall] if test.pitfall is not None else [], [name],
                                set(mine), functions(mine), [],
                                _examples(sorted(mine)[:1], differing, expected),
                                message=message))
    rank = {name: i for i, name in enumerate(order)}
    # Answers that change, or land in the wrong places, first (they spoil every comparison);
    # then the mistake most failing tests point to, then the one with most calls (a law test
    # makes thousands of calls, a unit test a few); among equals, in the order the tests ran.
    findings.sort(key=lambda f: (f.kind not in ("unstable", "structure"), -len(f.tests),
                                 -len(f.calls), min((rank[t] for t in f.tests), default=0)))
    total = len(differing)
    worded = [_worded(module, f, total, unstable, differing, ref_answers) for f in findings]
    if len(worded) > MAX_ENTRIES:
        worded = worded[:MAX_ENTRIES - 1] + [_more(module, findings[MAX_ENTRIES - 1:])]
    return worded


def _follows(module: Module, f: Finding, calls: set[int], where: set[str]) -> bool:
    """Whether a failing test whose differing ``calls`` lie in the functions ``where`` fails as a
    result of finding ``f``: answers that change from call to call, or the right values in the
    wrong places, spoil the function and every function that calls it; a known mistake spoils
    the calls its mutants also get wrong (``EXPLAINS_TEST`` of them); a mistake no mutant knows,
    the calls of the functions that call the one it lies in (a test of that function alone may
    show a second mistake in it, which its own check names)."""
    if f.kind in ("unstable", "structure"):
        return where <= _reach(module, f.functions)
    if f.kind == "pitfall":
        return len(f.errs & calls) >= EXPLAINS_TEST * len(calls)  # and see ``_fails_alike``
    if f.kind == "unexplained":
        return where <= _reach(module, f.functions) and not where <= f.functions
    return False


def _fails_alike(module: Module, mutant_id: str, test: str, pitfall: int, seed: int | None) -> bool:
    """Whether ``test`` fails on the mutant ``mutant_id`` with a check that names ``pitfall``, as
    it does on the code: then that failure is what the mutant's mistake looks like there (a
    float32 residual fails the "sums to 1" check of pitfall 4), not a second mistake."""
    from harness.engine.runner import run_named
    from harness.engine.target import InProcessTarget

    found = [(m, code) for m, code in _mutant_code(module.id) if m.id == mutant_id]
    if not found:
        return False
    mod = fresh_module(*found[0])
    target = InProcessTarget(f"mutant {mutant_id}", mod, module.functions, load_course().returns)
    result = run_named(module, test, target, seed, MUTANT_LIMIT_S)
    return result is not None and not result.ok and result.pitfall == pitfall


def _unstable_pitfalls(module: Module) -> list[int]:
    number = module.violation_pitfalls.get("unstable")
    return [number] if number is not None else []


def _names(tests: list[str], most: int = 3) -> str:
    if len(tests) <= most:
        return ", ".join(tests[:-1]) + (" and " if len(tests) > 1 else "") + tests[-1]
    return ", ".join(tests[:most]) + f" and {len(tests) - most} more"


def _clause(text: str) -> str:
    """A check's message cut to ``MESSAGE_CHARS`` at a word (the failure below has it whole)."""
    if len(text) <= MESSAGE_CHARS:
        return text
    return text[:MESSAGE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " [...]"


def _pitfall_words(module: Module, number: int) -> str:
    return f"{module.pitfall_label(number)} ({_short(module.pitfall_text(number))})"


def _worded(module: Module, f: Finding, total: int, unstable: Unstable | None,
            differing: list[tuple[Plan, Probe]], ref_answers: dict) -> Diagnosis:
    followers = (f"; {_names(f.followers)} fail{'s' if len(f.followers) == 1 else ''} as a result"
                 if f.followers else "")
    lead = f.pitfall
    label = module.pitfall_label(lead) if lead is not None else ""
    if f.kind == "unstable":
        assert unstable is not None
        first = unstable.batch.results[unstable.index] if unstable.index < unstable.batch.answered \
            else None
        said = unstable_words(unstable, first)
        named = f": {_pitfall_words(module, lead)}" if lead is not None else ""
        tests = f"; this accounts for {_names(f.tests)}" if f.tests else ""
        text = (f"your code answers the same call differently: {said}; a function of the "
                "contract answers from its arguments and uniforms alone, so this code draws from "
                f"a generator of its own (random, numpy.random) or keeps state between calls"
                f"{named}{tests}{followers}")
        return Diagnosis("unstable", text, pitfall=lead, label=label, differing=total,
                         evidence=(said,))
    if f.kind == "structure":
        text = (f"your code returns the right values in the wrong places: {f.examples[0]}: the "
                f"same values in another order (the contract's order is in its docstring)"
                f"{followers}")
        return Diagnosis("structure", text, differing=total, explained=len(f.calls),
                         evidence=tuple(f.examples))
    if f.kind == "pitfall":
        names = " or ".join(_pitfall_words(module, p) for p in f.pitfalls)
        explained = len(f.calls)
        where = (f"on all {total} calls" if explained == total and total > 1 else
                 "on the one call" if total == 1 else f"on {explained} of the {total} calls")
        text = (f"your code behaves like {names} {where} where it differs from the contract; "
                f"for example {f.examples[0]}{followers}")
        return Diagnosis("pitfall", text, pitfall=lead, label=label, also=tuple(f.pitfalls[1:]),
                         mutants=tuple(f.mutants), explained=explained, differing=total,
                         evidence=tuple(f.examples))
    guards = f"; the failing check guards {_pitfall_words(module, lead)}" if lead is not None else ""
    if f.kind == "unexplained":
        calls = len(f.calls)
        text = (f"matches no known mistake: your code differs from the contract on "
                f"{_plural(calls, 'call')} in {_names(f.tests)}, and no mistake in ol's library "
                f"answers as it does; first: {f.examples[0]}{guards}{followers}")
        return Diagnosis("unexplained", text, pitfall=lead, label=label, differing=total,
                         evidence=tuple(f.examples))
    verb = "fails" if len(f.tests) == 1 else "fail"
    what = f"the check for {_pitfall_words(module, lead)}" if lead is not None else "a check"
    text = f"{_names(f.tests)} {verb} {what}: {_clause(f.message)}{followers}"
    return Diagnosis("failed", text, pitfall=lead, label=label, differing=total,
                     evidence=(f.message,) if f.message else ())


def unstable_words(unstable: Unstable, first: Any) -> str:
    """``CALL returned X, and Y when asked again ...``, each answer with its own verb (``raised
    ValueError: ...``, ``returned (1, False)``): the verb is the outcome's, never assumed."""
    again = outcome_words(unstable.again, unstable.violation)
    said = outcome_words(first) if first is not None else "answered something else"
    if said.startswith("returned ") and again.startswith("returned "):
        again = again.removeprefix("returned ")  # "returned 1, and 2 when asked again"
    return (f"{call_text(unstable.batch.fn, unstable.batch.calls[unstable.index])} {said}, "
            f"and {again} when asked again with the same arguments and uniforms")


def _more(module: Module, findings: list[Finding]) -> Diagnosis:
    """The findings past ``MAX_ENTRIES - 1``, named in one entry (never dropped silently)."""
    named = []
    for f in findings:
        named.append(module.pitfall_label(f.pitfall) if f.pitfall is not None
                     else _names(f.tests, 1))
    text = (f"and {len(findings)} more: {'; '.join(named)} (the failures below say where)")
    return Diagnosis("more", text, also=tuple(p for f in findings for p in f.pitfalls))


def _category_entries(run: RunResult) -> list[Diagnosis]:
    """One plain entry per category of trouble (crash, exit, time-out, stub, raise), first."""
    out, seen = [], set()
    for t in run.failures():
        if t.category in CATEGORY_WORDS and t.category not in seen:
            seen.add(t.category)
            first = t.message.strip().splitlines()[0] if t.message.strip() else t.outcome.value
            first = _clause(first.removeprefix("not implemented yet: "))
            where = ""
            if t.frames:
                f = t.frames[-1]
                where = f" at {f.file}:{f.line} in {f.function}" + (f": {f.source}" if f.source else "")
            out.append(Diagnosis(t.category, f"{CATEGORY_WORDS[t.category]} in {t.name}: "
                                 f"{first}{where}", evidence=(first,)))
    return out
