"""The catalogs' chi-square (``harness.catalogs.checks.chi_square``) is scipy.stats.chisquare's,
number for number, without importing scipy.stats (a check imports only scipy.special)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import chisquare

from harness.catalogs.checks import chi_square


def test_the_statistic_and_the_p_value_are_scipys_exactly():
    rng = np.random.default_rng(20261201)
    for _ in range(2000):
        k = int(rng.integers(2, 60))
        probs = rng.dirichlet(np.ones(k))
        draws = int(rng.integers(10, 30000))
        observed = rng.multinomial(draws, probs).astype(float)
        expected = draws * probs
        expected *= observed.sum() / expected.sum()
        stat, pvalue = chisquare(observed, expected)
        assert chi_square(list(observed), list(expected)) == (float(stat), float(pvalue))


def test_a_perfect_fit_and_a_wild_one():
    assert chi_square([5, 5], [5, 5]) == (0.0, 1.0)
    stat, pvalue = chi_square([10, 0], [5, 5])
    assert stat == 10.0 and pvalue == pytest.approx(0.0015654022580025)


def test_too_few_categories_or_unequal_lengths_are_refused():
    for obs, exp in (([1], [1]), ([1, 2], [1, 1, 1])):
        with pytest.raises(ValueError, match="two equal 1-d sequences"):
            chi_square(obs, exp)


def test_a_check_of_the_reference_does_not_import_scipy_stats():
    code = ("import sys; from harness.cli import main; code = main(['check', 'M07.6', '--target', "
            "'reference']); print('scipy.stats' in sys.modules, 'scipy.special' in sys.modules); "
            "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False True"
