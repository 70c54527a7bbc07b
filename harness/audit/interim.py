"""What a chi-square's interim looks really spend: its false-alarm rate on the exact multinomial.

The catalogs' interim looks (``harness.catalogs.checks``) fail a correct sampler when the
chi-square of the draws so far has a p-value below ``INTERIM_ALPHA = 1e-8``. That p-value is the
chi-square distribution's tail; the counts are multinomial, whose tail that far out is heavier
(a cell expecting 50 draws sees 91 far more often than a normal law says). Plain Monte Carlo
cannot see a rate of 1e-8, so this estimates it by importance sampling:

- the pooled law ``pi`` (``merge_small``'s cells) and ``n`` draws; the event is ``T > c``, ``T``
  Pearson's statistic and ``c`` the chi-square's critical value at ``alpha``;
- the proposal is a mixture of multinomials whose means lie on the ellipsoid ``T = c`` (random
  directions orthogonal to ``sqrt(pi)``), with a tenth of the weight on ``pi`` itself; each draw
  is weighted by ``P_pi(x) / sum_j w_j P_j(x)``, so the mean weight over the event is unbiased;
- checked against plain Monte Carlo at 1e-3 and 1e-4 (``tests/audit/test_interim.py``).

``python -m harness.audit.interim M07.6`` prints the rate of each look of each chi-square of a
catalog, and of the last look at its threshold (docs/audit.md, "Interim looks").
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.catalogs.checks import INTERIM_ALPHA, final_alpha, interim_looks, looks, merge_small


@dataclass(frozen=True)
class Alarm:
    """The exact multinomial's P(p-value < alpha) at one look, estimated, with its standard error."""

    draws: int
    cells: int
    smallest_expected: float
    alpha: float
    rate: float
    se: float

    @property
    def ratio(self) -> float:
        """The rate over the chi-square's nominal alpha (above 1: the p-value flatters)."""
        return self.rate / self.alpha


ROWS = 1000  # samples whose mixture weight is computed at once (1000 x 2001 means: 16 MB)


def pooled_law(probs: Sequence[float], draws: int) -> np.ndarray:
    """The law of ``merge_small``'s cells at ``draws`` draws (ids of probability 0 left out)."""
    expected = [draws * a for a in probs]
    _, exp = merge_small(expected, expected)
    return np.asarray(exp, dtype=np.float64) / draws


def exact_alarm(pi: np.ndarray, draws: int, alpha: float, samples: int = 200_000,
                directions: int = 2000, seed: int = 0, chunk: int = 20_000) -> tuple[float, float]:
    """P(Pearson's statistic > the chi-square's critical value at ``alpha``) for ``draws`` draws
    from ``pi``: (estimate, standard error), by importance sampling (the module's docstring)."""
    from scipy.special import logsumexp
    from scipy.stats import chi2

    rng = np.random.default_rng(seed)
    critical = float(chi2.isf(alpha, len(pi) - 1))
    root = np.sqrt(pi)
    v = rng.standard_normal((4 * directions, len(pi)))
    v -= np.outer(v @ root, root)  # keeps the mean's total at draws
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    means = pi + np.sqrt(critical / draws) * root * v
    means = means[(means > 1e-12).all(axis=1)][:directions]
    means = np.vstack([means / means.sum(axis=1, keepdims=True), pi])
    weights = np.full(len(means), 0.9 / (len(means) - 1))
    weights[-1] = 0.1  # defensive: the weights stay below 10
    log_ratio = np.log(means / pi).T
    log_weights = np.log(weights)
    total = total2 = 0.0
    for start in range(0, samples, chunk):
        m = min(chunk, samples - start)
        x = rng.multinomial(draws, means[rng.choice(len(means), size=m, p=weights)])
        inside = x[(((x - draws * pi) ** 2) / (draws * pi)).sum(axis=1) > critical]
        for row in range(0, len(inside), ROWS):  # a few MiB at a time, not inside x means
            w = np.exp(-logsumexp(inside[row:row + ROWS] @ log_ratio + log_weights, axis=1))
            total, total2 = total + float(w.sum()), total2 + float((w ** 2).sum())
    rate = total / samples
    return rate, float(np.sqrt(max(total2 / samples - rate ** 2, 0.0) / samples))


def plain_alarm(pi: np.ndarray, draws: int, alpha: float, samples: int, seed: int = 1) -> float:
    """The same rate by plain Monte Carlo (for rates that ``samples`` can see)."""
    from scipy.stats import chi2

    rng = np.random.default_rng(seed)
    critical = chi2.isf(alpha, len(pi) - 1)
    x = rng.multinomial(draws, pi, size=samples)
    return float(((((x - draws * pi) ** 2) / (draws * pi)).sum(axis=1) > critical).mean())


def look_alarms(probs: Sequence[float], draws: int, alpha: float, samples: int = 200_000,
                every_look: bool = False) -> list[Alarm]:
    """The exact rate of each qualifying interim look at INTERIM_ALPHA (every look before the
    last with ``every_look``), and of the last look at its threshold ``final_alpha``."""
    qualifying = set(interim_looks(probs, draws))
    ends = [end for end, _ in looks(range(draws))]
    out = []
    for end in ends:
        if end < draws and not (every_look or end in qualifying):
            continue
        level = INTERIM_ALPHA if end < draws else final_alpha(alpha, probs, draws)
        pi = pooled_law(probs, end)
        rate, se = exact_alarm(pi, end, level, samples)
        out.append(Alarm(end, len(pi), float(pi.min() * end), level, rate, se))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m harness.audit.interim MODULE [--every-look]``: each chi-square's looks."""
    from harness.audit.power import sampled_tests
    from harness.engine.course import load_course

    args = list(sys.argv[1:] if argv is None else argv)
    every = "--every-look" in args
    module = load_course().module(next(a for a in args if not a.startswith("--")))
    for test in sampled_tests(module):
        if test.kind != "chi-square":
            continue
        print(f"{test.test}: {test.size} draws, {test.alpha_name} = {test.alpha:g}, qualifying looks "
              f"{list(interim_looks(test.p, test.size))}")
        spent = 0.0
        for a in look_alarms(test.p, test.size, test.alpha, every_look=every):
            counted = a.draws == test.size or a.draws in interim_looks(test.p, test.size)
            spent += a.rate if counted else 0.0
            print(f"  {a.draws:6d} draws, {a.cells} cells (smallest expects {a.smallest_expected:.1f}): "
                  f"P(p < {a.alpha:.3g}) = {a.rate:.3g} +- {a.se:.2g} ({a.ratio:.2f} x nominal)"
                  f"{'' if counted else ' (not a look of the test)'}")
        print(f"  the whole test's false-alarm rate, by a union bound: at most {spent:.4g}")


if __name__ == "__main__":
    main()
