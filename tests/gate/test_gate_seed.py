"""``ol gate --seed N|public``: by default a fresh seed, one for every module of the gate, in force
for every test, recorded in every report (text, JSON, JUnit, Markdown) with its replay command.
"""

from __future__ import annotations

import html
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import harness.engine.runner
from harness.cli import main
from harness.engine import seeding
from harness.paths import REFERENCE_DIR, REPO_ROOT

JUNIT_XSD = REPO_ROOT / "tests" / "schemas" / "junit.xsd"
CATEGORICAL = "python/tinyllm/prob/categorical.py"
FRESH = 31337


def workspace(tmp_path: Path, broken: bool = False) -> Path:
    root = tmp_path / "ws"
    if not root.exists():
        shutil.copytree(REFERENCE_DIR / "python", root / "python")
    if broken:  # the boundary bug of M07.1: u <= c_i
        path = root / CATEGORICAL
        path.write_text(path.read_text().replace("if u < running:", "if u <= running:"))
    return root


def gate(tmp_path: Path, root: Path, *extra: str, name: str = "gate") -> tuple[int, dict]:
    out = tmp_path / name
    code = main(["gate", "MS-P6", "--workspace", str(root), "--json", str(out / "gate.json"),
                 "--junit", str(out / "gate.xml"), "--markdown", str(out / "gate.md"), *extra])
    return code, json.loads((out / "gate.json").read_text())


@pytest.fixture
def fresh(monkeypatch):
    """``seeding.fresh_seed`` gives FRESH; the list counts its calls."""
    calls: list[int] = []

    def fixed() -> int:
        calls.append(FRESH)
        return FRESH

    monkeypatch.setattr(seeding, "fresh_seed", fixed)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return calls


@pytest.fixture
def seeds_in_force(monkeypatch):
    seen: list[int | None] = []
    real = harness.engine.runner.run_case

    def recording(*args, **kwargs):
        seen.append(seeding.current())
        return real(*args, **kwargs)

    monkeypatch.setattr(harness.engine.runner, "run_case", recording)
    return seen


def without_durations(doc):
    """A report's JSON without its times (all that differs between two runs of the same cases)."""
    if isinstance(doc, dict):
        return {k: without_durations(v) for k, v in doc.items() if k != "duration_s"}
    if isinstance(doc, list):
        return [without_durations(v) for v in doc]
    return doc


@pytest.mark.slow
def test_the_default_is_one_fresh_seed_for_every_module_in_every_report(tmp_path, capsys, fresh,
                                                                        seeds_in_force):
    import xmlschema

    root = workspace(tmp_path)
    code, doc = gate(tmp_path, root)
    out = capsys.readouterr().out
    assert code == 0, out
    assert fresh == [FRESH]  # one seed drawn for the whole gate
    replay = f"ol gate MS-P6 --workspace {root} --seed {FRESH}"
    line = f"cases: hidden, seed {FRESH} (replay: {replay})"
    assert out.splitlines()[1] == line
    assert (doc["seed"], doc["replay"]) == (FRESH, replay)
    assert [m["run"]["seed"] for m in doc["modules"]] == [FRESH, FRESH, FRESH]
    assert len(seeds_in_force) == sum(m["passed"] for m in doc["modules"])
    assert set(seeds_in_force) == {FRESH}
    xml = tmp_path / "gate" / "gate.xml"
    xmlschema.XMLSchema11(str(JUNIT_XSD)).validate(str(xml))
    for suite in ET.parse(xml).getroot().iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["seed"] == str(FRESH) and props["gate_replay"] == replay
        assert props["replay"] == f"ol check {suite.get('name')} --workspace {root} --seed {FRESH}"
    # As a reader sees the Markdown: the report escapes it (a "_" in the path is "\\_" there).
    import markdown_it  # the test extra's

    page = markdown_it.MarkdownIt("commonmark").enable("table").render(
        (tmp_path / "gate" / "gate.md").read_text())
    assert html.escape(line, quote=False) in page


@pytest.mark.slow
def test_the_same_seed_twice_gives_the_same_gate(tmp_path, capsys, fresh):
    root = workspace(tmp_path, broken=True)
    first = gate(tmp_path, root, "--seed", "77", name="a")
    second = gate(tmp_path, root, "--seed", "77", name="b")
    assert fresh == []  # a given seed draws none
    assert first[0] == second[0] == 1
    assert [(m["module"], m["status"]) for m in first[1]["modules"]] == [
        ("M06.3", "pass"), ("M07.1", "fail"), ("M07.6", "blocked")]
    assert {m["run"]["seed"] for m in first[1]["modules"] if m["run"]} == {77}
    assert without_durations(first[1]) == without_durations(second[1])


def test_a_blocked_module_records_the_seed_too(tmp_path, capsys, fresh):
    """M07.6 is blocked by the broken M07.1 and never runs; its suite still names the seed."""
    root = workspace(tmp_path, broken=True)
    code, doc = gate(tmp_path, root, "--seed", "5")
    assert code == 1 and doc["seed"] == 5
    xml = ET.parse(tmp_path / "gate" / "gate.xml").getroot()
    blocked = next(s for s in xml.iter("testsuite") if s.get("name") == "M07.6")
    props = {p.get("name"): p.get("value") for p in blocked.iter("property")}
    assert (props["status"], props["seed"]) == ("blocked", "5")
    assert props["gate_replay"].endswith("--seed 5")


def test_seed_public_gates_on_the_public_cases_and_says_how_to_replay(tmp_path, capsys, fresh,
                                                                      seeds_in_force):
    root = workspace(tmp_path, broken=True)
    code, doc = gate(tmp_path, root, "--seed", "public")
    out = capsys.readouterr().out
    assert code == 1 and fresh == []
    replay = f"ol gate MS-P6 --workspace {root} --seed public"
    assert out.splitlines()[1] == f"cases: public (replay: {replay})"
    assert doc["seed"] is None and doc["replay"] == replay
    assert seeds_in_force and set(seeds_in_force) == {None}
