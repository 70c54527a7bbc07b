"""The M07.1 lab: every mutant against the catalog, each killed by its designated tests."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.lab import run_lab
from harness.mutants import load_mutants

PLAIN = [m.id for m in load_mutants("M07.1") if not m.extended]


@pytest.fixture(scope="module")
def lab():
    return run_lab("M07.1", jobs=2)


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
@pytest.mark.parametrize("mutant_id", PLAIN)
def test_a_student_with_mutant_s_is_told_the_right_pitfall(lab, mutant_id):
    """What `ol check M07.1 --target sNN` prints: the designated test fails and names the pitfall."""
    row = next(r for r in lab.rows if r.mutant.id == mutant_id)
    for name in row.mutant.designated:
        result = next(t for t in row.run.tests if t.name == name)
        assert not result.ok
        assert result.pitfall == row.mutant.pitfall, (name, result.message)


def test_check_with_the_mutant_target_names_the_pitfall(capsys):
    assert main(["check", "M07.1", "--target", "s01", "-k", "test_boundary_goes_to_next_positive_id"]) == 1
    out = capsys.readouterr().out
    assert "see pitfall 1: u <= c_i instead of u < c_i" in out
