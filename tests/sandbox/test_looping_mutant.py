"""A mutant that loops forever fails its cells at the per-test limit: ``ol lab`` and
``ol check --target`` finish (before the one call path, the in-process ``except BaseException``
swallowed the runner's time-out and the next call looped forever)."""

from __future__ import annotations

import shutil
import time

import pytest

import harness.engine.mutants
from harness.check.engine import CheckRequest, run_check
from harness.engine.isolated import Limits
from harness.engine.requests import LabRequest
from harness.engine.results import Outcome
from harness.lab.engine import run_lab

LOOPING = '''id = "x98"
module = "M07.6"
file = "tinyllm/prob/rejection.py"
function = "residual_distribution"
pitfall = 4
description = "Loops forever when the residual's sum is 0 (p == q)."
designated = ["test_residual_when_p_equals_q"]
hint = "p == q must return a copy of p."

[[edit]]
find = """if z == 0.0:
        return p_arr.copy()"""
replace = """while z == 0.0:
        pass"""
'''


@pytest.fixture
def library(tmp_path, monkeypatch):
    root = tmp_path / "mutants"
    (root / "M07.6").mkdir(parents=True)
    shutil.copy(harness.engine.mutants.mutants_dir() / "M07.6" / "s01.toml", root / "M07.6")
    (root / "M07.6" / "x98.toml").write_text(LOOPING)
    monkeypatch.setattr(harness.engine.mutants, "mutants_dir", lambda: root)
    return root


@pytest.mark.slow
def test_the_lab_finishes_with_the_looping_cells_timed_out(library):
    start = time.monotonic()
    lab = run_lab(LabRequest("M07.6", jobs=2), test_limit_s=1.0)
    row = {r.mutant.id: r for r in lab.rows}["x98"]
    outcomes = {t.name: t.outcome for t in row.run.tests}
    timed_out = [name for name, outcome in outcomes.items() if outcome is Outcome.TIMEOUT]
    assert timed_out and row.killed
    assert all(outcomes[n] in (Outcome.PASSED, Outcome.TIMEOUT, Outcome.FAILED) for n in outcomes)
    assert time.monotonic() - start < 20 + 1.5 * len(timed_out)


def test_check_target_of_a_looping_mutant_finishes(library):
    start = time.monotonic()
    request = CheckRequest("M07.6", target="x98", pattern="test_residual_when_p_equals_q",
                           limits=Limits(test_timeout_s=1.0))
    result = run_check(request, None)
    assert [t.outcome for t in result.tests] == [Outcome.TIMEOUT]
    assert "did not finish within 1 s" in result.tests[0].message
    assert time.monotonic() - start < 10
