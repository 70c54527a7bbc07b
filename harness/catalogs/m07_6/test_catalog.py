"""The M07.6 catalog: the 19 tests of the chapter's section 4, each with its metadata.

Every test takes a ``target`` and calls the module only through it, so the same test judges the
reference, a mutant, or a student's isolated worker. Exact before sampled: the statistical tests
enumerate the law of the code under test with Fractions (``harness.exact``) wherever the chapter
says "enumerated exactly"; only the chi-square and the geometric tries test sample, from the
harness's own PCG32 at fixed seeds, with a named ALPHA.

Longer than 400 lines: one catalog, one file, so the table order and the chapter's order agree.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from harness.catalog import case
from harness.catalogs.support import (
    CatalogFailure,
    called,
    expect,
    fmt,
    law_table,
    merge_small,
)
from harness.exact import ULP, categorical_intervals, split_at, u_of
from harness.sources import HarnessPCG32, PCGSource, ScriptedSource

# Section 3's worked example.
P_HAND = [0.5, 0.25, 0.25, 0.0]
Q_HAND = [0.25, 0.5, 0.0, 0.25]
LARGEST_U = u_of(2**53 - 1)  # the largest uniform below 1

CHI_SQUARE_SEED = 20_260_706
CHI_SQUARE_DRAWS = 20_000
CHI_SQUARE_ALPHA = 1e-6
GEOMETRIC_SEED = 7_606
GEOMETRIC_SAMPLES = 1_000
GEOMETRIC_SIGMAS = 4.0
EIGHTHS_SEED = 8
# Imported inside the chi-square test, so that `ol check -k` on other tests stays fast; a whole
# isolated check imports them while its worker starts (harness.check.isolated_target).
LAZY_IMPORTS = ("scipy.stats",)


# -- the contract's arithmetic, written out for expectations ---------------------------------

def ltr_sum(values) -> float:
    total = 0.0
    for v in values:
        total += float(v)
    return total


def expected_residual(p, q) -> list[float]:
    """``max(0, p_i - q_i) / Z`` with ``Z`` the left-to-right sum; ``p`` itself when ``Z == 0``."""
    numerators = [max(0.0, float(a) - float(b)) for a, b in zip(p, q)]
    z = ltr_sum(numerators)
    if z == 0.0:
        return [float(a) for a in p]
    return [v / z for v in numerators]


def error_bound(n: int) -> Fraction:
    """How far an enumerated law of ``speculative_step`` may sit from ``p`` by float rounding alone.

    Accepting ``x`` has measure ``ceil(fl(p_x/q_x) 2**53) / 2**53``: within ``2 ULP`` of
    ``min(1, p_x/q_x)`` (one rounding of the division, one of the ceiling), so each kept mass and the
    total rejected mass are within ``2 ULP``. The residual's CDF boundary ``c_i`` is a sum of ``i+1``
    rounded quotients, each within 1 ULP, so each residual interval is within ``2n + 2 ULP`` of its
    exact width. Per id: ``2 + 2 + (2n + 2) = 2n + 6`` ULP (ULP = 2**-53). Every mutant of pitfall 5
    misses by at least 1/64 on the eighths used here.
    """
    return (2 * n + 6) * ULP


def arithmetic_is_exact(p, q) -> bool:
    """True when every ratio, residual entry and residual CDF sum is exact in float64."""
    for a, b in zip(p, q):
        if b > 0 and a < b and Fraction(a / b) != Fraction(a) / Fraction(b):
            return False
    numerators = [Fraction(max(0.0, a - b)) for a, b in zip(p, q)]
    z = sum(numerators)
    residual = expected_residual(p, q)
    if z and any(Fraction(r) != n / z for r, n in zip(residual, numerators)):
        return False
    running, exact_running = 0.0, Fraction(0)
    for r in residual:
        running += r
        exact_running += Fraction(r)
        if Fraction(running) != exact_running:
            return False
    return True


def speculative_law(target, p, q) -> dict[int, Fraction]:
    """The exact output law of ``target.speculative_step`` with ``x ~ q`` and two uniforms.

    ``u_accept`` is cut at the contract's ratio ``p_x / q_x``, ``u_resample`` at the residual's CDF
    boundaries; the code is called at both corners of every cell and must agree with itself there.
    """
    cells, calls = law_cells(p, q)
    return law_from(cells, target.map("speculative_step", calls))


def law_cells(p, q) -> tuple[list[tuple], list[tuple]]:
    """The cells ``(x, u_accept interval, u_resample interval, measure)`` of ``speculative_law``
    and its calls, two per cell (the cell's lower and upper corners)."""
    cells, calls = [], []
    residual_cells = categorical_intervals(expected_residual(p, q))
    p_t, q_t = tuple(p), tuple(q)  # immutable array-likes: nothing to copy or re-check per call
    for x, q_x in enumerate(q):
        if q_x <= 0:
            continue
        for ui in split_at([p[x] / q_x]):
            for _, vi in residual_cells:
                cells.append((x, ui, vi, Fraction(q_x) * ui.measure * vi.measure))
                calls.append((p_t, q_t, x, ui.ends[0], vi.ends[0]))
                calls.append((p_t, q_t, x, ui.ends[1], vi.ends[1]))
    return cells, calls


def law_from(cells: list[tuple], results: list) -> dict[int, Fraction]:
    """The law from the answers at the corners of ``law_cells``' cells, in their order."""
    law: dict[int, Fraction] = {}
    for j, (x, ui, vi, weight) in enumerate(cells):
        lo, hi = results[2 * j], results[2 * j + 1]
        for r in (lo, hi):
            if r.error is not None:
                raise CatalogFailure(f"{called('speculative_step', r.args)} raised "
                                     f"{type(r.error).__name__}: {r.error}; every argument is valid")
        expect(lo.value[0] == hi.value[0],
               f"{called('speculative_step', lo.args)} returned {fmt(lo.value)} but "
               f"{called('speculative_step', hi.args)} returned {fmt(hi.value)}: both uniforms lie in "
               "one cell of the contract's partition, where the answer must be the same", 5)
        token = int(lo.value[0])
        law[token] = law.get(token, Fraction(0)) + weight
    return law


def check_law_is_p(target, p, q, label: str, law: dict[int, Fraction] | None = None) -> None:
    """``speculative_law`` (or ``law``, computed already) equals p within the rounding bound."""
    law = speculative_law(target, p, q) if law is None else law
    expected = {i: Fraction(v) for i, v in enumerate(p) if v}
    exact = arithmetic_is_exact(p, q)
    bound = Fraction(0) if exact else error_bound(len(p))
    worst = max(abs(law.get(i, 0) - expected.get(i, 0)) for i in set(law) | set(expected))
    if worst > bound:
        raise CatalogFailure(
            f"{label}: the enumerated output law of speculative_step is not p "
            f"(largest gap {float(worst):.3g}, allowed {'0, the arithmetic is exact' if exact else f'{float(bound):.3g}'})"
            f"\n  p = {list(p)}, q = {list(q)}\n{law_table(law, expected)}", 5)


def eighths(gen: HarnessPCG32, n: int) -> list[float]:
    """A random distribution on ``n`` ids whose entries are multiples of 1/8."""
    counts = [0] * n
    for _ in range(8):
        counts[gen.next_u32() % n] += 1
    return [c / 8 for c in counts]


def eighths_cases() -> list[tuple[list[float], list[float]]]:
    """Seeded random pairs in eighths, plus disjoint supports, p == q, and zeros on either side."""
    gen = HarnessPCG32(EIGHTHS_SEED, 76)
    cases = [
        (P_HAND, Q_HAND),
        ([0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.25, 0.75]),  # disjoint supports
        ([0.125, 0.375, 0.5], [0.125, 0.375, 0.5]),  # p == q
        ([1.0, 0.0, 0.0], [0.125, 0.625, 0.25]),  # a point mass
        ([0.0, 0.375, 0.625], [0.875, 0.125, 0.0]),
    ]
    while len(cases) < 150:
        n = 2 + gen.next_u32() % 5
        cases.append((eighths(gen, n), eighths(gen, n)))
    return cases


def harness_sampler(probs):
    """The harness's own inverse CDF (never the student's), to draw drafts ``x ~ q``."""
    pieces = [(piece.hi, i) for i, piece in categorical_intervals(probs)]

    def sample(u: float) -> int:
        k = int(u * 2**53)
        for hi, i in pieces:
            if k <= hi:
                return i
        raise AssertionError("unreachable: the pieces cover [0, 1)")

    return sample


# -- the catalog -------------------------------------------------------------------------------

@case("unit", "section 3's ratios, alpha = 1/2, residual [1/2, 0, 1/2, 0]",
      "you and the test agree on the definitions", pitfalls=(2, 3, 4, 9), kills=("x01", "x02"))
def test_hand_example(target):
    for x, u, accept in [(0, LARGEST_U, True), (1, 0.25, True), (1, 0.5, False), (3, 0.0, False)]:
        args = (P_HAND[x], Q_HAND[x], u)
        got = target.rejection_accept(*args)
        expect(got == accept, f"{called('rejection_accept', args)} returned {got!r}, expected "
               f"{accept!r}: the ratio of id {x} is {P_HAND[x] / Q_HAND[x]:g}", 2)
    alpha = target.acceptance_probability(P_HAND, Q_HAND)
    expect(alpha == 0.5, f"{called('acceptance_probability', (P_HAND, Q_HAND))} returned "
           f"{alpha!r}, expected 0.5 (kept mass 1/4 + 1/4)", 9)
    residual = target.residual_distribution(P_HAND, Q_HAND)
    expect(residual.tolist() == [0.5, 0.0, 0.5, 0.0],
           f"{called('residual_distribution', (P_HAND, Q_HAND))} returned {fmt(residual)}, "
           "expected [0.5, 0.0, 0.5, 0.0]: max(0, p - q) = [1/4, 0, 1/4, 0] over Z = 1/2", 3)
    for args, want in [((P_HAND, Q_HAND, 1, 0.75, 0.75), (2, False)),
                       ((P_HAND, Q_HAND, 1, 0.25, 0.75), (1, True))]:
        got = target.speculative_step(*args)
        expect(tuple(got) == want, f"{called('speculative_step', args)} returned {fmt(got)}, "
               f"expected {want}: section 3's concrete draws", 5)


@case("statistical", "section 3's output distribution, enumerated exactly",
      "the theorem on numbers you can check by hand", pitfalls=(5,), kills=("s06", "s07", "s13"))
def test_hand_example_output_is_p(target):
    check_law_is_p(target, P_HAND, Q_HAND, "section 3's example")


@case("boundary", "u = r rejects, p_x = 0 never accepts",
      "discrete uniforms make <= wrong", pitfalls=(1,), kills=("s01",))
def test_accept_is_strict(target):
    cases = [(0.5, 1.0, 0.5), (0.25, 1.0, 0.25), (0.125, 0.5, 0.25), (0.0, 0.25, 0.0),
             (0.0, 1.0, 0.0), (0.0, 0.5, 0.5)]
    for args in cases:
        got = target.rejection_accept(*args)
        expect(got is False or got == False,  # numpy bools compare equal, never identical
               f"{called('rejection_accept', args)} returned {got!r}, expected False: u = "
               f"{args[2]!r} is not below r = {args[0] / args[1]!r}; accept only when u < r", 1)
    below = (0.5, 1.0, math.nextafter(0.5, 0.0))
    got = target.rejection_accept(*below)
    expect(got == True, f"{called('rejection_accept', below)} returned {got!r}, expected True: "
           "the largest uniform below r accepts", 1)


@case("boundary", "r >= 1 accepts every u < 1", "under-proposed tokens are always kept",
      pitfalls=(2,), kills=("s02", "s12"))
def test_accept_always_when_target_dominates(target):
    # (1, 1): Python ints are real numbers, accepted like floats (the contract's argument rules).
    for p_x, q_x in [(0.5, 0.25), (0.25, 0.25), (0.75, 0.125), (1.0, 1e-3), (1, 1)]:
        for u in (0.0, 0.5, 0.75, 0.999, LARGEST_U):
            got = target.rejection_accept(p_x, q_x, u)
            expect(got == True,
                   f"{called('rejection_accept', (p_x, q_x, u))} returned {got!r}, expected True: "
                   f"r = p_x / q_x = {p_x / q_x:g} >= 1, so every u < 1 accepts", 2)


@case("boundary", "q_x = 0, u outside [0, 1), p_x < 0 raise",
      "a silent answer biases the output", pitfalls=(11,), kills=("s17", "x08", "x09"))
def test_accept_rejects_bad_arguments(target):
    bad = [(0.5, 0.0, 0.5), (0.0, 0.0, 0.0), (0.5, -0.25, 0.5), (-0.25, 0.5, 0.5),
           (0.5, 0.5, 1.0), (0.5, 0.5, -0.25), (0.5, 0.5, 1.5), (math.nan, 0.5, 0.5),
           (0.5, math.nan, 0.5), (0.5, 0.5, math.nan), (math.inf, 0.5, 0.5), (0.5, math.inf, 0.5),
           (0.5, 0.5, math.inf), (0.5, 0.5, -math.inf),
           (None, 0.5, 0.5), (0.5, None, 0.5), (0.5, 0.5, None)]  # not real numbers
    for r in target.map("rejection_accept", bad):
        expect(isinstance(r.error, ValueError),
               f"{called('rejection_accept', r.args)} "
               f"{'raised ' + type(r.error).__name__ if r.error else 'returned ' + fmt(r.value)}"
               ", expected ValueError (the contract's error rules)", 11)


@case("statistical", "enumerated acceptance = sum min(p, q)",
      "L8.6 reports it as its acceptance rate", pitfalls=(9,), kills=("s10", "x19", "x20"))
def test_acceptance_rate_matches_acceptance_probability(target):
    for p, q in eighths_cases()[:20] + [([0.3, 0.7], [0.6, 0.4]), ([0.1, 0.2, 0.7], [0.5, 0.25, 0.25])]:
        calls, weights = [], []
        for x, q_x in enumerate(q):
            if q_x > 0:
                for piece in split_at([p[x] / q_x]):
                    calls += [(p[x], q_x, piece.ends[0]), (p[x], q_x, piece.ends[1])]
                    weights.append(Fraction(q_x) * piece.measure)
        results = target.map("rejection_accept", calls)
        enumerated = Fraction(0)
        for j, w in enumerate(weights):
            lo, hi = results[2 * j], results[2 * j + 1]
            expect(lo.error is None and hi.error is None and lo.value == hi.value,
                   f"{called('rejection_accept', lo.args)} and {called('rejection_accept', hi.args)}"
                   f" disagree ({fmt(lo.error or lo.value)}, {fmt(hi.error or hi.value)}) inside "
                   "one cell of the contract's partition", 1)
            enumerated += w if lo.value else 0
        exact = sum((min(Fraction(a), Fraction(b)) for a, b in zip(p, q)), Fraction(0))
        got = target.acceptance_probability(p, q)
        expect(math.isfinite(got), f"{called('acceptance_probability', (p, q))} returned {got!r}; "
               "a probability is a finite number in [0, 1]", 9)
        slack = (len(p) + 2) * ULP  # the float sum's roundings and the ceiling of each ratio
        expect(abs(Fraction(got) - enumerated) <= slack and abs(enumerated - exact) <= slack,
               f"{called('acceptance_probability', (p, q))} returned {got!r}; accepting with "
               f"rejection_accept over x ~ q keeps exactly {fmt(enumerated)}, and sum min(p, q) = "
               f"{fmt(exact)} (1 - TV; TV has a factor 1/2)", 9)
    p, q = discriminating_alpha_pair()
    want = ltr_sum(min(a, b) for a, b in zip(p, q))
    got = target.acceptance_probability(p, q)
    expect(got == want, f"{called('acceptance_probability', (p, q))} returned {got!r}, expected "
           f"{want!r}: sum min(p_i, q_i) as a left-to-right float64 loop over ascending ids, bit for "
           "bit (numpy's pairwise sum or 1 - TV differ in the last bits here)", 8)


def discriminating_alpha_pair() -> tuple[list[float], list[float]]:
    """A seeded (p, q) on which the left-to-right sum of min(p, q) differs from other formulas."""
    gen = HarnessPCG32(11, 76)
    for _ in range(500):
        w = [gen.uniform() + 1e-3 for _ in range(12)]
        v = [gen.uniform() + 1e-3 for _ in range(12)]
        p, q = [a / ltr_sum(w) for a in w], [b / ltr_sum(v) for b in v]
        want = ltr_sum(min(a, b) for a, b in zip(p, q))
        others = (float(np.minimum(np.array(p), np.array(q)).sum()),
                  1.0 - 0.5 * ltr_sum(abs(a - b) for a, b in zip(p, q)),
                  math.fsum(min(a, b) for a, b in zip(p, q)))
        if all(o != want for o in others):
            return p, q
    raise AssertionError("no discriminating input found; widen the search")


@case("property", "non-negative, sums to 1, Z = 1 - alpha",
      "sample_categorical demands a distribution", pitfalls=(3, 4), kills=("s03", "s04", "s05", "x02"))
def test_residual_is_a_distribution(target):
    gen = HarnessPCG32(35, 76)
    cases = [(P_HAND, Q_HAND), ([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1])]
    for _ in range(20):
        n = 2 + gen.next_u32() % 7
        w, v = [gen.uniform() + 1e-3 for _ in range(n)], [gen.uniform() + 1e-3 for _ in range(n)]
        cases.append(([a / ltr_sum(w) for a in w], [b / ltr_sum(v) for b in v]))
    for p, q in cases:
        res = target.residual_distribution(p, q)
        where = called("residual_distribution", (p, q))
        expect(res.shape == (len(p),), f"{where} returned shape {res.shape}, expected ({len(p)},)", 3)
        expect(bool(np.all(res >= 0)), f"{where} returned {fmt(res)} with a negative entry: "
               "the residual is max(0, p - q), normalized", 3)
        total = ltr_sum(res)
        expect(abs(total - 1.0) <= 1e-12, f"{where} returned {fmt(res)}, which sums to {total!r}, "
               "not 1: divide max(0, p - q) by Z = its sum", 4)
        for i, (a, b) in enumerate(zip(p, q)):
            expect(a > b or res[i] == 0.0,
                   f"{where} returned {fmt(res)}: entry {i} is {res[i]!r} although p = {a!r} <= "
                   f"q = {b!r} there; the residual only holds what the draft under-proposed, "
                   "max(0, p - q)", 3)
        alpha = sum(min(Fraction(a), Fraction(b)) for a, b in zip(p, q))
        for i, (a, b) in enumerate(zip(p, q)):
            want = max(Fraction(a) - Fraction(b), Fraction(0)) / (1 - alpha)
            expect(abs(Fraction(float(res[i])) - want) <= 1e-12,
                   f"{where} returned {fmt(res)}: entry {i} is {res[i]!r}, expected "
                   f"max(0, p - q) / Z = {float(want)!r} with Z = 1 - alpha = {float(1 - alpha)!r} "
                   f"(p = {a!r}, q = {b!r})", 4)


@case("boundary", "p = q gives a copy of p", "no 0/0, no aliasing of the caller's array",
      pitfalls=(6,), kills=("s08", "s14"))
def test_residual_when_p_equals_q(target):
    for p in ([0.25, 0.25, 0.5], [1.0], [0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 0.0]):
        arr = np.array(p)
        for args in ((arr, arr), (arr, arr.copy()), (list(p), list(p))):
            res = target.residual_distribution(*args)
            expect(res.dtype == np.float64 and res.tolist() == list(p),
                   f"{called('residual_distribution', args)} returned {fmt(res)}, expected a new "
                   f"array equal to p = {list(p)}: with p = q, Z = 0 and the contract returns p", 6)


@case("boundary", "alpha = 0 gives residual p", "a useless draft is slow, not wrong",
      pitfalls=(15, 3), kills=("x02", "x03"))
def test_residual_disjoint_supports_is_p(target):
    gen = HarnessPCG32(7, 76)
    cases = [([0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.25, 0.75]), ([0.0, 1.0], [1.0, 0.0])]
    for _ in range(5):
        w = [gen.uniform() + 1e-3 for _ in range(3)]
        p = [a / ltr_sum(w) for a in w] + [0.0, 0.0]
        cases.append((p, [0.0, 0.0, 0.0, 0.5, 0.5]))
    for p, q in cases:
        alpha = target.acceptance_probability(p, q)
        expect(alpha == 0.0, f"{called('acceptance_probability', (p, q))} returned {alpha!r}; "
               "disjoint supports keep nothing: 0.0", 9)
        res = target.residual_distribution(p, q)
        want = expected_residual(p, q)  # p / Z, Z = p's own left-to-right sum
        expect(res.tolist() == want, f"{called('residual_distribution', (p, q))} returned "
               f"{fmt(res)}, expected p / sum(p) = {want}: with alpha = 0 the residual is p", 3)


def discriminating_pair() -> tuple[list[float], list[float]]:
    """A seeded (p, q) whose residual differs, in some bit, under every plausible other normalizer."""
    gen = HarnessPCG32(98, 76)
    for _ in range(500):
        n = 12
        w = [gen.uniform() ** 3 + 1e-9 for _ in range(n)]
        v = [gen.uniform() ** 3 + 1e-9 for _ in range(n)]
        p, q = [a / ltr_sum(w) for a in w], [b / ltr_sum(v) for b in v]
        if abs(ltr_sum(p) - 1) > 1e-9 or abs(ltr_sum(q) - 1) > 1e-9:
            continue
        nums = [max(0.0, a - b) for a, b in zip(p, q)]
        want = [x / ltr_sum(nums) for x in nums]
        others = alternative_normalizers(p, q, nums)
        if all(alt != want for alt in others.values()):
            return p, q
    raise AssertionError("no discriminating input found; widen the search")


def alternative_normalizers(p, q, nums) -> dict[str, list[float]]:
    alpha = ltr_sum([min(a, b) for a, b in zip(p, q)])
    arr = np.array(nums)
    return {
        "np.sum (pairwise)": (arr / np.sum(arr)).tolist(),
        "math.fsum": [x / math.fsum(nums) for x in nums],
        "reversed sum": [x / ltr_sum(reversed(nums)) for x in nums],
        "sorted sum": [x / ltr_sum(sorted(nums)) for x in nums],
        "1 - alpha": [x / (1.0 - alpha) for x in nums],
    }


@case("unit", "the normalizer is a left-to-right loop", "bit parity with the Rust port (L10.8)",
      pitfalls=(8,), kills=("s09", "x18"))
def test_residual_sum_is_ascending(target):
    p, q = discriminating_pair()
    want = expected_residual(p, q)
    got = target.residual_distribution(p, q)
    if got.tolist() != want:
        nums = [max(0.0, a - b) for a, b in zip(p, q)]
        matches = [name for name, alt in alternative_normalizers(p, q, nums).items()
                   if alt == got.tolist()]
        hint = f" (it matches a normalizer summed with {matches[0]})" if matches else ""
        bits = [i for i, (a, b) in enumerate(zip(got.tolist(), want)) if a != b]
        raise CatalogFailure(
            f"{called('residual_distribution', (p, q))} differs from max(0, p - q) / Z with Z "
            f"summed left to right over ascending ids at ids {bits}{hint}; first: got "
            f"{got[bits[0]]!r}, expected {want[bits[0]]!r}", 8)


@case("boundary", "mismatched shapes and non-distributions raise",
      "vocabularies of draft and target must match", pitfalls=(13,), kills=("x04", "x05"))
def test_shapes_and_distributions_are_checked(target):
    good = [0.5, 0.5]
    bad_pairs = [
        ([0.5, 0.5], [0.25, 0.25, 0.5]),  # shapes differ
        ([0.5, 0.25, 0.25], [0.5, 0.5]),
        ([0.5, 0.6], good), (good, [0.25, 0.25]),  # does not sum to 1
        ([1.5, -0.5], good), (good, [-0.5, 1.5]),  # negative entry
        ([math.nan, 1.0], good), (good, [math.inf, 0.0]),
        ([], []), (np.array([[0.5, 0.5]]), np.array([[0.5, 0.5]])),  # empty, 2-D
    ]
    rng = ScriptedSource([0.5] * 4)
    for fn, extra in [("acceptance_probability", ()), ("residual_distribution", ()),
                      ("speculative_step", (0, 0.5, 0.5)), ("rejection_sample", (4.0, rng))]:
        calls = [(p, q, *extra) for p, q in bad_pairs]
        for r in target.map(fn, calls):
            expect(isinstance(r.error, ValueError),
                   f"{called(fn, r.args)} {fmt(r.error) if r.error else 'returned ' + fmt(r.value)}"
                   "; expected ValueError: p and q must be distributions of the same shape", 13)


@case("statistical", "output distribution = p exactly, random p, q in eighths",
      "the theorem L8.6 relies on", pitfalls=(5,), kills=("s06", "s07", "s13"))
def test_speculative_output_is_exactly_p(target):
    cases = [(p, q, *law_cells(p, q)) for p, q in eighths_cases()]
    results = target.map("speculative_step", [c for *_, calls in cases for c in calls])  # one batch
    start = 0
    for k, (p, q, cells, calls) in enumerate(cases):
        law = law_from(cells, results[start:start + len(calls)])
        check_law_is_p(target, p, q, f"case {k}", law)
        start += len(calls)


def chi_square_inputs() -> tuple[list[float], list[float]]:
    """Arbitrary (not dyadic) p and q on 8 ids with TV(p, q) about 0.3, one zero in p."""
    gen = HarnessPCG32(CHI_SQUARE_SEED, 76)
    w = [0.2 + gen.uniform() for _ in range(8)]
    v = [0.2 + gen.uniform() ** 2 for _ in range(8)]
    w[5] = 0.0
    return [a / ltr_sum(w) for a in w], [b / ltr_sum(v) for b in v]


@functools.lru_cache(maxsize=4)
def chi_square_calls(seed: int, draws: int) -> tuple[tuple, ...]:
    """The seeded draws ``(p, q, x, u_accept, u_resample)``: the same for every target, so cached."""
    p, q = chi_square_inputs()
    p, q = tuple(p), tuple(q)  # immutable array-likes: nothing to copy or re-check per call
    source = HarnessPCG32(seed, 54)
    draft = harness_sampler(q)
    calls = []
    for _ in range(draws):
        x = draft(source.uniform())
        calls.append((p, q, x, source.uniform(), source.uniform()))
    return tuple(calls)


def chi_square_trial(target, seed: int, draws: int = CHI_SQUARE_DRAWS):
    """One seeded chi-square of ``speculative_step``'s output against p: (counts, expected, stat, pvalue)."""
    from scipy.stats import chisquare

    p, _ = chi_square_inputs()
    calls = chi_square_calls(seed, draws)
    counts = [0] * len(p)
    for r in target.map("speculative_step", calls):
        if r.error is not None:
            raise CatalogFailure(f"{called('speculative_step', r.args)} raised "
                                 f"{type(r.error).__name__}: {r.error}; every argument is valid")
        token = int(r.value[0])
        if not 0 <= token < len(p):
            raise CatalogFailure(f"{called('speculative_step', r.args)} returned id {token}, "
                                 f"outside [0, {len(p)})", 5)
        counts[token] += 1
    expected = [draws * a for a in p]
    obs, exp = merge_small(counts, expected)
    stat, pvalue = chisquare(obs, exp)
    return counts, expected, float(stat), float(pvalue)


@case("statistical", "20000 seeded draws match p (chi-square)",
      "the same law on arbitrary distributions", pitfalls=(5,), kills=("s06", "s07", "s13"))
def test_speculative_chi_square(target):
    counts, expected, stat, pvalue = chi_square_trial(target, CHI_SQUARE_SEED)
    expect(pvalue >= CHI_SQUARE_ALPHA,
           f"{CHI_SQUARE_DRAWS} draws of speculative_step (x ~ q, seed {CHI_SQUARE_SEED}) do not "
           f"follow p: chi-square = {stat:.1f}, p-value = {pvalue:.3g} < alpha = {CHI_SQUARE_ALPHA:g}"
           f"\n{law_table(dict(enumerate(counts)), {i: round(e, 1) for i, e in enumerate(expected)})}",
           5)


@case("unit", "an accepted draft ignores u'", "the draw order is part of the parity contract",
      pitfalls=(10,), kills=("s11", "x14"))
def test_speculative_accepts_without_resampling(target):
    # Invalid values too: the contract says an accepted draft does not read u_resample at all.
    for u_resample in (0.0, 0.25, 0.5, 0.75, LARGEST_U, 1.0, math.nan, -0.5):
        args = (P_HAND, Q_HAND, 1, 0.25, u_resample)
        r = target.map("speculative_step", [args])[0]
        expect(r.error is None and tuple(r.value) == (1, True),
               f"{called('speculative_step', args)} "
               f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}, expected (1, True): "
               "u_accept = 0.25 < r = 0.5 keeps the draft, and u_resample is not read at all", 10)
    args = (P_HAND, Q_HAND, 0, 0.9, 0.0)
    got = target.speculative_step(*args)
    expect(tuple(got) == (0, True), f"{called('speculative_step', args)} returned {fmt(got)}, "
           "expected (0, True): the accept test reads u_accept (r = 2 keeps id 0)", 10)
    args = (P_HAND, Q_HAND, 1, 0.75, 0.25)
    got = target.speculative_step(*args)
    expect(tuple(got) == (0, False), f"{called('speculative_step', args)} returned {fmt(got)}, "
           "expected (0, False): u_accept = 0.75 rejects, u_resample = 0.25 picks id 0 of the "
           "residual [0.5, 0, 0.5, 0]", 10)


@case("boundary", "x outside the vocabulary or q_x = 0 raise",
      "draft and proposal disagreeing is a bug", pitfalls=(14,), kills=("x06", "x07", "x15"))
def test_speculative_rejects_bad_drafts(target):
    bad = [4, -1, -4, 100, 2, True, 1.0, 0.5]  # 2: q[2] = 0 in section 3's example
    calls = [(P_HAND, Q_HAND, x, 0.5, 0.5) for x in bad]
    for r in target.map("speculative_step", calls):
        expect(isinstance(r.error, ValueError),
               f"{called('speculative_step', r.args)} "
               f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; expected ValueError: "
               "x must be an integer id in [0, n) that q can propose", 14)


@case("statistical", "one try accepts x with probability p_x/m, exactly", "the von Neumann law",
      pitfalls=(7,), kills=("s15", "x12"))
def test_rejection_sample_first_try_enumerated(target):
    for p, q, m in [([0.5, 0.25, 0.25, 0.0], [0.25] * 4, 2.0), ([0.75, 0.25], [0.5, 0.5], 1.5),
                    (P_HAND, [0.375, 0.25, 0.25, 0.125], 2.0), ([0.3, 0.7], [0.6, 0.4], 2.5)]:
        calls, cells = [], []
        for x, proposal in categorical_intervals(q):
            for acc in split_at([p[x] / (m * q[x])]):
                cells.append(proposal.measure * acc.measure)
                for end in (0, 1):
                    rng = ScriptedSource([proposal.ends[end], acc.ends[end]])
                    calls.append((p, q, m, rng, 1))
        results = target.map("rejection_sample", calls)
        law: dict[int, Fraction] = {}
        for j, w in enumerate(cells):
            outs = []
            for r in results[2 * j:2 * j + 2]:
                if r.error is None:
                    outs.append(tuple(r.value))
                else:
                    expect(isinstance(r.error, RuntimeError),
                           f"rejection_sample(p={p}, q={q}, m={m}, rng, max_tries=1) with uniforms "
                           f"{r.args[3].values} {fmt(r.error)}; expected an answer or "
                           "RuntimeError (no acceptance within max_tries)", 7)
                    outs.append("rejected")
            expect(outs[0] == outs[1], f"rejection_sample(p={p}, q={q}, m={m}) gave {outs[0]} and "
                   f"{outs[1]} inside one cell of the contract's partition", 7)
            if outs[0] != "rejected":
                law[int(outs[0][0])] = law.get(int(outs[0][0]), Fraction(0)) + w
        expected = {i: Fraction(a) / Fraction(m) for i, a in enumerate(p) if a}
        gap = max(abs(law.get(i, 0) - expected.get(i, 0)) for i in set(law) | set(expected))
        expect(gap <= 4 * ULP, f"one try of rejection_sample(p={p}, q={q}, m={m}) accepts id x "
               f"with probability p_x / m, exactly (gap {float(gap):.3g}):\n{law_table(law, expected)}", 7)


def geometric_trial(target, seed: int, samples: int = GEOMETRIC_SAMPLES):
    """Mean tries of ``samples`` seeded calls: (mean, m, standard error)."""
    p, q, m = [0.5, 0.3, 0.2, 0.0], [0.25, 0.25, 0.25, 0.25], 3.0
    p, q = tuple(p), tuple(q)
    rng = PCGSource(seed, 54)  # one stream, continued from call to call (shared within the batch)
    total = 0
    for r in target.map("rejection_sample", [(p, q, m, rng)] * samples):
        if r.error is not None:
            raise CatalogFailure(f"rejection_sample(p={list(p)}, q={list(q)}, m={m:g}, rng) raised "
                                 f"{type(r.error).__name__}: {r.error}; every argument is valid", 12)
        total += int(r.value[1])
    return total / samples, m, math.sqrt(m * (m - 1) / samples)


@case("statistical", "mean tries = m within 4 standard errors", "the cost of a loose envelope",
      pitfalls=(12,), kills=("s18",))
def test_rejection_sample_tries_are_geometric(target):
    mean, m, se = geometric_trial(target, GEOMETRIC_SEED)
    expect(abs(mean - m) <= GEOMETRIC_SIGMAS * se,
           f"{GEOMETRIC_SAMPLES} seeded calls of rejection_sample(p, q, m={m:g}, rng) took {mean:.3f} "
           f"tries on average; a geometric count from 1 has mean m = {m:g} (standard error "
           f"{se:.3f}, allowed {GEOMETRIC_SIGMAS:g} of them)", 12)


@case("unit", "proposal uniform first, then acceptance; two per try",
      "reproducible across languages", pitfalls=(10,), kills=("s16", "x11"))
def test_rejection_sample_draw_order(target):
    p, q, m = [0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], 2.0
    # try 1: proposal 0.6 -> id 2 (p = 0: rejected whatever u); try 2: proposal 0.1 -> id 0, u = 0.3.
    script = [0.6, 0.0, 0.1, 0.3]
    rng = ScriptedSource(script)
    got = target.rejection_sample(p, q, m, rng, 2)
    expect(tuple(got) == (0, 2), f"rejection_sample(p={p}, q={q}, m=2, rng, max_tries=2) with "
           f"uniforms {script} returned {fmt(got)}, expected (0, 2): each try draws the proposal "
           "first, then the acceptance uniform", 10)
    expect(len(rng.drawn) == 4, f"rejection_sample drew {len(rng.drawn)} uniforms in 2 tries; "
           "exactly two per try", 10)
    rng = ScriptedSource([0.1, 0.9])  # one try: proposal id 0, ratio 1 accepts anything
    got = target.rejection_sample(p, q, m, rng)
    expect(tuple(got) == (0, 1) and len(rng.drawn) == 2,
           f"rejection_sample(p={p}, q={q}, m=2, rng) with uniforms [0.1, 0.9] returned {fmt(got)} "
           f"after {len(rng.drawn)} draws, expected (0, 1) after 2", 10)


@case("boundary", "p_x > m q_x, m < 1, and no acceptance in max_tries raise",
      "a wrong envelope silently biases", pitfalls=(7, 11), kills=("s19", "x10", "x13", "x16", "x17"))
def test_rejection_sample_checks_the_envelope(target):
    p, q = [0.5, 0.5], [0.9, 0.1]
    for m in (1.5, 4.0, 4.999):  # p_1 = 0.5 > m * 0.1
        rng = ScriptedSource([0.5, 0.0] * 4)
        r = target.map("rejection_sample", [(p, q, m, rng, 4)])[0]
        expect(isinstance(r.error, ValueError), f"rejection_sample(p={p}, q={q}, m={m}, rng) "
               f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; expected ValueError: "
               f"p_1 = 0.5 > m * q_1 = {m * 0.1:g} breaks the envelope", 7)
    r = target.map("rejection_sample", [([0.5, 0.5], [1.0, 0.0], 4.0, ScriptedSource([0.5] * 4), 4)])[0]
    expect(isinstance(r.error, ValueError), "rejection_sample(p=[0.5, 0.5], q=[1, 0], m=4, rng) "
           f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; expected ValueError: "
           "q_1 = 0 < p_1 = 0.5, which no envelope m covers", 7)
    bad_args = [([0.5, 0.5], [0.5, 0.5], 0.5, 10), ([0.5, 0.5], [0.5, 0.5], math.nan, 10),
                ([0.5, 0.5], [0.5, 0.5], math.inf, 10), ([0.5, 0.5], [0.5, 0.5], 2.0, 0)]
    # Bools and non-integral max_tries are left alone: the contract rules out bools only for x.
    for p2, q2, m, tries in bad_args:
        r = target.map("rejection_sample", [(p2, q2, m, ScriptedSource([0.5] * 4), tries)])[0]
        expect(isinstance(r.error, ValueError), f"rejection_sample(p={p2}, q={q2}, m={m!r}, rng, "
               f"max_tries={tries!r}) {fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; "
               "expected ValueError (m >= 1 and finite, max_tries >= 1)", 11)
    check_envelope_boundaries(target)
    # Never accepts: every proposal is id 1, where p = 0.
    rng = ScriptedSource([0.75, 0.0] * 3)
    r = target.map("rejection_sample", [([1.0, 0.0], [0.5, 0.5], 2.0, rng, 3)])[0]
    expect(isinstance(r.error, RuntimeError), f"rejection_sample(p=[1, 0], q=[0.5, 0.5], m=2, rng, "
           f"max_tries=3) with every proposal id 1 (p = 0) "
           f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; expected RuntimeError", 11)
    check_default_max_tries(target)


def check_envelope_boundaries(target) -> None:
    """The contract's boundary rules: ``m == 1`` and ``p_i == m q_i`` are valid envelopes."""
    for p, q, m, script, want in [([0.5, 0.5], [0.5, 0.5], 1.0, [0.1, 0.5], (0, 1)),
                                  ([0.75, 0.25], [0.5, 0.5], 1.5, [0.1, 0.5], (0, 1))]:
        r = target.map("rejection_sample", [(p, q, m, ScriptedSource(script), 1)])[0]
        expect(r.error is None and tuple(r.value) == want,
               f"rejection_sample(p={p}, q={q}, m={m}, rng, max_tries=1) with uniforms {script} "
               f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)}; expected {want}: "
               "m == 1 and p_i == m * q_i satisfy the envelope", 7)


def check_default_max_tries(target) -> None:
    """Without ``max_tries`` the sampler gives up after the contract's 10000 tries, 20000 draws."""
    rng = ScriptedSource([0.75, 0.0] * 10_001)  # every proposal is id 1, where p = 0
    r = target.map("rejection_sample", [([1.0, 0.0], [0.5, 0.5], 2.0, rng)])[0]
    expect(isinstance(r.error, RuntimeError) and len(rng.drawn) == 20_000,
           f"rejection_sample(p=[1, 0], q=[0.5, 0.5], m=2, rng) with every proposal id 1 (p = 0) "
           f"{fmt(r.error) if r.error else 'returned ' + fmt(r.value)} after {len(rng.drawn)} "
           "draws; expected RuntimeError after max_tries = 10000 tries (the default), 20000 draws", 11)
