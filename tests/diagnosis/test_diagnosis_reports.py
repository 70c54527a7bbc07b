"""The diagnosis and the student's own evidence, end to end through ``ol check`` on a workspace."""

from __future__ import annotations

import json
import shutil

from harness.cli import main
from harness.engine.course import load_course
from harness.engine.mutants import find_mutant, mutant_source
from harness.engine.results import RunResult
from harness.paths import REFERENCE_PYTHON

MODULE = load_course().module("M07.6")


def workspace(tmp_path, source: str):
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (ws / "python" / MODULE.file).write_text(source, encoding="utf-8")
    return ws


def test_the_diagnosis_comes_first_and_the_students_print_is_shown(tmp_path, capsys):
    source = mutant_source(find_mutant("M07.6", "s01"), MODULE)
    marker = "def rejection_accept(p_x: float, q_x: float, u: float) -> bool:\n"
    assert marker in source
    source = source.replace(marker, marker + "    print('debug: u =', u, '\\x1b[31m')\n", 1)
    ws = workspace(tmp_path, source)
    report = tmp_path / "r.json"
    assert main(["check", "M07.6", "--workspace", str(ws), "-k", "test_accept_is_strict",
                 "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert out.index("test_accept_is_strict") < out.index("diagnosis:") < out.index("FAILED:")
    assert "1. your code behaves like pitfall 1 (accepting on u <= r)" in out
    assert "your code printed:\n      | debug: u = 0.5 \\x1b[31m" in out  # escaped, never run
    data = json.loads(report.read_text())
    assert list(data)[:3] == ["$type", "format_version", "diagnosis"]
    top = data["diagnosis"][0]
    assert (top["kind"], top["pitfall"], top["label"]) == ("pitfall", 1, "pitfall 1")
    assert "s01" in top["mutants"] and top["evidence"]
    assert data["tests"][0]["output"].startswith("debug: u = 0.5")
    again = RunResult.from_json(data)
    assert again.diagnosis[0].text == top["text"] and again.tests[0].output == data["tests"][0]["output"]


def test_an_exception_in_the_students_code_shows_their_frames_and_no_pitfall(tmp_path, capsys):
    reference = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8")
    marker = "def residual_distribution("
    helper = ("def _normaliser(values):\n"
              "    total = 0.0\n"
              "    for v in values:\n"
              "        total += vaule  # a typo\n"
              "    return total\n\n\n")
    source = reference.replace(marker, helper + marker, 1)
    source = source.replace("    z = ", "    _normaliser([1.0])\n    z = ", 1)
    assert "_normaliser([1.0])" in source
    ws = workspace(tmp_path, source)
    report = tmp_path / "r.json"
    assert main(["check", "M07.6", "--workspace", str(ws), "-k", "test_residual_is_a_distribution",
                 "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "where your code raised (most recent call last):" in out
    assert "python/tinyllm/prob/rejection.py:" in out and "in _normaliser" in out
    assert "total += vaule  # a typo" in out
    assert "harness/" not in out.split("diagnosis:", 1)[1]  # no frame of ol's own
    data = json.loads(report.read_text())
    failed = data["tests"][0]
    assert failed["category"] == "raised" and failed["pitfall"] is None
    assert [f["function"] for f in failed["frames"]][-1] == "_normaliser"
    top = data["diagnosis"][0]
    assert top["kind"] == "raised" and top["pitfall"] is None
    assert "NameError" in top["text"] and "_normaliser" in top["text"]


def test_evidence_already_in_the_text_is_not_repeated_under_also():
    from harness.engine.results import Diagnosis
    from harness.report.common import diagnosis_lines

    said = "rejection_sample(...) modified argument 2 in place"
    shown = diagnosis_lines(RunResult("M07.6", "ws", "student", (), diagnosis=(
        Diagnosis("failed", f"test_x fails where pitfall 6 shows: {said}", pitfall=6,
                  evidence=("", said)),
        Diagnosis("pitfall", "your code behaves like pitfall 1; for example f(0)",
                  pitfall=1, evidence=("f(0)", "f(1) returned 2, expected 3")))))
    also = [line.strip() for line in shown if line.strip().startswith("also:")]
    assert also == ["also: f(1) returned 2, expected 3"]
