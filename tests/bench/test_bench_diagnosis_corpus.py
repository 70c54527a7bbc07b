"""bench/diagnosis_corpus.py: its headers, its scoring of a JSON report and its table (no ol run)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from harness.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "bench" / "diagnosis_corpus.py"


@pytest.fixture(scope="module")
def dc():
    spec = importlib.util.spec_from_file_location("diagnosis_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.mark.parametrize(("value", "kind", "numbers"), [
    ("pitfall 3", "pitfalls", (3,)),
    ("ol pitfall 17", "pitfalls", (17,)),
    ("pitfalls 1, 8", "pitfalls", (1, 8)),
    ("pitfalls 3, ol 12", "pitfalls", (3, 12)),
    ("pitfalls ol 9, ol 10", "pitfalls", (9, 10)),
    ("Correct", "correct", ()),
    ("timeout", "timeout", ()),
    ("exited", "exited", ()),
    ("other", "other", ()),
])
def test_expectations_are_read(dc, value, kind, numbers):
    expect = dc.parse_expect(value)
    assert (expect.kind, expect.pitfalls) == (kind, numbers)
    assert expect.should_pass is (kind == "correct")


@pytest.mark.parametrize("value", ["pitfall", "pitfall three", "maybe", ""])
def test_an_unreadable_expectation_is_refused(dc, value):
    with pytest.raises(ValueError, match="unreadable"):
        dc.parse_expect(value)


def test_the_header_is_the_leading_comments(dc):
    expect = dc.read_header("# expect: pitfalls 5, 7\n# bug: two at once\nimport math\n# expect: correct\n")
    assert (expect.kind, expect.pitfalls, expect.bug) == ("pitfalls", (5, 7), "two at once")
    with pytest.raises(ValueError, match="no '# expect:'"):
        dc.read_header("import math\n# expect: correct\n")


def report(verdict="fail", failing=("test_a",), diagnosis=()):
    tests = [{"name": "test_ok", "outcome": "passed"}]
    tests += [{"name": n, "outcome": "failed"} for n in failing]
    return {"verdict": verdict, "tests": tests, "diagnosis": list(diagnosis)}


def entry(pitfall=None, also=(), kind="pitfall", text="t"):
    return {"kind": kind, "pitfall": pitfall, "also": list(also), "text": text}


def test_a_single_bug_is_scored_by_the_first_entry_only(dc):
    expect = dc.parse_expect("pitfall 3")
    first = dc.round_from_report(report(diagnosis=[entry(3), entry(8)]), 1.0)
    second = dc.round_from_report(report(diagnosis=[entry(8), entry(3)]), 1.0)
    assert dc.verdict_right(expect, first) and dc.top_right(expect, first)
    assert not dc.top_right(expect, second)  # named, but not first
    assert dc.both_right(expect, first) is None
    assert first.failing == ("test_a",)


def test_an_also_does_not_make_the_top_right_but_counts_for_both(dc):
    expect = dc.parse_expect("pitfalls 1, 8")
    r = dc.round_from_report(report(diagnosis=[entry(4, also=(1,)), entry(8)]), 1.0)
    assert dc.top_right(expect, r) is False
    assert dc.both_right(expect, r) is True
    r = dc.round_from_report(report(diagnosis=[entry(8)]), 1.0)
    assert dc.top_right(expect, r) is True and dc.both_right(expect, r) is False


def test_categories_compare_the_kind(dc):
    expect = dc.parse_expect("timeout")
    r = dc.round_from_report(report(diagnosis=[entry(kind="timeout"), entry(2)]), 30.0)
    assert dc.top_right(expect, r) is True
    r = dc.round_from_report(report(diagnosis=[entry(kind="crashed")]), 30.0)
    assert dc.top_right(expect, r) is False and dc.top_label(r) == "crashed"


def test_correct_files_must_pass_and_other_files_must_fail(dc):
    passing = dc.round_from_report(report("pass", failing=()), 1.0)
    failing = dc.round_from_report(report(diagnosis=[entry(6)]), 1.0)
    correct, other = dc.parse_expect("correct"), dc.parse_expect("other")
    assert dc.verdict_right(correct, passing) and not dc.verdict_right(correct, failing)
    assert dc.verdict_right(other, failing) and not dc.verdict_right(other, passing)
    assert dc.top_right(correct, passing) is None and dc.top_right(other, failing) is None
    no_report = dc.Round(1.0, 3, error="no report")
    assert not dc.verdict_right(correct, no_report) and not dc.verdict_right(other, no_report)
    assert dc.top_label(no_report) == "no-report"


def test_stable_means_same_failures_and_same_texts(dc):
    a = dc.round_from_report(report(diagnosis=[entry(3, text="x")]), 1.0)
    b = dc.round_from_report(report(diagnosis=[entry(3, text="x")]), 2.0)
    c = dc.round_from_report(report(diagnosis=[entry(3, text="y")]), 1.0)
    d = dc.round_from_report(report(failing=("test_a", "test_b"), diagnosis=[entry(3, text="x")]), 1.0)
    assert dc.stable([a, b]) and dc.stable([a])
    assert not dc.stable([a, b, c]) and not dc.stable([a, d])


def test_a_file_is_right_only_when_right_in_every_round(dc):
    expect = dc.parse_expect("pitfall 3")
    good = dc.round_from_report(report(diagnosis=[entry(3)]), 1.0)
    bad = dc.round_from_report(report(diagnosis=[entry(4, text="u")]), 3.0)
    result = dc.FileResult("s03", expect, [good, bad, good])
    assert result.verdict_ok() is True and result.top_ok() is False and result.stable() is False
    assert result.to_json()["wall_median_s"] == 1.0


def test_totals_and_table(dc):
    def file(name, expect, rounds):
        return dc.FileResult(name, dc.parse_expect(expect), rounds)

    passing = dc.round_from_report(report("pass", failing=()), 2.0)
    results = [
        file("c01_a_very_long_name_that_is_cut_in_the_table_x", "correct", [passing, passing]),
        file("s01", "pitfall 1", [dc.round_from_report(report(diagnosis=[entry(1)]), 3.0)] * 2),
        file("d01", "pitfalls 1, 8", [dc.round_from_report(report(diagnosis=[entry(1)]), 4.0)] * 2),
        file("x01", "timeout", [dc.round_from_report(report(diagnosis=[entry(kind="timeout")]), 9.0)] * 2),
    ]
    t = dc.totals(results)
    assert t["all"]["verdict_right"] == [4, 4]
    assert t["all"]["top_right"] == [3, 3] and t["all"]["both_named"] == [0, 1]
    assert t["groups"]["two-bug"]["both_named"] == [0, 1]
    assert t["all"]["wall_s"]["max"] == 9.0 and t["all"]["wall_s"]["median"] == 3.5
    lines = dc.table(results)
    assert all(len(line) <= 100 for line in lines)
    assert any(line.startswith("d01 ") and "NO" in line for line in lines)
    assert [line.split()[0] for line in lines if line.startswith(("all ", "two-bug"))] == ["two-bug", "all"]
    assert [m.split(":")[0] for m in dc.misses(results) if not m.startswith(" ")] == ["d01"]


def test_a_workspace_is_the_reference_with_the_file_in_place(dc, tmp_path):
    source = tmp_path / "s.py"
    source.write_text("# expect: correct\n")
    ws = dc.make_workspace(source, tmp_path / "root")
    prob = ws / "python" / "tinyllm" / "prob"
    assert (prob / "rejection.py").read_text() == "# expect: correct\n"
    assert (prob / "categorical.py").is_file() and (prob / "pcg32.py").is_file()
