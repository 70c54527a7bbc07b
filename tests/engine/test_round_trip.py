"""Every result of ol comes back from its JSON: ``X.from_json(x.to_json()) == x``.

Each round trip goes through the text the reporters write (``json_text``) on a real result
where a real run is fast (a check of the reference and of a mutant, a gate, M06.3's lab, an
own-tests run over three mutants, a gradebook of two submissions, a small power audit); the
mutmut audit, which takes minutes, is built by hand as tests/audit/test_reports.py builds it.
Then the envelope: a document of another type, without a tag, of a format version this ol does
not read, or with a broken body is one line naming the file, the version and what to do.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from harness.audit.analytic import rate
from harness.audit.equivalents import Record
from harness.audit.mutations import MutmutMutant
from harness.audit.mutmut_result import MutmutAudit, MutmutRow
from harness.audit.power_result import MutantPower, PowerAudit, TestPower
from harness.check.engine import CheckRequest, run_check
from harness.commands.reports import write_folder
from harness.engine.course import load_course
from harness.engine.requests import GateRequest
from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.engine.serial import TYPE_KEY, read_result
from harness.engine.workspace import Workspace
from harness.errors import HarnessError
from harness.gate.engine import GateResult, ModuleGate, run_gate
from harness.grade.gradebook import JSON_NAME, Gradebook, read_gradebook
from harness.grade.row import GradeRow
from harness.lab.engine import NOT_RUN, LabResult
from harness.own_tests.engine import MineResult, run_mine
from harness.paths import REFERENCE_DIR, REPO_ROOT
from harness.report.common import json_text

M07_6 = load_course().module("M07.6")
SUITES = REPO_ROOT / "tests" / "own_tests" / "suites"


def equal(a, b) -> bool:
    """``a == b``, field by field, where a NaN equals a NaN (Python 3.13's dataclass ``__eq__``
    compares fields one by one, without the identity shortcut that made ``nan`` equal itself)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            equal(getattr(a, f.name), getattr(b, f.name))
            for f in dataclasses.fields(a) if f.compare)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(equal, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


def through_json(result, cls):
    """``result`` written as the reporters write it, read back: equal, and written the same."""
    data = json.loads(json_text(result.to_json()))
    again = cls.from_json(data)
    assert equal(again, result)
    assert again.to_json() == data
    return data


# -- real results ----------------------------------------------------------------------------------

def test_a_check_of_the_reference_round_trips():
    result = run_check(CheckRequest("M07.6", target="reference"), None)
    assert result.verdict == "pass" and len(result.tests) >= 19
    data = through_json(result, RunResult)
    assert (data[TYPE_KEY], data["format_version"]) == ("RunResult", 1)


def test_a_failing_mutant_check_round_trips_with_its_diagnosis():
    result = run_check(CheckRequest("M07.6", target="s01"), None)
    assert result.verdict == "fail" and result.diagnosis and result.failures()
    assert any(t.pitfall == 1 for t in result.failures())
    through_json(result, RunResult)


def test_a_gate_with_a_failure_and_a_block_round_trips(tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(REFERENCE_DIR / "python", root / "python")
    categorical = root / "python" / "tinyllm" / "prob" / "categorical.py"
    source = categorical.read_text()
    assert "if u < running:" in source
    categorical.write_text(source.replace("if u < running:", "if u <= running:"))
    result = run_gate(GateRequest("MS-P6", str(root), seed=None), Workspace(root))
    assert [m.status for m in result.modules] == ["pass", "fail", "blocked"]
    data = through_json(result, GateResult)
    assert (data[TYPE_KEY], data["format_version"], data["kind"]) == ("GateResult", 1, "ol-gate")


@pytest.mark.slow
def test_the_lab_round_trips_from_the_file_it_writes(module_lab, tmp_path):
    lab = module_lab("M06.3")
    path = write_folder(lab, tmp_path).paths[0]
    again = read_result(path, LabResult)
    assert again == lab
    assert again.minimal_subset() == lab.minimal_subset() and again.verdict == lab.verdict
    assert again.to_json() == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_labs_not_run_cells_are_their_own_outcome_and_no_kill(module_lab):
    lab = module_lab("M06.3")
    data = lab.to_json()
    assert data["format_version"] == 2
    cells = [(m, t) for m in data["mutants"] for t in m["not_run"]]
    assert cells, "M06.3's lab runs every cell: this test checks nothing"
    for m, t in cells:
        assert m["outcomes"][t] == NOT_RUN and t not in m["killed_by"]
        assert t not in {r["name"] for r in m["run"]["tests"]}  # not run, not "passed"
    for row in lab.rows:
        assert set(row.not_run).isdisjoint(row.killed_by)
        assert set(row.not_run).isdisjoint(t.name for t in row.run.tests)
        assert sorted([*row.not_run, *(t.name for t in row.run.tests)]) == sorted(lab.tests)
    by_test = {t["name"]: set(t["not_run_on"]) for t in data["tests"]}
    assert by_test == {t: {m["id"] for m, n in cells if n == t} for t in lab.tests}


@pytest.fixture(scope="module")
def mine_result() -> MineResult:
    """One own-tests run over three mutants, s01 first, for the two tests below: the second
    edits a copy of its JSON (``to_json`` makes a new one), never the result."""
    return run_mine(M07_6, SUITES / "worked_example", jobs=2, mutant_ids=["s01", "s02", "x01"])


def test_an_own_tests_result_round_trips_and_names_bugs_by_id(mine_result):
    result = mine_result
    assert [r.status for _, r in result.correct] == ["ran"] * 3 and result.caught == 2
    data = through_json(result, MineResult)
    assert data["format_version"] == 2
    for bug in data["bugs"]:  # what a student may read, and no more
        assert "designated" not in bug and "edits" not in bug


def test_an_own_tests_result_whose_bug_changed_in_the_library_is_refused(mine_result):
    data = mine_result.to_json()
    assert data["bugs"][0]["id"] == "s01"
    data["bugs"][0]["description"] = "something else"
    with pytest.raises(HarnessError) as info:
        MineResult.from_json(data, source="mine.json")
    assert "mine.json: bug s01 has changed in the mutant library of M07.6" in info.value.line()
    data["bugs"][0]["id"] = "s99"
    with pytest.raises(HarnessError, match="bug s99 is no longer in the mutant library"):
        MineResult.from_json(data)


@pytest.mark.slow
def test_a_gradebook_round_trips_from_the_file_it_writes(tmp_path):
    from harness.cli import main

    folder, out = tmp_path / "subs", tmp_path / "book"
    for name in ("correct", "buggy"):
        shutil.copytree(REFERENCE_DIR / "python", folder / name / "python")
    rejection = folder / "buggy" / "python" / "tinyllm" / "prob" / "rejection.py"
    rejection.write_text(rejection.read_text().replace("return u < p_x / q_x",
                                                       "return u <= p_x / q_x"))
    assert main(["grade", "M07.6", str(folder), "--out", str(out), "--seed", "public"]) == 0
    path = out / JSON_NAME
    book = read_result(path, Gradebook)
    assert book.out == out and {r.verdict for r in book.rows.values()} == {"pass", "fail"}
    assert book.to_json() == json.loads(path.read_text(encoding="utf-8"))
    assert Gradebook.from_json(json.loads(json_text(book.to_json()))) == book
    assert book.rows == read_gradebook(out, M07_6).rows  # what ``ol grade`` continues from


@pytest.mark.slow
def test_a_small_power_audit_round_trips():
    from harness.audit.power import run_power_audit

    # M07.1's audit, not M07.6's: a real PowerAudit with every kind of row (mutants measured from
    # a table and from real trials, and mutants with nothing to measure) at a third of the CPU
    # (its tables are cheaper); what M07.6's audit finds is tests/audit/test_audit_command.py's.
    audit = run_power_audit("M07.1", seeds=2, jobs=2)
    assert {m.method for t in audit.tests for m in t.mutants} == {"table", "trials", "none"}
    assert audit.tests and any(m.power is not None for t in audit.tests for m in t.mutants)
    through_json(audit, PowerAudit)


# -- the audits, built by hand ----------------------------------------------------------------------

def _mutmut_audit() -> MutmutAudit:
    def row(n, original, mutated, status, killed_by=(), record=None, line=None):
        m = MutmutMutant(f"tinyllm.prob.rejection.x_rejection_accept__mutmut_{n}", n,
                         "rejection_accept", original, mutated, 1, line, line,
                         f"-    {original}\n+    {mutated}", mutated)
        return MutmutRow(m, status, tuple(killed_by), ("test_a", "test_b"),
                         {t: "failed" for t in killed_by}, record, 0.123456789)

    record = Record("rejection_accept", "a", "b", "out-of-contract", "only the message", None, 1)
    stale = Record("gone", "c", "d", "equivalent", "no longer there", 2, 2)
    rows = (row(1, "if q_x <= 0.0:", "if q_x < 0.0:", "killed", ["test_a"], line=40),
            row(2, "a", "b", "survived", record=record, line=41),
            row(3, "return u < r", "return u <= r", "no tests"))
    return MutmutAudit("M07.6", "tinyllm/prob/rejection.py", rows, (stale,), ("test_a", "test_b"),
                       (), "3.8.1", 2, {"mutmut_s": 30.000001, "matrix_s": 6.5}, 1.5,
                       {"mutants": 10, "duration_s": 4.0, "jobs": 2}, {"killed": 1}, "eq.toml")


def _power_audit() -> PowerAudit:
    designated = MutantPower("s06", "resample from p", True, "table", True,
                             {"tv": 0.25, "law": [0.5, 0.5]}, rate(199, 200), True, 41.123456789)
    unknown = MutantPower("x14", "not tabulable", True, "trials", None, {"tv": math.inf},
                          rate(0, 0), False, math.nan, "no table")
    same = MutantPower("s09", "np.sum", False, "none", False, {"tv": 1e-16}, None, False)
    test = TestPower("test_speculative_chi_square", "chi-square", "CHI_SQUARE_ALPHA", 1e-6,
                     20260706, 20000, rate(0, 2000), 0.5312345678, {"0.05": rate(100, 2000)},
                     0.4, {"df": 6, "min_tv": 0.03, "nominal_alpha": 1e-6},
                     (designated, unknown, same), ("x30",), (0.123456789, 0.987654321))
    return PowerAudit("M07.6", 200, 2000, 2, 60.123456, (test,), {"tables_s": 20.0})


def test_a_mutmut_audit_round_trips():
    data = through_json(_mutmut_audit(), MutmutAudit)
    assert data["format_version"] == 2 and data["mutants"][0]["number"] == 1


def test_a_power_audit_with_nan_and_infinity_round_trips():
    data = through_json(_power_audit(), PowerAudit)
    assert data["format_version"] == 2
    assert data["tests"][0]["reference_pvalues"] == [0.123456789, 0.987654321]  # not rounded
    assert data["tests"][0]["mutants"][1]["mean_statistic"] == "nan"


# -- the envelope ------------------------------------------------------------------------------------

def _small() -> dict[type, object]:
    """One cheap instance of every result type."""
    run = RunResult("M07.6", "ws", "reference",
                    (TestResult("test_a", Kind.UNIT, Outcome.PASSED, 0.1),), 0.2)
    return {
        RunResult: run,
        LabResult: LabResult("M07.6", run, (), ("test_a",), 1.0, 1),
        GateResult: GateResult("MS-P6", "Pass 6", "ws", False,
                               (ModuleGate("M07.6", "Rejection", "pass", run, duration_s=0.3),)),
        MineResult: MineResult("M07.6", "tests/", (), (), {1: "a pitfall"}),
        MutmutAudit: _mutmut_audit(),
        PowerAudit: _power_audit(),
        Gradebook: Gradebook(Path("/book"), "M07.6", "/subs", {"seed": None}, "ctx", ["test_a"],
                             {"alice": GradeRow(submission="alice", verdict="pass")},
                             points={"test_a": 2.5}, reference={"bytes": "b", "tree": "t"},
                             stub={"bytes": "s", "tree": ""},
                             skipped=[{"name": "notes.txt", "why": "not a submission"}]),
    }


TYPES = list(_small())
IDS = [cls.__name__ for cls in TYPES]


@pytest.mark.parametrize("cls", TYPES, ids=IDS)
def test_every_result_is_tagged_and_round_trips(cls):
    data = through_json(_small()[cls], cls)
    assert list(data)[:2] == [TYPE_KEY, "format_version"] and data[TYPE_KEY] == cls.__name__


def _refusal(cls, data, source="reports/r.json") -> str:
    with pytest.raises(HarnessError) as info:
        cls.from_json(data, source=source)
    line = info.value.line()
    assert "\n" not in line and line.startswith(f"ol: {source} ")
    return line


@pytest.mark.parametrize("cls", TYPES, ids=IDS)
def test_an_unknown_format_version_is_one_line_naming_both_versions(cls):
    data = _small()[cls].to_json()
    version = data["format_version"]
    line = _refusal(cls, {**data, "format_version": version + 7})
    assert f"of format version {version + 7}; this ol reads version {version}" in line
    assert "a newer ol wrote it" in line and "rerun `ol " in line
    line = _refusal(cls, {**data, "format_version": 0})
    assert f"of format version 0; this ol reads version {version} (rerun `ol " in line
    assert "format version \"2\"" in _refusal(cls, {**data, "format_version": "2"})


@pytest.mark.parametrize("cls", TYPES, ids=IDS)
def test_a_missing_format_version_or_tag_is_refused(cls):
    data = _small()[cls].to_json()
    del data["format_version"]
    assert "without a format_version; this ol reads version" in _refusal(cls, data)
    del data[TYPE_KEY]
    assert f'has no "{TYPE_KEY}" (written by an older ol, or not by ol)' in _refusal(cls, data)
    assert "it is a JSON array, not an object" in _refusal(cls, [data])


@pytest.mark.parametrize("cls", TYPES, ids=IDS)
def test_a_result_of_another_type_is_refused_by_name(cls):
    other = next(c for c in TYPES if c is not cls)
    line = _refusal(cls, _small()[other].to_json())
    assert f"(read it as {other.__name__})" in line and ", not a" in line


def test_a_lab_result_of_a_newer_version_says_what_it_is_and_what_to_do(tmp_path):
    path = tmp_path / "lab-M07.6.json"
    path.write_text(json.dumps({**_small()[LabResult].to_json(), "format_version": 9}))
    with pytest.raises(HarnessError) as info:
        read_result(path, LabResult)
    assert info.value.line() == (
        f"ol: {path} is a lab result of format version 9; this ol reads version 2 (a newer ol "
        "wrote it: use that ol, or rerun `ol lab M07.6` to write it again)")


def test_a_broken_body_is_one_line_too(tmp_path):
    data = _small()[GateResult].to_json()
    del data["modules"][0]["run"]["tests"][0]["kind"]
    line = _refusal(GateResult, data)
    assert "is a check result this ol cannot read (no key 'kind')" in line
    path = tmp_path / "r.json"
    path.write_text("{not json")
    with pytest.raises(HarnessError, match=r"r\.json is not JSON \(line 1"):
        read_result(path, RunResult)
