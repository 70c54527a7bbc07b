"""The closed forms the power audit states beside its measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import nbinom

from harness.audit import analytic


def test_rate_has_an_exact_interval_that_contains_the_estimate():
    r = analytic.rate(3, 200)
    assert r.value == 0.015 and r.low < 0.015 < r.high
    zero = analytic.rate(0, 1000)
    assert zero.low == 0.0 and zero.high == pytest.approx(1 - 0.025 ** (1 / 1000), rel=1e-6)


def test_min_noncentrality_reaches_the_target_power_exactly():
    lam = analytic.min_noncentrality(6, 1e-6)
    assert analytic.chi_square_power(6, 1e-6, lam) == pytest.approx(0.999, abs=1e-9)
    assert analytic.chi_square_power(6, 1e-6, 0.9 * lam) < 0.999


def test_tv_bound_holds_for_laws_at_the_minimum_divergence():
    """Every law at TV >= t* has divergence >= lambda_min / N, so it is detected (Cauchy-Schwarz)."""
    p = np.array([0.15, 0.04, 0.11, 0.18, 0.17, 0.14, 0.21])
    draws = 20_000
    t_star = analytic.min_detectable_tv(6, 1e-6, draws)
    d_min = analytic.min_noncentrality(6, 1e-6) / draws
    rng = np.random.default_rng(7)
    for _ in range(200):
        direction = rng.normal(size=p.size)
        direction -= direction.mean()
        alt = p + direction * (t_star / (0.5 * np.abs(direction).sum()))
        if np.any(alt < 0):
            continue
        assert analytic.total_variation(alt.tolist(), p.tolist()) == pytest.approx(t_star)
        assert analytic.chi_square_divergence(alt.tolist(), p.tolist()) >= d_min * (1 - 1e-9)


def test_geometric_alarm_is_a_negative_binomial_tail():
    m, n, s = 3.0, 1000, 4.0
    lo, hi = analytic.pass_region(m, n, s)
    assert (lo, hi) == (math.ceil(3000 - 4 * math.sqrt(6000)), math.floor(3000 + 4 * math.sqrt(6000)))
    brute = 1 - sum(nbinom.pmf(t - n, n, 1 / m) for t in range(lo, hi + 1))
    assert analytic.geometric_alarm(1 / m, 0, m, n, s) == pytest.approx(brute, rel=1e-9)
    # Tries counted from 0: every total shifts by -n, far outside the pass region.
    assert analytic.geometric_alarm(1 / m, -1, m, n, s) == pytest.approx(1.0)


def test_detectable_means_sit_where_the_power_is_the_target():
    below, above = analytic.geometric_detectable_means(3.0, 1000, 4.0)
    assert below < 3.0 < above
    for mean in (below, above):
        assert analytic.geometric_alarm(1 / mean, 0, 3.0, 1000, 4.0) == pytest.approx(0.999, abs=1e-6)
    assert analytic.geometric_shift_normal(3.0, 1000, 4.0) == pytest.approx(
        (4 + 3.090232) * math.sqrt(6 / 1000), rel=1e-6)
