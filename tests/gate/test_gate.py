"""``ol gate``: every module of a milestone in dependency order; a failed dependency blocks.

These tests do not depend on the catalogs of M06.3 and M07.1 (written elsewhere): they gate a
test-only milestone, and M07.1's catalog is a small stand-in put in ``sys.modules`` for the test.
Only ``test_ms_p6_on_the_reference`` needs the real catalogs, and it is skipped without them.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.catalogs.checks import called, expect
from harness.cli import main
from harness.engine.catalog import case
from harness.engine.course import load_course
from harness.paths import REFERENCE_DIR, REPO_ROOT, STUDENT_DIR

JUNIT_XSD = REPO_ROOT / "tests" / "schemas" / "junit.xsd"
CATEGORICAL = "python/tinyllm/prob/categorical.py"
MILESTONE = "MS-TEST"


# -- a stand-in catalog for M07.1: two boundary rules of the contract --------------------------------
# (not named test_*: pytest must not collect them here; the catalog reads the @case metadata)

@case("boundary", "u exactly on c_i goes to the next positive id", "the inverse CDF is u < c_i")
def boundary_goes_to_the_next_id(target):
    args = ([0.5, 0.5], 0.5)
    got = target.sample_categorical(*args)
    expect(got == 1, f"{called('sample_categorical', args)} returned {got!r}, expected 1")


@case("boundary", "an id with probability 0 is never returned", "zero mass is never sampled")
def zero_probability_is_skipped(target):
    args = ([0.5, 0.0, 0.5], 0.5)
    got = target.sample_categorical(*args)
    expect(got == 2, f"{called('sample_categorical', args)} returned {got!r}, expected 2")


@pytest.fixture
def course(monkeypatch):
    """The course with a test milestone (M07.1, M07.6) and the stand-in M07.1 catalog."""
    stand_in = types.ModuleType("harness.catalogs.m07_1.test_catalog")
    stand_in.boundary_goes_to_the_next_id = boundary_goes_to_the_next_id
    stand_in.zero_probability_is_skipped = zero_probability_is_skipped
    c = load_course()
    # M07.6's catalog imports helpers of M07.1's real one: imported first, as in a whole run (so
    # these tests pass on their own too, not only after another test imported it).
    importlib.import_module(c.module("M07.6").catalog_module)
    monkeypatch.setitem(sys.modules, c.module("M07.1").catalog_module, stand_in)
    monkeypatch.setitem(c.milestones, MILESTONE, ("M07.6", "M07.1"))  # gate sorts them
    monkeypatch.setitem(c.milestone_titles, MILESTONE, "a test milestone")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return c


def workspace(tmp_path: Path, name: str = "ws") -> Path:
    root = tmp_path / name
    shutil.copytree(REFERENCE_DIR / "python", root / "python")
    return root


def break_categorical(root: Path) -> None:
    """The boundary bug: ``u <= c_i`` instead of ``u < c_i``."""
    path = root / CATEGORICAL
    source = path.read_text()
    assert "if u < running:" in source
    path.write_text(source.replace("if u < running:", "if u <= running:"))


def gate(tmp_path: Path, root: Path, *extra: str, milestone: str = MILESTONE) -> tuple[int, dict]:
    out = tmp_path / "reports"
    code = main(["gate", milestone, "--workspace", str(root), "--json", str(out / "gate.json"),
                 "--junit", str(out / "gate.xml"), "--markdown", str(out / "gate.md"), *extra])
    return code, json.loads((out / "gate.json").read_text())


@pytest.fixture(scope="module")
def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema11(str(JUNIT_XSD))


def suites(tmp_path: Path) -> dict[str, ET.Element]:
    root = ET.fromstring((tmp_path / "reports" / "gate.xml").read_text())
    return {s.get("name"): s for s in root.iter("testsuite")}


# -- the tests -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_reference_passes_the_gate(course, tmp_path, capsys, junit_schema):
    code, doc = gate(tmp_path, workspace(tmp_path))
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [line.split() for line in out.splitlines() if line.startswith("  M0")]
    assert [(w[0], w[1]) for w in lines] == [("M07.1", "pass"), ("M07.6", "pass")]
    top = sum(m["run"]["max_score"] for m in doc["modules"])
    assert f"{MILESTONE}: 2 pass, 0 fail, 0 error, 0 blocked, score {top}/{top} (verdict: pass)" in out
    assert doc["verdict"] == "pass" and doc["kind"] == "ol-gate"
    assert (doc["score"], doc["max_score"]) == (top, top) and top > len(doc["modules"][1]["run"]["tests"])
    assert [(m["module"], m["status"], m["failed"]) for m in doc["modules"]] == [
        ("M07.1", "pass", 0), ("M07.6", "pass", 0)]
    assert doc["modules"][1]["passed"] == len(doc["modules"][1]["run"]["tests"]) >= 19
    junit_schema.validate(str(tmp_path / "reports" / "gate.xml"))
    found = suites(tmp_path)
    assert list(found) == ["M07.1", "M07.6"]
    assert found["M07.1"].get("tests") == "2" and found["M07.6"].get("failures") == "0"
    assert (tmp_path / "reports" / "gate.md").read_text().startswith(f"## {MILESTONE}: PASS")


def test_a_failed_dependency_blocks_the_module(course, tmp_path, capsys, junit_schema,
                                               monkeypatch):
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("COLUMNS", "60")  # the failures fit it, as ol check's do
    root = workspace(tmp_path)
    break_categorical(root)
    code, doc = gate(tmp_path, root)
    out = capsys.readouterr().out
    assert code == 1
    assert "  M07.1  fail" in out and "  M07.6  blocked  by M07.1 (failed its check)" in out
    assert "sample_categorical([0.5, 0.5], 0.5) returned 0, expected 1" in " ".join(out.split())
    failures = out[out.index("\n== "):out.index("\nwrote ")]
    assert max(map(len, failures.splitlines())) <= 60, failures
    m071, m076 = doc["modules"]
    assert (m071["status"], m071["failed"]) == ("fail", 2)
    assert (m076["status"], m076["blocked_by"], m076["run"]) == ("blocked", ["M07.1"], None)
    assert (m076["score"], m076["max_score"]) == (0, 25)  # a blocked module scores 0 of its catalog
    assert m071["max_score"] == m071["run"]["max_score"] and m071["score"] == m071["passed"]
    junit_schema.validate(str(tmp_path / "reports" / "gate.xml"))
    blocked = suites(tmp_path)["M07.6"]
    cases = list(blocked.iter("testcase"))
    assert len(cases) == int(blocked.get("skipped")) >= 19  # every test of M07.6: not run
    assert all(c.find("skipped") is not None for c in cases)
    markdown = (tmp_path / "reports" / "gate.md").read_text()
    assert "| M07.6 | BLOCKED |" in markdown and "### M07.1" in markdown
    assert summary.read_text() == markdown  # the CI step summary


@pytest.mark.slow
def test_with_ref_deps_each_module_is_checked_on_its_own(course, tmp_path, capsys):
    root = workspace(tmp_path)
    break_categorical(root)
    code, doc = gate(tmp_path, root, "--ref-deps")
    assert code == 1
    assert [m["status"] for m in doc["modules"]] == ["fail", "pass"]
    assert doc["ref_deps"] is True


def test_a_stub_dependency_outside_the_milestone_blocks(course, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(course.milestones, MILESTONE, ("M07.6",))
    root = workspace(tmp_path)
    shutil.copyfile(STUDENT_DIR / CATEGORICAL, root / CATEGORICAL)
    code, doc = gate(tmp_path, root)
    assert code == 1
    assert doc["modules"][0]["blocked_by"] == ["M07.1"]
    assert f"M07.1 ({CATEGORICAL} is still a stub)" in doc["modules"][0]["message"]


def test_a_setup_error_is_an_error_and_blocks_what_needs_it(course, tmp_path, capsys,
                                                            junit_schema):
    root = workspace(tmp_path)
    with open(root / CATEGORICAL, "a") as fh:
        fh.write("\ndef broken(:\n")
    code, doc = gate(tmp_path, root)
    assert code == 1
    m071, m076 = doc["modules"]
    assert m071["status"] == "error" and "syntax error in" in m071["message"]
    assert m076["status"] == "blocked" and "M07.1 (could not be checked)" in m076["message"]
    junit_schema.validate(str(tmp_path / "reports" / "gate.xml"))
    error = suites(tmp_path)["M07.1"]
    assert error.get("errors") == "1" and error.find("testcase/error").get("type") == "setup"


def test_a_module_without_a_catalog_is_an_error_not_a_crash(course, tmp_path, capsys,
                                                            monkeypatch):
    m063 = course.module("M06.3")
    monkeypatch.setitem(sys.modules, m063.catalog_module, None)  # as if it did not exist
    monkeypatch.setitem(course.milestones, MILESTONE, ("M06.3", "M07.1"))
    code, doc = gate(tmp_path, workspace(tmp_path))
    assert code == 1
    assert [m["status"] for m in doc["modules"]] == ["error", "blocked"]
    assert "M06.3 has no catalog yet" in doc["modules"][0]["message"]


def test_an_unknown_milestone_is_a_usage_error(tmp_path, capsys):
    assert main(["gate", "MS-NOPE", "--workspace", str(workspace(tmp_path))]) == 2
    assert "unknown milestone 'MS-NOPE'" in capsys.readouterr().err


def _gate(root, tmp_path) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    """``ol gate MS-P6 --workspace root`` as a user runs it; its module lines (id, status)."""
    done = subprocess.run([sys.executable, "-m", "harness", "gate", "MS-P6", "--workspace",
                           str(root), "--markdown", str(tmp_path / "gate.md")],
                          capture_output=True, text=True, timeout=600, check=False)
    return done, [line.split()[:2] for line in done.stdout.splitlines() if line.startswith("  M0")]


@pytest.mark.slow
def test_ms_p6_on_the_reference(tmp_path):
    """The issue's own command: ``ol gate MS-P6 --workspace reference`` exits 0."""
    done, modules = _gate(REFERENCE_DIR, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert modules == [["M06.3", "pass"], ["M07.1", "pass"], ["M07.6", "pass"]]


@pytest.mark.slow
def test_ms_p6_with_a_broken_m07_1(tmp_path):
    """The issue's other command: a broken M07.1 fails the gate, M07.6 is blocked by it."""
    root = workspace(tmp_path)
    break_categorical(root)
    done, modules = _gate(root, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert modules == [["M06.3", "pass"], ["M07.1", "fail"], ["M07.6", "blocked"]]
    assert "  M07.6  blocked  by M07.1 (failed its check)" in done.stdout
