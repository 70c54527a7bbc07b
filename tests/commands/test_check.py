"""``ol check`` end to end: the reference in-process and isolated, stubs, dependencies, mutants."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.check.engine import CheckRequest, run_check
from harness.cli import main
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import find_mutant, load_mutants, mutant_source
from harness.engine.workspace import resolve_workspace
from harness.errors import EXIT_PARTIAL
from harness.paths import REFERENCE_PYTHON

MODULES = list(load_course().modules)
MODULE = load_course().module("M07.6")
REFERENCE_WS = REFERENCE_PYTHON.parent


def reference_copy(dest: Path) -> Path:
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", dest / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.mark.slow
def test_reference_passes_in_process_and_isolated(capsys, tmp_path):
    assert main(["check", "M07.6", "--target", "reference"]) == 0
    out = capsys.readouterr().out
    size = len(collect(load_course().module("M07.6")))  # the chapter's 19 tests and ol's own
    module = load_course().module("M07.6")
    top = sum(module.points_of(info.name) for info, _ in collect(module))  # course.toml's points
    assert f"M07.6: {size} passed, 0 failed, score {top:g}/{top:g} (verdict: pass)" in out
    report = tmp_path / "r.json"
    assert main(["check", "M07.6", "--workspace", str(REFERENCE_WS), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"ol check M07.6: workspace {REFERENCE_WS}"
    data = json.loads(report.read_text())
    assert (data["verdict"], data["passed"], data["failed"]) == ("pass", size, 0)
    assert {t["outcome"] for t in data["tests"]} == {"passed"}


@pytest.mark.parametrize("module_id", MODULES)
def test_fresh_stubs_fail_every_test_as_not_implemented(module_id, tmp_path, capsys):
    """A module that needs others is checked with --ref-deps; one that needs none, without."""
    module = load_course().module(module_id)
    count = len(collect(module))  # the catalog's table is pinned in test_catalog_metadata.py
    assert main(["start", module_id, "--workspace", str(tmp_path)]) == 0
    ref_deps = ["--ref-deps"] if module.needs else []
    assert main(["check", module_id, "--workspace", str(tmp_path), *ref_deps]) == 1
    out = capsys.readouterr().out
    top = sum(module.points_of(info.name) for info, _ in collect(module))
    assert f"{module_id}: 0 passed, {count} failed, score 0/{top:g} (verdict: fail)" in out
    assert out.count("not implemented yet") == count
    assert "Traceback" not in out


def test_a_stubbed_dependency_stops_the_check(tmp_path, capsys):
    main(["start", "M07.6", "--workspace", str(tmp_path)])
    capsys.readouterr()
    assert main(["check", "M07.6", "--workspace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ol: M07.6 needs M07.1") and err.count("\n") == 1 and "--ref-deps" in err


def test_reports_are_written(tmp_path, capsys):
    ws = reference_copy(tmp_path / "ws")
    paths = {k: tmp_path / f"out.{k}" for k in ("json", "junit", "gradescope")}
    args = ["check", "M07.6", "--workspace", str(ws), "-k", "hand_example"]
    for k, p in paths.items():
        args += [f"--{k}", str(p)]
    assert main(args) == EXIT_PARTIAL  # -k: a partial run, no verdict (never 0, a full pass)
    assert json.loads(paths["json"].read_text())["passed"] == 2
    assert paths["junit"].read_text().startswith("<?xml")
    gradescope = json.loads(paths["gradescope"].read_text())
    assert (gradescope["score"], gradescope["max_score"]) == (3, 25)  # the example's law: 2 points


def test_diff_needs_a_pass_of_exactly_the_current_file(tmp_path, capsys):
    ws = reference_copy(tmp_path / "ws")
    assert main(["diff", "M07.6", "--workspace", str(ws)]) == 2
    assert "has not passed" in capsys.readouterr().err
    assert main(["check", "M07.6", "--workspace", str(ws)]) == 0
    capsys.readouterr()
    assert main(["diff", "M07.6", "--workspace", str(ws)]) == 0
    assert "identical to the reference" in capsys.readouterr().out
    mine = ws / "python/tinyllm/prob/rejection.py"
    mine.write_text(mine.read_text() + "\n# a change after the pass\n")
    assert main(["diff", "M07.6", "--workspace", str(ws)]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [m for m in load_mutants("M07.6") if not m.extended],
                         ids=lambda m: m.id)
def test_a_workspace_with_a_chapter_bug_fails_its_designated_test(mutant, tmp_path):
    """Issue #3's check: each s-mutant, hand-copied into a workspace, checked isolated."""
    ws = reference_copy(tmp_path / "ws")
    (ws / "python" / mutant.file).write_text(mutant_source(mutant, MODULE))
    pattern = mutant.designated[0]
    result = run_check(CheckRequest("M07.6", str(ws), "student", False, pattern),
                       resolve_workspace(str(ws)))
    failed = {t.name: t for t in result.tests if not t.ok}
    assert pattern in failed, f"{mutant.id} passed {pattern}"
    assert failed[pattern].pitfall == mutant.pitfall


# ``ol check <module> --target s01 -k <test>``: s01's designated test, and what its failure says.
S01_CHECK = {
    "M06.3": ("test_published_vector",
              ["the multiplier 1442695040888963407",
               "see ol pitfall 1 (ol's own, listed by `ol tests M06.3`): the wrong LCG multiplier"]),
    "M07.1": ("test_boundary_goes_to_next_positive_id",
              ["see ol pitfall 1 (ol's own, listed by `ol tests M07.1`): u <= c_i instead of u < c_i"]),
    "M07.6": ("test_accept_is_strict", ["see pitfall 1: accepting on u <= r"]),
}


@pytest.mark.parametrize("module_id", MODULES)
def test_check_against_a_mutant_names_its_pitfall(module_id, capsys):
    test, says = S01_CHECK[module_id]
    mutant = find_mutant(module_id, "s01")
    assert test in mutant.designated
    assert main(["check", module_id, "--target", "s01", "-k", test]) == 1
    out = capsys.readouterr().out
    module = load_course().module(module_id)
    pitfall, label = module.pitfall_text(mutant.pitfall), module.pitfall_label(mutant.pitfall)
    own = ("" if module.is_chapter_pitfall(mutant.pitfall)
           else f" (ol's own, listed by `ol tests {module_id}`)")
    assert f"see {label}{own}: {pitfall}" in " ".join(out.split())  # wrapped to 100 columns
    assert out.index("diagnosis:") < out.index("FAILED:")  # the diagnosis comes first
    for text in says:
        assert text in out
