"""What ``ol audit --power`` finds, as frozen dataclasses with one JSON shape (``to_json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.audit.analytic import TARGET_POWER, Rate
from harness.engine.serial import (
    float_from_json,
    nonfinite_as_text,
    optional_float,
    reading,
    rerun_command,
    restored,
    tagged,
    untag,
)

# PowerAudit's. Version 2: the tag, and the reference p-values and times written exactly
# (version 1 rounded them), so the audit can be read back.
FORMAT_VERSION = 2


@dataclass(frozen=True)
class MutantPower:
    """One mutant that could change a sampled test's law, and what the test does about it.

    ``method``: ``table`` (exact law, trials computed from the table), ``trials`` (the catalog's
    own trial at every seed: the code is not tabulable, or its table disagreed with a real run),
    or ``none`` (the exact law is the reference's, so there is nothing to detect).
    """

    mutant: str
    description: str
    designated: bool
    method: str
    law_changed: bool | None  # None: not known exactly
    law: dict[str, Any]
    power: Rate | None
    fixed_seed_killed: bool
    mean_statistic: float | None = None
    note: str = ""

    @property
    def problems(self) -> list[str]:
        """Why this row fails the audit (only designated mutants can)."""
        if not self.designated:
            return []
        out = []
        if self.law_changed is False:
            out.append("its law is the reference's: the test cannot detect it")
        if self.power is not None and self.power.value < TARGET_POWER:
            out.append(f"power {self.power.value:.4f} < {TARGET_POWER} over {self.power.n} seeds")
        if not self.fixed_seed_killed:
            out.append("the catalog's fixed seed does not kill it")
        return out

    def to_json(self) -> dict[str, Any]:
        return nonfinite_as_text({
            "mutant": self.mutant, "description": self.description, "designated": self.designated,
            "method": self.method, "law_changed": self.law_changed, "law": self.law,
            "power": self.power.to_json() if self.power else None,
            "fixed_seed_killed": self.fixed_seed_killed, "mean_statistic": self.mean_statistic,
            "note": self.note, "problems": self.problems,
        })

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MutantPower:
        return cls(d["mutant"], d["description"], bool(d["designated"]), d["method"],
                   d["law_changed"], restored(d["law"]),
                   Rate.from_json(d["power"]) if d.get("power") is not None else None,
                   bool(d["fixed_seed_killed"]), optional_float(d.get("mean_statistic")),
                   d.get("note", ""))


@dataclass(frozen=True)
class TestPower:
    """One sampled test: its false-alarm rate on the reference, its power, what it can detect."""

    __test__ = False  # not a pytest class

    test: str
    kind: str
    alpha_name: str
    alpha: float  # the level the false-alarm rate is held to (exact where known)
    fixed_seed: int
    size: int
    false_alarm: Rate
    fixed_seed_pvalue: float
    calibration: dict[str, Rate]  # "0.05" -> rate of reference p-values below 0.05
    uniformity_pvalue: float  # Kolmogorov-Smirnov of the reference p-values against U(0, 1)
    detectable: dict[str, Any]
    mutants: tuple[MutantPower, ...]
    unreachable: tuple[str, ...]  # mutants editing code this test's trial never runs
    pvalues: tuple[float, ...] = field(default=(), repr=False)

    @property
    def problems(self) -> list[str]:
        out = []
        if self.false_alarm.n and self.false_alarm.low > self.alpha:
            out.append(f"false-alarm rate {self.false_alarm.value:.3g} (95% CI from "
                       f"{self.false_alarm.low:.3g}) is above alpha = {self.alpha:.3g}")
        if self.fixed_seed_pvalue < self.alpha_threshold:
            out.append("the reference fails at the catalog's fixed seed")
        out += [f"{m.mutant}: {p}" for m in self.mutants for p in m.problems]
        return out

    @property
    def alpha_threshold(self) -> float:
        """The p-value below which the test fails (the nominal alpha of its rule)."""
        return float(self.detectable.get("nominal_alpha", self.alpha))

    def to_json(self) -> dict[str, Any]:
        return nonfinite_as_text({
            "test": self.test, "kind": self.kind, "alpha_name": self.alpha_name,
            "alpha": self.alpha, "fixed_seed": self.fixed_seed, "size": self.size,
            "false_alarm": self.false_alarm.to_json(), "fixed_seed_pvalue": self.fixed_seed_pvalue,
            "calibration": {k: v.to_json() for k, v in self.calibration.items()},
            "uniformity_pvalue": self.uniformity_pvalue, "detectable": self.detectable,
            "mutants": [m.to_json() for m in self.mutants], "unreachable": list(self.unreachable),
            "problems": self.problems, "reference_pvalues": list(self.pvalues),
        })

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TestPower:
        return cls(d["test"], d["kind"], d["alpha_name"], float_from_json(d["alpha"]),
                   int(d["fixed_seed"]), int(d["size"]), Rate.from_json(d["false_alarm"]),
                   float_from_json(d["fixed_seed_pvalue"]),
                   {k: Rate.from_json(v) for k, v in d["calibration"].items()},
                   float_from_json(d["uniformity_pvalue"]), restored(d["detectable"]),
                   tuple(MutantPower.from_json(m) for m in d["mutants"]),
                   tuple(d["unreachable"]),
                   tuple(float_from_json(p) for p in d.get("reference_pvalues", ())))


@dataclass(frozen=True)
class PowerAudit:
    module: str
    seeds: int
    false_alarm_seeds: int
    jobs: int
    duration_s: float
    tests: tuple[TestPower, ...]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "fail" if any(t.problems for t in self.tests) else "pass"

    def to_json(self) -> dict[str, Any]:
        return tagged("PowerAudit", FORMAT_VERSION, {
            "module": self.module, "verdict": self.verdict,
            "seeds": self.seeds, "false_alarm_seeds": self.false_alarm_seeds, "jobs": self.jobs,
            "duration_s": self.duration_s, "timings": dict(self.timings),
            "target_power": TARGET_POWER, "tests": [t.to_json() for t in self.tests],
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> PowerAudit:
        """The audit ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        rerun = rerun_command(d, "module", "ol audit {} --power", "ol audit MODULE --power")
        untag(d, "PowerAudit", (FORMAT_VERSION,), source, rerun)
        with reading("PowerAudit", source, rerun):
            return cls(d["module"], int(d["seeds"]), int(d["false_alarm_seeds"]), int(d["jobs"]),
                       float(d["duration_s"]), tuple(TestPower.from_json(t) for t in d["tests"]),
                       {k: float(v) for k, v in d.get("timings", {}).items()})
