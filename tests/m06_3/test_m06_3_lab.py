"""The M06.3 lab and commands: every mutant killed by its designated tests, pitfalls named."""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import main
from harness.course import REFERENCE_PYTHON, load_course
from harness.lab import mutant_source, run_lab
from harness.mutants import find_mutant, load_mutants

MODULE = load_course().module("M06.3")
PLAIN = [m.id for m in load_mutants("M06.3") if not m.extended]


@pytest.fixture(scope="module")
def lab():
    return run_lab("M06.3", jobs=2)


@pytest.mark.slow
def test_the_lab_passes_with_every_mutant_killed_by_its_designated_tests(lab):
    assert lab.reference_passed
    assert lab.verdict == "pass", [(r.mutant.id, r.killed_by) for r in lab.rows if not r.designated_killed]
    assert {r.mutant.id for r in lab.rows} >= set(PLAIN)


@pytest.mark.slow
def test_every_catalog_test_kills_something_and_is_someones_designated_killer(lab):
    designated = {t for r in lab.rows for t in r.mutant.designated}
    for test in lab.tests:
        assert lab.kills(test), f"{test} kills no mutant: it cannot fail"
        assert test in designated, f"{test} is no mutant's designated killer"


@pytest.mark.slow
def test_every_failure_of_a_plain_mutant_names_its_pitfall(lab):
    """What `ol check M06.3 --target sNN` prints: each failing test names the mutant's pitfall."""
    for mutant_id in PLAIN:
        row = next(r for r in lab.rows if r.mutant.id == mutant_id)
        for result in row.run.tests:
            if not result.ok:
                assert result.pitfall == row.mutant.pitfall, (mutant_id, result.name, result.message)


def test_check_with_the_mutant_target_names_the_pitfall(capsys):
    assert main(["check", "M06.3", "--target", "s01", "-k", "test_published_vector"]) == 1
    out = capsys.readouterr().out
    assert "the multiplier 1442695040888963407" in out
    assert "see pitfall 1: the wrong LCG multiplier" in out


def test_fresh_stubs_fail_every_test_as_not_implemented(tmp_path, capsys):
    assert main(["start", "M06.3", "--workspace", str(tmp_path)]) == 0
    assert main(["check", "M06.3", "--workspace", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "M06.3: 0 passed, 12 failed (verdict: fail)" in out
    assert out.count("not implemented yet") == 12 and "Traceback" not in out


def _workspace(dest, source=None):
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", dest / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if source is not None:
        (dest / "python" / MODULE.file).write_text(source, encoding="utf-8")
    return dest


@pytest.mark.slow
def test_the_reference_passes_isolated_where_generators_are_handles(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["check", "M06.3", "--workspace", str(_workspace(tmp_path / "ws")),
                 "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert (data["verdict"], data["passed"], data["failed"]) == ("pass", 12, 0)


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["s05", "x15", "x18"])
def test_an_isolated_workspace_with_a_bug_fails_its_designated_test(mutant_id, tmp_path, capsys):
    """Words swapped, shared state, numpy seeds: each crosses the process boundary intact."""
    mutant = find_mutant("M06.3", mutant_id)
    ws = _workspace(tmp_path / "ws", mutant_source(mutant, MODULE))
    assert main(["check", "M06.3", "--workspace", str(ws), "-k", mutant.designated[0]]) == 1
    assert f"see pitfall {mutant.pitfall}:" in capsys.readouterr().out
