"""What ``ol audit --mutmut`` finds: one row per mutmut mutant, and the audit's counts and times."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.audit.equivalents import Record
from harness.audit.mutations import MutmutMutant
from harness.engine.serial import reading, rerun_command, tagged, untag

# MutmutAudit's. Version 2: the tag, each mutant's "number" and "replacement", and times written
# exactly (version 1 rounded them), so the audit can be read back.
FORMAT_VERSION = 2
DETECTED = ("killed", "timeout")  # mutmut's statuses that count as detected


@dataclass(frozen=True)
class MutmutRow:
    """One mutant: mutmut's verdict, the full kill matrix's, and the record explaining a survivor."""

    mutant: MutmutMutant
    mutmut_status: str  # mutmut's word for its exit code: killed, survived, timeout, no tests, ...
    killed_by: tuple[str, ...]  # every catalog test that fails on it (the full matrix)
    covered_by: tuple[str, ...]  # the catalog tests that call its function (mutmut's coverage)
    messages: dict[str, str] = field(default_factory=dict)
    record: Record | None = None
    duration_s: float = 0.0  # mutmut's time for this mutant

    @property
    def detected(self) -> bool:
        return self.mutmut_status in DETECTED or bool(self.killed_by)

    @property
    def equivalent(self) -> bool:
        """Recorded as equivalent (or out of contract) and indeed not detected."""
        return self.record is not None and not self.detected

    @property
    def unexplained(self) -> bool:
        return not self.detected and self.record is None

    @property
    def contradicted(self) -> bool:
        """Recorded as not killable, yet the catalog kills it: the record is wrong."""
        return self.record is not None and self.detected

    @property
    def disagreement(self) -> str:
        """mutmut and the full matrix disagree (a flaky test, a time-out under load, ...)."""
        by_mutmut = self.mutmut_status in DETECTED
        if by_mutmut and not self.killed_by and self.mutmut_status != "timeout":
            return "mutmut killed it, but no catalog test fails on it in the full matrix"
        if not by_mutmut and self.killed_by:
            return f"mutmut says {self.mutmut_status}, the full matrix kills it"
        return ""

    @property
    def stryker_status(self) -> str:
        if self.equivalent:
            return "Ignored"
        if self.mutmut_status == "timeout" and not self.killed_by:
            return "Timeout"
        if self.detected:
            return "Killed"
        return {"no tests": "NoCoverage", "caught by type check": "CompileError",
                "suspicious": "RuntimeError", "segfault": "RuntimeError",
                "skipped": "Ignored", "not checked": "Pending"}.get(self.mutmut_status, "Survived")

    def to_json(self) -> dict[str, Any]:
        return {**self.mutant.to_json(), "mutmut_status": self.mutmut_status,
                "status": self.stryker_status, "killed_by": list(self.killed_by),
                "covered_by": list(self.covered_by), "messages": self.messages,
                "record": self.record.to_json() if self.record else None,
                "unexplained": self.unexplained, "contradicted": self.contradicted,
                "disagreement": self.disagreement, "duration_s": self.duration_s}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MutmutRow:
        record = Record.from_json(d["record"]) if d.get("record") is not None else None
        return cls(MutmutMutant.from_json(d), d["mutmut_status"], tuple(d["killed_by"]),
                   tuple(d["covered_by"]), dict(d.get("messages", {})), record,
                   float(d.get("duration_s", 0.0)))


@dataclass(frozen=True)
class MutmutAudit:
    module: str
    file: str  # the mutated reference file, relative to reference/python
    rows: tuple[MutmutRow, ...]
    stale: tuple[Record, ...]
    tests: tuple[str, ...]
    clean_failures: tuple[str, ...]  # catalog tests failing on the trampolined original
    mutmut_version: str
    jobs: int
    timings: dict[str, float]  # mutmut_s, matrix_s, lab_s, total_s
    mutmut_rate: float | None  # the "mutations/second" mutmut printed (its mutation phase)
    lab: dict[str, Any]  # mutants, duration_s, jobs (or error) of the ol lab run of the same audit
    mutmut_stats: dict[str, Any] = field(default_factory=dict)  # mutmut export-cicd-stats
    equivalents_file: str = ""

    def count(self, what: str) -> int:
        return sum(getattr(r, what) for r in self.rows)

    @property
    def score(self) -> float:
        """Killed over non-equivalent mutants."""
        counted = len(self.rows) - self.count("equivalent")
        return self.count("detected") / counted if counted else 1.0

    @property
    def verdict(self) -> str:
        return "fail" if self.count("unexplained") or self.clean_failures else "pass"

    def speed(self) -> dict[str, float | None]:
        """Mutants per second and seconds per mutant, wall clock and CPU, of mutmut, the full
        matrix and ``ol lab`` (CPU time is what other processes on the machine do not inflate)."""
        n, t, lab = len(self.rows), self.timings, self.lab
        out: dict[str, float | None] = {"mutmut_reported_per_s": self.mutmut_rate}
        for name, wall, cpu, count in (
                ("mutmut", t.get("mutmut_s"), t.get("mutmut_cpu_s"), n),
                ("matrix", t.get("matrix_s"), t.get("matrix_cpu_s"), n),
                ("audit", (t.get("mutmut_s") or 0) + (t.get("matrix_s") or 0),
                 (t.get("mutmut_cpu_s") or 0) + (t.get("matrix_cpu_s") or 0), n),
                ("lab", lab.get("duration_s"), lab.get("cpu_s"), lab.get("mutants"))):
            out[f"{name}_per_s"] = count / wall if wall and count else None
            out[f"{name}_s_per_mutant"] = wall / count if wall and count else None
            out[f"{name}_cpu_s_per_mutant"] = cpu / count if cpu and count else None
        return out

    def to_json(self) -> dict[str, Any]:
        return tagged("MutmutAudit", FORMAT_VERSION, {
            "module": self.module, "file": self.file,
            "verdict": self.verdict, "mutmut_version": self.mutmut_version, "jobs": self.jobs,
            "counts": {"total": len(self.rows), "detected": self.count("detected"),
                       "equivalent": self.count("equivalent"),
                       "unexplained": self.count("unexplained"),
                       "contradicted": self.count("contradicted"), "stale_records": len(self.stale),
                       "disagreements": sum(bool(r.disagreement) for r in self.rows)},
            "score": self.score, "clean_failures": list(self.clean_failures),
            "timings": dict(self.timings), "mutmut_rate": self.mutmut_rate,
            "speed": self.speed(), "lab": self.lab, "mutmut_stats": self.mutmut_stats,
            "equivalents_file": self.equivalents_file, "tests": list(self.tests),
            "stale_records": [r.to_json() for r in self.stale],
            "mutants": [r.to_json() for r in self.rows],
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> MutmutAudit:
        """The audit ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        rerun = rerun_command(d, "module", "ol audit {} --mutmut", "ol audit MODULE --mutmut")
        untag(d, "MutmutAudit", (FORMAT_VERSION,), source, rerun)
        with reading("MutmutAudit", source, rerun):
            return cls(d["module"], d["file"], tuple(MutmutRow.from_json(r) for r in d["mutants"]),
                       tuple(Record.from_json(r) for r in d["stale_records"]), tuple(d["tests"]),
                       tuple(d["clean_failures"]), d["mutmut_version"], int(d["jobs"]),
                       {k: float(v) for k, v in d["timings"].items()}, d.get("mutmut_rate"),
                       dict(d["lab"]), dict(d.get("mutmut_stats", {})),
                       d.get("equivalents_file", ""))
