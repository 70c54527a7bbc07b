"""Whether two lab results hold the same verdicts: every cell, every kill, every message.

    python3 bench/same_verdicts.py BEFORE/lab-M07.6.json AFTER/lab-M07.6.json [...pairs]

A speed-up must not change what the lab finds (issue #16: "no verdict changed"). This compares
the reference's outcomes and each mutant's cells (``passed``, ``failed``, ``not_run``...), its
kills and the message of each failed cell, and ignores what may differ between runs (durations,
the number of jobs). Exit 0 when every pair is the same, 1 otherwise (each difference printed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def verdicts(path: Path) -> dict[str, Any]:
    """What a lab JSON decided, without its timings."""
    lab = json.loads(path.read_text(encoding="utf-8"))
    return {
        "module": lab["module"], "seed": lab["seed"], "verdict": lab["verdict"],
        "reference": {t["name"]: (t["outcome"], t["message"]) for t in lab["reference"]["tests"]},
        "mutants": {m["id"]: {"outcomes": m["outcomes"], "killed_by": m["killed_by"],
                              "messages": m["messages"]} for m in lab["mutants"]},
        "minimal_subset": lab["minimal_subset"],
    }


def differences(before: dict[str, Any], after: dict[str, Any], where: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            if key not in before or key not in after:
                found.append(f"{where}/{key}: only in {'after' if key in after else 'before'}")
            else:
                found += differences(before[key], after[key], f"{where}/{key}")
        return found
    return [] if before == after else [f"{where}: {before!r} -> {after!r}"]


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print("usage: python3 bench/same_verdicts.py BEFORE.json AFTER.json [BEFORE.json AFTER.json ...]",
              file=sys.stderr)
        return 2
    changed = 0
    for before, after in zip(argv[::2], argv[1::2], strict=True):
        try:
            old, new = verdicts(Path(before)), verdicts(Path(after))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"same_verdicts: cannot read {before} and {after} as lab JSON ({type(exc).__name__}: "
                  f"{exc}); give the lab-MODULE.json files that `ol lab MODULE --out DIR` writes",
                  file=sys.stderr)
            return 2
        found = differences(old, new)
        cells = sum(len(m["outcomes"]) for m in new["mutants"].values())
        print(f"{after}: {'same verdicts' if not found else f'{len(found)} differences'} "
              f"({cells} cells)")
        for line in found[:20]:
            print(f"  {line[:300]}")
        changed += bool(found)
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
