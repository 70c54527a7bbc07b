"""The diagnosis on implementations written independently of ol's code (tests/diagnosis/corpus/).

Each corpus file was written from the chapter and the contracts alone, as a student would write
it (plain loops, numpy one-liners, other error messages, two bugs at once, correct code written
differently). Its header says what it must get (``diagnosis_corpus.py``). The files are ours, so
the wrong and correct ones run in this process (fast); the ones that crash, exit, hang or raise a
NameError run through ``ol check`` in its isolated worker, as a student's would.

A wrong file names the catalog tests that must fail on it (``# caught-by:``), and they must. A
wrong file the catalog misses today (``# passes-today``) is a strict xfail: its test asserts that
the catalog fails it, so the day a catalog test catches it the xfail turns red (XPASS strict), and
its header loses ``# passes-today``. A wrong file caught in process that ``ol check`` passes in
its isolated worker (``# worker-passes:``) is a strict xfail of the worker run in the same way.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from diagnosis_corpus import applies, entries

from harness.check.engine import with_diagnosis
from harness.diagnosis.engine import MAX_ENTRIES
from harness.diagnosis.record import Recorder
from harness.engine.course import load_course
from harness.engine.own_code import module_from_source
from harness.engine.runner import run_catalog
from harness.engine.target import InProcessTarget
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

COURSE = load_course()
ALL = [e for mid in COURSE.modules for e in entries(mid)]
IN_PROCESS = [e for e in ALL if not e.category]
ISOLATED = [e for e in ALL if e.category]
WORKER_PASSES = [e for e in IN_PROCESS if e.worker_passes and applies(e)]
BLIND_SPOT = "a catalog blind spot (issue #14): once the catalog catches it, drop '# passes-today'"


def _in_process_param(entry):
    # 0.2-7 s a file (M07.6's: its statistical catalog and the replays of the diagnosis): the
    # fast tier (-m "not slow", #28) keeps M07.1's.
    slow = [] if entry.module == "M07.1" else [pytest.mark.slow]
    if entry.passes_today and applies(entry):  # strict: red the day the catalog catches it
        mark = pytest.mark.xfail(strict=True, raises=AssertionError,
                                 reason=f"{entry.name}: {BLIND_SPOT}")
        return pytest.param(entry, marks=[mark, *slow], id=entry.name)
    return pytest.param(entry, marks=slow, id=entry.name)


def catalog_test_names(mid: str) -> set[str]:
    """The names of the catalog tests of ``mid``, as ``ol tests MID --format json`` lists them."""
    run = subprocess.run([sys.executable, "-m", "harness", "tests", mid, "--format", "json"],
                         check=False, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    return {t["name"] for t in json.loads(run.stdout)["tests"]}


def check_in_process(entry):
    module = COURSE.module(entry.module)
    source = entry.path.read_text(encoding="utf-8")
    mod = module_from_source(f"ol_corpus_{entry.path.stem}", source, str(entry.path))
    target = InProcessTarget(entry.name, mod, module.functions, COURSE.returns)
    recorder = Recorder()
    run = run_catalog(module, target, "corpus", recorder=recorder, limit=30)
    return with_diagnosis(module, run, recorder, target) if run.failed else run


def test_the_corpus_covers_every_pitfall_and_every_category():
    for mid, module in COURSE.modules.items():
        named = {p for e in entries(mid) if len(e.pitfalls) == 1 and applies(e)
                 and not (e.passes_today or e.misses) for p in e.pitfalls}  # each one asserted
        assert set(module.pitfalls) <= named, f"{mid}: no corpus file for {set(module.pitfalls) - named}"
        assert sum(e.verdict == "pass" for e in entries(mid)) >= 4, mid
        assert any(len(e.pitfalls) == 2 for e in entries(mid)), mid
        assert {e.category for e in entries(mid)} >= {"crashed", "raised", "timeout",
                                                      "not_implemented"}, mid


def test_every_caught_by_names_a_catalog_test_of_its_module():
    for mid in COURSE.modules:
        names = catalog_test_names(mid)
        for e in entries(mid):
            assert e.verdict == "fail" or not e.caught_by, f"{e.name}: correct, yet a caught-by"
            assert set(e.caught_by) <= names, f"{e.name}: no such test {set(e.caught_by) - names}"
            assert not e.passes_today or e.pitfalls, f"{e.name}: passes-today without a pitfall"


@pytest.mark.parametrize("entry", [_in_process_param(e) for e in IN_PROCESS])
def test_an_independent_implementation_gets_its_verdict_and_its_pitfall(entry):
    if not applies(entry):  # a mistake only on a later Python: here it is correct, and passes
        run = check_in_process(entry)
        assert run.verdict == "pass", [(t.name, t.message.splitlines()[0]) for t in run.failures()]
        return
    run = check_in_process(entry)
    if entry.passes_today:  # strict xfail (see _in_process_param): this assertion fails today
        assert run.verdict == "fail", f"{entry.name} passes every catalog test"
        return  # XPASS(strict): the catalog catches it now
    if entry.verdict == "pass":
        failures = [(t.name, t.message.splitlines()[0]) for t in run.failures()]
        assert run.verdict == "pass", f"{entry.name} is correct but failed: {failures}"
        return
    assert run.verdict == "fail"
    assert_well_worded(entry, run.diagnosis)
    failing = {t.name for t in run.failures()}
    missed = sorted(set(entry.caught_by) - failing)
    assert not missed, f"{entry.name}: {missed} should fail on it; failing: {sorted(failing)}"
    texts = [d.text for d in run.diagnosis]
    if len(entry.pitfalls) == 1:
        named = bool(run.diagnosis) and entry.pitfalls[0] in run.diagnosis[0].pitfalls
        message = f"{entry.name}: expected pitfall {entry.pitfalls[0]} first, got {texts}"
    else:
        named = set(entry.pitfalls) <= {p for d in run.diagnosis for p in d.pitfalls}
        message = f"{entry.name}: expected {entry.pitfalls}, got {texts}"
    if entry.misses and not named:
        pytest.xfail(f"{entry.name}: {entry.misses}")  # not strict; the catalog part is asserted
    assert named, message
    if entry.known_only:  # e.g. an exception class the contract allows is no difference (F6)
        others = [d.text for d in run.diagnosis if d.kind != "pitfall"]
        assert not others, f"{entry.name}: {entry.known_only}; yet {others}"


def assert_well_worded(entry, diagnosis) -> None:
    """What every diagnosis holds (issue #25): at most ``MAX_ENTRIES`` entries, the last naming
    the rest when there are more; one entry per pitfall; balanced brackets; an exception named
    once; no raw outcome tuples; example calls whole (replayable) or marked as summarised."""
    assert len(diagnosis) <= MAX_ENTRIES, f"{entry.name}: {len(diagnosis)} entries"
    assert all(d.kind != "more" for d in diagnosis[:-1]), entry.name
    leads = [d.pitfall for d in diagnosis if d.pitfall is not None and d.kind != "more"]
    assert len(leads) == len(set(leads)), f"{entry.name}: one pitfall in two entries: {leads}"
    for d in diagnosis:
        balanced = re.sub(r"\[[\d.e+-]+, [\d.e+-]+\)", "", d.text)  # "[0, 1)" is an interval
        for opening, closing in ("()", "[]"):
            depth = 0
            for char in balanced:
                depth += (char == opening) - (char == closing)
                assert depth >= 0, f"{entry.name}: unbalanced {opening}{closing}: {d.text}"
            assert depth == 0, f"{entry.name}: unbalanced {opening}{closing}: {d.text}"
        for glitch in ("SourceExhausted: SourceExhausted", "TargetError:", "('raised'",
                       "('returned'"):
            assert glitch not in d.text, f"{entry.name}: {glitch!r} in {d.text}"
        text = re.sub(r"\.\.\. \d+ entries\]", "", d.text).replace("[...]", "")
        assert "..." not in text.replace("(...)", ""), f"{entry.name}: cut short: {d.text}"


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
    # A hanging file waits out its call limit once per function that hangs: 1 s, not 3 (#28);
    # the others wait for nothing, and keep a limit no correct call comes near under load.
    limit = "1" if entry.category == "timeout" else "3"
    run = subprocess.run([sys.executable, "-m", "harness", "check", entry.module, "--workspace",
                          str(ws), "--timeout", limit, "--json", str(report)], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 1, run.stderr
    data = json.loads(report.read_text())
    failed = [t for t in data["tests"] if t["outcome"] != "passed"]
    assert failed and all(t["pitfall"] is None for t in failed if t["category"] != "wrong"), failed
    assert entry.category in {t["category"] for t in failed}
    if entry.category == "timeout":  # stopped by --timeout itself, not by a later, larger limit
        assert any(f"did not return within {limit} s" in t["message"] for t in failed), failed
    assert set(entry.caught_by) <= {t["name"] for t in failed}, (entry.caught_by, failed)
    top = data["diagnosis"][0]
    assert top["kind"] == entry.category and top["pitfall"] is None, top
    assert "pitfall" not in top["text"].split(":")[0]
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="ol check's worker passes it (issue #14): once it fails, drop the header")
@pytest.mark.parametrize("entry", WORKER_PASSES, ids=[e.name for e in WORKER_PASSES])
def test_ol_check_in_its_worker_fails_what_the_catalog_fails_in_process(entry, tmp_path):
    ws = workspace_with(entry, tmp_path / "ws")
    report = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "harness", "check", entry.module, "--workspace", str(ws),
                    "--json", str(report)], check=False, cwd=REPO_ROOT, capture_output=True,
                   text=True, timeout=300, stdin=subprocess.DEVNULL)
    data = json.loads(report.read_text())  # no report: a real error, not the expected failure
    assert data["verdict"] == "fail", f"{entry.name}: {entry.worker_passes}"
