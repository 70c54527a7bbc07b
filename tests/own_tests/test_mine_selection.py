"""``ol tests --mine`` runs on each bug only the tests that reach its function on the reference
(``harness.own_tests.selection``): every report is what running every test gives
(``--exhaustive``), and neither a forged reach nor a suite that knows it runs in part can make it
catch a bug it would not catch whole.

Each full run is a module-scoped fixture, run once; the bugs are one or more per function of
M07.6 (every function, its helpers ``_pair`` and ``_finite`` included).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.course import load_course
from harness.own_tests import engine as mine
from harness.own_tests.selection import (
    OTHER_TESTS,
    PARTIAL,
    PARTIAL_PROBLEM,
    Reach,
    decode_reach,
    reaches,
    settle,
)

SUITES = Path(__file__).resolve().parent / "suites"
MODULE = load_course().module("M07.6")
# rejection_accept s01 x08, residual_distribution s03 s05 x18, speculative_step s06 s11,
# acceptance_probability s10 x19, rejection_sample s15 s16, _pair x04, _finite x45.
BUGS = ["s01", "x08", "s03", "s05", "x18", "s06", "s11", "s10", "x19", "s15", "s16", "x04", "x45"]
R = "reach/test_reach.py::"


def run(suite: str, exhaustive: bool, bugs: list[str] | None = BUGS,
        plan: list | None = None, monkeypatch: pytest.MonkeyPatch | None = None,
        jobs: int = 2) -> dict:
    """The result's JSON without its timing; ``plan`` gets (key, tests given or None, check)."""
    if plan is not None and monkeypatch is not None:
        execute = mine._execute

        def spy(server, flights, waiting, *args):
            plan.extend((j.impl.key, j.select, j.check) for j in waiting)
            return execute(server, flights, waiting, *args)

        monkeypatch.setattr(mine, "_execute", spy)
    doc = mine.run_mine(MODULE, SUITES / suite, jobs=jobs, mutant_ids=bugs,
                        exhaustive=exhaustive).to_json()
    del doc["duration_s"], doc["jobs"]  # how it ran, not what it found
    # What differs between any two runs: a failure inside a dependency names the run's staging
    # folder, and an object's repr its address.
    text = re.sub(r"ol-mine-stage-[^/]*/", "STAGE/", json.dumps(doc))
    return json.loads(re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", text))


@pytest.fixture(scope="module")
def reach_plan():
    plan: list = []
    with pytest.MonkeyPatch.context() as mp:
        doc = run("reach", False, plan=plan, monkeypatch=mp, jobs=1)  # no run beside the first
    return doc, plan


@pytest.fixture(scope="module")
def reach_whole():
    return run("reach", True)


# -- the same report -----------------------------------------------------------------------------

@pytest.mark.slow
def test_ways_of_reaching_give_the_report_of_every_test_run(reach_plan, reach_whole):
    """Indirect calls, a name imported at a module's top, the module's attribute, a value made
    at import, a shared fixture, a test's own fixture, parametrised ids (``--help``, spaces,
    ``::``), a class, a test failing on the reference: cell for cell, message for message."""
    doc, _ = reach_plan
    assert doc == reach_whole
    assert "noted" not in json.dumps(doc)  # the recording wrapper is in no failure's text
    assert doc["score"] >= 8 and doc["wrong_tests"][0]["test"] == R + "test_fails_on_the_reference"


@pytest.mark.parametrize("suite", ["worked_example", "strong"])
@pytest.mark.slow
def test_the_bundled_suites_give_the_report_of_every_test_run(suite):
    bugs = None if suite == "worked_example" else BUGS  # every bug of the library for the first
    assert run(suite, False, bugs) == run(suite, True, bugs)


@pytest.mark.slow
def test_each_bug_runs_only_the_tests_that_reach_its_function(reach_plan):
    _, plan = reach_plan
    given = {key: select for key, select, check in plan if not check}
    assert given["reference"] is None and given["loops"] is None  # correct code: every test
    residual = given["s05"]  # speculative_step calls it; one test names it by the module
    assert residual == {R + "test_only_speculative_step", R + "test_through_the_module",
                        R + "test_fails_on_the_reference"}
    assert given["x18"] == residual and given["s06"] == {R + "test_only_speculative_step",
                                                         R + "test_fails_on_the_reference"}
    accept = given["s01"]
    assert {R + "test_parametrised[--help]", R + "test_parametrised[-p no:python]",
            R + "test_parametrised[a b::c[d]]", R + "test_own_fixture",
            R + "TestAClass::test_accept", R + "test_only_speculative_step"} <= accept
    assert R + "test_reaches_nothing" not in accept and R + "TestAClass::test_alpha" not in accept
    # Called at collection (a value at import) or in a shared fixture: every test may see it.
    assert given["s10"] is None and given["x19"] is None and given["s15"] is None
    checks = [select for _, select, check in plan if check]
    assert len(checks) == len(set(checks)) and residual in checks and accept in checks


# -- what a suite cannot gain --------------------------------------------------------------------

@pytest.mark.slow
def test_a_forged_reach_makes_the_suite_catch_less_never_more():
    """The suite claims no test reached anything: no bug runs a test (one job: none runs whole
    beside the first run), and none is caught, where run whole it catches some."""
    forged, whole = run("hostile_forged_reach", False, jobs=1), run("hostile_forged_reach", True)
    assert forged["score"] == 0 < whole["score"]
    assert forged["correct"] == whole["correct"] and forged["wrong_tests"] == []
    # With two jobs, the one bug drawn to run whole beside the first run may be caught: only
    # where running every test catches it too.
    two = run("hostile_forged_reach", False)
    assert {b["id"] for b in two["bugs"] if b["caught"]} <= {
        b["id"] for b in whole["bugs"] if b["caught"]}


@pytest.mark.slow
def test_a_suite_failing_when_run_in_part_catches_nothing_it_would_not_whole():
    """Its tests fail whenever some tests are left out, so on every bug given a choice of tests:
    the reference's check run of the same choice fails them too, and those bugs get no verdict
    (never a catch); run whole, it catches nothing either."""
    part, whole = run("hostile_partial", False), run("hostile_partial", True)
    assert whole["score"] == 0 and part["score"] == 0
    partial = [b for b in part["bugs"] if b["run"] == PARTIAL]
    assert partial and all(b["problem"] == PARTIAL_PROBLEM for b in partial)
    assert part["correct"] == whole["correct"]


# -- the rule, unit by unit ----------------------------------------------------------------------

def test_reaches_names_a_function_its_methods_or_everything():
    assert reaches({"f", "g"}, "f") and not reaches({"g"}, "f")
    assert reaches({"Sampler.draw"}, "Sampler") and not reaches({"Sampler"}, "Sampler.draw")
    assert not reaches({"ff"}, "f") and not reaches({"f_"}, "f") and reaches({"*"}, "f")


def test_the_choice_is_the_tests_reaching_the_function_and_those_that_did_not_pass():
    reach = Reach({"a": frozenset({"f"}), "b": frozenset({"g"}), "c": frozenset()}, frozenset())
    outcomes = {"a": "passed", "b": "passed", "c": "failed", "d": "passed"}
    assert reach.chosen(outcomes, "f") == {"a", "c"}
    assert reach.chosen(outcomes, "h") == {"c"}
    assert Reach({"a": frozenset({"f"})}, frozenset()).chosen({"a": "passed"}, "g") == frozenset()
    assert Reach({}, frozenset({"f"})).chosen(outcomes, "f") is None  # called outside a test
    assert Reach({t: frozenset({"f"}) for t in outcomes}, frozenset()).chosen(outcomes, "f") is None


@pytest.mark.parametrize("data", [{}, {"reached": {"a": ["f"]}, "everywhere": ""},
                                  {"reached": [], "everywhere": ""},
                                  {"reached": {"a": "f"}, "everywhere": None}])
def test_a_malformed_reach_is_no_reach_so_every_test_runs(data):
    assert decode_reach(data) is None


def test_a_reach_is_read_as_names():
    assert decode_reach({"reached": {"a": "f g"}, "everywhere": "h"}) == Reach(
        {"a": frozenset({"f", "g"})}, frozenset({"h"}))


REF = {"a": "passed", "b": "passed", "c": "failed", "d": "skipped"}


def test_tests_not_run_take_the_references_outcome_in_its_order():
    got = settle(REF, {"c": "ref c"}, frozenset({"b", "c"}), {"b": "passed", "c": "failed"},
                 ({"c": "failed", "b": "failed"}, {"b": "bug b", "c": "bug c"}))
    assert got == ({"a": "passed", "b": "failed", "c": "failed", "d": "skipped"},
                   {"b": "bug b", "c": "bug c"})
    assert list(got[0]) == list(REF) and list(got[1]) == ["b", "c"]


@pytest.mark.parametrize("check", [None, {"b": "failed", "c": "failed"}, {"b": "passed"},
                                   {"b": "passed", "c": "failed", "a": "passed"}])
def test_a_check_run_unlike_the_whole_run_gives_no_verdict(check):
    got = settle(REF, {}, frozenset({"b", "c"}), check, ({"b": "failed", "c": "failed"}, {}))
    assert got == PARTIAL_PROBLEM


def test_a_run_of_other_tests_than_given_gives_no_verdict():
    check = {"b": "passed", "c": "failed"}
    for outcomes in ({"b": "failed"}, {"b": "failed", "c": "failed", "a": "failed"}):
        assert settle(REF, {}, frozenset({"b", "c"}), check, (outcomes, {})) == OTHER_TESTS


# -- the command ---------------------------------------------------------------------------------

def test_exhaustive_goes_with_mine_and_reaches_the_engine(monkeypatch, capsys):
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(mine, "run_mine", fake)
    assert main(["tests", "M07.6", "--exhaustive"]) == 2
    assert "--exhaustive goes with --mine" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tests", "M07.6", "--mine", str(SUITES / "worked_example"), "--exhaustive"])
    assert seen["exhaustive"] is True
