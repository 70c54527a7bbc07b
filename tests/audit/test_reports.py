"""The audit's reports: Stryker JSON against its schema, Markdown and HTML, the power tables."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from harness.audit.analytic import rate
from harness.audit.equivalents import Record
from harness.audit.mutations import MutmutMutant
from harness.audit.mutmut_result import MutmutAudit, MutmutRow
from harness.audit.power_result import MutantPower, PowerAudit, TestPower
from harness.commands.quotes import quotes_of
from harness.commands.reports import write_folder
from harness.paths import REFERENCE_PYTHON
from harness.report.audit import (
    mutator_name,
    to_html,
    to_markdown,
    to_stryker,
)
from harness.report.power import to_markdown as power_markdown

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "mutation-testing-report-schema.json"
FILE = "tinyllm/prob/rejection.py"
TESTS = ("test_accept_is_strict", "test_accept_rejects_bad_arguments")


def _line(text: str) -> int:
    lines = (REFERENCE_PYTHON / FILE).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def _row(n, original, mutated, status, killed_by=(), record=None):
    line = _line(original)
    m = MutmutMutant(f"tinyllm.prob.rejection.x_rejection_accept__mutmut_{n}", n, "rejection_accept",
                     original, mutated, 1, line, line, f"-    {original}\n+    {mutated}",
                     mutated)
    return MutmutRow(m, status, tuple(killed_by), TESTS, {t: "failed" for t in killed_by}, record)


@pytest.fixture()
def audit():
    record = Record("rejection_accept", 'p_x = _finite("p_x", p_x)', 'p_x = _finite("XXp_xXX", p_x)',
                    "out-of-contract", "the name only feeds the error message", None, 1)
    stale = Record("gone", "a", "b", "equivalent", "no longer there", None, 2)
    rows = (_row(1, "if q_x <= 0.0:", "if q_x < 0.0:", "killed", ["test_accept_rejects_bad_arguments"]),
            _row(2, 'p_x = _finite("p_x", p_x)', 'p_x = _finite("XXp_xXX", p_x)', "survived",
                 record=record),
            _row(3, "return u < p_x / q_x", "return u <= p_x / q_x", "survived"))
    return MutmutAudit("M07.6", FILE, rows, (stale,), TESTS, (), "3.8.1", 2,
                       {"mutmut_s": 30.0, "matrix_s": 6.0, "mutmut_cpu_s": 54.0, "total_s": 40.0},
                       1.5, {"mutants": 10, "duration_s": 4.0, "cpu_s": 7.0, "jobs": 2}, {"killed": 1})


def test_counts_score_and_verdict(audit):
    assert (audit.count("detected"), audit.count("equivalent"), audit.count("unexplained")) == (1, 1, 1)
    assert audit.score == 0.5 and audit.verdict == "fail"
    speed = audit.speed()
    assert speed["lab_s_per_mutant"] == 0.4 and speed["mutmut_s_per_mutant"] == 10.0
    assert speed["lab_cpu_s_per_mutant"] == 0.7 and speed["mutmut_cpu_s_per_mutant"] == 18.0
    assert speed["audit_cpu_s_per_mutant"] == 18.0
    assert "no higher than the audit's CPU cost per mutant" in to_markdown(audit)


def test_stryker_report_validates_and_ignores_recorded_equivalents(audit):
    report = to_stryker(audit, quotes_of(audit))
    Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(report)
    mutants = next(iter(report["files"].values()))["mutants"]
    assert [m["status"] for m in mutants] == ["Killed", "Ignored", "Survived"]
    assert mutants[1]["statusReason"] == "out-of-contract: the name only feeds the error message"
    assert mutants[0]["killedBy"] == ["test_accept_rejects_bad_arguments"]
    assert mutants[2]["location"]["start"]["line"] == _line("return u < p_x / q_x")


def test_markdown_shows_each_unexplained_survivors_diff_and_stale_records(audit):
    text = to_markdown(audit)
    assert "FAIL" in text and "Score 1/2 = 50.0 %" in text
    assert "+    return u <= p_x / q_x" in text and "Stale records (1)" in text
    assert 'mutated = "return u <= p_x / q_x"' in text  # the skeleton to complete


def test_the_score_says_which_mutants_it_leaves_out(audit):
    """The recorded survivors are out of the score's denominator: the line says so, and how many
    of each kind (it read 'Score 140/140 ... (killed / non-equivalent)' with 41 out of contract)."""
    from harness.report.audit import mutmut_summary

    expected = ("3 mutants: 1 killed, 1 recorded (0 equivalent, 1 out of contract), 1 unexplained. "
                "Score 1/2 = 50.0 %: killed of the 2 in-contract, non-equivalent mutants; not counted: "
                "1 out of contract (the recorded survivors).")
    assert mutmut_summary(audit).splitlines()[1] == "  " + expected
    assert expected in to_markdown(audit) and expected in to_html(audit)
    equivalent = Record("rejection_accept", "a", "b", "equivalent", "the same function", None, 3)
    rows = (*audit.rows[:2], dataclasses.replace(audit.rows[2], record=equivalent))
    both = dataclasses.replace(audit, rows=rows)
    assert ("Score 1/1 = 100.0 %: killed of the 1 in-contract, non-equivalent mutants; not counted: "
            "1 out of contract, 1 equivalent (the recorded survivors).") in mutmut_summary(both)


def test_without_the_lab_the_speed_lines_say_how_to_compare(audit):
    from harness.report.audit import mutmut_summary

    alone = dataclasses.replace(audit, lab={})
    assert ("ol lab M07.6 not run beside it for the cost per mutant (--compare-lab runs it)"
            in mutmut_summary(alone))
    assert "in the same run" not in mutmut_summary(alone) and "in the same run" in mutmut_summary(audit)
    assert "ol audit --mutmut as a whole (mutmut, then the full matrix)" in mutmut_summary(alone)


def test_all_mutmut_reports_are_written(audit, tmp_path):
    names = sorted(p.name for p in write_folder(audit, tmp_path).paths)
    assert names == ["audit-mutmut-M07.6.html", "audit-mutmut-M07.6.json", "audit-mutmut-M07.6.md",
                     "mutation-report-mutmut-M07.6.json"]


@pytest.mark.parametrize("original,mutated,name", [
    ("if u < r:", "if u <= r:", "EqualityOperator"), ("x = a / b", "x = a * b", "ArithmeticOperator"),
    ('f("p", x)', 'f("XXpXX", x)', "StringLiteral"), ("f(1)", "f(2)", "NumberLiteral"),
    ('f(x, "p")', "f(x, None)", "NoneReplacement"), ('f(x, "p")', "f(x, )", "ArgumentRemoval"),
    ("a or b", "a and b", "LogicalOperator"), ("if not a:", "if a:", "BooleanNegation"),
    ("if a is b:", "if a is not b:", "BooleanNegation"), ("t += 1", "t = 1", "AssignmentOperator"),
    ("f(p, q)", "f(q)", "ArgumentRemoval"),
])
def test_mutator_names(original, mutated, name):
    assert mutator_name(original, mutated) == name


def _power_audit(power_value: int) -> PowerAudit:
    designated = MutantPower("s06", "resample from p", True, "table", True,
                             {"tv": 0.1, "noncentrality": 1000.0, "analytic_power": 1.0},
                             rate(power_value, 200), True)
    same = MutantPower("s09", "np.sum", False, "none", False, {"tv": 1e-16}, None, False)
    test = TestPower("test_speculative_chi_square", "chi-square", "CHI_SQUARE_ALPHA", 1e-6, 20260706,
                     20000, rate(0, 2000), 0.53, {"0.05": rate(100, 2000)}, 0.4,
                     {"df": 6, "critical_value": 38.26, "min_noncentrality": 79.9,
                      "min_divergence": 0.004, "min_tv": 0.0316, "nominal_alpha": 1e-6},
                     (designated, same), ("s15",), (0.1, 0.5, 0.9))
    return PowerAudit("M07.6", 200, 2000, 2, 60.0, (test,), {"tables_s": 20.0, "trials_s": 40.0})


def test_power_verdict_flags_a_designated_mutant_below_the_required_power():
    assert _power_audit(200).verdict == "pass"
    weak = _power_audit(199)
    assert weak.verdict == "fail"
    assert "power 0.9950 < 0.999" in weak.tests[0].problems[0]


def test_power_markdown_states_the_detectable_change_and_each_mutant():
    text = power_markdown(_power_audit(200))
    assert "TV >= 0.0316" in text and "| `s06` | yes | table |" in text
    assert "Nothing to detect (its law is the reference's): s09" in text
    assert "never runs: s15" in text


def test_power_reports_are_written_with_a_plot(tmp_path):
    pytest.importorskip("matplotlib")
    written = write_folder(_power_audit(200), tmp_path)
    paths, note = written.paths, "".join(written.notes)
    assert note == "" and sorted(p.suffix for p in paths) == [".json", ".md", ".png"]
    png = next(p for p in paths if p.suffix == ".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(next(p for p in paths if p.suffix == ".json").read_text())
    assert data["tests"][0]["mutants"][0]["power"]["k"] == 200


def _bars_audit(*sizes: int) -> PowerAudit:
    """An audit whose sampled tests have ``sizes`` measured mutants each (ids as the library's)."""
    base = _power_audit(200)
    template = base.tests[0].mutants[0]
    kinds = ["chi-square", "mean", "streams"]
    tests = tuple(
        dataclasses.replace(base.tests[0], test=f"test_sampled_number_{i}_of_the_catalog", kind=kinds[i % 3],
                            mutants=tuple(dataclasses.replace(template, mutant=f"x{10 * i + j:02d}")
                                          for j in range(n)))
        for i, n in enumerate(sizes))
    return dataclasses.replace(base, tests=tests)


def _boxes(texts, renderer):
    return sorted((t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()),
                  key=lambda b: b.x0)


@pytest.mark.parametrize("sizes", [(15, 4), (1, 1), (3, 1, 2), (40, 30)],
                         ids=["as-M07.6", "one-each", "three-tests", "seventy-bars"])
@pytest.mark.slow
def test_power_plot_labels_do_not_overlap(sizes):
    """The power panel's x labels: one mutant id per bar and one label per test under its bars,
    none overlapping another (their extents as drawn), all inside the figure; the test's kind is
    said once, in its label, not under every bar (it read 'chi-squarechi-square...')."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from harness.report.power import GROUP_GID, figure

    audit = _bars_audit(*sizes)
    fig = figure(audit)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        whole = fig.bbox
        for ax in fig.axes[:2]:  # the power panel, the false-alarm panel
            ticks = _boxes(ax.get_xticklabels(), renderer)
            assert len(ticks) == (sum(sizes) if ax is fig.axes[0] else len(sizes))
            for a, b in zip(ticks, ticks[1:], strict=False):
                assert a.x1 <= b.x0, f"x labels overlap: {a} and {b}"
            for box in ticks:
                assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0
        power = fig.axes[0]
        assert [t.get_text() for t in power.get_xticklabels()] == [
            m.mutant for t in audit.tests for m in t.mutants]
        groups = _boxes([t for t in power.texts if t.get_gid() == GROUP_GID], renderer)
        assert len(groups) == len(sizes), "one label per test"
        for a, b in zip(groups, groups[1:], strict=False):
            assert a.x1 <= b.x0, f"two tests' labels overlap: {a} and {b}"
        lowest_id = min(b.y0 for b in _boxes(power.get_xticklabels(), renderer))
        for box in groups:
            assert box.y1 <= lowest_id, "a test's label overlaps the mutant ids"
            assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0
        labels = [t.get_text().replace("\n", " ") for t in power.texts if t.get_gid() == GROUP_GID]
        assert labels[0] == f"sampled number 0 of the catalog ({audit.tests[0].kind})"
    finally:
        plt.close(fig)


def test_power_summary_says_which_mutants_the_verdict_rests_on():
    """The lowest power overall is a mutant not designated for the test (x22, as on M07.6): the
    summary names the designated mutants' lowest power apart, and x22 as not designated."""
    from harness.report.power import summary

    base = _power_audit(200)
    designated, same = base.tests[0].mutants
    weak = dataclasses.replace(designated, mutant="x22", designated=False, power=rate(0, 200))
    other = dataclasses.replace(designated, mutant="s12", designated=False, power=rate(139, 200))
    audit = dataclasses.replace(base, tests=(dataclasses.replace(
        base.tests[0], mutants=(designated, same, weak, other)),))
    assert audit.verdict == "pass"
    lines = summary(audit).splitlines()
    assert lines[0].startswith("ol audit M07.6 --power: PASS")
    assert lines[1] == ("  PASS rests on each test's false alarms and its designated mutants "
                        "(power >= 0.999 required)")
    assert lines[3] == "    lowest power among designated mutants 1.000 (s06, the only one)"
    assert lines[4] == ("    lowest power among the 2 other mutants 0.000 (x22, not designated: measured, "
                        "not required)")
    assert all(len(line) <= 100 for line in lines)
    two = dataclasses.replace(audit, tests=(dataclasses.replace(audit.tests[0], mutants=(
        designated, dataclasses.replace(designated, mutant="s07", power=rate(199, 200)), weak)),))
    lines = summary(two).splitlines()
    assert lines[0].startswith("ol audit M07.6 --power: FAIL")
    assert lines[3:5] == ["    lowest power among designated mutants 0.995 (s07 of s06, s07)",
                          "    lowest power among the 1 other mutant 0.000 (x22, not designated: "
                          "measured, not required)"]
