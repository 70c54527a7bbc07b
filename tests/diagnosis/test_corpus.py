"""The diagnosis on implementations written independently of ol's code (tests/diagnosis/corpus/).

Each corpus file was written from the chapter and the contracts alone, as a student would write
it (plain loops, numpy one-liners, other error messages, two bugs at once, correct code written
differently). Its header says what it must get (``diagnosis_corpus.py``). The files are ours, so
the wrong and correct ones run in this process (fast); the ones that crash, exit, hang or raise a
NameError run through ``ol check`` in its isolated worker, as a student's would.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from diagnosis_corpus import applies, entries

from harness.check import with_diagnosis
from harness.course import REFERENCE_PYTHON, REPO_ROOT, load_course
from harness.diagnosis.record import Recorder
from harness.loading import module_from_source
from harness.runner import run_catalog
from harness.target import InProcessTarget

COURSE = load_course()
ALL = [e for mid in COURSE.modules for e in entries(mid)]
IN_PROCESS = [e for e in ALL if not e.category]
ISOLATED = [e for e in ALL if e.category]


def check_in_process(entry):
    module = COURSE.module(entry.module)
    source = entry.path.read_text(encoding="utf-8")
    mod = module_from_source(f"ol_corpus_{entry.path.stem}", source, str(entry.path))
    target = InProcessTarget(entry.name, mod, module.functions, COURSE.returns)
    recorder = Recorder()
    run = run_catalog(module, target, "corpus", recorder=recorder, limit=30)
    return with_diagnosis(module, run, recorder) if run.failed else run


def test_the_corpus_covers_every_pitfall_and_every_category():
    for mid, module in COURSE.modules.items():
        named = {p for e in entries(mid) if len(e.pitfalls) == 1 and applies(e)
                 and not (e.passes_today or e.misses) for p in e.pitfalls}  # each one asserted
        assert set(module.pitfalls) <= named, f"{mid}: no corpus file for {set(module.pitfalls) - named}"
        assert sum(e.verdict == "pass" for e in entries(mid)) >= 4, mid
        assert any(len(e.pitfalls) == 2 for e in entries(mid)), mid
        assert {e.category for e in entries(mid)} >= {"crashed", "raised", "timeout",
                                                      "not_implemented"}, mid


@pytest.mark.parametrize("entry", IN_PROCESS, ids=[e.name for e in IN_PROCESS])
def test_an_independent_implementation_gets_its_verdict_and_its_pitfall(entry):
    if not applies(entry):  # a mistake only on a later Python: here it is correct, and passes
        run = check_in_process(entry)
        assert run.verdict == "pass", [(t.name, t.message.splitlines()[0]) for t in run.failures()]
        return
    if entry.passes_today:
        pytest.xfail(f"{entry.name}: a catalog blind spot (issue #14)")
    if entry.misses:
        pytest.xfail(f"{entry.name}: {entry.misses}")  # not strict: run, and shown if it starts to pass
    run = check_in_process(entry)
    if entry.verdict == "pass":
        failures = [(t.name, t.message.splitlines()[0]) for t in run.failures()]
        assert run.verdict == "pass", f"{entry.name} is correct but failed: {failures}"
        return
    assert run.verdict == "fail"
    texts = [d.text for d in run.diagnosis]
    if len(entry.pitfalls) == 1:
        assert run.diagnosis and entry.pitfalls[0] in run.diagnosis[0].pitfalls, \
            f"{entry.name}: expected pitfall {entry.pitfalls[0]} first, got {texts}"
    else:
        named = {p for d in run.diagnosis for p in d.pitfalls}
        assert set(entry.pitfalls) <= named, f"{entry.name}: expected {entry.pitfalls}, got {texts}"


def workspace_with(entry, root: Path) -> Path:
    module = COURSE.module(entry.module)
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(entry.path, root / "python" / module.file)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("entry", ISOLATED, ids=[e.name for e in ISOLATED])
def test_a_crash_an_exit_a_hang_or_a_stub_names_no_pitfall(entry, tmp_path):
    ws = workspace_with(entry, tmp_path / "ws")
    report = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "harness", "check", entry.module, "--workspace",
                          str(ws), "--timeout", "3", "--json", str(report)], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 1, run.stderr
    data = json.loads(report.read_text())
    failed = [t for t in data["tests"] if t["outcome"] != "passed"]
    assert failed and all(t["pitfall"] is None for t in failed if t["category"] != "wrong"), failed
    assert entry.category in {t["category"] for t in failed}
    top = data["diagnosis"][0]
    assert top["kind"] == entry.category and top["pitfall"] is None, top
    assert "pitfall" not in top["text"].split(":")[0]
    assert "Traceback" not in run.stdout + run.stderr
