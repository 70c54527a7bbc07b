"""The full kill matrix of mutmut's mutants: every catalog test against every mutant.

mutmut stops each mutant at its first failing test (``pytest -x``), so it records no ``killedBy``.
This module runs in a fresh interpreter (``main(SPEC, OUT)``, started by ``run_matrix``) whose
``sys.path`` starts with mutmut's ``mutants/`` copy, so ``tinyllm`` is the trampolined code and
never the reference. It selects each mutant the way mutmut's own child processes do, through the
``MUTANT_UNDER_TEST`` environment variable the trampolines read on every call, runs the whole
catalog (no stop at the first kill), and writes plain JSON. Mutants are shared among ``jobs``
forked processes after the one import.

A test that never calls the mutated function (mutmut's own coverage, ``mutmut-stats.json``) runs
the original code and passes by construction, so only covering tests run; the rest are reported
as not covering, which is exact, not an estimate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.engine.pools import forked_pool
from harness.errors import HarnessError
from harness.paths import REPO_ROOT

TEST_LIMIT_S = 60.0
# The child runs this checkout's harness, whatever ``ol`` another editable install would import.
_CHILD_MAIN = ("import sys; sys.path.insert(1, {root!r}); "
               "from harness.audit.matrix import main; raise SystemExit(main(sys.argv[1:]))")
MESSAGE_CHARS = 300


def run_matrix(mutants_root: Path, module_id: str, covering: dict[str, list[str]], jobs: int,
               timeout_s: float | None = None) -> dict[str, Any]:
    """``{"clean": row, "mutants": {key: row}, "duration_s": s}`` from a child interpreter;
    ``covering`` maps each mutmut key to the catalog tests that call its function."""
    with tempfile.TemporaryDirectory(prefix="ol-matrix-") as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec.write_text(json.dumps({"python": str(mutants_root), "module": module_id,
                                    "covering": covering, "jobs": jobs}), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("MUTANT_UNDER_TEST", "PYTHONPATH")}
        proc = subprocess.run([sys.executable, "-c", _CHILD_MAIN.format(root=str(REPO_ROOT)),
                               str(spec), str(out)],
                              cwd=mutants_root, env=env, capture_output=True, text=True, check=False,
                              timeout=timeout_s)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise HarnessError("the kill matrix of mutmut's mutants did not run: " + " | ".join(tail),
                               "run harness.audit.matrix.main([SPEC, OUT]) by hand to see why")
        return json.loads(out.read_text(encoding="utf-8"))


# -- the child interpreter ------------------------------------------------------------------------

_CHILD: dict[str, Any] = {}  # what forked workers inherit: the module and its target


def _row(key: str) -> tuple[str, dict[str, Any]]:
    """The covering catalog tests against one mutant (``""``: all tests, the original code)."""
    from harness.engine.catalog import collect
    from harness.engine.runner import run_case

    module, target = _CHILD["module"], _CHILD["target"]
    wanted = set(_CHILD["covering"].get(key, ())) if key else None
    os.environ["MUTANT_UNDER_TEST"] = key
    results = [run_case(module, info, fn, target, TEST_LIMIT_S) for info, fn in collect(module)
               if wanted is None or info.name in wanted]
    failed = [t for t in results if not t.ok]
    return key, {
        "ran": [t.name for t in results],
        "failed": [t.name for t in failed],
        "outcomes": {t.name: t.outcome.value for t in failed},
        "messages": {t.name: _first_line(t.message) or t.outcome.value for t in failed},
        "duration_s": round(sum(t.duration_s for t in results), 4),
    }


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:MESSAGE_CHARS] if lines else ""


def main(argv: list[str]) -> int:
    import time

    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    root = Path(spec["python"]).resolve()
    sys.path.insert(0, str(root))
    os.environ["MUTANT_UNDER_TEST"] = ""
    from harness.audit.workdir import mutmut_target
    from harness.engine.course import load_course

    _CHILD.update(module=load_course().module(spec["module"]), covering=spec["covering"],
                  target=mutmut_target(spec["module"], root))
    start = time.perf_counter()
    clean = _row("")[1]
    rows: dict[str, Any] = {}
    keys, jobs = list(spec["covering"]), max(1, int(spec["jobs"]))
    if jobs == 1:
        rows.update(map(_row, keys))
    else:
        with forked_pool(jobs) as pool:
            rows.update(pool.imap_unordered(_row, keys))
    out = {"clean": clean, "mutants": rows, "duration_s": round(time.perf_counter() - start, 3),
           "python": str(root), "jobs": jobs}
    Path(argv[1]).write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a child interpreter
    raise SystemExit(main(sys.argv[1:]))
