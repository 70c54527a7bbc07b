"""The M07.1 catalog: ``sample_categorical``, the inverse CDF, in 11 tests with their metadata.

Every test takes a ``target`` and calls the module only through it, so the same test judges the
reference, a mutant, or a student's isolated worker. Exact before sampled: the output law is
enumerated with Fractions over the intervals of ``u`` on which the contract's answer is constant
(``harness.engine.exact``); only the chi-square samples, from the harness's own PCG32, with a named ALPHA
(stopping at the first look after an error or an impossible draw, or at a qualifying interim look
whose chi-square has p < INTERIM_ALPHA: ``harness.catalogs.checks``; on the public probs no look of
its 4000 draws qualifies, their cells expect too few draws for a p-value of 1e-8 to mean one).
Expectations come from the harness's own inverse CDF (``contract_id``), never from the code under
test; wrong answers are matched against the plausible wrong inverse CDFs (``VARIANTS``) so that a
failure names the pitfall it looks like.

Every randomised family of cases (random distributions, the chi-square's draws, the searched
discriminating inputs) draws from ``case_seed(PUBLIC_SEED, "m07_1.<family>")``: the constant
below under the public cases (``ol check``'s default, the lab), hidden cases derived from the run
seed otherwise (``harness.engine.seeding``). Hand-picked inputs are the same in every run.

Longer than 400 lines: one catalog, one file, so the table order and the file order agree.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np

from harness.catalogs.checks import (
    INTERIM_ALPHA,
    CatalogFailure,
    called,
    chi_square_threshold,
    drawn_words,
    expect,
    fmt,
    interim_looks,
    law_table,
    look_chi_square,
    looks,
    merge_small,
    spent_words,
)
from harness.engine.catalog import case
from harness.engine.exact import (
    SCALE,
    ULP,
    categorical_intervals,
    count_below,
    running_sums,
    u_of,
)
from harness.engine.seeding import case_seed
from harness.engine.target import ContractViolation
from harness.uniforms import HarnessPCG32

FN = "sample_categorical"
HAND = [0.25, 0.0, 0.5, 0.25]  # CDF [1/4, 1/4, 3/4, 1]: id 1 has probability 0
TENTHS = [0.1] * 10  # left-to-right sum 1 - 2**-53: the rounding tail is the single u = 1 - 2**-53
LARGEST_U = u_of(2**53 - 1)  # the largest uniform below 1
SUM_TOLERANCE = Fraction(1, 10**9)  # the contract's "within 1e-9 of 1", as a real number

CHI_SQUARE_SEED = 20_260_701
CHI_SQUARE_DRAWS = 4_000
CHI_SQUARE_ALPHA = 1e-6  # the whole test's, interim looks included (checks.final_alpha)
ENUMERATION_SEED = 71
PROPERTY_SEED = 17
# Imported inside the chi-square test, so that `ol check -k` on other tests stays fast; a whole
# isolated check imports them while its worker starts (harness.check.engine.isolated_target).
LAZY_IMPORTS = ("scipy.special",)
__all__ = ["merge_small"]  # the chi-square's pooling, used by harness.audit and the tests


# -- the contract's inverse CDF, and the wrong ones a failure may match -------------------------

def below(x: float) -> float:
    """The largest float below ``x``."""
    return math.nextafter(x, -math.inf)


def contract_id(probs: Sequence[float], u: float, sums: Sequence[float] | None = None,
                strict: bool = True) -> int:
    """The first id with ``probs[i] > 0`` and ``u < c_i``, else the last positive id (the tail).

    ``sums`` and ``strict`` let a variant replace the running sums or the comparison.
    """
    sums = running_sums(probs) if sums is None else sums
    last = -1
    for i, (p, c) in enumerate(zip(probs, sums, strict=True)):
        if p > 0:
            last = i
            if u < c if strict else u <= c:
                return i
    return last


def _prefix(probs, summed: Callable[[list[float]], float]) -> list[float]:
    return [summed([float(v) for v in probs[: i + 1]]) for i in range(len(probs))]


def _pairwise(values: list[float]) -> float:
    return float(np.sum(np.array(values, dtype=np.float64)))


def neumaier(values) -> float:
    """Neumaier's compensated sum, written out: what builtin ``sum()`` of floats computes from
    Python 3.12 on (on 3.11 builtin ``sum()`` adds left to right, as the contract does)."""
    total, compensation = 0.0, 0.0
    for v in values:
        v = float(v)
        t = total + v
        if abs(total) >= abs(v):
            compensation += (total - t) + v
        else:
            compensation += (v - t) + total
        total = t
    return total + compensation if compensation and math.isfinite(compensation) else total


# The sums that are not the contract's left-to-right loop, by what a failure calls them.
COMPENSATED = "a compensated sum"
OTHER_TOTALS: dict[str, Callable[[list[float]], float]] = {
    "numpy's pairwise np.sum": _pairwise,
    "math.fsum (a correctly rounded, compensated sum)": math.fsum,
    "a Neumaier-compensated sum (builtin sum() of floats from Python 3.12; on 3.11 builtin sum() "
    "adds left to right)": neumaier,
    "the entries sorted smallest first, then added one by one (more accurate, not ascending ids)":
        lambda values: running_sums(sorted(values))[-1],
}


def _normalized(probs) -> list[float]:
    total = running_sums(probs)[-1]
    return [c / total for c in running_sums(probs)]


def _descending(probs, u: float) -> int:
    return len(probs) - 1 - contract_id(list(probs)[::-1], u)


def _renormalized(probs, u: float) -> int:
    total = running_sums(probs)[-1]
    return contract_id([float(v) / total for v in probs], u)


def _last_id_tail(probs, u: float) -> int:
    i = contract_id(probs, u)
    return len(probs) - 1 if u >= running_sums(probs)[-1] else i


# name -> (the answer that wrong inverse CDF gives, its pitfall)
VARIANTS: dict[str, tuple[Callable[[Sequence[float], float], int], int]] = {
    "u <= c_i": (lambda p, u: contract_id(p, u, strict=True), 1),
    "the last id, positive or not, for the rounding tail": (_last_id_tail, 2),
    "numpy's pairwise np.sum for each c_i": (lambda p, u: contract_id(p, u, _prefix(p, _pairwise)), 3),
    "math.fsum for each c_i (a compensated, correctly rounded sum)":
        (lambda p, u: contract_id(p, u, _prefix(p, math.fsum)), 3),
    "a Neumaier-compensated sum for each c_i (what builtin sum() of floats does from Python 3.12 "
    "on; on 3.11 builtin sum() adds left to right)":
        (lambda p, u: contract_id(p, u, _prefix(p, neumaier)), 3),
    "a CDF divided by its total": (lambda p, u: contract_id(p, u, _normalized(p)), 3),
    "probs renormalized (each p_i / the sum) before the running sums": (_renormalized, 7),
    "u < c_(i-1), before adding p_i": (lambda p, u: contract_id(p, u, [0.0, *running_sums(p)[:-1]]), 8),
    "u < p_i, no running sum": (lambda p, u: contract_id(p, u, [float(v) for v in p]), 8),
    "the inverse CDF over descending ids": (_descending, 9),
}


def diagnose(calls: Sequence[tuple], answers: Sequence[object], default: int | None
             ) -> tuple[str, int | None]:
    """A hint naming the wrong inverse CDFs that give every one of ``answers``, and the pitfall of
    the first; ``default`` when none does (None where the check cannot tell)."""
    names = [(name, pitfall) for name, (variant, pitfall) in VARIANTS.items()
             if all(variant(p, u) == a for (p, u), a in zip(calls, answers, strict=True))]
    if not names:
        return "", default
    return f" (every answer matches {' and also '.join(n for n, _ in names)})", names[0][1]


def explain(probs: Sequence[float], u: float) -> str:
    """Why the contract answers ``contract_id(probs, u)``, in the words of its rules."""
    sums = running_sums(probs)
    i = contract_id(probs, u)
    n = len(probs)
    if u >= sums[-1]:
        return (f"u = {u!r} >= c_{n - 1} = {sums[-1]!r}, the left-to-right sum: the rounding tail, "
                f"which belongs to the last id with positive probability, {i}")
    on = [j for j in range(i) if sums[j] == u]
    if on:
        return (f"u = {u!r} lies on the boundary c_{on[-1]} = {sums[on[-1]]!r}, and u < c_i is strict: "
                f"it goes to the next id with positive probability, {i}")
    low = f"c_{i - 1} = {sums[i - 1]!r}" if i else "0"
    zeros = [j for j in range(i) if not probs[j] > 0]
    skip = f"; ids {zeros} have probability 0 and own nothing" if zeros else ""
    return f"{low} <= u < c_{i} = {sums[i]!r} (left-to-right running sums){skip}"


def result_text(r) -> str:
    return fmt(r.error) if r.error is not None else f"returned {fmt(r.value)}"


def read_only(values) -> np.ndarray:
    """``values`` as a new float64 array the callee cannot write into (as a caller's may be)."""
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def floats_of(probs) -> list[float]:
    return [float(v) for v in np.asarray(probs, dtype=np.float64).reshape(-1).tolist()]


def plain_floats(probs, u) -> bool:
    """Whether the call is a list of Python floats and a Python float (no type to blame)."""
    return (type(probs) is list and all(type(v) is float for v in probs)) and type(u) is float


def error_cause(probs, u, value_elsewhere: bool) -> tuple[str, int | None]:
    """Why a valid call raised, as far as the inputs tell: the tail (4), a sum the contract does not
    use (3), a tolerance (6), a type (10), or nothing the check can name (None)."""
    p = floats_of(probs)
    top = ltr_sum(p)
    if u >= top and value_elsewhere:
        return (f"; only u in the rounding tail [c_(n-1), 1) = [{top!r}, 1) raised, and it belongs "
                "to the last id with positive probability"), 4
    other = [f"{name} gives {total(p)!r}" for name, total in OTHER_TOTALS.items()
             if not within(total(p))]
    if within(top) and other:
        return (f"; probs sums to {top!r} left to right, within 1e-9 of 1, but {', '.join(other)}: "
                "the contract checks the left-to-right sum"), 3
    if top != 1.0:
        return (f"; probs sums to {top!r} left to right, within 1e-9 of 1, so it is a distribution "
                "although not exactly 1"), 6
    if not plain_floats(probs, u):
        return "; these types are valid wherever a list of floats and a float are", 10
    return "", None


def map_calls(target, calls: Sequence[tuple]) -> list:
    """``target.map(FN, calls)``; a contract violation (a non-int answer, probs edited in place)
    becomes a failure naming the call and its pitfall."""
    try:
        return target.map(FN, calls)
    except ContractViolation as exc:
        probs, u = next((c for c in calls if _violates(target, c)), calls[0])
        if "in place" in str(exc):
            raise CatalogFailure(f"{exc}: sample_categorical must work on a copy of probs", 7) from None
        if u >= ltr_sum(floats_of(probs)):
            raise CatalogFailure(
                f"{exc}; expected {contract_id(floats_of(probs), float(u))}: "
                f"{explain(floats_of(probs), float(u))} "
                "(a loop that falls off the end returns None)", 4) from None
        raise CatalogFailure(f"{exc}; expected {contract_id(floats_of(probs), float(u))}: "
                             f"{explain(floats_of(probs), float(u))}", None) from None


def _violates(target, call: tuple) -> bool:
    try:
        target.map(FN, [call])
    except ContractViolation:
        return True
    return False


def check_answers(target, calls: list[tuple], why: str, default: int | None) -> None:
    """Each ``(probs, u)`` in ``calls`` must return the contract's id; one failure lists them all."""
    results = map_calls(target, calls)
    wrong = [r for r in results if r.error is not None or r.value != contract_id(*r.args)]
    if not wrong:
        return
    answered = {repr(list(r.args[0])) for r in results if r.error is None}
    raised = [r for r in wrong if r.error is not None]
    if raised:
        r = raised[0]
        hint, pitfall = error_cause(r.args[0], r.args[1], repr(list(r.args[0])) in answered)
    else:
        answers = [r.value for r in results]
        hint, pitfall = diagnose(calls, answers, default)
    lines = "\n".join(f"    {called(FN, r.args)} {result_text(r)}, expected {contract_id(*r.args)}: "
                      f"{explain(*r.args)}" for r in wrong[:6])
    more = f"\n    ... and {len(wrong) - 6} more" if len(wrong) > 6 else ""
    what = "raised" if raised and len(raised) == len(wrong) else "gave another answer than"
    raise CatalogFailure(f"{len(wrong)} of {len(calls)} calls {what} the contract's inverse CDF"
                         f"{hint}; {why}:\n{lines}{more}", pitfall)


# -- inputs --------------------------------------------------------------------------------------

def ltr_sum(values) -> float:
    return running_sums(values)[-1]


def dyadic(gen: HarnessPCG32, n: int, units: int = 64) -> list[float]:
    """A random distribution on ``n`` ids in multiples of 1/64, about a quarter of the ids zero."""
    open_ids = [i for i in range(n) if gen.next_u32() % 4] or [gen.next_u32() % n]
    counts = [0] * n
    for _ in range(units):
        counts[open_ids[gen.next_u32() % len(open_ids)]] += 1
    return [c / units for c in counts]


def arbitrary(gen: HarnessPCG32, n: int) -> list[float]:
    """A random distribution on ``n`` ids (not dyadic), about a quarter of the ids zero."""
    w = [0.01 + gen.uniform() if gen.next_u32() % 4 else 0.0 for _ in range(n)]
    if not any(w):
        w[gen.next_u32() % n] = 1.0
    total = ltr_sum(w)
    return [v / total for v in w]


def property_inputs() -> tuple[tuple[float, ...], ...]:
    """Hand-picked shapes of zeros and tails, then random ones of the run's family seed."""
    return _property_inputs(case_seed(PROPERTY_SEED, "m07_1.property"))


@functools.lru_cache(maxsize=4)
def _property_inputs(seed: int) -> tuple[tuple[float, ...], ...]:
    gen = HarnessPCG32(seed, 71)
    cases = [HAND, [0.0, 0.0, 1.0], [0.0, 0.5, 0.0, 0.5, 0.0], TENTHS + [0.0, 0.0],
             [0.5, 0.5 - 1e-10, 0.0, 0.0], [-0.0, 1.0], [0.0, 0.3, 0.0, 0.7, 0.0]]
    for k in range(60):
        cases.append(dyadic(gen, 2 + k % 7) if k % 2 else arbitrary(gen, 2 + k % 9))
    return tuple(tuple(c) for c in cases)


def probe_points(probs: Sequence[float]) -> list[float]:
    """``u = 0``, every boundary and the uniform just below it, and the largest uniform."""
    points = {0.0, LARGEST_U}
    for c in running_sums(probs):
        points.update(x for x in (c, below(c)) if 0.0 <= x < 1.0)
    return sorted(points)


# -- the catalog ---------------------------------------------------------------------------------

@case("unit", "[1/4, 0, 1/2, 1/4] at nine u: the CDF [1/4, 1/4, 3/4, 1] by hand",
      "you and the test agree on the inverse CDF", pitfalls=(8, 9, 1, 2, 3, 4, 6, 7, 10),
      kills=("x01", "x03"))
def test_hand_example(target):
    us = [0.0, 0.125, below(0.25), 0.25, 0.5, below(0.75), 0.75, 0.875, LARGEST_U]
    assert [contract_id(HAND, u) for u in us] == [0, 0, 0, 2, 2, 2, 3, 3, 3]  # the hand's answers
    check_answers(target, [(HAND, u) for u in us],
                  "id i owns c_(i-1) <= u < c_i with c = [1/4, 1/4, 3/4, 1] summed over ascending "
                  "ids, and id 1 (probability 0) owns nothing", None)


@case("boundary", "u = c_i goes to the next positive id, the u just below c_i to i",
      "M07.6 and L8.1 draw the Rust port's id for every u", pitfalls=(1, 2, 3, 4, 6, 7, 8, 9, 10),
      kills=("s01",))
def test_boundary_goes_to_next_positive_id(target):
    gen = HarnessPCG32(case_seed(ENUMERATION_SEED + 1, "m07_1.boundary"), 71)
    inputs = [HAND, [0.5, 0.5], [0.125, 0.0, 0.0, 0.375, 0.5], [0.5, 0.0, 0.5], TENTHS]
    inputs += [dyadic(gen, 2 + k % 6) for k in range(12)]
    calls = []
    for probs in inputs:
        for i, c in enumerate(running_sums(probs)[:-1]):
            if probs[i] > 0 and c < 1.0:
                calls += [(probs, c), (probs, below(c))]
    check_answers(target, calls, "u < c_i is false when u == c_i, so u on a boundary belongs to the "
                  "next id with positive probability", 1)


@case("property", "no u ever returns an id with probability 0",
      "M07.6's residuals are full of zeros: tokens never to be emitted", pitfalls=(2, 1, 3, 4, 6, 7, 8, 9),
      kills=("s02",))
def test_zero_probability_ids_never_returned(target):
    calls = [(list(probs), u) for probs in property_inputs() for u in probe_points(probs)]
    results = map_calls(target, calls)
    answered = {repr(r.args[0]) for r in results if r.error is None}
    for r in results:
        probs, u = r.args
        want = f"expected {contract_id(probs, u)}: {explain(probs, u)}"
        if r.error is not None:
            hint, pitfall = error_cause(probs, u, repr(probs) in answered)
            raise CatalogFailure(f"{called(FN, r.args)} {fmt(r.error)}, {want}; every argument is "
                                 f"valid{hint}", pitfall)
        if type(r.value) is bool or not 0 <= r.value < len(probs):
            raise CatalogFailure(f"{called(FN, r.args)} returned {fmt(r.value)}, not an id in "
                                 f"[0, {len(probs)}); {want}", 4 if u >= ltr_sum(probs) else None)
        if probs[r.value] > 0:
            continue
        hint, pitfall = diagnose([r.args], [r.value], 2)
        raise CatalogFailure(
            f"{called(FN, r.args)} returned id {r.value!r}, which has probability {probs[r.value]!r}, "
            f"{want}; an id with probability 0 is never returned{hint}", pitfall)


def tail_inputs() -> list[list[float]]:
    """Distributions whose left-to-right sum is below 1: a rounding tail ``[c_(n-1), 1)`` exists."""
    gen = HarnessPCG32(case_seed(PROPERTY_SEED + 1, "m07_1.tail"), 71)
    cases = [TENTHS, TENTHS + [0.0, 0.0], [0.5, 0.5 - 5e-10], [0.5 - 5e-10, 0.5, 0.0],
             [1.0 - 5e-10], [0.25, 0.0, 0.75 - 2e-10, 0.0]]
    while len(cases) < 12:
        probs = arbitrary(gen, 3 + len(cases))
        if ltr_sum(probs) < 1.0:
            cases.append(probs)
    return cases


@case("boundary", "u >= c_(n-1), below 1 by rounding, returns the last positive id",
      "float sums fall short of 1: every u must still give a token", pitfalls=(4, 2, 3, 6, 7, 8, 9),
      kills=("s04", "x07"))
def test_rounding_tail_returns_last_positive_id(target):
    calls = []
    for probs in tail_inputs():
        top = ltr_sum(probs)
        assert top < 1.0, probs  # the input really leaves a tail
        # u = 0.0 first: an error there rejects the distribution, not the tail.
        calls += [(probs, u) for u in [0.0, *sorted({top, (top + 1.0) / 2, LARGEST_U})] if top <= u < 1.0
                  or u == 0.0]
    check_answers(target, calls, "u = 0 and the u at or above the left-to-right sum c_(n-1), in the "
                  "rounding tail, which belongs to the last id with positive probability", 4)


OTHER_SUMS = tuple(name for name, (_, pitfall) in VARIANTS.items()
                   if pitfall == 3)  # np.sum, math.fsum, Neumaier (builtin sum() on 3.12+), c_i / total


# More probs on 48 ids while some sum is not told apart (none needed over 300 run seeds).
SUMMATION_SEARCH = 40


def discriminating_calls() -> dict[str, list[tuple]]:
    """Per other way of summing: ``(probs, u)`` where its answer differs from the contract's, on
    ``TENTHS`` and random probs of the run's family seed (more of them while some other sum has
    none). The same for every target, so the search runs once per seed (a fresh copy each time)."""
    found = _discriminating_calls(case_seed(PROPERTY_SEED + 2, "m07_1.summation"))
    return {name: [(list(probs), u) for probs, u in calls] for name, calls in found}


@functools.lru_cache(maxsize=4)
def _discriminating_calls(seed: int) -> tuple[tuple[str, tuple[tuple[tuple[float, ...], float], ...]], ...]:
    gen = HarnessPCG32(seed, 71)
    inputs = [TENTHS] + [arbitrary(gen, 16 * k) for k in (1, 2, 3)]
    found: dict[str, list[tuple]] = {name: [] for name in OTHER_SUMS}
    missing = list(OTHER_SUMS)
    for _ in range(SUMMATION_SEARCH):
        for name in missing:
            variant = VARIANTS[name][0]
            for probs in inputs:
                points = sorted({x for c in running_sums(probs)[:-1] for x in (c, below(c))
                                 if 0.0 <= x < 1.0})
                found[name] += [(probs, u) for u in points if variant(probs, u) != contract_id(probs, u)]
        missing = [name for name in OTHER_SUMS if not found[name]]
        if not missing:
            return tuple((name, tuple((tuple(p), u) for p, u in calls)) for name, calls in found.items())
        inputs = [arbitrary(gen, 48)]
    raise AssertionError(f"harness: no discriminating u for {missing} in {SUMMATION_SEARCH} tries")


@case("unit", "c_i summed left to right, not by np.sum, fsum, builtin sum() (3.12+) or a "
      "normalized CDF",
      "bit parity with the Rust port (L10.8)", pitfalls=(3, 1, 2, 4, 6, 7, 8, 9, 10),
      kills=("s03", "x04", "x05"))
def test_running_sums_are_left_to_right(target):
    found = discriminating_calls()
    # The inputs must tell every other summation apart from the contract's, or the test is void.
    assert all(found[name] for name in OTHER_SUMS), {n: len(c) for n, c in found.items()}
    calls = sorted({(tuple(p), u) for name in OTHER_SUMS for p, u in found[name]},
                   key=lambda c: (len(c[0]), c))  # the short inputs first, for the message
    check_answers(target, [(list(p), u) for p, u in calls],
                  "the contract's c_i is the sum of probs[0..i] added one by one over ascending "
                  "ids (total += p_i); numpy's pairwise np.sum, the compensated sums (math.fsum, "
                  "and builtin sum() of floats, Neumaier-compensated from Python 3.12 on, left to "
                  "right on 3.11) and a CDF divided by its total each differ from it in the last "
                  "bit on some of these u", 3)


# -- the exact law -------------------------------------------------------------------------------

def expected_law(probs: Sequence[float]) -> dict[int, Fraction]:
    """The contract in exact arithmetic: id i owns ``[C_(i-1), C_i) ∩ [0, 1)``, the last positive
    id everything up to 1; ``C_i`` is the exact real sum of ``probs[0..i]``."""
    positive = [i for i, p in enumerate(probs) if p > 0]
    law, running, lower = {}, Fraction(0), Fraction(0)
    for i, p in enumerate(probs):
        running += Fraction(p)
        if p > 0:
            upper = Fraction(1) if i == positive[-1] else min(running, Fraction(1))
            law[i], lower = upper - lower, upper
    return law


def arithmetic_is_exact(probs: Sequence[float]) -> bool:
    """True when every contract boundary ``count_below(c_i) / 2**53`` is exactly ``min(C_i, 1)``."""
    exact = Fraction(0)
    for p, c in zip(probs, running_sums(probs), strict=True):
        exact += Fraction(p)
        if Fraction(count_below(c), SCALE) != min(exact, Fraction(1)):
            return False
    return True


def error_bound(n: int) -> Fraction:
    """How far the enumerated law of a correct ``sample_categorical`` may sit from ``expected_law``.

    A boundary is ``b_i = ceil(c_i 2**53) / 2**53`` (capped at 1), within one ULP = 2**-53 above
    ``c_i``. The running sum ``c_i`` of ``i + 1`` non-negative terms rounds ``i`` times, so
    ``|c_i - C_i| <= gamma_i C_i`` with ``gamma_i = i u / (1 - i u)``, u = 2**-53 (Higham, Accuracy
    and Stability, ch. 4). Validation gives ``c_(n-1) <= 1 + 1e-9``, so ``C_i < 1 + 2e-9``, and for
    ``n <= 10**6`` that makes ``|c_i - C_i| < (i + 1/2) ULP`` and ``|b_i - min(C_i, 1)| <
    (i + 3/2) ULP``. An id's mass has two ends (the first starts at 0, the last positive id ends
    at 1 in both): ``(i + 3/2) + (i + 1/2) = 2i + 2 <= 2n`` ULP for ``i <= n - 1``.
    """
    return 2 * n * ULP


def enumerated_law(target, probs: Sequence[float]) -> dict[int, Fraction]:
    """The law of ``target``'s answers over the contract's intervals of u (both ends called)."""
    pieces = categorical_intervals(probs)
    calls = [(list(probs), end) for _, piece in pieces for end in piece.ends]
    results = map_calls(target, calls)
    answered = {repr(r.args[0]) for r in results if r.error is None}
    law: dict[int, Fraction] = {}
    for j, (want, piece) in enumerate(pieces):
        lo, hi = results[2 * j], results[2 * j + 1]
        where = (f"every u in [{piece.ends[0]!r}, {piece.ends[1]!r}] (the uniforms k / 2**53 for "
                 f"k = {piece.lo} .. {piece.hi}), where the contract answers {want}")
        for r in (lo, hi):
            if r.error is not None:
                hint, pitfall = error_cause(r.args[0], r.args[1], repr(r.args[0]) in answered)
                raise CatalogFailure(f"{called(FN, r.args)} {fmt(r.error)}; expected {want}, as for "
                                     f"{where}: every argument is valid{hint}", pitfall)
            if type(r.value) is bool or not 0 <= r.value < len(probs):
                raise CatalogFailure(f"{called(FN, r.args)} returned {fmt(r.value)}, not an id in "
                                     f"[0, {len(probs)}); expected {want}, as for {where}",
                                     4 if r.args[1] >= ltr_sum(probs) else None)
        if lo.value != hi.value:
            hint, pitfall = diagnose(calls, [r.value for r in results], None)  # every end: less ambiguous
            raise CatalogFailure(
                f"{called(FN, lo.args)} returned {lo.value} but {called(FN, hi.args)} returned "
                f"{hi.value}{hint}: the answer must be one id for {where}", pitfall)
        law[int(lo.value)] = law.get(int(lo.value), Fraction(0)) + piece.measure
    return law


def law_difference(target, probs: Sequence[float]) -> str:
    """The first interval of u on which the target's answer is not the contract's, in words."""
    for want, piece in categorical_intervals(probs):
        r = target.map(FN, [(list(probs), piece.ends[0])])[0]
        if r.error is None and r.value != want:
            return (f"\n  it returns {r.value} for every u in [{piece.ends[0]!r}, {piece.ends[1]!r}] "
                    f"(the uniforms k / 2**53 for k = {piece.lo} .. {piece.hi}), where the contract "
                    f"answers {want}: {explain(list(probs), piece.ends[0])}")
    return ""


def enumeration_inputs() -> tuple[tuple[float, ...], ...]:
    """Dyadic inputs (their law must be exact), then arbitrary ones (within ``error_bound``)."""
    return _enumeration_inputs(case_seed(ENUMERATION_SEED, "m07_1.enumeration"))


@functools.lru_cache(maxsize=4)
def _enumeration_inputs(seed: int) -> tuple[tuple[float, ...], ...]:
    gen = HarnessPCG32(seed, 71)
    cases = [HAND, [1.0], [0.0, 1.0], [0.5, 0.5, 0.0], [0.125, 0.0, 0.0, 0.375, 0.5]]
    cases += [dyadic(gen, 1 + k % 8) for k in range(40)]
    cases += [TENTHS, TENTHS + [0.0, 0.0], [0.5, 0.5 - 5e-10], [1 / 3] * 3, [1e-12, 1 - 1e-12]]
    cases += [arbitrary(gen, 2 + k % 11) for k in range(25)]
    return tuple(tuple(c) for c in cases)


@case("statistical", "the output law over all 2**53 uniforms, enumerated exactly",
      "M07.6's output = p theorem needs the residual's exact law", pitfalls=(8, 1, 2, 3, 4, 6, 7, 9, 10),
      kills=("x01", "x02", "x20"))
def test_output_law_enumerated_exactly(target):
    for probs in enumeration_inputs():
        law = enumerated_law(target, probs)
        expected = expected_law(probs)
        exact = arithmetic_is_exact(probs)
        bound = Fraction(0) if exact else error_bound(len(probs))
        gap = max(abs(law.get(i, 0) - expected.get(i, 0)) for i in set(law) | set(expected))
        if gap > bound:
            allowed = "0, the arithmetic is exact" if exact else f"{float(bound):.3g} = 2n ULP"
            answers = [(list(probs), piece.ends[0]) for _, piece in categorical_intervals(probs)]
            hint, pitfall = diagnose(answers, [r.value for r in target.map(FN, answers)], 8)
            raise CatalogFailure(
                f"the enumerated output law of {FN}(probs, u) over every uniform u = k / 2**53 is "
                f"not probs (largest gap {float(gap):.3g}, allowed {allowed}){hint}\n  probs = "
                f"{list(probs)}{law_difference(target, probs)}\n  the mass of each id, the "
                f"target's against the contract's:\n{law_table(law, expected)}", pitfall)


# -- the chi-square ------------------------------------------------------------------------------

def chi_square_probs() -> tuple[float, ...]:
    """Arbitrary probs on 12 ids: one zero and one too rare for 5 expected draws (pooled)."""
    return _chi_square_probs(case_seed(CHI_SQUARE_SEED, "m07_1.chi-square-probs"))


@functools.lru_cache(maxsize=4)
def _chi_square_probs(seed: int) -> tuple[float, ...]:
    gen = HarnessPCG32(seed, 71)
    w = [0.05 + gen.uniform() for _ in range(12)]
    w[4], w[9] = 0.0, 1e-3
    total = ltr_sum(w)
    return tuple(v / total for v in w)


def chi_square_calls(seed: int, draws: int) -> tuple[tuple, ...]:
    """The seeded draws ``(probs, u)``: the same for every target, so cached (by the draws' seed
    and the seed of the run's ``chi_square_probs``); probs is a tuple."""
    return _chi_square_calls(seed, draws, case_seed(CHI_SQUARE_SEED, "m07_1.chi-square-probs"))


@functools.lru_cache(maxsize=4)
def _chi_square_calls(seed: int, draws: int, probs_seed: int) -> tuple[tuple, ...]:
    probs = _chi_square_probs(probs_seed)
    source = HarnessPCG32(seed, 54)
    return tuple((probs, source.uniform()) for _ in range(draws))


def chi_square_trial(target, seed: int, draws: int | None = None):
    """One seeded chi-square of ``sample_categorical`` against probs: (counts, expected, stat, pvalue)
    of the draws made. It stops at the first look after an error or an impossible draw (a
    CatalogFailure), or at a qualifying interim look (``interim_looks``) whose chi-square has a
    p-value below INTERIM_ALPHA: then the numbers are those of the draws so far (``sum(counts) <
    draws``). The caller compares the p-value with ``chi_square_threshold``."""
    draws = draws or CHI_SQUARE_DRAWS  # read at the call: tests may run the test at another size
    probs = chi_square_probs()
    interim = interim_looks(probs, draws)
    counts = [0] * len(probs)
    answers: list = []
    for made, chunk in looks(chi_square_calls(seed, draws)):
        results = map_calls(target, chunk)
        answers += results
        for r in results:
            if r.error is not None:
                hint, pitfall = error_cause(list(probs), r.args[1], False)
                if type(r.args[0]) is not list:  # the same numbers as a list: the tuple it refuses?
                    again = target.map(FN, [(list(r.args[0]), r.args[1])])[0]
                    if again.error is None:
                        hint, pitfall = ("; the same numbers as a list are answered, and a tuple of "
                                         "floats is valid wherever a list is"), 10
                raise CatalogFailure(f"{called(FN, r.args)} {fmt(r.error)}; expected "
                                     f"{contract_id(probs, r.args[1])}: every argument is valid{hint}",
                                     pitfall)
            if type(r.value) is bool or not 0 <= r.value < len(probs):
                raise CatalogFailure(f"{called(FN, r.args)} returned {fmt(r.value)}, not an id in "
                                     f"[0, {len(probs)}); expected {contract_id(probs, r.args[1])}",
                                     4 if r.args[1] >= ltr_sum(probs) else None)
            counts[int(r.value)] += 1
        # An id with probability 0 expects 0 draws: pooled, the chi-square could not see it drawn.
        impossible = {i: c for i, c in enumerate(counts) if c and not probs[i] > 0}
        if impossible:
            i = min(impossible)
            u = next(r.args[1] for r in answers if r.value == i)
            raise CatalogFailure(f"{drawn_words(made, draws)} of {FN}(probs, u) with u from PCG32 "
                                 f"(seed {seed}) returned id {i}, which has probability "
                                 f"{probs[i]!r}, {impossible[i]} times (first at u = {u!r}); expected "
                                 f"{contract_id(probs, u)}: an id with probability 0 is never "
                                 f"returned\n  probs = {list(probs)}", 2)
        if made in interim:
            expected, stat, pvalue = look_chi_square(counts, probs, made)
            if pvalue < INTERIM_ALPHA:  # Haybittle-Peto: certain already, the rest cannot save it
                return counts, expected, stat, pvalue
    expected, stat, pvalue = look_chi_square(counts, probs, draws)
    return counts, expected, stat, pvalue


@case("statistical", f"{CHI_SQUARE_DRAWS} seeded draws match probs (chi-square)",
      "the same law on an arbitrary distribution (L8.1)", pitfalls=(8, 2, 3, 4, 6, 10),
      kills=("x01", "x02"))
def test_chi_square(target):
    seed = case_seed(CHI_SQUARE_SEED, "m07_1.chi-square")
    counts, expected, stat, pvalue = chi_square_trial(target, seed)
    probs, made = chi_square_probs(), sum(counts)
    head = (f"after {drawn_words(made, CHI_SQUARE_DRAWS)} of {FN}(probs, u) with u from PCG32 (seed "
            f"{seed}) the chi-square's p-value is {pvalue:.3g}, below the interim threshold "
            f"{INTERIM_ALPHA:g}: the output is not probs (chi-square = {stat:.1f})"
            if made < CHI_SQUARE_DRAWS else
            f"{CHI_SQUARE_DRAWS} draws of {FN}(probs, u) with u from PCG32 (seed {seed}) "
            f"do not follow probs: chi-square = {stat:.1f}, p-value = {pvalue:.3g} < "
            f"{spent_words(CHI_SQUARE_ALPHA, probs, CHI_SQUARE_DRAWS)}")
    expect(pvalue >= chi_square_threshold(made, CHI_SQUARE_DRAWS, CHI_SQUARE_ALPHA, probs),
           f"{head}\n  probs = {list(probs)}\n"
           f"{law_table(dict(enumerate(counts)), {i: round(e, 1) for i, e in enumerate(expected)})}",
           8)


# -- errors, the tolerance, the argument types ---------------------------------------------------

def expect_value_error(target, calls: list[tuple], reasons: Sequence[str], pitfall: int | None,
                       not_numbers: Sequence[bool] | None = None) -> None:
    """Each call must raise ValueError; where ``not_numbers[i]`` (an argument that is not a number
    at all), TypeError is accepted too, as Python raises it for a wrong type."""
    not_numbers = not_numbers or [False] * len(calls)
    for r, why, nan in zip(map_calls(target, calls), reasons, not_numbers, strict=True):
        wanted = (TypeError, ValueError) if nan else ValueError
        expect(isinstance(r.error, wanted),
               f"{called(FN, r.args)} {result_text(r)}; expected "
               f"{'TypeError or ValueError' if nan else 'ValueError'}: {why}", pitfall)


def expect_taken_or_refused(target, calls: list[tuple], reasons: Sequence[str]) -> None:
    """Each call must answer the id of its arguments taken as float64 numbers, or raise TypeError
    or ValueError: categorical.pyi lets a bool entry of probs, or a Fraction, be either."""
    for r, why in zip(map_calls(target, calls), reasons, strict=True):
        want = contract_id(floats_of(r.args[0]), float(r.args[1]))
        taken = r.error is None and type(r.value) is not bool and r.value == want
        expect(taken or isinstance(r.error, (TypeError, ValueError)),
               f"{called(FN, r.args)} {result_text(r)}; expected {want} (the id of the same numbers "
               f"as float64) or TypeError or ValueError: {why} may be taken as the numbers they "
               "are or refused, nothing else", None)


SUM_OFF = {"the sum is 0.9": -1, "the sum is 1.1": 1, "the sum is 0": -1, "the sum is 2": 1}


@case("boundary", "empty, not 1-D, negative, NaN, inf, sum far from 1 raise ValueError; entries that "
      "are not numbers raise TypeError or ValueError (bools and Fractions: taken as numbers or refused)",
      "a silent answer on a broken distribution hides the bug", pitfalls=(5, 6),
      kills=("s05", "x08", "x09", "x10"))
def test_invalid_distributions_raise(target):
    bad = [([], "empty"), (np.array([[0.5, 0.5]]), "2-D"), ([[0.5], [0.5]], "2-D"),
           (np.array(1.0), "0-D, not 1-D"), ([1.5, -0.5], "a negative entry (the sum is 1)"),
           ([0.75, 0.5, -0.25], "a negative entry (the sum is 1)"), ([math.nan, 1.0], "NaN"),
           ([0.5, math.nan, 0.5], "NaN"), ([math.inf], "infinite"), ([1.0, -math.inf], "infinite"),
           ([0.5, 0.4], "the sum is 0.9"), ([0.5, 0.6], "the sum is 1.1"),
           ([0.0, 0.0], "the sum is 0"), ([1.0, 1.0], "the sum is 2")]
    not_numbers = [(["0.5", "0.5"], "strings, not numbers (float('0.5') would hide it)"),
                   ([None, 1.0], "None is not a number"), ([0.5 + 0j, 0.5], "a complex entry"),
                   (None, "None, not an array of numbers")]
    results = map_calls(target, [(p, 0.5) for p, _ in bad])
    # Sums off one side of 1 accepted, off the other rejected: the tolerance is one-sided.
    sides = {SUM_OFF[why]: isinstance(r.error, ValueError) for r, (_, why) in zip(results, bad, strict=True)
             if why in SUM_OFF}
    for r, (_probs, why) in zip(results, bad, strict=True):
        if isinstance(r.error, ValueError):
            continue
        message = (f"{called(FN, r.args)} {result_text(r)}; expected ValueError: probs is not a "
                   f"distribution ({why})")
        if why in SUM_OFF and sides[-SUM_OFF[why]]:
            raise CatalogFailure(f"{message}; a sum {'below' if SUM_OFF[why] < 0 else 'above'} 1 is "
                                 f"accepted while one {'above' if SUM_OFF[why] < 0 else 'below'} is "
                                 "rejected: the tolerance must be two-sided, |sum - 1| <= 1e-9", 6)
        raise CatalogFailure(message, 5)
    expect_value_error(target, [(p, 0.5) for p, _ in not_numbers],
                       [f"probs is not a distribution ({why})" for _, why in not_numbers], 5,
                       [True] * len(not_numbers))
    either = [([True, False], "bool entries"), (np.array([False, True]), "a bool array's entries"),
              ([True, 0.0], "a bool entry among floats (np.asarray makes it 1.0)"),
              ([Fraction(1, 4), Fraction(3, 4)], "Fraction entries")]
    expect_taken_or_refused(target, [(p, u) for p, _ in either for u in (0.0, 0.5)],
                            [why for _, why in either for _ in (0.0, 0.5)])


@case("boundary", "u NaN, infinite, < 0, >= 1 raises ValueError; u not a number (None, a str, a "
      "bool, a complex) raises TypeError or ValueError",
      "a u outside [0, 1) is a broken generator, never a token", pitfalls=(5,),
      kills=("s05", "x13", "x14", "x18"))
def test_invalid_u_raises(target):
    bad = [math.nan, math.inf, -math.inf, -0.5, -5e-324, 1.0, math.nextafter(1.0, 2.0), 1.5, 2.0,
           np.float64(1.0), np.float32(math.nan)]
    # False and np.False_ too: True is refused by the range check whether or not bools are.
    not_numbers = [True, False, np.False_, None, "0.5", 0.5 + 0j]
    expect_value_error(target, [([0.5, 0.5], u) for u in bad + not_numbers],
                       [f"u = {u!r} is not a finite real number in [0, 1)" for u in bad]
                       + [f"u = {u!r} is not a number ({type(u).__name__}); u is a float in [0, 1)"
                          for u in not_numbers], 5, [False] * len(bad) + [True] * len(not_numbers))
    expect_taken_or_refused(target, [([0.25, 0.75], Fraction(1, 2)), ([0.25, 0.75], Fraction(1, 5))],
                            ["u, a Fraction (a real number of another type),"] * 2)


def tolerance_edges() -> dict[str, float]:
    """The last sums accepted and the first rejected on each side of 1 (|sum - 1| <= 1e-9)."""
    above = math.floor(SUM_TOLERANCE * 2**52)  # floats just above 1 are 2**-52 apart
    under = math.floor(SUM_TOLERANCE * 2**53)  # just below 1, 2**-53 apart
    return {"ok_above": 1 + above * 2.0**-52, "bad_above": 1 + (above + 1) * 2.0**-52,
            "ok_under": 1 - under * 2.0**-53, "bad_under": 1 - (under + 1) * 2.0**-53}


def within(total: float) -> bool:
    return abs(Fraction(total) - 1) <= SUM_TOLERANCE


def tolerance_edge_cases() -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    """Per sum the contract does not use (``OTHER_TOTALS``): ``(ok, bad)``, 16 probs each whose
    left-to-right sum is the last float accepted (ok) or the first rejected (bad) above 1 while that
    other sum lands on the other side of 1e-9; random probs of the run's family seed."""
    return _tolerance_edge_cases(case_seed(PROPERTY_SEED + 3, "m07_1.tolerance-edges"))


def pairwise_edge_cases() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``tolerance_edge_cases`` of numpy's pairwise np.sum."""
    return tolerance_edge_cases()["numpy's pairwise np.sum"]


EDGE_SEARCH = 10_000  # candidate bases: at most 110 were needed over 300 run seeds


@functools.lru_cache(maxsize=4)
def _tolerance_edge_cases(seed: int) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    gen = HarnessPCG32(seed, 71)
    found: dict[tuple[str, float], tuple[float, ...]] = {}
    edges = tolerance_edges()
    goals = (edges["ok_above"], edges["bad_above"])
    for _ in range(EDGE_SEARCH):
        base = arbitrary(gen, 16)
        for goal in goals:
            probs = base[:-1] + [goal - ltr_sum(base[:-1])]
            for _ in range(8):  # nudge the last entry until the running sum hits the edge
                if ltr_sum(probs) == goal:
                    break
                probs[-1] = math.nextafter(probs[-1], math.inf if ltr_sum(probs) < goal else 0.0)
            if ltr_sum(probs) != goal:
                continue
            for name, total in OTHER_TOTALS.items():
                if within(total(probs)) != within(goal):
                    found.setdefault((name, goal), tuple(probs))
        if len(found) == 2 * len(OTHER_TOTALS):
            break
    else:
        raise AssertionError(f"harness: no edge cases for {set(OTHER_TOTALS)} in {EDGE_SEARCH} tries")
    return {name: (found[name, goals[0]], found[name, goals[1]]) for name in OTHER_TOTALS}


@case("boundary", "a sum within 1e-9 of 1 accepted, one float beyond rejected",
      "softmaxes upstream (L8.1) never sum to exactly 1", pitfalls=(6, 3, 1, 4, 7, 8, 9, 10),
      kills=("s06", "x06", "x11", "x12", "x17", "x21"))
def test_sum_tolerance_edge(target):
    edges = tolerance_edges()
    accepted = [[edges["ok_above"]], [0.5, edges["ok_above"] - 0.5], [edges["ok_under"]],
                [0.5, edges["ok_under"] - 0.5], TENTHS]
    calls = [(p, u) for p in accepted for u in (0.0, 0.5, LARGEST_U)]
    check_answers(target, calls, "each of these probs sums, left to right, to within 1e-9 of 1: a "
                  "distribution", 6)
    rejected = [[edges["bad_above"]], [0.5, edges["bad_above"] - 0.5], [edges["bad_under"]],
                [0.5, edges["bad_under"] - 0.5], [0.5, 0.5 + 1e-8], [1.0 - 2e-9]]
    expect_value_error(target, [(p, 0.5) for p in rejected],
                       [f"the left-to-right sum is {ltr_sum(p)!r}, more than 1e-9 away from 1"
                        for p in rejected], 6)
    # Per other sum (np.sum, math.fsum, builtin sum() on 3.12+): probs it puts on the wrong side.
    oks, bads = [], []
    for name, (ok, bad) in tolerance_edge_cases().items():
        total = OTHER_TOTALS[name]  # they must discriminate, or the check is void
        assert within(ltr_sum(ok)) and not within(total(list(ok))), (name, ok)
        assert not within(ltr_sum(bad)) and within(total(list(bad))), (name, bad)
        oks += [ok] if ok not in oks else []
        bads += [bad] if bad not in bads else []
    for r in map_calls(target, [(list(ok), 0.5) for ok in oks]):
        ok = r.args[0]
        expect(r.error is None and r.value == contract_id(ok, 0.5),
               f"{called(FN, r.args)} {result_text(r)}, expected {contract_id(ok, 0.5)}: the "
               f"left-to-right sum {ltr_sum(ok)!r} is within 1e-9 of 1 ({other_totals(ok)})", 3)
    expect_value_error(target, [(list(bad), 0.5) for bad in bads],
                       [(f"the left-to-right sum {ltr_sum(bad)!r} is more than 1e-9 away from 1 "
                         f"({other_totals(bad)})") for bad in bads], 3)


def other_totals(probs) -> str:
    """What each sum the contract does not use makes of ``probs``, and on which side of 1e-9."""
    return "; ".join(f"{name}: {total(list(probs))!r}, "
                     f"{'within' if within(total(list(probs))) else 'not within'} 1e-9"
                     for name, total in OTHER_TOTALS.items())


@case("property", "array-likes (read-only float64 arrays too) and numpy scalars accepted, "
      "probs= and u= by name, nothing modified", "callers (M07.6, L8.1) reuse their arrays afterwards",
      pitfalls=(7, 10, 1, 2, 3, 4, 6, 8, 9), kills=("x15", "x16", "x19", "x22", "x23"))
def test_inputs_accepted_and_not_modified(target):
    p3 = [0.5, 0.25, 0.25]
    forms = [(p3, "a list"), (tuple(p3), "a tuple"), (np.array(p3), "a float64 array"),
             (np.array(p3, dtype=np.float32), "a float32 array"),
             ([np.float64(0.5), np.float32(0.25), 0.25], "a list of numpy scalars"),
             ([0, 1, 0], "a list of ints"), (np.array([0, 0, 1]), "an int array"),
             (np.array(TENTHS), "a float64 array summing to 1 - 2**-53"),
             (np.array([0.3, 0.3, 0.4]), "a float64 array"),
             (read_only(p3), "a read-only float64 array"),
             (read_only(TENTHS), "a read-only float64 array summing to 1 - 2**-53")]
    us = [(0.6, "a float"), (0, "the int 0"), (np.int64(0), "a numpy int64 0"),
          (np.float64(0.6), "a numpy float64"), (np.float32(0.6), "a numpy float32"), (-0.0, "-0.0")]
    calls, what = [], []
    for probs, form in forms:
        for u, kind in us:
            calls.append((probs, u))
            what.append(f"probs {form}, u {kind}")
    before = [np.array(p, copy=True) for p, _ in calls]
    for r, label, saved in zip(map_calls(target, calls), what, before, strict=True):
        plain = (floats_of(r.args[0]), float(r.args[1]))
        want = contract_id(*plain)
        if r.error is not None:
            if isinstance(r.args[0], np.ndarray) and not r.args[0].flags.writeable:
                # A writable copy (an in-place edit of it is a violation, named by map_calls).
                again = map_calls(target, [(r.args[0].copy(), r.args[1])])[0]
                expect(again.error is not None,
                       f"{called(FN, r.args)} {fmt(r.error)}; expected {want}: {label}, and a "
                       f"writable copy of probs is answered ({again.value!r}): the code writes into "
                       "probs, the caller's array, even if it writes the values it holds; work on a "
                       "copy", 7)
            ok = target.map(FN, [plain])[0]  # the same values as a list of floats and a float
            pitfall = 10 if ok.error is None else error_cause(*plain, False)[1]
            raise CatalogFailure(f"{called(FN, r.args)} {fmt(r.error)}; expected {want}: {label} is "
                                 "valid (numpy scalars, ints, tuples, float32 and read-only arrays "
                                 "are accepted wherever a Python float or list is)", pitfall)
        if r.value != want:
            hint, pitfall = diagnose([plain], [r.value], None)
            raise CatalogFailure(f"{called(FN, r.args)} returned {fmt(r.value)}, expected {want}: "
                                 f"{explain(*plain)}{hint} ({label})", pitfall)
        expect(np.array_equal(np.asarray(r.args[0]), saved), f"{called(FN, r.args)} modified probs "
               "in place; no function modifies its arguments", 7)
    named = {"probs": tuple(p3), "u": 0.6}  # categorical.pyi's names, as callers write them
    r = target.map(FN, [()], **named)[0]
    want = contract_id(p3, 0.6)
    shown = f"{FN}(probs={named['probs']!r}, u=0.6)"
    expect(r.error is None, f"{shown} {fmt(r.error)}; expected {want}: the parameters are named "
           "probs and u (categorical.pyi), and callers pass them by name", 10)
    expect(r.value == want, f"{shown} returned {fmt(r.value)}, expected {want}: {explain(p3, 0.6)}",
           None)
