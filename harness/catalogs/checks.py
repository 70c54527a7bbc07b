"""What catalog tests share: failures that carry a pitfall, and readable values."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from harness.engine.outcome import remote_of
from harness.engine.target import show_args


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
        remote = remote_of(value)
        if remote is not None:  # what the code under test raised, by its own class name, once
            return f"raised {remote}"
        return f"raised {type(value).__name__}: {value}" if str(value) else \
            f"raised {type(value).__name__}"
    return repr(value)


def raised_name(error: BaseException) -> str:
    """The class name the code under test raised (not the class ol rebuilt it as)."""
    remote = remote_of(error)
    return str(remote.type) if remote is not None else type(error).__name__


def law_table(observed: dict[int, Any], expected: dict[int, Any]) -> str:
    """Per-id observed vs expected, one line each."""
    ids = sorted(set(observed) | set(expected))
    return "\n".join(
        f"    id {i}: observed {fmt(observed.get(i, 0))}, expected {fmt(expected.get(i, 0))}"
        for i in ids
    )


def impossible_draws(counts, expected) -> list[int]:
    """The ids drawn at least once although their expected count is 0 (probability 0)."""
    return [i for i, (o, e) in enumerate(zip(counts, expected, strict=True)) if e == 0 and o > 0]


def impossible_words(counts, expected) -> str:
    """What ``impossible_draws`` found, in words (empty when nothing impossible was drawn)."""
    ids = impossible_draws(counts, expected)
    return "; ".join(f"id {i} was drawn {counts[i]} time{'s' if counts[i] != 1 else ''} although its "
                     "probability is 0" for i in ids)


LOOKS = (16, 8, 4, 2, 1)  # a sampled test looks after 1/16, 1/8, 1/4, 1/2 and all of its draws
# The interim looks' chi-square (Haybittle-Peto, #27 item 4). At a look before the last, the test
# fails at once when the catalog's chi-square of the draws so far (``merge_small`` and
# ``chi_square`` on the prefix's counts against the prefix's expectations) has a p-value below
# INTERIM_ALPHA. A look is taken only where the approximation holds at that level: every pooled
# cell expects at least INTERIM_MIN_EXPECTED draws and there are at least INTERIM_MIN_DF degrees
# of freedom (which looks qualify depends on p and the number of draws alone, never on the draws).
# Measured on the exact multinomial (importance sampling: ``python -m harness.audit.interim``), a
# look at p < 1e-8 fails a correct sampler with probability 1.08e-8 to 1.36e-8 where every cell
# expects 100 draws or more (M07.6's looks at 10000, 5000, 2500 draws), 1.6e-8 to 1.8e-8 at 50
# (M07.6's 1250), 2.4e-8 to 2.5e-7 at 41 down to 5 (M07.1's looks at 2000 down to 250 draws):
# the chi-square's tail is too light that far out. Each qualifying look is charged INTERIM_SPEND,
# an upper bound of what it spends; the last look's threshold is the named alpha less those
# charges (``final_alpha``), so by a union bound the test fails a correct sampler with
# probability at most the named alpha. The last look decides a pass on every draw, as before.
# M06.3's chi-square (4000 uniforms in 33 bins) stays whole, without looks: its draws are one
# request to the generator under test, milliseconds, against the 20000 calls of M07.6's; and no
# look before its last would qualify anyway (its bins expect 61 draws at half of them).
INTERIM_ALPHA = 1e-8
INTERIM_MIN_EXPECTED = 100.0
INTERIM_MIN_DF = 6
INTERIM_SPEND = 2e-8


def looks(calls: Sequence[Any]) -> list[tuple[int, Sequence[Any]]]:
    """The calls of a sampled test in the chunks between its looks: ``(calls made once the chunk
    is answered, the chunk)``. A test stops at the first look after an error or a draw of an id
    of probability 0 (either fails it, whatever the rest would give), so code that breaks at draw
    3 is told after 1250 draws, not 20000; and at a qualifying interim look (``interim_looks``)
    whose chi-square's p-value is below INTERIM_ALPHA. A pass takes every draw."""
    ends = sorted({max(1, len(calls) // d) for d in LOOKS} | {len(calls)})
    out, start = [], 0
    for end in ends:
        if end > start:
            out.append((end, calls[start:end]))
            start = end
    return out


def interim_looks(probs: Sequence[float], draws: int) -> tuple[int, ...]:
    """The looks before the last (draws made) at which a chi-square of ``draws`` draws from
    ``probs`` computes its statistic: those whose every pooled cell expects at least
    INTERIM_MIN_EXPECTED draws, with at least INTERIM_MIN_DF degrees of freedom."""
    out = []
    for end, _ in looks(range(draws))[:-1]:
        expected = [end * a for a in probs]
        _, exp = merge_small(expected, expected)  # the pooled cells' expectations
        if len(exp) - 1 >= INTERIM_MIN_DF and min(exp) >= INTERIM_MIN_EXPECTED:
            out.append(end)
    return tuple(out)


def final_alpha(alpha: float, probs: Sequence[float], draws: int) -> float:
    """The last look's threshold: the named ``alpha`` less INTERIM_SPEND per qualifying look."""
    return alpha - len(interim_looks(probs, draws)) * INTERIM_SPEND


def look_chi_square(counts: Sequence[int], probs: Sequence[float], made: int):
    """The chi-square of the first ``made`` draws: (expected counts, statistic, p-value)."""
    expected = [made * a for a in probs]
    obs, exp = merge_small(counts, expected)
    stat, pvalue = chi_square(obs, exp)
    return expected, stat, pvalue


def chi_square_threshold(made: int, draws: int, alpha: float, probs: Sequence[float]) -> float:
    """The p-value below which a chi-square that stopped after ``made`` of ``draws`` fails:
    INTERIM_ALPHA at an interim look, ``final_alpha`` at the last."""
    return INTERIM_ALPHA if made < draws else final_alpha(alpha, probs, draws)


def spent_words(alpha: float, probs: Sequence[float], draws: int) -> str:
    """``alpha = 1e-06`` or, where interim looks were charged, how the last threshold was made."""
    n = len(interim_looks(probs, draws))
    if not n:
        return f"alpha = {alpha:g}"
    return (f"{final_alpha(alpha, probs, draws):.3g} (alpha {alpha:g} less {n} interim look"
            f"{'s' if n != 1 else ''} at {INTERIM_SPEND:g})")


def drawn_words(made: int, draws: int) -> str:
    """``20000 draws`` for a whole run, ``the first 1250 of 20000 draws`` for one stopped early."""
    return f"{draws} draws" if made >= draws else f"the first {made} of {draws} draws"


def chi_square(observed, expected) -> tuple[float, float]:
    """Pearson's statistic and its p-value, exactly as ``scipy.stats.chisquare`` gives them.

    The same float64 arithmetic (``((o - e)**2 / e).sum()``) and the same tail: ``chisquare``'s
    p-value is ``chi2.sf``, which is ``scipy.special.chdtrc``; importing ``scipy.special`` alone
    costs less than half of ``scipy.stats`` (0.58 s against 1.26 s, ``python3 -X importtime`` here).
    The counts must sum to the expected total (``merge_small`` keeps it)."""
    from scipy.special import chdtrc

    obs = np.asarray(observed, dtype=np.float64)
    exp = np.asarray(expected, dtype=np.float64)
    if obs.shape != exp.shape or obs.ndim != 1 or len(obs) < 2:
        raise ValueError("chi_square needs two equal 1-d sequences of two or more categories")
    stat = float(((obs - exp) ** 2 / exp).sum())
    return stat, float(chdtrc(len(obs) - 1, stat))


def merge_small(counts, expected, minimum: float = 5.0):
    """Pool every category expected below ``minimum`` (but above 0) into one (the chi-square's
    usual rule); the pool joins the smallest other category if it stays below ``minimum``.

    Categories expected 0 are never pooled: they are left out, since a chi-square cannot see a
    draw there. A single such draw is impossible under the law and fails outright; the caller
    checks ``impossible_draws`` first (ValueError here if it did not).
    """
    if impossible_draws(counts, expected):
        raise ValueError("impossible draws reach the chi-square: check impossible_draws first")
    obs, exp, pool_o, pool_e = [], [], 0, 0.0
    for o, e in zip(counts, expected, strict=True):
        if e == 0:
            continue
        if e < minimum:
            pool_o, pool_e = pool_o + o, pool_e + e
        else:
            obs.append(o)
            exp.append(e)
    if pool_e > 0:
        if pool_e < minimum and exp:
            i = int(np.argmin(exp))
            exp[i], obs[i] = exp[i] + pool_e, obs[i] + pool_o
        else:
            obs.append(pool_o)
            exp.append(pool_e)
    exp = np.array(exp) * (sum(obs) / sum(exp))
    return np.array(obs, dtype=float), exp
