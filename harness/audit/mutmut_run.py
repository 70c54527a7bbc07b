"""``ol audit --mutmut``: mutmut over a reference file, with the catalog as its test suite.

1. ``make_workdir``: a throw-away project (mutmut always writes ``./mutants/`` where it runs);
2. ``mutmut run`` there, in a child interpreter; its verdicts are read from ``mutants/*.meta``
   (exit code per mutant key), its coverage from ``mutmut-stats.json``, its totals from
   ``mutmut export-cicd-stats``;
3. the full kill matrix (``harness.audit.matrix``): mutmut stops at the first failing test;
4. every survivor matched against the recorded equivalents by its run-independent key;
5. with ``--compare-lab`` only: ``ol lab`` on the same machine in the same run, for the cost
   per mutant.

The throw-away project is deleted afterwards; mutmut's output is kept as a log beside the reports.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.audit.equivalents import Record, equivalents_path, load_records, match
from harness.audit.matrix import run_matrix
from harness.audit.mutations import extract
from harness.audit.mutmut_result import MutmutAudit, MutmutRow
from harness.audit.workdir import make_workdir
from harness.engine.catalog import collect
from harness.engine.course import Module, load_course
from harness.engine.events import QUIET, Listener
from harness.errors import HarnessError
from harness.escape import plain_log
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

MUTMUT_TIMEOUT_S = 3600.0
_CLI = "import sys; from mutmut.__main__ import cli; sys.exit(cli())"
# A mutant whose function reads exactly as the reference's is equivalent by construction: mutmut
# sometimes writes one (a float literal plus one that rounds back to itself, 2**53 + 1.0).
IDENTICAL = Record("", "", "", "equivalent", "mutmut wrote the reference's own text for this "
                   "function (e.g. a float literal whose +1 rounds back to the same float): the "
                   "same code, so the same function; recognised automatically, no record needed")
_RATE = re.compile(r"([0-9.]+) mutations/second")


def cpu_seconds(who: int = resource.RUSAGE_CHILDREN) -> float:
    """User plus system CPU time (of reaped children by default): what a wall clock shared with
    other processes cannot show."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


# mutmut is for the instructor's audit only: students install ol without it (the `audit` extra).
MUTMUT_HINT = "get it with: pip install -e '.[audit]'"


def mutmut_version() -> str:
    """The installed mutmut's version; a HarnessError saying how to get it when it is missing."""
    import importlib
    from importlib.metadata import PackageNotFoundError, version

    try:
        importlib.import_module("mutmut")
        return version("mutmut")
    except (ImportError, PackageNotFoundError):
        raise HarnessError("`ol audit --mutmut` needs mutmut, which is not installed",
                           MUTMUT_HINT) from None


def _mutmut(workdir: Path, *args: str, timeout: float = MUTMUT_TIMEOUT_S) -> tuple[int, str]:
    """One mutmut command in ``workdir``: exit code and its output, spinner lines folded."""
    env = {k: v for k, v in os.environ.items() if k not in ("MUTANT_UNDER_TEST", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        proc = subprocess.run([sys.executable, "-c", _CLI, *args], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise HarnessError(f"mutmut {' '.join(args)} did not finish in {timeout:g} s",
                           "run it by hand in a copy to see where it hangs") from None
    return proc.returncode, plain_log(proc.stdout + proc.stderr)


def _status_words() -> Callable[[int | None], str]:
    from mutmut.stats import (
        status_by_exit_code,  # mutmut's own table, whatever its version
    )

    return lambda code: status_by_exit_code[code]


def read_meta(workdir: Path, module: Module) -> dict[str, Any]:
    """mutmut's per-mutant results for the mutated file (``mutants/<file>.meta``)."""
    path = workdir / "mutants" / (module.file + ".meta")
    if not path.exists():
        raise HarnessError(f"mutmut wrote no results for {module.file} ({path} is missing)",
                           "see the mutmut log beside the reports")
    return json.loads(path.read_text(encoding="utf-8"))


def covering_tests(workdir: Path, keys: list[str], tests: tuple[str, ...]) -> dict[str, list[str]]:
    """Each mutant's covering catalog tests, from mutmut's stats (``file::test`` -> ``test``)."""
    stats = json.loads((workdir / "mutants" / "mutmut-stats.json").read_text(encoding="utf-8"))
    by_function = stats.get("tests_by_mangled_function_name", {})
    out = {}
    for key in keys:
        node_ids = by_function.get(key.partition("__mutmut_")[0], [])
        names = {n.rpartition("::")[2] for n in node_ids}
        out[key] = [t for t in tests if t in names]
    return out


def catalog_tests(module: Module) -> tuple[str, ...]:
    """The names of ``module``'s catalog tests; a module without a catalog is a setup error."""
    try:
        return tuple(info.name for info, _ in collect(module))
    except ImportError as exc:
        raise HarnessError(f"{module.id} has no catalog to run mutmut with ({exc})",
                           "catalogs live in harness/catalogs/") from None


def run_mutmut_audit(module_id: str, jobs: int | None = None, log_dir: Path | None = None,
                     listener: Listener | None = None, run_lab_too: bool = False,
                     functions: tuple[str, ...] = ()) -> MutmutAudit:
    """mutmut over ``module_id``'s reference file, the full matrix, the equivalents and, with
    ``run_lab_too`` (``ol audit --mutmut --compare-lab``), the lab for its cost per mutant.

    ``functions`` limits the run to the mutants of those top-level functions (mutmut still
    generates every mutant and collects its coverage once); empty means all.
    """
    say = (listener or QUIET).line
    start = time.perf_counter()
    version = mutmut_version()
    module = load_course().module(module_id)
    tests = catalog_tests(module)
    jobs = max(1, jobs or os.cpu_count() or 1)
    workdir = make_workdir(module)
    try:
        say(f"mutmut {version} run over reference/python/{module.file} ({jobs} children)")
        raw = _run_in(workdir, module, tests, jobs, functions, log_dir, say)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    reference = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    mutants = extract(raw["mutated"], reference, raw["keys"])
    rows, stale, path = _rows(module, mutants, raw["meta"], raw["matrix"], raw["covering"], functions)
    lab = _lab(module.id, jobs, say) if run_lab_too else {}
    timings = {"mutmut_s": raw["mutmut_s"], "matrix_s": raw["matrix_s"],
               "mutmut_cpu_s": raw["mutmut_cpu_s"], "matrix_cpu_s": raw["matrix_cpu_s"],
               "lab_s": lab.get("duration_s", 0.0), "total_s": time.perf_counter() - start}
    rate = _RATE.findall(raw["log"])
    return MutmutAudit(module.id, module.file, rows, stale, tests,
                       tuple(raw["matrix"]["clean"]["failed"]), version, jobs, timings,
                       float(rate[-1]) if rate else None, lab, raw["cicd"], path)


def _run_in(workdir: Path, module: Module, tests: tuple[str, ...], jobs: int,
            functions: tuple[str, ...], log_dir: Path | None, say: Callable[[str], None]) -> dict:
    """mutmut run, its results and coverage, then the full matrix: the raw facts of one run."""
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    globs = [f"{module.import_name}.x_{fn}__mutmut_*" for fn in functions]
    code, log = _mutmut(workdir, "run", "--max-children", str(jobs), *globs)
    mutmut_s, mutmut_cpu_s = time.perf_counter() - t0, cpu_seconds() - cpu0
    log_path = log_dir / f"mutmut-{module.id}.log" if log_dir is not None else None
    if log_path is not None:
        _write_log(log_path, log)
    if code != 0:
        tail = " | ".join(log.strip().splitlines()[-3:])
        raise HarnessError(f"mutmut run failed (exit {code}): {tail}",
                           f"see {log_path}" if log_path else "")
    meta = read_meta(workdir, module)
    _mutmut(workdir, "export-cicd-stats")
    cicd_path = workdir / "mutants" / "mutmut-cicd-stats.json"
    cicd = json.loads(cicd_path.read_text(encoding="utf-8")) if cicd_path.exists() else {}
    prefixes = tuple(f"x_{fn}__mutmut_" for fn in functions)
    keys = [k for k in meta["exit_code_by_key"] if not prefixes or k.rpartition(".")[2].startswith(prefixes)]
    covering = covering_tests(workdir, keys, tests)
    say(f"full kill matrix: {len(keys)} mutants x {len(tests)} tests (covering tests only)")
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    matrix = run_matrix(workdir / "mutants", module.id, covering, jobs, MUTMUT_TIMEOUT_S)
    return {"mutmut_s": mutmut_s, "mutmut_cpu_s": mutmut_cpu_s, "log": log, "meta": meta,
            "cicd": cicd, "keys": keys, "covering": covering, "matrix": matrix,
            "matrix_s": time.perf_counter() - t0, "matrix_cpu_s": cpu_seconds() - cpu0,
            "mutated": (workdir / "mutants" / module.file).read_text(encoding="utf-8")}


def _rows(module: Module, mutants: list, meta: dict, matrix: dict, covering: dict,
          functions: tuple[str, ...]):
    """One row per mutant; records of functions left out of a restricted run are not stale."""
    words = _status_words()
    path = equivalents_path(module.id)
    records = [r for r in load_records(path)
               if not functions or r.function.partition(".")[0] in functions]
    matching = match(records, mutants)
    rows = []
    for m in mutants:
        cell = matrix["mutants"].get(m.key, {})
        record = IDENTICAL if m.original == m.mutated else matching.by_key.get(m.key)
        rows.append(MutmutRow(m, words(meta["exit_code_by_key"][m.key]), tuple(cell.get("failed", ())),
                              tuple(covering.get(m.key, ())), dict(cell.get("messages", {})),
                              record,
                              float(meta.get("durations_by_key", {}).get(m.key) or 0.0)))
    shown = path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)
    return tuple(rows), matching.stale, shown


def _lab(module_id: str, jobs: int, say: Callable[[str], None]) -> dict[str, Any]:
    """``ol lab`` (hand-written mutants, full matrix) timed in the same run, for its cost per mutant."""
    from harness.engine.requests import LabRequest
    from harness.lab.engine import run_lab

    say(f"ol lab {module_id} on the same machine, for the cost per mutant")
    cpu0 = cpu_seconds() + cpu_seconds(resource.RUSAGE_SELF)
    try:
        result = run_lab(LabRequest(module_id, jobs=jobs))
    except HarnessError as exc:
        return {"error": exc.message}
    cpu = cpu_seconds() + cpu_seconds(resource.RUSAGE_SELF) - cpu0
    return {"mutants": len(result.rows), "duration_s": result.duration_s, "cpu_s": cpu,
            "jobs": result.jobs, "verdict": result.verdict}


def _write_log(path: Path, text: str) -> None:
    from harness.files import write_atomic

    write_atomic(path, text)
