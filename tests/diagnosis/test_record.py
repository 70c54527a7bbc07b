"""The diagnosis's record of a batch (``harness.diagnosis.record``): a batch that passes uniform
sources keeps copies of them as they were before the calls (so its replay starts where the code
under test started), shared where the calls shared one; every other argument is the test's own
object, never copied (a chi-square's probability vectors, 20000 times)."""

from __future__ import annotations

from harness.diagnosis.record import Recorder
from harness.uniforms import ScriptedSource


def test_sources_are_copied_as_they_were_and_nothing_else_is():
    p, q = [0.5, 0.5], [0.25, 0.75]
    shared = ScriptedSource([0.1, 0.2, 0.3])
    calls = [(p, q, shared), (p, q, shared), (p, q, ScriptedSource([0.9]))]
    recorder = Recorder()
    batch = recorder.begin("rejection_sample", calls, {"n": 3})
    assert batch is not None and batch.sourced
    shared.uniform()  # the code under test draws from the original
    kept = batch.calls
    assert kept[0][2] is not shared and kept[0][2].drawn == []  # as before the calls
    assert kept[0][2] is kept[1][2]  # shared by two calls: one copy, shared
    assert kept[2][2] is not calls[2][2]
    assert kept[0][0] is p and kept[1][1] is q and kept[2][0] is p  # not copied
    assert batch.kwargs == {"n": 3}


def test_a_batch_without_a_source_is_kept_as_sent():
    p = [0.5, 0.5]
    recorder = Recorder()
    batch = recorder.begin("residual_distribution", [(p, p)], {})
    assert batch is not None and not batch.sourced and batch.calls[0][0] is p
