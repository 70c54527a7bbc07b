"""The contract's answers, computed by the harness, and what a wrong answer of the code means.

Every check of the M07.6 catalog names the pitfall of what it checks. Where one check can fail for
several reasons, the functions here tell them apart from the code's own answers (never from its
source): the two uniforms swapped; the accept boundary moved by one point (``u <= r``), by a few
ULPs (another formula with the same law, such as ``u * q_x < p_x``), by float32 or bfloat16
rounding, or by a wrong formula; the residual of another shape, unnormalized, narrowed to
float32, or normalized by another sum; a resampler that ignores ``u_resample``.

``refine`` finds the code's own partition of the uniforms by bisection where its answers at the
two ends of one of the contract's intervals differ, so that the code's output law can still be
enumerated exactly: that is what separates "the law is no longer p" (pitfall 5) from "the law
is p, but the decisions are not the contract's" (pitfall 18).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from harness.catalogs.checks import fmt
from harness.engine.exact import SCALE, ULP, Interval, categorical_intervals, count_below, u_of

# A boundary moved by more than float64 rounding but at most this much is narrow arithmetic
# (float32 moves it by about 2**-24 relative, bfloat16 by about 2**-8); a wrong formula moves it
# by at least 1/64 on every input of the catalog.
NARROW_SHIFT = Fraction(1, 128)


# -- the contract's arithmetic -------------------------------------------------------------------

def ltr_sum(values) -> float:
    """The contract's sum: float64, left to right over ascending ids."""
    total = 0.0
    for v in values:
        total += float(v)
    return total


def neumaier_sum(values) -> float:
    """Neumaier's compensated sum, as CPython's builtin ``sum()`` of floats adds from 3.12 on."""
    total, compensation = 0.0, 0.0
    for v in values:
        v = float(v)
        t = total + v
        if abs(total) >= abs(v):
            compensation += (total - t) + v
        else:
            compensation += (v - t) + total
        total = t
    return total + compensation


def expected_residual(p, q) -> list[float]:
    """``max(0, p_i - q_i) / Z`` with ``Z`` the left-to-right sum; ``p`` itself when ``Z == 0``."""
    numerators = [max(0.0, float(a) - float(b)) for a, b in zip(p, q, strict=True)]
    z = ltr_sum(numerators)
    if z == 0.0:
        return [float(a) for a in p]
    return [v / z for v in numerators]


@functools.lru_cache(maxsize=512)
def residual_pieces(p: tuple, q: tuple) -> tuple[tuple[int, Interval], ...]:
    """The contract's inverse CDF of the residual as intervals of ``u_resample``."""
    return tuple(categorical_intervals(expected_residual(p, q)))


def inverse_cdf(pieces, u: float) -> int:
    """The id whose interval holds ``u`` (a multiple of 2**-53 in [0, 1))."""
    k = int(u * SCALE)
    for i, piece in pieces:
        if piece.lo <= k <= piece.hi:
            return i
    raise AssertionError("unreachable: the pieces cover [0, 1)")


def contract_step(p, q, x: int, u_accept: float, u_resample: float) -> tuple[int, bool]:
    if u_accept < p[x] / q[x]:
        return (x, True)
    return (inverse_cdf(residual_pieces(tuple(p), tuple(q)), u_resample), False)


def show_interval(iv: Interval) -> str:
    """``[a, b)``: the uniforms of ``iv``, as half-open real interval."""
    hi = "1" if iv.hi + 1 >= SCALE else repr(u_of(iv.hi + 1))
    return f"[{u_of(iv.lo)!r}, {hi})"


def step_value(value: Any) -> tuple[int, bool]:
    return (int(value[0]), bool(value[1]))


def answer_of(result, normalize: Callable[[Any], Any] = lambda v: v) -> tuple:
    """A call's answer as a comparable key: ("ok", value) or ("raised", class name, message)."""
    if result.error is not None:
        return ("raised", type(result.error).__name__, str(result.error))
    return ("ok", normalize(result.value))


def show_answer(answer: tuple) -> str:
    if answer[0] == "raised":
        return f"raised {answer[1]}: {answer[2]}"
    return f"returned {fmt(answer[1])}"


# -- narrow floating-point types -------------------------------------------------------------------

def bfloat16(v: float) -> float:
    """``v`` rounded to bfloat16 (float32 with an 8-bit significand, round to nearest even)."""
    bits = int(np.array([v], dtype=np.float32).view(np.uint32)[0])
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


def narrow_type(got: Sequence[float], want: Sequence[float]) -> str | None:
    """"float32" or "bfloat16" when every value of ``got`` is one of that type and lies within that
    type's rounding of ``want`` (relative 2**-7 for bfloat16, 2**-20 for float32: a few of its
    roundings), while ``got`` is not ``want``."""
    got, want = [float(v) for v in got], [float(v) for v in want]
    if not all(math.isfinite(v) for v in got) or got == want or len(got) != len(want):
        return None

    def near(rel: float) -> bool:
        return all(abs(g - w) <= rel * max(abs(w), 2.0**-126) for g, w in zip(got, want, strict=True))

    if all(bfloat16(v) == v for v in got) and near(2.0**-7) and not near(2.0**-20):
        return "bfloat16"
    if all(float(np.float32(v)) == v for v in got) and near(2.0**-20):
        return "float32"
    if near(2.0**-20) and not near(2.0**-40):  # off by float32 rounding, not float64's
        return "float32"
    return None


def narrow_accept(p_x: float, q_x: float, u: float) -> str | None:
    """The narrow type whose arithmetic answers ``rejection_accept`` differently from float64."""
    want = u < p_x / q_x
    f32 = np.float32
    if q_x > 0 and bool(f32(u) < f32(p_x) / f32(q_x)) != want:
        return "float32"
    if q_x > 0 and (u < float(f32(p_x) / f32(q_x))) != want:  # the ratio alone in float32
        return "float32"
    b = bfloat16
    if q_x > 0 and b(q_x) > 0 and (b(u) < b(b(p_x) / b(q_x))) != want:
        return "bfloat16"
    if q_x > 0 and b(q_x) > 0 and (u < b(b(p_x) / b(q_x))) != want:
        return "bfloat16"
    return None


NARROW_WORDS = ("arithmetic in {kind}: the contract is float64, and {kind} rounding moves the "
                "boundary")


def accept_problem(p_x: float, q_x: float, u: float, got: Any) -> tuple[int | None, str]:
    """Why ``rejection_accept(p_x, q_x, u)`` answered ``got`` where the contract answers the other."""
    want = u < p_x / q_x
    kind = narrow_accept(p_x, q_x, u)
    if kind is not None:
        ratio = float(np.float32(p_x) / np.float32(q_x)) if kind == "float32" else \
            bfloat16(bfloat16(p_x) / bfloat16(q_x))
        return 16, (f"in {kind} the ratio p_x / q_x = {p_x / q_x!r} becomes {ratio!r}: "
                    + NARROW_WORDS.format(kind=kind))
    if not want and (u == p_x / q_x or (p_x == 0 and u == 0)):
        return 1, f"u = {u!r} is not below r = {p_x / q_x!r}; accept only when u < r, strictly"
    if want:
        return 2, f"u = {u!r} < r = p_x / q_x = {p_x / q_x!r} keeps the draft"
    return 2, f"u = {u!r} >= r = p_x / q_x = {p_x / q_x!r} rejects the draft"


# -- the residual ------------------------------------------------------------------------------------

def alternative_normalizers(p, q, nums) -> dict[str, tuple[list[float], int]]:
    """Other normalizers a residual may have been divided by, each with its pitfall."""
    alpha = ltr_sum([min(a, b) for a, b in zip(p, q, strict=True)])
    arr = np.array(nums, dtype=np.float64)
    # each normalizer summed once (in a comprehension's condition it was summed again per entry:
    # quadratic, 20 s for a vocabulary of 4096 ids)
    neumaier, exact = neumaier_sum(nums), math.fsum(nums)
    descending, ascending = ltr_sum(reversed(nums)), ltr_sum(sorted(nums))
    return {
        "np.sum (pairwise)": ((arr / np.sum(arr)).tolist(), 8),
        "a Neumaier compensated sum: builtin sum() of floats from Python 3.12 on "
        "(on 3.11 builtin sum() adds left to right and is the contract's)":
            ([x / neumaier for x in nums], 19),
        "math.fsum (exact, correctly rounded)": ([x / exact for x in nums], 19),
        "a sum over descending ids": ([x / descending for x in nums], 8),
        "a sum of the sorted numerators": ([x / ascending for x in nums], 8),
        "1 - alpha": ([x / (1.0 - alpha) for x in nums], 8),
    }


def residual_slack(n: int) -> float:
    """How far a float64 residual entry ``max(0, p_i - q_i) / Z`` may sit from its exact value
    ``N_i / sum(N)`` (``N_i = max(0, p_i - q_i)`` exact) by rounding alone, in any summation order.

    The difference ``fl(p_i - q_i)`` is within relative ``u = 2**-53`` of ``N_i``; a float sum of
    ``n`` non-negative terms, in any order, is within relative ``(n - 1) u / (1 - (n - 1) u)`` of
    their exact sum, and those terms within ``u`` of ``N_j``; the division rounds once more. So an
    entry ``e_i <= 1`` is within ``(1 + 1.01 (n - 1) + 1 + 1) u <= (n + 3) u`` of ``N_i / sum(N)``,
    for ``n < 2**40``. Two such entries (the code's and the contract's) differ by at most twice that.
    """
    return (n + 3) * 2.0**-53


def residual_problem(got: Any, p, q) -> tuple[int | None, str] | None:
    """None when ``got`` is the contract's residual of (p, q), else (pitfall, what is wrong)."""
    want = expected_residual(p, q)
    try:
        arr = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return None, f"returned {fmt(got)}, not an array of numbers"
    if arr.shape != (len(want),):
        return None, f"returned shape {arr.shape}, expected ({len(want)},)"
    values = arr.tolist()
    if values == want:
        return None
    kind = narrow_type(values, want)
    if kind is not None:
        return 16, (f"every entry of {fmt(arr)} is a {kind} number: the residual was computed in "
                    f"{kind}, the contract's is float64 ({fmt(np.array(want))})")
    if not all(math.isfinite(v) for v in values):
        return None, f"returned {fmt(arr)}, which is not finite"
    for i, (v, a, b) in enumerate(zip(values, p, q, strict=True)):
        if v < 0:
            return 3, (f"entry {i} is {v!r} < 0: the residual is max(0, p - q), normalized")
        if a <= b and v != 0.0 and any(x > y for x, y in zip(p, q, strict=True)):
            return 3, (f"entry {i} is {v!r} although p = {a!r} <= q = {b!r} there; the residual only "
                       "holds what the draft under-proposed, max(0, p - q)")
    total = ltr_sum(values)
    if abs(total - 1.0) > 1e-9:
        return 4, (f"{fmt(arr)} sums to {total!r}, not 1: divide max(0, p - q) by Z = its sum")
    if any(abs(v - w) > 2 * residual_slack(len(values)) for v, w in zip(values, want, strict=True)):
        return 3, (f"{fmt(arr)} is not max(0, p - q) / Z = {fmt(np.array(want))}")
    nums = [max(0.0, float(a) - float(b)) for a, b in zip(p, q, strict=True)]
    for name, (alt, pitfall) in alternative_normalizers(p, q, nums).items():
        if alt == values:
            return pitfall, f"it matches max(0, p - q) divided by {name}"
    bits = [i for i, (v, w) in enumerate(zip(values, want, strict=True)) if v != w]
    return None, (f"it differs from max(0, p - q) / Z, Z summed left to right over ascending ids, in "
                  f"the last bits at ids {bits}")


def sum_problem(got: float, p, q, exact_words: str) -> tuple[int | None, str]:
    """Why an ``acceptance_probability`` differs from the left-to-right sum of min(p, q)."""
    mins = [min(a, b) for a, b in zip(p, q, strict=True)]
    named = [
        (float(np.minimum(np.array(p), np.array(q)).sum()), 8, "numpy's pairwise sum"),
        (neumaier_sum(mins), 19, ("a Neumaier compensated sum (builtin sum() of floats from "
                                  "Python 3.12 on; on 3.11 builtin sum() adds left to right)")),
        (math.fsum(mins), 19, "math.fsum"),
        (1.0 - 0.5 * ltr_sum(abs(a - b) for a, b in zip(p, q, strict=True)), 9, "1 - TV(p, q)"),
    ]
    for value, pitfall, name in named:
        if got == value:
            return pitfall, f"it equals {name}; {exact_words}"
    kind = narrow_type([got], [ltr_sum(mins)])
    if kind is not None:
        return 16, f"it is a {kind} number: the sum was computed in {kind}; {exact_words}"
    return None, exact_words


# -- bisection: the code's own partition -----------------------------------------------------------

class TooManyPieces(Exception):
    """The code's answers change too often to enumerate."""


def refine(target, fn: str, args_at: Callable[[float], tuple], intervals: Sequence[Interval],
           normalize: Callable[[Any], Any] = lambda v: v,
           max_pieces: int = 256) -> list[tuple[Interval, tuple]]:
    """The code's answers on ``intervals``, each split where its answers change, by bisection.

    Returns ``[(Interval, answer)]`` sorted by position, the answer (``answer_of``) the same at
    both ends of each interval. A piece wholly inside an interval, with the same answer at both
    ends, stays unseen: every bug of the catalog changes an answer at some end.
    """
    answers: dict[int, tuple] = {}

    def ask(ks) -> None:
        ks = [k for k in dict.fromkeys(ks) if k not in answers]
        if ks:
            for k, r in zip(ks, target.map(fn, [args_at(u_of(k)) for k in ks]), strict=True):
                answers[k] = answer_of(r, normalize)

    ask(k for iv in intervals for k in (iv.lo, iv.hi))
    todo, done = list(intervals), []
    while todo:
        split = [iv for iv in todo if answers[iv.lo] != answers[iv.hi]]
        done += [iv for iv in todo if answers[iv.lo] == answers[iv.hi]]
        if len(done) + 2 * len(split) > max_pieces:
            raise TooManyPieces(f"more than {max_pieces} pieces")
        bounds = {iv: (iv.lo, iv.hi) for iv in split}
        while any(h - lo > 1 for lo, h in bounds.values()):
            mids = {iv: (lo + h) // 2 for iv, (lo, h) in bounds.items() if h - lo > 1}
            ask(mids.values())
            for iv, m in mids.items():
                lo, h = bounds[iv]
                bounds[iv] = (m, h) if answers[m] == answers[iv.lo] else (lo, m)
        todo = []
        for iv, (lo, h) in bounds.items():
            done.append(Interval(iv.lo, lo))
            todo.append(Interval(h, iv.hi))
    done.sort(key=lambda iv: iv.lo)
    return [(iv, answers[iv.lo]) for iv in done]


def boundary_shift(pieces: list[tuple[Interval, tuple]], accepts: Callable[[tuple], bool],
                   want_count: int) -> Fraction:
    """How much more (or less) of [0, 1) the code accepts than the contract's ``want_count``."""
    got = sum((iv.hi - iv.lo + 1 for iv, a in pieces if accepts(a)), 0)
    return Fraction(got - want_count, SCALE)


def shift_problem(shift: Fraction, r: float, p_x: float, what: str) -> tuple[int, str]:
    """The pitfall of an accept boundary the code moved by ``shift`` (a measure of uniforms)."""
    exact_r = Fraction(r) * SCALE
    if shift == ULP and (exact_r.denominator == 1 or p_x == 0):
        return 1, (f"{what} accepts one uniform more than the contract: u = r = {r!r} itself "
                   "(u <= r); accept only when u < r, strictly")
    if abs(shift) <= 4 * ULP:
        return 18, (f"{what} accepts {abs(shift) * SCALE} uniform(s) {'more' if shift > 0 else 'fewer'} "
                    f"than the contract, which compares u < r with r = {r!r} rounded once: another "
                    "formula (u * q_x < p_x, say) keeps the law but not the decisions, and the "
                    "contract fixes the decisions for bit parity with L10.8")
    if abs(shift) <= NARROW_SHIFT:
        return 16, (f"{what} moved its accept boundary by {float(shift):.3g}: more than float64 "
                    "rounding, far less than a wrong formula; the ratio or the uniform is rounded "
                    "to a narrower type (float32, bfloat16), the contract's arithmetic is float64")
    return 2, (f"{what} accepts {float(shift):+.3g} of [0, 1) more than the contract's "
               f"min(1, r) = {min(1.0, r)!r}: the ratio is not p_x / q_x")


def law_of_pieces(pieces) -> dict[int, Fraction]:
    law: dict[int, Fraction] = {}
    for i, iv in pieces:
        law[i] = law.get(i, Fraction(0)) + iv.measure
    return law


def count_accepting(r: float) -> int:
    return count_below(r)
