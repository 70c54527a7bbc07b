"""The lab: every mutant against the whole catalog, and a verdict that can fail.

The lab's promises are checked for every module of the course (``harness/course.toml``), each
module's lab run once for the session (the ``module_lab`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import shutil

import pytest

import harness.engine.mutants as mutants_mod
from harness.cli import main
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants
from harness.engine.requests import LabRequest
from harness.errors import VerdictFailure
from harness.lab.engine import minimal_cover, run_lab

MODULES = list(load_course().modules)
PLAIN = [(module_id, m.id) for module_id in MODULES for m in load_mutants(module_id) if not m.extended]
# Modules whose plain mutants fail only tests that name the mutant's own pitfall. In the others a
# plain mutant also fails tests about other pitfalls (its designated tests still name its own).
ONLY_ITS_PITFALL = {"M06.3"}


def _plain(module_id: str) -> set[str]:
    return {mutant_id for mid, mutant_id in PLAIN if mid == module_id}


@pytest.mark.slow
@pytest.mark.parametrize("module_id", MODULES)
def test_the_lab_passes_with_every_mutant_killed_by_its_designated_tests(module_lab, module_id):
    lab = module_lab(module_id)
    assert lab.reference_passed
    assert lab.verdict == "pass", [(r.mutant.id, r.killed_by) for r in lab.rows if not r.designated_killed]
    # The plain mutants themselves are pinned per module in tests/commands/test_catalog_metadata.py.
    assert {r.mutant.id for r in lab.rows} >= _plain(module_id)


@pytest.mark.slow
@pytest.mark.parametrize("module_id", MODULES)
def test_every_catalog_test_kills_something(module_lab, module_id):
    lab = module_lab(module_id)
    for test in lab.tests:
        assert lab.kills(test), f"{test} kills no mutant: it cannot fail"


@pytest.mark.slow
@pytest.mark.parametrize("module_id", MODULES)
def test_every_catalog_test_is_some_mutants_designated_killer(module_lab, module_id):
    lab = module_lab(module_id)
    designated = {t for r in lab.rows for t in r.mutant.designated}
    assert set(lab.tests) - designated == set(), "a test nobody designates needs a note or a mutant"


@pytest.mark.slow
@pytest.mark.parametrize("module_id, mutant_id", PLAIN, ids=[f"{m}-{s}" for m, s in PLAIN])
def test_a_student_with_mutant_s_is_told_the_right_pitfall(module_lab, module_id, mutant_id):
    """What `ol check <module> --target sNN` prints: the designated test fails and names the pitfall."""
    row = next(r for r in module_lab(module_id).rows if r.mutant.id == mutant_id)
    for name in row.mutant.designated:
        result = next(t for t in row.run.tests if t.name == name)
        assert not result.ok
        assert result.pitfall == row.mutant.pitfall, (name, result.message)
    if module_id in ONLY_ITS_PITFALL:
        for result in row.run.tests:
            if not result.ok:
                assert result.pitfall == row.mutant.pitfall, (mutant_id, result.name, result.message)


def test_minimal_cover_is_minimal():
    kills = {"a": {"1", "2"}, "b": {"2", "3"}, "c": {"1", "3"}, "d": {"1", "2", "3"}}
    assert minimal_cover(kills, {"1", "2", "3"}) == ["d"]
    assert sorted(minimal_cover({"a": {"1"}, "b": {"2"}}, {"1", "2"})) == ["a", "b"]


@pytest.fixture
def library(tmp_path, monkeypatch):
    """A private copy of the mutant library the test may break."""
    shutil.copytree(mutants_mod.mutants_dir(), tmp_path / "mutants")
    monkeypatch.setattr(mutants_mod, "mutants_dir", lambda: tmp_path / "mutants")
    return tmp_path / "mutants" / "M07.6"


def _keep(library, *ids):
    for path in library.glob("*.toml"):
        if path.stem not in ids:
            path.unlink()


def test_a_surviving_mutant_fails_the_lab(library, capsys):
    _keep(library, "s01")
    # Equivalent in this reference: as_distribution already returned a fresh array.
    (library / "s90.toml").write_text(
        'id = "s90"\nmodule = "M07.6"\nfile = "tinyllm/prob/rejection.py"\n'
        'function = "residual_distribution"\npitfall = 6\n'
        'description = "The copy is dropped (equivalent here)."\n'
        'designated = ["test_residual_when_p_equals_q"]\nhint = "Compare objects."\n'
        '[[edit]]\nfind = "return p_arr.copy()"\nreplace = "return p_arr"\n')
    result = run_lab(LabRequest("M07.6", jobs=1))
    assert result.verdict == "fail"
    survivor = next(r for r in result.rows if r.mutant.id == "s90")
    assert not survivor.killed


def test_a_mutant_that_no_longer_applies_stops_the_lab(library, capsys):
    _keep(library, "s01")
    text = (library / "s01.toml").read_text()
    (library / "s01.toml").write_text(text.replace("u < p_x / q_x", "u < p_x / q_x  # gone"))
    with pytest.raises(VerdictFailure) as info:
        run_lab(LabRequest("M07.6", jobs=1))
    assert "s01" in info.value.message
    assert main(["lab", "M07.6", "--jobs", "1"]) == 1
    err = capsys.readouterr().err
    assert "s01" in err and "no longer applies" in err and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("module_id", MODULES)
def test_coverage_deduction_gives_the_exhaustive_matrix(module_id, module_lab, exhaustive_lab):
    """The cells the default lab does not run (``not_run``) pass when every test is run, and
    every other cell is the same: the same kills.

    The exhaustive lab takes the cells the default lab ran from the session's lab cache (keyed
    by everything that decides a cell: running them again would show only that a run repeats)
    and runs exactly the cells the default lab deduced, which is what the deduction claims."""
    fast = module_lab(module_id)
    full = exhaustive_lab(module_id)
    deduced = sum(len(r.not_run) for r in fast.rows)
    assert full.reuse["cells_run"] == deduced
    assert full.reuse["cells_cached"] == sum(len(r.run.tests) for r in fast.rows)
    assert {r.mutant.id: r.killed_by for r in fast.rows} == {r.mutant.id: r.killed_by for r in full.rows}
    assert all(not r.not_run for r in full.rows)
    for quick, every in zip(fast.rows, full.rows, strict=True):
        cells = {t: quick.outcome(t) for t in fast.tests}
        assert {t: "passed" if o == "not_run" else o for t, o in cells.items()} == \
            {t: every.outcome(t) for t in full.tests}, quick.mutant.id


@pytest.mark.slow
def test_every_m07_6_mutant_is_told_its_own_pitfall_by_its_designated_tests(module_lab):
    """Extended mutants too: each check of the M07.6 catalog names the pitfall of what it checks."""
    lab = module_lab("M07.6")
    for row in lab.rows:
        for name in row.mutant.designated:
            result = next(t for t in row.run.tests if t.name == name)
            assert result.pitfall == row.mutant.pitfall, (row.mutant.id, name, result.message[:300])


@pytest.mark.slow
def test_every_m07_6_failure_names_a_pitfall_its_test_lists(module_lab):
    """``@case(pitfalls=...)`` lists every pitfall the test's checks can name."""
    from harness.engine.catalog import collect

    listed = {info.name: set(info.pitfalls) for info, _ in collect(load_course().module("M07.6"))}
    for row in module_lab("M07.6").rows:
        for result in row.run.tests:
            if not result.ok and result.pitfall is not None:
                assert result.pitfall in listed[result.name], (row.mutant.id, result.name, result.pitfall)
