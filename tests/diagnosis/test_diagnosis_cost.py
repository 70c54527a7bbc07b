"""What a diagnosis costs grows with the calls it replays, not with their square.

A failing test may record thousands of batches of one call each: the acceptance-rate test's
bisection asks ``rejection_accept`` one uniform at a time, 11000 times, when the answers change too
often along the uniforms to find where it accepts. Finding each probe's batch by a scan of the
test's batches, and scanning every batch again for each mutant's replay, made that diagnosis 8 to
10 CPU seconds (the catalog's own run of the test: under 1); with the plan's batches looked up by
id it is under one.
"""

from __future__ import annotations

import importlib.util
import textwrap
import time
from pathlib import Path

from harness.check.engine import with_diagnosis
from harness.diagnosis.record import Recorder
from harness.engine.course import load_course
from harness.engine.own_code import module_from_source
from harness.engine.runner import run_catalog
from harness.engine.target import InProcessTarget
from harness.paths import REFERENCE_PYTHON

COURSE = load_course()
MODULE = COURSE.module("M07.6")
TEST = "test_acceptance_rate_matches_acceptance_probability"


def _pieces() -> str:
    """The answers of tests/hostile/test_bounds.py's ``PIECES``: the contract's at a few grid
    points of u, the other one at u = 0, an error everywhere else (too many pieces)."""
    path = Path(__file__).resolve().parent.parent / "hostile" / "test_bounds.py"
    spec = importlib.util.spec_from_file_location("ol_test_bounds", path)
    assert spec is not None and spec.loader is not None
    bounds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bounds)
    return textwrap.dedent(bounds.PIECES)


BOUND_S = 3.0  # CPU seconds; 8 to 10 with the quadratic scans, 0.7 without, on the machine of #28


def test_a_diagnosis_of_thousands_of_batches_costs_about_their_replays():
    source = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8") + "\n" + _pieces()
    module = module_from_source("ol_pieces", source, "rejection.py")
    target = InProcessTarget("pieces", module, MODULE.functions, COURSE.returns)
    recorder = Recorder()
    run = run_catalog(MODULE, target, "pieces", TEST, recorder=recorder)
    assert run.verdict == "fail" and "change too often" in run.tests[0].message, run.tests[0].message
    assert sum(len(batches) for batches in recorder.kept.values()) > 5000  # one call a batch
    start = time.process_time()
    diagnosed = with_diagnosis(MODULE, run, recorder, target)
    spent = time.process_time() - start
    assert diagnosed.diagnosis, "no diagnosis"
    assert spent < BOUND_S, f"the diagnosis took {spent:.1f} CPU s"
