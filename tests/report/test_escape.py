"""Display spoofing: a submission's text is shown, never obeyed, by every reporter.

A hostile exception message (ANSI sequences that erase the failure lines and print a fake pass,
a carriage return, an OSC title, C1 and bidi controls, a lone surrogate) goes through each
reporter; what comes out holds no character ``printable`` escapes, shows the escapes, encodes
as UTF-8, and keeps its structure (valid XML, JSON that decodes, Markdown cells that stay cells).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.commands.quotes import quotes_of
from harness.engine.mutants import load_mutants
from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.escape import UNSAFE, has_unsafe, printable
from harness.lab.engine import LabResult, MutantRow
from harness.own_tests.engine import Implementation, MineResult, Run
from harness.report import render
from harness.report.gradescope import to_gradescope
from harness.report.json_report import to_json_text
from harness.report.junit import to_junit
from harness.report.markdown import to_markdown
from harness.report.text import failures_and_summary, format_run
from harness.report.text import test_line as line_of

HERE = Path(__file__).resolve().parent
JUNIT_XSD = HERE.parent / "schemas" / "junit.xsd"

FAKE_PASS = "\x1b[2K\x1b[1A\x1b[2K19 passed, 0 failed (verdict: pass)"
HOSTILE = (f"{FAKE_PASS}\r\x1b]0;title\x07 bidi \u202egnp.exe\u202c \u2066x\u2069 c1 \x9b31m "
           "del \x7f nul \x00 lone \ud800 ff \x0c vt \x0b end")
# What each hostile piece must read as once shown.
VISIBLE = ("\\x1b[2K\\x1b[1A\\x1b[2K19 passed", "\\r", "\\x1b]0;title\\x07", "\\u202e", "\\u202c",
           "\\u2066", "\\u2069", "\\x9b", "\\x7f", "\\x00", "\\ud800", "\\x0c", "\\x0b")


# -- printable ----------------------------------------------------------------------------------

@pytest.mark.parametrize("char,shown", [
    ("\x1b", "\\x1b"), ("\r", "\\r"), ("\x00", "\\x00"), ("\x07", "\\x07"), ("\x08", "\\x08"),
    ("\x0b", "\\x0b"), ("\x0c", "\\x0c"), ("\x1f", "\\x1f"), ("\x7f", "\\x7f"), ("\x80", "\\x80"),
    ("\x85", "\\x85"), ("\x9b", "\\x9b"), ("\x9f", "\\x9f"), ("\u202a", "\\u202a"),
    ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u2069", "\\u2069"), ("\u200e", "\\u200e"),
    ("\u200f", "\\u200f"), ("\u061c", "\\u061c"), ("\ud800", "\\ud800"), ("\udfff", "\\udfff"),
])
def test_printable_shows_each_control_as_an_escape(char, shown):
    assert printable(f"a{char}b") == f"a{shown}b"


def test_printable_keeps_ordinary_text_tabs_and_line_feeds():
    text = "line 1\n\tp = [0.5, 0.5] \\ path C:\\x é ✓ \U0001f600 \xa0 \u00e9 \u2028"
    assert printable(text) == text
    assert not has_unsafe(text)


def test_printable_is_idempotent_and_leaves_nothing_unsafe():
    once = printable(HOSTILE)
    assert printable(once) == once and not has_unsafe(once)
    for piece in VISIBLE:
        assert piece in once
    once.encode("utf-8")  # a lone surrogate no longer breaks the stream


# -- a hostile run through the run reporters ----------------------------------------------------

def hostile_run() -> RunResult:
    return RunResult(
        module="M07.6",
        workspace="/submissions/\x1b[31mbob\u202e",
        target="student",
        tests=(
            TestResult("test_hand_example", Kind.UNIT, Outcome.PASSED, 0.01),
            TestResult("test_accept_is_strict", Kind.BOUNDARY, Outcome.ERROR, 0.02,
                       f"rejection_accept(0.0, 0.25, 0.0) raised ValueError: {HOSTILE}", 1,
                       "accepting on u <= r"),
            TestResult("test_\x1b[2Kname", Kind.UNIT, Outcome.FAILED, 0.03, HOSTILE),
            TestResult("test_crash", Kind.PROPERTY, Outcome.CRASHED, 0.04,
                       f"the worker died; output: {HOSTILE}"),
        ),
        duration_s=1.0,
        notes=(f"note {HOSTILE}",),
    )


def _assert_safe(text: str) -> None:
    assert not has_unsafe(text), repr(UNSAFE.findall(text))
    text.encode("utf-8")
    assert "\x1b" not in text and "\r" not in text


def test_terminal_text_shows_the_escapes_and_keeps_the_real_summary():
    result = hostile_run()
    for text in (format_run(result), failures_and_summary(result),
                 line_of(result.tests[2], 30), render("text", [result])):
        _assert_safe(text)
    out = failures_and_summary(result)
    for piece in VISIBLE:
        assert piece in out
    assert out.splitlines()[-1] == "M07.6: 1 passed, 3 failed, score 1/4 (verdict: fail)"
    # The failure lines the escape sequence tried to erase are all there.
    assert out.count("ERROR: test_accept_is_strict") == 1 and "FAILED: test_\\x1b[2Kname" in out
    assert "/submissions/\\x1b[31mbob\\u202e" in format_run(result)


def test_json_keeps_the_exact_message_and_its_text_shows_safely():
    result = hostile_run()
    text = to_json_text(result)
    _assert_safe(text)
    assert RunResult.from_json(json.loads(text)) == result  # the data is exact
    assert json.loads(text)["tests"][2]["message"] == HOSTILE
    _assert_safe(render("json", [result, result]))


def test_gradescope_shows_escapes_to_the_student():
    doc_text = to_gradescope(hostile_run())
    _assert_safe(doc_text)
    doc = json.loads(doc_text)
    for field in [doc["output"]] + [t["output"] for t in doc["tests"]] + [t["name"] for t in doc["tests"]]:
        assert not has_unsafe(field)
    failed = doc["tests"][2]
    assert failed["name"] == "test_\\x1b[2Kname (unit)"
    for piece in VISIBLE:
        assert piece in failed["output"]
    assert "\\x1b[31mbob" not in doc["output"]  # the workspace is not in Gradescope's output


@pytest.fixture(scope="module")
def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema11(str(JUNIT_XSD))


def test_junit_is_valid_xml_1_0_and_shows_the_escapes(junit_schema):
    text = to_junit([hostile_run()])
    _assert_safe(text)
    junit_schema.validate(text)
    root = ET.fromstring(text.encode("utf-8"))
    case = root.find("testsuite/testcase[@name='test_\\x1b[2Kname']")
    assert case is not None
    failure = case.find("failure")
    for piece in VISIBLE:
        assert piece in failure.text
    assert failure.get("message").startswith("\\x1b[2K\\x1b[1A")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["workspace"] == "/submissions/\\x1b[31mbob\\u202e"


def test_junit_escapes_what_xml_cannot_carry_at_all(junit_schema):
    odd = TestResult("test_x", Kind.UNIT, Outcome.FAILED, 0.0, "a\ufffeb\uffffc")
    text = to_junit([RunResult("M07.6", "/w", "student", (odd,))])
    junit_schema.validate(text)
    assert "a\\ufffeb\\uffffc" in ET.fromstring(text).find("testsuite/testcase/failure").text


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ")]


def _cells(row: str) -> int:
    """Cell count of a GFM table row: pipes not escaped by a backslash separate cells."""
    return len(re.findall(r"(?<!\\)\|", row)) - 1


def test_markdown_shows_escapes_and_text_stays_in_its_cell_and_code_span():
    run = hostile_run()
    sneaky = TestResult("test_a|b`c</td>", Kind.UNIT, Outcome.FAILED, 0.0,
                        "```\n</details>\n# heading\n````", None)
    result = RunResult(run.module, run.workspace, "student`|x", run.tests + (sneaky,), 1.0,
                       ("a \\| b | c `code` <img src=x> [link](http://e)",))
    text = to_markdown(result)
    _assert_safe(text)
    rows = _table_rows(text)
    assert len(rows) == 2 + len(result.tests)
    assert {_cells(r) for r in rows} == {5}
    assert "| `test_a/b'c</td>` |" in text  # a code span: no backtick or pipe left to break it
    assert "`student'/x`" in text.splitlines()[0]
    note = next(line for line in text.splitlines() if line.startswith("> note:"))
    # Markdown's own characters are backslash-escaped: the tag renders as the text <img src=x>.
    assert "\\\\\\| b \\| c \\`code\\` \\<img src=x\\> \\[link\\](http://e)" in note
    assert "<img" not in text.replace("\\<img", "")
    # The message's fence is longer than any run of backticks in it: it cannot be closed early.
    assert "`````text\n```\n</details>\n# heading\n````\n`````" in text
    assert text.count("<details>") == text.count("</details>") - 1  # one is inside the fence
    for piece in VISIBLE:
        assert piece in text


def test_every_format_of_render_is_safe():
    for fmt in ("text", "json", "junit", "markdown", "gradescope"):
        _assert_safe(render(fmt, [hostile_run()]))


# -- the lab's reports --------------------------------------------------------------------------

def hostile_lab() -> LabResult:
    tests = ("test_hand_example", "test_accept_is_strict")
    mutants = {m.id: m for m in load_mutants("M07.6")}

    def run(target, failing):
        return RunResult("M07.6", "/w", target, tuple(
            TestResult(t, Kind.UNIT, Outcome.FAILED if t in failing else Outcome.PASSED, 0.01,
                       HOSTILE if t in failing else "") for t in tests), 0.02)

    rows = (MutantRow(mutants["s01"], run("mutant s01", {"test_accept_is_strict"})),
            MutantRow(mutants["x14"], run("mutant x14", set())))
    return LabResult("M07.6", run("reference", set()), rows, tests, 1.0, 1,
                     {"test_hand_example": f"a note {HOSTILE}"})


def test_lab_reports_are_safe():
    from harness.report.lab import lab_summary, to_lab_markdown, to_stryker
    from harness.report.lab_html import to_lab_html

    lab = hostile_lab()
    for text in (lab_summary(lab), to_lab_markdown(lab), to_lab_html(lab, quotes_of(lab))):
        _assert_safe(text)
    html_text = to_lab_html(lab, quotes_of(lab))
    assert "\\x1b[2K\\x1b[1A" in html_text and "\\ud800" in html_text
    stryker = to_stryker(lab, quotes_of(lab))
    mutant = next(iter(stryker["files"].values()))["mutants"][0]
    assert not has_unsafe(mutant["statusReason"]) and "\\x1b[2K" in mutant["statusReason"]
    from harness.report.common import json_text

    _assert_safe(json_text(stryker))
    _assert_safe(json_text(lab.to_json()))
    assert "\\\\x1b" not in to_lab_markdown(lab).split("#### Notes")[0]


# -- ol tests --mine ----------------------------------------------------------------------------

def hostile_mine() -> MineResult:
    bad = "t.py::test_\x1b[2Kwrong"
    correct = Run("ran", {"t.py::test_ok": "passed", bad: "failed"}, {bad: HOSTILE})
    broken = Run("crashed", problem=f"the run crashed\n{HOSTILE}")
    bug = Run("ran", {"t.py::test_ok": "failed", bad: "failed"}, {})
    mutant = load_mutants("M07.6")[0]
    return MineResult("M07.6", "/suite/\x1b[31mtests",
                      ((Implementation("reference", "the reference", ""), correct),
                       (Implementation("alt", "hidden implementation 'alt'", "", differs="x"), broken)),
                      ((Implementation(mutant.id, "bug", "", mutant=mutant), bug),),
                      {mutant.pitfall: "pitfall text"})


def test_mine_reports_are_safe():
    from harness.report.own_tests import format_text, to_gradescope, to_json_text

    result = hostile_mine()
    text = format_text(result)
    _assert_safe(text)
    assert "t.py::test_\\x1b[2Kwrong" in text and "\\x1b]0;title\\x07" in text
    doc_text = to_gradescope(result)
    _assert_safe(doc_text)
    doc = json.loads(doc_text)
    assert not any(has_unsafe(t["output"]) or has_unsafe(t["name"]) for t in doc["tests"])
    assert not has_unsafe(doc["output"])
    json_doc = to_json_text(result)
    _assert_safe(json_doc)
    assert json.loads(json_doc)["wrong_tests"][0]["message"] == HOSTILE


# -- the audit's reports ------------------------------------------------------------------------

def test_audit_reports_are_safe():
    from harness.audit.mutations import MutmutMutant
    from harness.audit.mutmut_result import MutmutAudit, MutmutRow
    from harness.report.audit import mutmut_summary, to_html, to_markdown, to_stryker
    from harness.report.common import json_text

    tests = ("test_accept_is_strict",)
    m = MutmutMutant("tinyllm.prob.rejection.x_rejection_accept__mutmut_1", 1, "rejection_accept",
                     "return u < p_x / q_x", "return u <= p_x / q_x", 1, 55, 55,
                     "-    return u < p_x / q_x\n+    return u <= p_x / q_x  # ```\x1b[2K",
                     "return u <= p_x / q_x")
    killed = MutmutRow(m, "killed", tests, tests, {tests[0]: HOSTILE}, None)
    survived = MutmutRow(m, "survived", (), tests, {}, None)
    audit = MutmutAudit("M07.6", "tinyllm/prob/rejection.py", (killed, survived), (), tests, (),
                        "3.8.1", 1, {"mutmut_s": 1.0, "matrix_s": 1.0, "mutmut_cpu_s": 1.0,
                                     "total_s": 2.0}, 1.0, {}, {})
    stryker_text = json_text(to_stryker(audit, quotes_of(audit)))
    for text in (to_markdown(audit), to_html(audit), mutmut_summary(audit), stryker_text):
        _assert_safe(text)
    reason = to_stryker(audit, quotes_of(audit))["files"]
    assert "\\x1b[2K" in next(iter(reason.values()))["mutants"][0]["statusReason"]
    assert "````diff\n" in to_markdown(audit)  # the diff's own backticks cannot close its fence


def test_power_reports_are_safe():
    from harness.audit.analytic import rate
    from harness.audit.power_result import MutantPower, PowerAudit, TestPower
    from harness.report.power import summary, to_markdown

    mp = MutantPower("s06", "resample from p", True, "table", True, {"tv": 0.1}, rate(1, 2), True,
                     note=f"note {HOSTILE}")
    test = TestPower("test_speculative_chi_square", "chi-square", "ALPHA", 1e-6, 1, 20000, rate(0, 2),
                     0.5, {"0.05": rate(0, 2)}, 0.4,
                     {"df": 1, "critical_value": 1.0, "min_noncentrality": 1.0,
                      "min_divergence": 0.1, "min_tv": 0.1, "nominal_alpha": 1e-6},
                     (mp,), (), (0.5,))
    audit = PowerAudit("M07.6", 2, 2, 1, 1.0, (test,), {})
    for text in (to_markdown(audit), summary(audit)):
        _assert_safe(text)


# -- the gate's reports, through the pieces they share -------------------------------------------

def test_gate_markdown_and_junit_are_safe_through_the_shared_reporters(junit_schema):
    from harness.gate.engine import GateResult, ModuleGate
    from harness.report.gate import to_gate_junit, to_gate_markdown

    run = hostile_run()
    result = GateResult("MS-P6", "title", "/w", False, (
        ModuleGate("M06.3", "PCG32", "error", message=f"importing failed: {HOSTILE}"),
        ModuleGate("M07.6", "Rejection", "fail", run),
    ))
    _assert_safe(to_gate_markdown(result).replace("workspace `/w`", ""))
    junit = to_gate_junit(result, quotes_of(result))
    _assert_safe(junit)
    junit_schema.validate(junit)
