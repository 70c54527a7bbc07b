"""Recorded mutmut survivors: ``mutants/<module>/mutmut/equivalents.toml``.

Each ``[[mutant]]`` record names one surviving mutmut mutant the catalog does not kill on purpose,
by the run-independent key of ``harness.audit.mutations`` (``function``, ``original``, ``mutated``,
and ``occurrence`` only where one function has the same edit twice), with a ``kind``:

- ``equivalent``: the mutant computes the same function as the reference on every input;
- ``out-of-contract``: it differs only in what the contract leaves open (an error's message).

and a ``reason`` a reviewer can check. A record that matches no mutant of the run is *stale*; one
that matches a mutant the catalog kills is *contradicted* (the claim is false). Both are reported.
The file sits in a sub-folder so the hand-written mutant library (``mutants/<module>/*.toml``)
does not try to load it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.audit.mutations import MutmutMutant
from harness.engine.mutants import mutants_dir
from harness.errors import HarnessError

KINDS = ("equivalent", "out-of-contract")
_FIELDS = {"function", "original", "mutated", "kind", "reason", "occurrence"}


@dataclass(frozen=True)
class Record:
    function: str
    original: str
    mutated: str
    kind: str
    reason: str
    occurrence: int | None = None  # None: every mutant with this edit
    number: int = 0  # position in the file (1-based), for messages

    def matches(self, mutant: MutmutMutant) -> bool:
        return ((self.function, self.original, self.mutated) ==
                (mutant.function, mutant.original, mutant.mutated)
                and self.occurrence in (None, mutant.occurrence))

    def label(self) -> str:
        at = f" (occurrence {self.occurrence})" if self.occurrence else ""
        return f"record {self.number}: {self.function}: {self.original!r} -> {self.mutated!r}{at}"

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "original": self.original, "mutated": self.mutated,
                "kind": self.kind, "reason": self.reason, "occurrence": self.occurrence,
                "record": self.number}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Record:
        return cls(d["function"], d["original"], d["mutated"], d["kind"], d["reason"],
                   d.get("occurrence"), int(d.get("record", 0)))


def equivalents_path(module_id: str) -> Path:
    return mutants_dir() / module_id / "mutmut" / "equivalents.toml"


def load_records(path: Path) -> list[Record]:
    """The records of ``path`` (none if it does not exist); HarnessError naming a bad one."""
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HarnessError(f"cannot read {path}: {exc}", "fix the TOML") from None
    unknown = sorted(set(data) - {"mutant"})
    if unknown:
        raise HarnessError(f"{path}: unknown table {unknown[0]!r}", "only [[mutant]] records")
    return [_record(path, n, entry) for n, entry in enumerate(data.get("mutant", []), start=1)]


def _record(path: Path, number: int, entry: Any) -> Record:
    def bad(why: str) -> HarnessError:
        return HarnessError(f"{path}, record {number}: {why}",
                            "fields: function, original, mutated, kind, reason, occurrence")

    if not isinstance(entry, dict):
        raise bad("is not a table")
    extra = sorted(set(entry) - _FIELDS)
    if extra:
        raise bad(f"unknown field {extra[0]!r}")
    for field in ("function", "original", "mutated", "kind", "reason"):
        if not isinstance(entry.get(field), str):
            raise bad(f"{field} must be a string")
    if entry["kind"] not in KINDS:
        raise bad(f"kind must be one of {', '.join(KINDS)}, got {entry['kind']!r}")
    if not entry["reason"].strip() or entry["reason"].strip().upper().startswith("TODO"):
        raise bad("reason is empty or still TODO: say why the mutant cannot or need not be killed")
    occurrence = entry.get("occurrence")
    if occurrence is not None and (isinstance(occurrence, bool) or not isinstance(occurrence, int)
                                   or occurrence < 1):
        raise bad("occurrence must be a positive integer")
    return Record(entry["function"], entry["original"], entry["mutated"], entry["kind"],
                  entry["reason"].strip(), occurrence, number)


@dataclass(frozen=True)
class Matching:
    by_key: dict[str, Record]  # mutmut key -> its record
    stale: tuple[Record, ...]  # records matching no mutant of the run


def match(records: Iterable[Record], mutants: Iterable[MutmutMutant]) -> Matching:
    """Each mutant's record; two records for one mutant is an error (which reason holds?)."""
    records, mutants = list(records), list(mutants)
    by_key: dict[str, Record] = {}
    used: set[int] = set()
    for mutant in mutants:
        hits = [r for r in records if r.matches(mutant)]
        if len(hits) > 1:
            raise HarnessError(f"{mutant.key} matches {hits[0].label()} and {hits[1].label()}",
                               "keep one record per mutant (give occurrence where an edit repeats)")
        if hits:
            by_key[mutant.key] = hits[0]
            used.add(hits[0].number)
    return Matching(by_key, tuple(r for r in records if r.number not in used))


def skeleton(mutants: Iterable[MutmutMutant], everyone: Iterable[MutmutMutant] = ()) -> str:
    """TOML records for ``mutants`` with ``reason = "TODO"``: to review, complete and paste.

    ``occurrence`` is written where the same edit appears more than once in ``everyone``.
    """
    mutants = list(mutants)
    seen: dict[tuple[str, str, str], int] = {}
    for m in [*everyone, *mutants]:
        seen[(m.function, m.original, m.mutated)] = max(seen.get((m.function, m.original, m.mutated), 0),
                                                          m.occurrence)
    out = []
    for m in mutants:
        out += ["[[mutant]]", f"function = {json.dumps(m.function)}",
                f"original = {json.dumps(m.original)}", f"mutated = {json.dumps(m.mutated)}"]
        if seen[(m.function, m.original, m.mutated)] > 1:
            out.append(f"occurrence = {m.occurrence}")
        out += ['kind = "equivalent"  # or "out-of-contract"', 'reason = "TODO"', ""]
    return "\n".join(out)
