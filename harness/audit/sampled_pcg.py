"""The sampled tests of a generator's catalog (M06.3), run the two ways ``harness.audit.sampled`` runs
the samplers': the catalog's own trial (``real``) and a fast numpy copy (``fast``).

A generator has no uniforms to tabulate: its output at a seed is its words. The "table" of a target
is therefore the claim that its generator *is* the harness's PCG32 on the trial's inputs
(``SameGenerator``), checked word for word at a few seeds (``CHECK_SEEDS``, the extremes of the seed
range among them) before the fast path (``harness.audit.pcg``, PCG32 in numpy) stands in for it; the
power audit then also compares ``real`` and ``fast`` at the catalog's fixed seed. A target whose words
differ anywhere is measured with the catalog's trial at every seed.

The decision rules are the catalog tests' own, with their named constants:

- ``test_uniform_chi_square``: Pearson's chi-square of ``CHI_SQUARE_DRAWS`` uniforms in
  ``CHI_SQUARE_BINS`` equal bins, fail iff ``p < CHI_SQUARE_ALPHA``;
- ``test_stream_independence``: for each of the ``k`` pairs of ``STREAM_PAIRS``, fail if a 2-word
  run of one stream occurs in the other, or if the bits of the two streams agree with a two-sided
  p-value below ``STREAMS_ALPHA``. The audit's p-value of a seed is Sidak's combination of the
  pairs' smallest, ``1 - (1 - min p)**k`` (uniform when the pairs are independent), and the level
  it is held to is the family's, ``1 - (1 - STREAMS_ALPHA)**k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from harness.audit import analytic
from harness.audit.pcg import u32_stream, uniform_ks
from harness.audit.sampled import ChiSquareTest, Trial
from harness.audit.tabulate import NotTabulable
from harness.engine.exact import SCALE
from harness.engine.target import TargetEscape
from harness.uniforms import HarnessPCG32

# Seeds at which a target's words must equal PCG32's for the fast path: small, large, the extremes.
CHECK_SEEDS = (0, 1, 2**32 + 7, 2**63 + 5, 2**64 - 1)
CHECK_WORDS = 40


@dataclass(frozen=True)
class SameGenerator:
    """A target whose generator gave PCG32's words (or uniforms) at every checked (seed, stream)."""

    checked: tuple[tuple[int, int], ...]


class _GeneratorTest:
    """What the two generator tests share: the check that makes the fast path valid, the law."""

    entry = "PCG32"
    check_size = None  # real runs are cheap: check at the test's own size

    def __init__(self, catalog: ModuleType, test: str, trial: str, seed: str, size: str,
                 alpha: str) -> None:
        self.catalog, self.test = catalog, test
        self.trial_fn = getattr(catalog, trial)
        self.fixed_seed, self.size = getattr(catalog, seed), getattr(catalog, size)
        self.alpha_name = alpha
        self.rule_alpha = getattr(catalog, alpha)

    streams: tuple[int, ...] = ()

    def _sample(self, target, seed: int, stream: int) -> tuple[list, list]:
        """(the target's first ``CHECK_WORDS`` outputs of PCG32(seed, stream), PCG32's)."""
        raise NotImplementedError

    def table(self, target) -> SameGenerator:
        checked = []
        for seed in (*CHECK_SEEDS, self.fixed_seed):
            for stream in self.streams:
                try:
                    got, want = self._sample(target, seed, stream)
                except (Exception, TargetEscape) as exc:  # noqa: BLE001 - the target's answer
                    raise NotTabulable(f"PCG32({seed}, {stream}) raised {type(exc).__name__}: "
                                       f"{str(exc)[:200]}") from None
                if got != want:
                    i = next(i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b)
                    raise NotTabulable(f"its output differs from PCG32's: PCG32({seed}, {stream}) "
                                       f"output {i + 1}") from None
                checked.append((seed, stream))
        return SameGenerator(tuple(checked))

    def law(self, table: SameGenerator) -> dict[str, Any]:
        return {"changed": False, "checked_pairs": len(table.checked),
                "note": f"its output equals PCG32's at the {len(table.checked)} (seed, stream) "
                        "pairs checked, and its trial at the fixed seed is the reference's"}

    def _raised(self, exc: BaseException) -> Trial:
        return Trial(True, 0.0, math.nan, f"{type(exc).__name__}: {exc}")


class UniformChiSquareTest(_GeneratorTest):
    """``uniform_chi_square_trial``: uniforms of ``PCG32(seed, 54)`` in equal bins; p >= alpha."""

    kind = "chi-square"
    streams = (54,)

    def __init__(self, catalog: ModuleType, test: str, trial: str, seed: str, size: str,
                 alpha: str, bins: str) -> None:
        super().__init__(catalog, test, trial, seed, size, alpha)
        self.bins = getattr(catalog, bins)
        self.alpha = self.rule_alpha
        self.p = [1 / self.bins] * self.bins

    def _sample(self, target, seed: int, stream: int) -> tuple[list, list]:
        got = self.catalog.draw(target, target.PCG32(seed, stream), "uniform", CHECK_WORDS, "check")
        want = (uniform_ks(seed, stream, CHECK_WORDS) / SCALE).tolist()
        return list(got), want

    def real(self, target, seed: int, size: int | None = None) -> Trial:
        try:
            counts, stat, pvalue = self.trial_fn(target, seed, size or self.size)
        except (Exception, TargetEscape) as exc:  # noqa: BLE001 - a trial that fails kills
            return self._raised(exc)
        return Trial(pvalue < self.alpha, pvalue, stat, detail=tuple(counts))

    def fast(self, table: SameGenerator, seed: int, size: int | None = None) -> Trial:
        counts = self.catalog.bin_counts(uniform_ks(seed, 54, size or self.size) / SCALE)
        stat, pvalue = self.catalog.chi_square(counts)
        return Trial(pvalue < self.alpha, pvalue, stat, detail=tuple(counts))

    def calls_match(self, seed: int) -> bool:
        """The numpy uniforms are ``HarnessPCG32``'s, value for value."""
        gen = HarnessPCG32(seed, 54)
        return (uniform_ks(seed, 54, self.size) / SCALE).tolist() == [gen.uniform() for _ in range(self.size)]

    estimate = ChiSquareTest.estimate

    def detectable(self) -> dict[str, Any]:
        return analytic.chi_square_detectable(self.bins - 1, self.alpha, self.size)


class StreamsTest(_GeneratorTest):
    """``streams_trial``: pairs of streams of one seed share no 2-word run and agree on half the bits."""

    kind = "streams"

    def __init__(self, catalog: ModuleType, test: str, trial: str, seed: str, size: str,
                 alpha: str, pairs: str) -> None:
        super().__init__(catalog, test, trial, seed, size, alpha)
        self.pairs = tuple(getattr(catalog, pairs))
        self.streams = tuple(dict.fromkeys(s for pair in self.pairs for s in pair))
        self.alpha = sidak(self.rule_alpha, len(self.pairs))

    def _sample(self, target, seed: int, stream: int) -> tuple[list, list]:
        got = self.catalog.new_words(target, seed, stream, CHECK_WORDS)
        return got, u32_stream(seed, stream, CHECK_WORDS).tolist()

    def real(self, target, seed: int, size: int | None = None) -> Trial:
        try:
            pairs = self.trial_fn(target, seed, size or self.size)
        except (Exception, TargetEscape) as exc:  # noqa: BLE001 - a trial that fails kills
            return self._raised(exc)
        return self._decide(pairs)

    def fast(self, table: SameGenerator, seed: int, size: int | None = None) -> Trial:
        words = size or self.size
        return self._decide(self.catalog.stream_pairs(
            lambda stream: u32_stream(seed, stream, words).tolist()))

    def _decide(self, pairs: list[tuple]) -> Trial:
        runs = [p[4] for p in pairs]
        pvalues = [p[5][2] for p in pairs]
        smallest = min(pvalues)
        killed = any(runs) or smallest < self.rule_alpha
        combined = sidak(smallest, len(pairs))
        return Trial(killed, combined, smallest,
                     detail=tuple((r, p[5][0], p[5][1]) for r, p in zip(runs, pairs, strict=True)))

    def calls_match(self, seed: int) -> bool:
        return all(u32_stream(seed, s, 64).tolist() == self._harness_words(seed, s, 64)
                   for s in self.streams)

    @staticmethod
    def _harness_words(seed: int, stream: int, count: int) -> list[int]:
        gen = HarnessPCG32(seed, stream)
        return [gen.next_u32() for _ in range(count)]

    def estimate(self, trials: list[Trial]) -> dict[str, Any]:
        done = [t for t in trials if not t.raised]
        out: dict[str, Any] = {"estimated": True, "raised_runs": len(trials) - len(done)}
        if done:
            agree = sum(a for t in done for _, a, _ in t.detail)
            bits = sum(b for t in done for _, _, b in t.detail)
            out.update(agreement=agree / bits, bias=agree / bits - 0.5,
                       runs_share=sum(any(r for r, _, _ in t.detail) for t in done) / len(done))
        return out

    def detectable(self) -> dict[str, Any]:
        from scipy.stats import norm

        bits = 32 * self.size
        z_alpha, z_power = float(norm.isf(self.rule_alpha / 2)), float(norm.isf(1 - analytic.TARGET_POWER))
        return {"pairs": len(self.pairs), "bits_per_pair": bits, "pair_alpha": self.rule_alpha,
                "target_power": analytic.TARGET_POWER,
                "min_bias": (z_alpha + z_power) * 0.5 / math.sqrt(bits),
                "copies": f"any stream that repeats another's 2-word run within {self.size} words",
                "nominal_alpha": self.alpha}


def sidak(p: float, k: int) -> float:
    """``1 - (1 - p)**k``, accurate for tiny ``p``: the chance that the smallest of ``k``
    independent uniform p-values is below ``p``."""
    return float(-np.expm1(k * np.log1p(-p))) if p < 1 else 1.0
