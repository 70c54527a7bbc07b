"""False alarms of M07.6's sampled tests on hidden cases: the reference under many run seeds.

``ol audit M07.6 --power`` measures the false-alarm rate over the seeds of the draws on the public
inputs. Under a run seed (``ol check --seed N``, ``ol grade``, ``ol gate``) the inputs change too
(the chi-square's p and q, the draws of both tests). This runs the two sampled tests of the
catalog on the reference under run seeds 1..N and counts failures (expected: none at alpha 1e-6)
and how often p < 0.05 (expected: about 5 %, if the p-values stay uniform on hidden inputs).

    python3 bench/hidden_cases.py --seeds 300
"""

from __future__ import annotations

import argparse
import math
import time

from harness.catalogs.m07_6 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.own_code import reference_target
from harness.engine.seeding import case_seed, cases_from


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300, help="run seeds 1..N (default 300)")
    args = parser.parse_args()
    target = reference_target(load_course().module("M07.6"))
    chi_fail = chi_005 = geo_fail = geo_005 = 0
    start = time.perf_counter()
    for seed in range(1, args.seeds + 1):
        with cases_from(seed):
            _, _, _, pvalue = catalog.chi_square_trial(
                target, case_seed(catalog.CHI_SQUARE_SEED, "m07_6.chi_square.draws"))
            chi_fail += pvalue < catalog.CHI_SQUARE_ALPHA
            chi_005 += pvalue < 0.05
            mean, m, se = catalog.geometric_trial(target, case_seed(catalog.GEOMETRIC_SEED,
                                                                    "m07_6.geometric"))
            z = abs(mean - m) / se
            geo_fail += z > catalog.GEOMETRIC_SIGMAS
            geo_005 += z > 1.959964  # two-sided 5 % (normal approximation)
    n = args.seeds
    print(f"{n} run seeds (hidden inputs and draws), {time.perf_counter() - start:.0f} s")
    print(f"  chi-square: {chi_fail}/{n} false alarms at alpha = {catalog.CHI_SQUARE_ALPHA:g}; "
          f"p < 0.05 in {chi_005}/{n} = {chi_005 / n:.3f}")
    print(f"  tries: {geo_fail}/{n} false alarms at {catalog.GEOMETRIC_SIGMAS:g} se; "
          f"|z| > 1.96 in {geo_005}/{n} = {geo_005 / n:.3f}")
    upper = 1 - 0.025 ** (1 / n) if chi_fail == 0 else math.nan
    print(f"  no false alarm in {n}: 95 % CI of the rate 0 to {upper:.4f} (Clopper-Pearson)")


if __name__ == "__main__":
    main()
