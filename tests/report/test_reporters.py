"""The reporters against stored expected files, the JUnit schema, JSON round trips, atomic writes.

``OL_REGEN=1 python3 -m pytest tests/report`` rewrites the expected files from the current
reporters (then read the diff before committing it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.engine.catalog import collect
from harness.engine.course import Module, load_course
from harness.engine.results import CaseInfo, Kind, Outcome, RunResult, TestResult
from harness.errors import HarnessError
from harness.files import (
    default_reports_dir,
    write_atomic,
    write_report,
)
from harness.report import render
from harness.report.gradescope import to_gradescope
from harness.report.json_report import to_json_text
from harness.report.junit import to_junit
from harness.report.markdown import to_markdown
from harness.report.text import format_catalog, format_run

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
JUNIT_XSD = HERE.parent / "schemas" / "junit.xsd"
REGEN = os.environ.get("OL_REGEN") == "1"

CHI_SQUARE_MESSAGE = """\
speculative_step(p, q, x, u, u') over 20000 seeded draws (seed 20260706) does not follow p
    id 0: observed 5412, expected 5000
    id 1: observed 4588, expected 5000
chi-square 68.1 on 1 degree of freedom, p-value 1.6e-16 < ALPHA 1e-06
what to try: on rejection, resample from residual_distribution(p, q) with u'"""


def sample_run() -> RunResult:
    """A small deterministic run: one test of each outcome, awkward characters included."""
    return RunResult(
        module="M07.6",
        workspace="/work/student",
        target="student",
        tests=(
            TestResult("test_hand_example", Kind.UNIT, Outcome.PASSED, 0.0123),
            TestResult("test_speculative_chi_square", Kind.STATISTICAL, Outcome.FAILED, 1.5,
                       CHI_SQUARE_MESSAGE, 5,
                       "on rejection, resampling from p, from q, or returning the draft: "
                       "the output is no longer p"),
            TestResult("test_accept_is_strict", Kind.BOUNDARY, Outcome.ERROR, 0.002,
                       "rejection_accept(0.0, 0.25, 0.0) raised ZeroDivisionError: "
                       "float division by zero; expected False (u < r & r = 0 < 1)", 1,
                       "accepting on u <= r: a token with p_x = 0 is accepted when u = 0"),
            TestResult("test_rejection_sample_tries_are_geometric", Kind.STATISTICAL,
                       Outcome.TIMEOUT, 10.0,
                       "rejection_sample(p, q, m=2.0, rng) gave no answer within 10 s "
                       "(the worker was killed); a missing answer is a failure"),
            TestResult("test_residual_is_a_distribution", Kind.PROPERTY, Outcome.CRASHED, 0.25,
                       "the worker died with signal 9 (SIGKILL) while calling "
                       "residual_distribution([0.5, 0.5], [0.25, 0.75]): "
                       "memory limit | output <none>", 4,
                       "forgetting to normalize the residual: sample_categorical rejects it, "
                       "or the CDF ends below 1"),
        ),
        duration_s=11.7643,
        notes=("M07.1 and M06.3 taken from the reference (--ref-deps)",),
        ref_deps=True,
        python="3.12.1 (CPython)",  # pinned: the expected files are the same on every Python
        platform="Linux-6.1.0-18-amd64-x86_64-with-glibc2.36",
        # weighted as a course.toml may weigh them
        points={"test_hand_example": 2, "test_speculative_chi_square": 3.5, "test_accept_is_strict": 1,
                "test_rejection_sample_tries_are_geometric": 1, "test_residual_is_a_distribution": 1},
    )


def sample_module() -> Module:
    return Module(
        id="M07.6", title="Rejection sampling and residual distributions",
        file="tinyllm/prob/rejection.py", contract="contracts/py/tinyllm/prob/rejection.pyi",
        catalog="m07_6", needs=("M07.1", "M06.3"), rung="R0",
        functions=("rejection_accept",),
        pitfalls={1: "accepting on u <= r: a token with p_x = 0 is accepted when u = 0",
                  2: "the ratio upside down | capped by inverting it",
                  9: "acceptance probability not sum min(p, q)"},
    )


def sample_cases() -> list[CaseInfo]:
    return [
        CaseInfo("test_hand_example", Kind.UNIT, "section 3's ratios, alpha = 1/2",
                 "you and the test agree on the definitions", (2, 9)),
        CaseInfo("test_accept_is_strict", Kind.BOUNDARY, "u = r rejects, p_x = 0 never accepts",
                 "discrete uniforms make <= wrong", (1,), ("s01",)),
        CaseInfo("test_residual_disjoint_supports_is_p", Kind.BOUNDARY,
                 "alpha = 0 gives residual p", "a useless draft is slow, not wrong"),
    ]


GOLDEN = {
    "run.txt": lambda: format_run(sample_run()),
    "run.json": lambda: to_json_text(sample_run()),
    "run.junit.xml": lambda: to_junit([sample_run()]),
    "run.md": lambda: to_markdown(sample_run()),
    "run.gradescope.json": lambda: to_gradescope(sample_run()),
    "catalog.txt": lambda: format_catalog(sample_module(), sample_cases(), "text"),
    "catalog.wide.txt": lambda: format_catalog(sample_module(), sample_cases(), "text", wide=True),
    "catalog.json": lambda: format_catalog(sample_module(), sample_cases(), "json"),
    "catalog.md": lambda: format_catalog(sample_module(), sample_cases(), "markdown"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_reporter_output_matches_expected_file(name):
    produced = GOLDEN[name]()
    path = EXPECTED / name
    if REGEN:
        write_atomic(path, produced)
    assert path.exists(), f"{path} is missing: run with OL_REGEN=1 to create it"
    assert produced == path.read_text(encoding="utf-8"), (
        f"{name} differs from {path}; if the change is intended, rerun with OL_REGEN=1")


# -- text -------------------------------------------------------------------------------------

def test_text_report_ends_with_the_summary_line():
    assert format_run(sample_run()).splitlines()[-1] == \
        "M07.6: 1 passed, 4 failed, score 2/8.5 (verdict: fail)"


def test_text_report_names_the_pitfall_of_a_failure():
    assert "see pitfall 5: on rejection, resampling from p" in format_run(sample_run())


def test_an_empty_run_is_a_failing_verdict():
    empty = RunResult("M07.6", "/w", "student", ())
    assert format_run(empty).splitlines()[-1] == "M07.6: 0 passed, 0 failed, score 0/0 (verdict: fail)"


def test_catalog_of_the_real_module_lists_every_test_and_the_rung():
    module = load_course().module("M07.6")
    cases = collect(module)
    text = format_catalog(module, cases, "text")
    assert "rung R0: the student writes no tests here" in text
    for info, _fn in cases:
        assert info.name in text
    assert len(json.loads(format_catalog(module, cases, "json"))["tests"]) == len(cases)


def test_unknown_catalog_format_is_a_harness_error():
    with pytest.raises(HarnessError, match="unknown catalog format 'yaml'"):
        format_catalog(sample_module(), sample_cases(), "yaml")


# -- JSON ---------------------------------------------------------------------------------------

def test_json_report_round_trips_through_the_model():
    result = sample_run()
    assert RunResult.from_json(json.loads(to_json_text(result))) == result


def test_json_report_has_the_documented_fields():
    doc = json.loads(to_json_text(sample_run()))
    for key in ("format_version", "module", "workspace", "target", "verdict", "passed",
                "failed", "tests"):
        assert key in doc
    for test in doc["tests"]:
        assert {"name", "kind", "outcome", "duration_s", "message", "pitfall"} <= set(test)
    assert (doc["verdict"], doc["passed"], doc["failed"]) == ("fail", 1, 4)


# -- JUnit --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def junit_schema():
    # A test dependency, imported here so that without it only the schema checks fail, loudly.
    import xmlschema

    return xmlschema.XMLSchema11(str(JUNIT_XSD))


@pytest.mark.parametrize("runs", [
    [sample_run()],
    [sample_run(), RunResult("M06.3", "/w", "reference",
                             (TestResult("test_pcg32_first_outputs", Kind.UNIT, Outcome.PASSED,
                                         0.001),))],
    [],
], ids=["one-run", "two-runs", "no-runs"])
def test_junit_is_valid_against_the_schema(junit_schema, runs):
    junit_schema.validate(to_junit(runs))


def test_the_schema_rejects_counts_that_disagree_with_the_testcases(junit_schema):
    # The schema has to be able to fail: a suite claiming fewer failures than it holds is invalid.
    text = to_junit([sample_run()]).replace('failures="1"', 'failures="0"')
    assert not junit_schema.is_valid(text)


def test_junit_counts_failures_and_errors_apart():
    suite = ET.fromstring(to_junit([sample_run()])).find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "M07.6", "5", "1", "3")
    kinds = {case.get("name"): [child.tag for child in case] for case in suite.iter("testcase")}
    assert kinds["test_hand_example"] == []
    assert kinds["test_speculative_chi_square"] == ["failure"]
    assert kinds["test_rejection_sample_tries_are_geometric"] == ["error"]


def test_junit_carries_characters_xml_cannot(junit_schema):
    nasty = TestResult("test_x", Kind.UNIT, Outcome.FAILED, 0.0, "got 'a\x00b\x1b[31m' ]]> & <")
    text = to_junit([RunResult("M07.6", "/w", "student", (nasty,))])
    junit_schema.validate(text)
    failure = ET.fromstring(text).find("testsuite/testcase/failure")
    assert failure.text.startswith("got 'a\\x00b\\x1b[31m' ]]> & <")


@pytest.mark.skipif(not os.environ.get("OL_JUNIT_XSD"), reason="OL_JUNIT_XSD names no other schema")
def test_junit_is_valid_against_another_schema():
    """Point OL_JUNIT_XSD at a third-party JUnit XSD (XSD 1.0) to check compatibility with it."""
    import xmlschema

    xmlschema.XMLSchema(os.environ["OL_JUNIT_XSD"]).validate(to_junit([sample_run()]))


# -- Gradescope and Markdown --------------------------------------------------------------------

def test_gradescope_gives_each_passing_test_its_points():
    doc = json.loads(to_gradescope(sample_run()))
    assert (doc["score"], doc["max_score"]) == (2, 8.5)
    assert [t["status"] for t in doc["tests"]] == ["passed"] + ["failed"] * 4
    assert [t["max_score"] for t in doc["tests"]] == [2, 3.5, 1, 1, 1]
    assert all(t["visibility"] == "visible" for t in doc["tests"])
    assert sum(t["score"] for t in doc["tests"]) == doc["score"]
    assert sum(t["max_score"] for t in doc["tests"]) == doc["max_score"]


def test_a_run_without_points_gives_one_point_per_test():
    """A report written before scores (no ``points``) reads back at one point per test."""
    run = RunResult.from_json(json.loads(to_json_text(dataclasses.replace(sample_run(), points={}))))
    assert (run.score, run.max_score) == (1, 5)
    doc = json.loads(to_gradescope(run))
    assert [t["max_score"] for t in doc["tests"]] == [1] * 5


def test_markdown_puts_each_failure_in_details():
    text = to_markdown(sample_run())
    assert text.count("<details>") == 4 and text.count("</details>") == 4
    assert "| `test_hand_example` | unit | PASS |" in text


def test_render_knows_every_format_and_refuses_others():
    for fmt in ("text", "json", "junit", "markdown", "gradescope"):
        assert render(fmt, [sample_run()])
    with pytest.raises(HarnessError, match="unknown report format"):
        render("html5", [sample_run()])
    with pytest.raises(HarnessError, match="exactly one run"):
        render("gradescope", [sample_run(), sample_run()])


# -- atomic writes ------------------------------------------------------------------------------

def test_write_atomic_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "report.txt"
    assert write_atomic(target, "old\n") == target
    write_atomic(target, b"new\r\n")
    assert target.read_bytes() == b"new\r\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.txt"]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failed_replace_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, error):
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")

    def interrupted(src, dst):
        assert Path(src).read_text(encoding="utf-8") == "new"  # the temp file was complete
        raise error

    monkeypatch.setattr(os, "replace", interrupted)
    expected = HarnessError if isinstance(error, OSError) else KeyboardInterrupt
    with pytest.raises(expected):
        write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_path_under_a_file_is_a_harness_error(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(HarnessError) as info:
        write_atomic(blocker / "report.txt", "data")
    assert info.value.message.startswith(f"cannot write {blocker / 'report.txt'}: ")
    assert info.value.hint == "choose a writable path"


def test_a_directory_or_an_invalid_path_is_a_harness_error(tmp_path):
    with pytest.raises(HarnessError, match="cannot write"):
        write_atomic(tmp_path, "data")
    with pytest.raises(HarnessError, match="cannot write"):
        write_atomic(tmp_path / "bad\x00name", "data")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_a_read_only_directory_is_a_harness_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(HarnessError, match="cannot write"):
            write_atomic(locked / "report.txt", "data")
    finally:
        locked.chmod(0o700)


def test_write_report_puts_relative_paths_under_the_reports_dir(tmp_path):
    assert default_reports_dir().name == "reports"
    assert write_report("M07.6/run.md", "x", base=tmp_path) == tmp_path / "M07.6" / "run.md"
    assert (tmp_path / "M07.6" / "run.md").read_text(encoding="utf-8") == "x"


