"""The sampled tests of a catalog, each run two ways: the catalog's own trial, and a fast table.

A catalog's sampled test calls a seeded *trial* (``chi_square_trial(target, seed)``,
``geometric_trial(target, seed)``) and compares its result with a named constant. The power audit
needs that trial at thousands of seeds. The catalog's trial is the ground truth (``real``); for a
target whose answers form a table over the uniforms (``harness.audit.tabulate``), ``fast`` computes
the same result from the harness's PCG32 stream in numpy. ``validate`` runs both at given seeds and
requires identical results (counts, statistic, p-value, mean) before the fast path is trusted.

What each trial feeds the code is read off the trial itself with a ``Spy`` target, not copied from
the catalog's source; the decision rule (``pvalue >= ALPHA``, ``|mean - m| <= SIGMAS * se``) is the
one the catalog test applies to the trial, with the catalog's named constants. A chi-square's fast
path looks where the catalog's trial looks (``harness.catalogs.checks.looks``): it stops at the
first look after an error or an impossible draw, or at a qualifying interim look whose chi-square
of the prefix has p < INTERIM_ALPHA, and decides the last look at ``final_alpha``; its Trial
records the draws it made (``Trial.draws``), which ``same_trial`` compares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np

from harness.audit import analytic
from harness.audit.pcg import uniform_ks
from harness.audit.tabulate import NotTabulable, Table, boundary_cuts, build_table
from harness.catalogs.checks import (
    INTERIM_ALPHA,
    INTERIM_MIN_EXPECTED,
    INTERIM_SPEND,
    chi_square_threshold,
    final_alpha,
    interim_looks,
    look_chi_square,
    looks,
)
from harness.engine.exact import (
    SCALE,
    Interval,
    categorical_intervals,
    count_below,
    running_sums,
    u_of,
)
from harness.engine.target import Result, TargetEscape
from harness.uniforms import ScriptedSource

RAISES = "raises"


@dataclass(frozen=True)
class Trial:
    """One seed of a sampled test: did it fail (kill), its p-value and its statistic."""

    killed: bool
    pvalue: float
    statistic: float
    raised: str = ""  # the trial raised instead of returning (a kill whatever the numbers)
    detail: tuple = ()  # counts (chi-square) or (total tries,) (mean): compared by ``validate``
    draws: int = 0  # a chi-square's draws when it decided: fewer than its size at an interim stop


class Spy:
    """A target that records the calls of one function and answers each with ``answer``."""

    def __init__(self, fn: str, answer: Any) -> None:
        self.fn, self.answer = fn, answer
        self.calls: list[tuple] = []

    def map(self, fn: str, calls: list[tuple], **kwargs: Any) -> list[Result]:
        self.calls.extend(calls)
        return [Result(args, value=self.answer) for args in calls]

    def __getattr__(self, name: str) -> Any:
        if name == self.__dict__.get("fn"):
            return lambda *args: self.map(name, [args])[0].value
        raise AttributeError(name)


def _probe(target, fn: str, make_call, read) -> Any:
    """A tabulation probe: ``fn`` at each point through ``target.map``, each answer via ``read``."""

    def probe(points):
        calls = [make_call(*pt) for pt in points]
        try:
            results = target.map(fn, calls)
        except (AssertionError, TargetEscape) as exc:  # a contract violation ends the batch
            raise NotTabulable(f"{fn} broke the contract on a valid input: {exc}") from None
        return [read(call, r) for call, r in zip(calls, results, strict=True)]

    return probe


class ChiSquareTest:
    """``chi_square_trial``: ``speculative_step`` on ``x ~ q`` and two uniforms; pass iff p >= alpha."""

    kind = "chi-square"
    entry = "speculative_step"

    def __init__(self, catalog: ModuleType, test: str, trial: str, seed: str, size: str,
                 alpha: str) -> None:
        self.catalog, self.test = catalog, test
        self.trial_fn = getattr(catalog, trial)
        self.fixed_seed, self.size = getattr(catalog, seed), getattr(catalog, size)
        self.alpha, self.alpha_name = getattr(catalog, alpha), alpha
        spy = Spy(self.entry, self.spy_answer)
        self.trial_fn(spy, self.fixed_seed, self.size)
        self._inputs(spy.calls[0])

    spy_answer: Any = (0, True)

    def _inputs(self, call: tuple) -> None:
        self.p, self.q = (list(map(float, v)) for v in call[:2])
        self.draft = categorical_intervals(self.q)  # the harness's draft sampler, as intervals
        self.draft_his = np.array([piece.hi for _, piece in self.draft])
        self.draft_ids = np.array([i for i, _ in self.draft])

    # -- the two ways of running a seed -------------------------------------------------------
    def real(self, target, seed: int, size: int | None = None) -> Trial:
        size = size or self.size
        try:
            counts, _, stat, pvalue = self.trial_fn(target, seed, size)
        except (Exception, TargetEscape) as exc:  # noqa: BLE001 - a trial that fails kills
            return Trial(True, 0.0, math.nan, f"{type(exc).__name__}: {exc}")
        made = sum(counts)  # fewer than size: the trial stopped at an interim look
        return Trial(pvalue < chi_square_threshold(made, size, self.alpha, self.p), pvalue, stat,
                     detail=tuple(counts), draws=made)

    @property
    def final_alpha(self) -> float:
        """The last look's threshold at the test's size: alpha less the interim looks' charges."""
        return final_alpha(self.alpha, self.p, self.size)

    @property
    def check_size(self) -> int:
        """Draws of the real run that checks a mutant's table (a tenth of the test's)."""
        return max(1, self.size // 10)

    def ks(self, seed: int, size: int | None = None) -> np.ndarray:
        """The seed's uniforms as ``k``, shape ``(draws, 3)``: draft, accept, resample."""
        size = size or self.size
        return uniform_ks(seed, 54, 3 * size).reshape(size, 3)

    def drafts(self, ks: np.ndarray) -> np.ndarray:
        return self.draft_ids[np.searchsorted(self.draft_his, ks[:, 0], side="left")]

    def _codes(self, table: Table, ks: np.ndarray) -> np.ndarray:
        return table.lookup(self.drafts(ks), ks[:, 1], ks[:, 2])

    def fast(self, table: Table, seed: int, size: int | None = None) -> Trial:
        """The catalog's trial from the table: its looks, its stops and its decision."""
        size = size or self.size
        ks = self.ks(seed, size)
        codes = self._codes(table, ks)
        tokens = np.array([a if isinstance(a, int) else -1 for a in table.answers])[codes]
        interim = interim_looks(self.p, size)
        start = 0
        for end, _ in looks(range(size)):
            bad = np.flatnonzero((tokens[start:end] < 0) | (tokens[start:end] >= len(self.p)))
            if bad.size:
                at = start + int(bad[0])
                return Trial(True, 0.0, math.nan, f"answer {table.answers[codes[at]]!r} at draw {at}")
            counts = np.bincount(tokens[:end], minlength=len(self.p)).tolist()
            decided = self._decide(counts, end, size, end in interim)
            if decided is not None:
                return decided
            start = end
        raise AssertionError("the last look decides")  # pragma: no cover

    def _decide(self, counts: list[int], made: int, size: int, interim: bool = False) -> Trial | None:
        """The catalog's rule at one look of ``made`` draws out of ``size``: a Trial where it
        decides (an impossible draw, an interim p-value below INTERIM_ALPHA, the last look), None
        where the trial draws on."""
        expected = [made * a for a in self.p]
        impossible = [i for i, (c, e) in enumerate(zip(counts, expected, strict=True)) if e == 0 and c]
        if impossible:  # the catalog's trial fails outright there (a CatalogFailure): so does this
            return Trial(True, 0.0, math.nan, f"id {impossible[0]} drawn, its probability is 0 "
                         f"(look at {made} draws)")
        if made < size and not interim:
            return None
        _, stat, pvalue = look_chi_square(counts, self.p, made)  # the catalog's own statistic
        if made < size and pvalue >= INTERIM_ALPHA:
            return None
        return Trial(pvalue < chi_square_threshold(made, size, self.alpha, self.p), pvalue, stat,
                     detail=tuple(counts), draws=made)

    def calls_match(self, seed: int) -> bool:
        """The fast path's draws are the catalog's ``chi_square_calls``, value for value."""
        ks = self.ks(seed)
        mine = list(zip(self.drafts(ks).tolist(), (ks[:, 1] / SCALE).tolist(),
                        (ks[:, 2] / SCALE).tolist(), strict=True))
        theirs = [(c[2], c[3], c[4]) for c in self.catalog.chi_square_calls(seed, self.size)]
        return mine == theirs

    # -- the table and the law ----------------------------------------------------------------
    def table(self, target) -> Table:
        p, q = tuple(self.p), tuple(self.q)
        xs = [i for i, _ in self.draft]

        def read(call, r):
            return (RAISES, type(r.error).__name__) if r.error is not None else int(r.value[0])

        probe = _probe(target, self.entry, lambda x, k1, k2: (p, q, xs[x], u_of(k1), u_of(k2)), read)
        ratios = [count_below(Fraction(a) / Fraction(b)) for a, b in zip(p, q, strict=True) if b > 0]
        ratios += [count_below(a / b) for a, b in zip(p, q, strict=True) if b > 0]
        residual = self.catalog.expected_residual(p, q)
        cdf = [count_below(c) for c in running_sums(residual)]
        cuts = boundary_cuts(ratios + cdf)
        return build_table(probe, len(xs), cuts, cuts)

    def law(self, table: Table) -> dict[str, Any]:
        """The exact output law of a tabulated target, and what the chi-square can see of it."""
        weights = table.measures()
        mass: dict[Any, Fraction] = {}
        for xi, (_, piece) in enumerate(self.draft):
            for (i, j), w in np.ndenumerate(weights):
                answer = table.answers[table.codes[xi, i, j]]
                mass[answer] = mass.get(answer, Fraction(0)) + piece.measure * w
        law = [float(mass.get(i, 0)) for i in range(len(self.p))]
        raising = float(sum(v for a, v in mass.items() if not isinstance(a, int)))
        gap = max(abs(Fraction(law_i) - Fraction(p_i)) for law_i, p_i in zip(law, self.p, strict=True))
        impossible = sum(a for a, p_i in zip(law, self.p, strict=True) if p_i == 0)
        if raising < 1 and not impossible:
            obs, exp = self.catalog.merge_small([self.size * a for a in law],
                                                [self.size * a for a in self.p])
            with np.errstate(divide="ignore", invalid="ignore"):
                lam = float(np.nansum((obs - exp) ** 2 / exp))
        else:  # a law that only raises has no counts; mass on an id of p = 0 fails at its first draw
            lam = math.inf
        df = len(self.catalog.merge_small([0] * len(self.p), [self.size * a for a in self.p])[1]) - 1
        bound = getattr(self.catalog, "error_bound", lambda n: 2 * n * Fraction(1, SCALE))
        return {"law": law, "p_raise": raising, "largest_gap": float(gap),
                "changed": raising > 0 or gap > bound(len(self.p)),
                "tv": analytic.total_variation(law, self.p),
                "divergence": analytic.chi_square_divergence(law, self.p), "noncentrality": lam,
                # a lower bound: the last look alone, at its threshold (interim looks only add kills)
                "analytic_power": 1 - (1 - raising - impossible) ** self.size * (
                    1 - analytic.chi_square_power(df, self.final_alpha, lam))
                if raising < 1 and not impossible else
                1 - (1 - raising - impossible) ** self.size}

    def estimate(self, trials: list[Trial]) -> dict[str, Any]:
        """The law of an untabulable target, from its real trials: the pooled counts."""
        done = [t for t in trials if not t.raised]
        out: dict[str, Any] = {"estimated": True, "raised_runs": len(trials) - len(done)}
        if done:
            totals = [sum(col) for col in zip(*(t.detail for t in done), strict=True)]
            law = [c / sum(totals) for c in totals]
            out.update(law=law, tv=analytic.total_variation(law, self.p))
        return out

    def detectable(self) -> dict[str, Any]:
        """What the last look alone guarantees at its threshold (the interim looks only add
        kills), and the interim rule: the looks that qualify, their threshold and charge."""
        _, exp = self.catalog.merge_small([0] * len(self.p), [self.size * a for a in self.p])
        out: dict[str, Any] = dict(analytic.chi_square_detectable(len(exp) - 1, self.final_alpha,
                                                                  self.size))
        looked = interim_looks(self.p, self.size)
        out.update(nominal_alpha=self.final_alpha, interim_looks=list(looked),
                   interim_alpha=INTERIM_ALPHA, interim_spend=INTERIM_SPEND,
                   interim_min_expected=INTERIM_MIN_EXPECTED,
                   spent=len(looked) * INTERIM_SPEND + self.final_alpha)
        return out


class CategoricalChiSquareTest(ChiSquareTest):
    """A chi-square of ``sample_categorical(probs, u)``: one uniform per draw, no draft (M07.1)."""

    spy_answer = 0
    entry = "sample_categorical"

    def _inputs(self, call: tuple) -> None:
        self.p = self.q = list(map(float, call[0]))
        self.draft = [(0, Interval(0, SCALE - 1))]  # one "draft": the law is the code's alone

    def ks(self, seed: int, size: int | None = None) -> np.ndarray:
        size = size or self.size
        return uniform_ks(seed, 54, size).reshape(size, 1)

    def _codes(self, table: Table, ks: np.ndarray) -> np.ndarray:
        zeros = np.zeros(len(ks), dtype=np.int64)
        return table.lookup(zeros, ks[:, 0], zeros)

    def calls_match(self, seed: int) -> bool:
        theirs = [c[1] for c in self.catalog.chi_square_calls(seed, self.size)]
        return (self.ks(seed)[:, 0] / SCALE).tolist() == theirs

    def table(self, target) -> Table:
        probs = tuple(self.p)

        def read(call, r):
            if r.error is not None:
                return (RAISES, type(r.error).__name__)
            return ("returns", "bool") if type(r.value) is bool else int(r.value)

        probe = _probe(target, self.entry, lambda x, k1, k2: (probs, u_of(k1)), read)
        cuts = boundary_cuts([count_below(c) for c in running_sums(probs)])
        return build_table(probe, 1, cuts, {0})


class MeanTriesTest:
    """``geometric_trial``: mean tries of seeded ``rejection_sample`` calls, within SIGMAS of m."""

    kind = "mean"

    def __init__(self, catalog: ModuleType, test: str, trial: str, seed: str, size: str,
                 sigmas: str) -> None:
        self.catalog, self.test, self.entry = catalog, test, "rejection_sample"
        self.trial_fn = getattr(catalog, trial)
        self.fixed_seed, self.size = getattr(catalog, seed), getattr(catalog, size)
        self.sigmas, self.alpha_name = getattr(catalog, sigmas), sigmas
        spy = Spy(self.entry, (0, 1))
        _, self.m, self.se = self.trial_fn(spy, self.fixed_seed, self.size)
        first = spy.calls[0]
        self.p, self.q = list(map(float, first[0])), list(map(float, first[1]))
        self.stream = first[3].stream
        self.alpha = analytic.geometric_alarm(1 / self.m, 0, self.m, self.size, self.sigmas)

    check_size = None  # a real run is cheap: check tables at the test's own size

    def real(self, target, seed: int, size: int | None = None) -> Trial:
        try:
            mean, _, _ = self.trial_fn(target, seed, self.size)
        except (Exception, TargetEscape) as exc:  # noqa: BLE001 - a trial that fails kills
            return Trial(True, 0.0, math.nan, f"{type(exc).__name__}: {exc}")
        return self._decide(mean, round(mean * self.size))

    def _decide(self, mean: float, total: int) -> Trial:
        from scipy.stats import norm

        z = abs(mean - self.m) / self.se
        return Trial(z > self.sigmas, float(2 * norm.sf(z)), mean, detail=(total,))

    def fast(self, table: Table, seed: int, size: int | None = None, max_tries: int = 10_000) -> Trial:
        accepts = self._accept_answers(table)
        tries = 4 * self.size * max(2, math.ceil(self.m))
        while True:
            ks = uniform_ks(seed, self.stream, 2 * tries).reshape(tries, 2)
            codes = table.lookup(np.zeros(tries, dtype=np.int64), ks[:, 0], ks[:, 1])
            kind = accepts[codes]  # 1 accept, 0 reject, -1 anything else
            hits = np.flatnonzero(kind == 1)[:self.size]
            end = hits[-1] if hits.size == self.size else tries
            bad = np.flatnonzero(kind[:end] < 0)
            if bad.size:
                return Trial(True, 0.0, math.nan, f"answer {table.answers[codes[bad[0]]]!r}")
            gaps = np.diff(np.concatenate(([-1], hits)))
            if gaps.size and gaps.max() > max_tries:
                return Trial(True, 0.0, math.nan, "RuntimeError: no acceptance within max_tries")
            if hits.size == self.size:
                break
            tries *= 4
        total = int(hits[-1]) + 1 + self.size * (self._offset(table))
        return self._decide(total / self.size, total)

    @staticmethod
    def _accept_answers(table: Table) -> np.ndarray:
        return np.array([1 if a[0] == "accept" else 0 if a == ("reject",) else -1
                         for a in table.answers], dtype=np.int64)

    @staticmethod
    def _offset(table: Table) -> int:
        counts = {a[1] for a in table.answers if a[0] == "accept"}
        if len(counts) != 1:
            raise NotTabulable("no first try accepts" if not counts else
                               f"a first-try acceptance reports different tries: {sorted(counts)}")
        return counts.pop() - 1

    def calls_match(self, seed: int) -> bool:
        return True  # the rng is the trial's own PCGSource: read off the spy, nothing to compare

    def table(self, target) -> Table:
        p, q, m = tuple(self.p), tuple(self.q), self.m

        def read(call, r):
            drawn = len(call[3].drawn)
            if drawn != 2:
                return ("draws", drawn)
            if r.error is None:
                return ("accept", int(r.value[1]))
            return ("reject",) if isinstance(r.error, RuntimeError) else (RAISES, type(r.error).__name__)

        probe = _probe(target, self.entry,
                       lambda x, k1, k2: (p, q, m, ScriptedSource([u_of(k1), u_of(k2)]), 1), read)
        proposal = [count_below(c) for c in running_sums(q)]
        accept = [count_below(Fraction(a) / (Fraction(m) * Fraction(b)))
                  for a, b in zip(p, q, strict=True) if b > 0]
        cuts = boundary_cuts(proposal + accept)
        table = build_table(probe, 1, cuts, cuts)
        draws = sorted({a[1] for a in table.answers if a[0] == "draws"})
        if draws:
            raise NotTabulable(f"a try draws {draws} uniforms, not two (the fast path's model)")
        self._offset(table)
        return table

    def law(self, table: Table) -> dict[str, Any]:
        weights = table.measures()
        accept = Fraction(0)
        raising = Fraction(0)
        for (i, j), w in np.ndenumerate(weights):
            answer = table.answers[table.codes[0, i, j]]
            accept += w if answer[0] == "accept" else 0
            raising += w if answer[0] not in ("accept", "reject") else 0
        a, offset = float(accept), self._offset(table)
        mean = offset + 1 / a if a > 0 else math.inf
        changed = (raising > 0 or offset != 0
                   or abs(accept - Fraction(1) / Fraction(self.m)) > 64 * Fraction(1, SCALE))
        power = (analytic.geometric_alarm(a, offset, self.m, self.size, self.sigmas)
                 if a > 0 and not raising else 1.0)
        return {"accept_per_try": a, "offset": offset, "mean_tries": mean, "p_raise": float(raising),
                "changed": bool(changed), "shift": mean - self.m, "analytic_power": power}

    def estimate(self, trials: list[Trial]) -> dict[str, Any]:
        """The mean tries of an untabulable target, from its real trials."""
        done = [t for t in trials if not t.raised]
        out: dict[str, Any] = {"estimated": True, "raised_runs": len(trials) - len(done)}
        if done:
            mean = sum(t.statistic for t in done) / len(done)
            out.update(mean_tries=mean, shift=mean - self.m)
        return out

    def detectable(self) -> dict[str, Any]:
        below, above = analytic.geometric_detectable_means(self.m, self.size, self.sigmas)
        return {"m": self.m, "samples": self.size, "sigmas": self.sigmas, "se": self.se,
                "target_power": analytic.TARGET_POWER, "mean_below": below, "mean_above": above,
                "normal_shift": analytic.geometric_shift_normal(self.m, self.size, self.sigmas),
                "nominal_alpha": analytic.two_sided_normal_alpha(self.sigmas),
                "exact_alpha": self.alpha}


def same_trial(a: Trial, b: Trial) -> bool:
    """Two runs of one seed agree: both raised, or identical details, draws (where a chi-square
    stopped), statistic and verdict."""
    if a.raised or b.raised:
        return bool(a.raised) and bool(b.raised)
    return a.detail == b.detail and a.draws == b.draws and a.killed == b.killed and (
        a.statistic == b.statistic or (math.isnan(a.statistic) and math.isnan(b.statistic)))
