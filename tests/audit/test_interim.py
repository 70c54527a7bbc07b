"""The interim looks' real spend: importance sampling of the exact multinomial (harness.audit.interim)."""

from __future__ import annotations

import pytest

from harness.audit.interim import exact_alarm, look_alarms, plain_alarm, pooled_law
from harness.catalogs import checks
from harness.catalogs.m07_1 import test_catalog as m07_1
from harness.catalogs.m07_6 import test_catalog as m07_6


@pytest.mark.parametrize("alpha", [1e-3, 1e-4])
@pytest.mark.slow
def test_importance_sampling_agrees_with_plain_monte_carlo(alpha):
    pi = pooled_law(m07_6.chi_square_inputs()[0], 1250)
    rate, se = exact_alarm(pi, 1250, alpha, samples=40_000, directions=400, seed=3)
    plain = plain_alarm(pi, 1250, alpha, samples=1_000_000, seed=4)
    plain_se = (plain * (1 - plain) / 1_000_000) ** 0.5
    assert abs(rate - plain) < 4 * (se ** 2 + plain_se ** 2) ** 0.5


@pytest.mark.slow
def test_each_qualifying_look_spends_at_most_its_charge():
    """M07.6's looks at 2500, 5000, 10000 draws: the exact rate at p < 1e-8 is above the
    chi-square's 1e-8 but below INTERIM_SPEND; the last look's is close to its threshold."""
    p = m07_6.chi_square_inputs()[0]
    alarms = look_alarms(p, m07_6.CHI_SQUARE_DRAWS, m07_6.CHI_SQUARE_ALPHA, samples=40_000)
    assert [a.draws for a in alarms] == [2500, 5000, 10000, 20000]
    for a in alarms[:-1]:
        assert a.rate > checks.INTERIM_ALPHA and a.rate + 4 * a.se < checks.INTERIM_SPEND
    assert alarms[-1].ratio == pytest.approx(1.0, abs=0.1)


def test_the_looks_left_out_would_spend_far_more():
    """M07.1's first look (250 draws, cells expecting 5 and up) and M07.6's 1250: too few
    expected draws for a p-value of 1e-8 to mean 1e-8."""
    probs = m07_1.chi_square_probs()
    pi = pooled_law(probs, 250)
    rate, se = exact_alarm(pi, 250, checks.INTERIM_ALPHA, samples=40_000, directions=500)
    assert rate > 5 * checks.INTERIM_SPEND and rate - 2 * se > checks.INTERIM_SPEND  # seeded: 2.5e-7
    pi = pooled_law(m07_6.chi_square_inputs()[0], 1250)
    rate, se = exact_alarm(pi, 1250, checks.INTERIM_ALPHA, samples=40_000, directions=500)
    assert rate - 3 * se > 1.2 * checks.INTERIM_ALPHA  # seeded: 1.7e-8
