"""Every report names the cases a run used (``cases: public``, or a run seed) and how to replay it.

The reporters only format: the seed comes from the result (``RunResult.seed``, ``GateResult.seed``,
``LabResult.seed``, the gradebook's settings). Runs here are built by hand, so the tests take
milliseconds; tests/commands/test_seed.py, tests/gate/test_gate_seed.py and
tests/grade/test_grade_seed.py run the commands.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from harness.commands.quotes import quotes_of
from harness.commands.reports import write_folder
from harness.engine.mutants import load_mutants
from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.engine.seeding import replay_command
from harness.gate.engine import GateResult, ModuleGate
from harness.grade.gradebook import CSV_NAME, Gradebook
from harness.grade.row import GradeRow
from harness.lab.engine import LabResult, MutantRow
from harness.report.common import cases_line, run_cases_line, run_replay
from harness.report.gate import to_gate_json, to_gate_junit, to_gate_markdown
from harness.report.gradescope import to_gradescope
from harness.report.json_report import to_json_text
from harness.report.junit import to_junit
from harness.report.lab import (
    lab_summary,
    to_lab_markdown,
    to_stryker,
)
from harness.report.lab_html import to_lab_html
from harness.report.markdown import to_markdown
from harness.report.text import format_run

HERE = Path(__file__).resolve().parent
JUNIT_XSD = HERE.parent / "schemas" / "junit.xsd"
STRYKER_SCHEMA = HERE.parent / "schemas" / "mutation-testing-report-schema.json"
SEED = 1234
REPLAY = f"ol check M07.6 --workspace /work/student --seed {SEED}"


def run(seed: int | None = SEED, target: str = "workspace /work/student",
        workspace: str = "/work/student", failing: bool = True) -> RunResult:
    tests = (TestResult("test_hand_example", Kind.UNIT, Outcome.PASSED, 0.01),
             TestResult("test_accept_is_strict", Kind.BOUNDARY,
                        Outcome.FAILED if failing else Outcome.PASSED, 0.02,
                        "rejection_accept(0.5, 0.5, 1.0) returned True, expected False" if failing
                        else "", 1 if failing else None))
    return RunResult("M07.6", workspace, target, tests, 0.5, seed=seed)


@pytest.fixture(scope="module")
def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema11(str(JUNIT_XSD))


def properties(suite: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in suite.iter("property")}


# -- the pieces --------------------------------------------------------------------------------

def test_the_cases_line_and_the_replay_command():
    assert cases_line(None) == "cases: public"
    assert (cases_line(7, "ol check M07.6 --seed 7")
            == "cases: hidden, seed 7 (replay: ol check M07.6 --seed 7)")
    assert replay_command("gate", "MS-P6", None, "--workspace", "/my ws") == \
        "ol gate MS-P6 --workspace '/my ws' --seed public"
    assert run_replay(run()) == REPLAY
    assert run_replay(run(target="reference", workspace="reference")) == \
        f"ol check M07.6 --target reference --seed {SEED}"
    assert run_replay(run(target="mutant s07", workspace="mutant")) == \
        f"ol check M07.6 --target s07 --seed {SEED}"
    assert run_cases_line(run()) == f"cases: hidden, seed {SEED} (replay: {REPLAY})"
    assert run_cases_line(run(seed=None)) == "cases: public"  # ol check's own default


# -- one run: text, JSON, JUnit, Markdown, Gradescope ------------------------------------------

def test_the_text_report_says_which_cases_ran_on_its_second_line():
    assert format_run(run()).splitlines()[1] == f"cases: hidden, seed {SEED} (replay: {REPLAY})"
    assert format_run(run(seed=None)).splitlines()[1] == "cases: public"


def test_the_json_report_carries_the_seed_and_round_trips():
    for seed in (SEED, None, 0, 2**63 - 1):
        doc = json.loads(to_json_text(run(seed=seed)))
        assert doc["seed"] == seed
        assert RunResult.from_json(doc) == run(seed=seed)


def test_the_junit_suite_has_the_seed_and_the_replay_as_properties(junit_schema):
    text = to_junit([run(), run(seed=None)])
    junit_schema.validate(text)
    hidden, public = ET.fromstring(text).iter("testsuite")
    assert properties(hidden)["seed"] == str(SEED) and properties(hidden)["replay"] == REPLAY
    assert properties(public)["seed"] == "public"
    assert properties(public)["replay"].endswith("--seed public")


def test_markdown_and_gradescope_name_the_cases():
    assert f"cases: hidden, seed {SEED} (replay: {REPLAY})" in to_markdown(run())
    assert "\ncases: public\n" in to_markdown(run(seed=None))
    output = json.loads(to_gradescope(run()))["output"]
    assert output.splitlines()[1] == f"cases: hidden, seed {SEED} (replay: {REPLAY})"
    assert json.loads(to_gradescope(run(seed=None)))["output"].splitlines()[1] == "cases: public"


def test_a_workspace_that_needs_quoting_or_escaping_stays_one_safe_command():
    odd = run(workspace="/w/my ws\x1b[31m", target="workspace /w/my ws\x1b[31m")
    line = format_run(odd).splitlines()[1]
    assert "\x1b" not in line and "'/w/my ws\\x1b[31m'" in line
    assert "\x1b" not in to_markdown(odd) and "\x1b" not in to_junit([odd])


# -- the gate ----------------------------------------------------------------------------------

def gate_result(seed: int | None = SEED) -> GateResult:
    return GateResult("MS-P6", "the milestone", "/work/ws", True, (
        ModuleGate("M07.1", "categorical", "fail", run(seed=seed)),
        ModuleGate("M07.6", "rejection", "blocked", message="by M07.1 (failed its check)",
                   blocked_by=("M07.1",)),
    ), 1.0, seed)


GATE_REPLAY = f"ol gate MS-P6 --workspace /work/ws --ref-deps --seed {SEED}"


def test_every_gate_report_records_the_seed_and_the_replay(junit_schema):
    result = gate_result()
    assert cases_line(result.seed, result.replay) == f"cases: hidden, seed {SEED} (replay: {GATE_REPLAY})"
    doc = json.loads(to_gate_json(result))
    assert (doc["seed"], doc["replay"]) == (SEED, GATE_REPLAY)
    assert doc["modules"][0]["run"]["seed"] == SEED
    junit = to_gate_junit(result, quotes_of(result))
    junit_schema.validate(junit)
    suites = list(ET.fromstring(junit).iter("testsuite"))
    assert [properties(s)["seed"] for s in suites] == [str(SEED), str(SEED)]
    assert [properties(s)["gate_replay"] for s in suites] == [GATE_REPLAY, GATE_REPLAY]
    # The module's own check, as the gate ran it: with the gate's --ref-deps (#25 item 7).
    assert properties(suites[0])["replay"] == REPLAY.replace(" --seed", " --ref-deps --seed")
    markdown = to_gate_markdown(result)
    assert f"cases: hidden, seed {SEED} (replay: {GATE_REPLAY})" in markdown


def test_a_gate_on_the_public_cases_says_how_to_replay_them_too():
    """The gate's default is a fresh seed, so its replay names ``--seed public``."""
    result = gate_result(seed=None)
    assert json.loads(to_gate_json(result))["replay"].endswith("--seed public")
    assert "cases: public (replay: ol gate MS-P6" in to_gate_markdown(result)


# -- the lab -----------------------------------------------------------------------------------

def lab_result(seed: int | None = SEED) -> LabResult:
    mutants = {m.id: m for m in load_mutants("M07.6")}
    tests = ("test_hand_example", "test_accept_is_strict")

    def mrun(target: str, failing: set[str]) -> RunResult:
        return RunResult("M07.6", "mutant", target, tuple(
            TestResult(t, Kind.UNIT, Outcome.FAILED if t in failing else Outcome.PASSED, 0.01,
                       "failed" if t in failing else "") for t in tests), 0.1, seed=seed)

    rows = (MutantRow(mutants["s01"], mrun("mutant s01", {"test_accept_is_strict"})),)
    return LabResult("M07.6", mrun("reference", set()), rows, tests, 2.0, 1, seed=seed)


def test_every_lab_report_records_the_seed(tmp_path):
    result = lab_result()
    line = f"cases: hidden, seed {SEED} (replay: ol lab M07.6 --seed {SEED})"
    doc = result.to_json()
    assert doc["seed"] == SEED and doc["reference"]["seed"] == SEED
    assert line in to_lab_markdown(result)
    assert f'<p class="cases">{line}</p>' in to_lab_html(result, quotes_of(result))
    stryker = to_stryker(result, quotes_of(result))
    assert stryker["config"]["seed"] == SEED and stryker["config"]["cases"] == line
    Draft7Validator(json.loads(STRYKER_SCHEMA.read_text())).validate(stryker)
    paths = write_folder(result, tmp_path).paths
    assert json.loads(paths[0].read_text())["seed"] == SEED
    assert "cases:" not in lab_summary(result)  # the terminal says it once, at the top


def test_a_lab_on_the_public_cases_says_so():
    result = lab_result(seed=None)
    assert result.to_json()["seed"] is None
    assert "\ncases: public\n" in to_lab_markdown(result)
    assert to_stryker(result, quotes_of(result))["config"]["seed"] is None


# -- the gradebook -----------------------------------------------------------------------------

def test_the_gradebook_records_its_seed_in_the_json_every_row_and_a_csv_column(tmp_path):
    book = Gradebook(tmp_path / "book", "M07.6", "/subs", {"ref_deps": False, "seed": SEED},
                     "ctx", ["test_hand_example"])
    book.record(GradeRow(submission="alice", verdict="pass", passed=1, failed=0,
                         tests={"test_hand_example": "passed"}, message="", time_s=1.0,
                         content_hash="h"))
    doc = json.loads(book.json_path.read_text())
    assert (doc["seed"], doc["settings"]["seed"], doc["cases"]) == (SEED, SEED,
                                                                    f"hidden cases of seed {SEED}")
    assert doc["replay"] == f"ol check M07.6 --workspace /subs/NAME --seed {SEED}"
    assert doc["submissions"][0]["seed"] == SEED
    with open(tmp_path / "book" / CSV_NAME, newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["seed"] == str(SEED) and row["test_hand_example"] == "passed"


def test_a_public_gradebook_says_public_in_its_csv():
    book = Gradebook(Path("/nowhere"), "M07.6", "/subs", {"ref_deps": True, "seed": None}, "ctx", [])
    book.rows["bob"] = GradeRow(submission="bob", verdict="error", seed=None)
    book.rows["old"] = GradeRow.from_json({"submission": "old", "verdict": "error"})  # before seeds
    rows = list(csv.DictReader(io.StringIO(book.to_csv())))
    assert [r["seed"] for r in rows] == ["public", "public"]
    assert book.to_json()["replay"] == "ol check M07.6 --workspace /subs/NAME --ref-deps --seed public"
