"""``random`` and ``numpy.random``'s global state are seeded before every batch of calls (issue #25,
item 3): code that draws from its own generator answers the same on every run, and ``rng_seed``
(default 0) changes what it answers, on an isolated worker (per request) and in process (per
``map``, ol's own states restored afterwards).

Before: a worker's global generators were seeded from the OS at its start, so a
``speculative_step`` that resamples with ``np.random.choice`` failed a different set of tests on
every run.
"""

from __future__ import annotations

import json
import random
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.engine.isolated import IsolatedTarget
from harness.engine.own_code import module_from_source
from harness.engine.target import InProcessTarget
from harness.paths import REFERENCE_PYTHON

SOURCE = '''
import random

import numpy as np


def draw():
    return float(np.random.random()) + random.random()


def choose(n):
    return int(np.random.choice(n))
'''
FUNCTIONS = ("draw", "choose")


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeded")
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(SOURCE))
    with IsolatedTarget("seeded", root / "python", "tinyllm.prob.rejection", FUNCTIONS, {}) as t:
        assert t.import_status() is None
        yield t


@pytest.fixture
def in_process():
    module = module_from_source("ol_seeded", textwrap.dedent(SOURCE), "<seeded>")
    return InProcessTarget("seeded", module, FUNCTIONS, {})


def _expected(seed: int, calls: int) -> list[float]:
    """What ``draw`` answers on its ``calls`` first calls after ``random.seed(seed)`` and
    ``np.random.seed(seed)``, computed here on generators of our own."""
    rs, py = np.random.RandomState(seed), random.Random(seed)
    return [float(rs.random_sample()) + py.random() for _ in range(calls)]


@pytest.mark.parametrize("kind", ["isolated", "in_process"])
def test_rng_seed_decides_what_code_with_its_own_generator_answers(kind, request):
    target = request.getfixturevalue(kind)
    assert target.rng_seed == 0
    first = [r.value for r in target.map("draw", [(), (), ()])]
    assert first == _expected(0, 3)  # seeded per batch: the state runs on within one
    assert target.call("draw") == first[0]  # and starts again with the next
    target.rng_seed = 1
    assert target.call("draw") == _expected(1, 1)[0] != first[0]
    assert [r.value for r in target.map("draw", [(), ()])] == _expected(1, 2)
    target.rng_seed = 0
    assert target.call("draw") == first[0]
    assert [target.call("choose", 1000) for _ in range(3)] == [np.random.RandomState(0).choice(1000)] * 3


def test_in_process_the_harness_own_global_state_is_restored(in_process):
    random.seed(123)
    np.random.seed(456)
    want = (random.Random(123).random(), np.random.RandomState(456).random_sample())
    in_process.rng_seed = 7
    in_process.map("draw", [(), ()])
    assert (random.random(), np.random.random_sample()) == want


@pytest.mark.parametrize("seed", [-1, 1 << 32, 1.5, "0"])
def test_a_seed_out_of_range_is_refused(in_process, seed):
    in_process.rng_seed = seed
    with pytest.raises(ValueError, match="rng_seed"):
        in_process.call("draw")


def test_a_worker_refuses_a_seed_out_of_range_before_starting_a_request(isolated):
    isolated.rng_seed = 1 << 32
    try:
        with pytest.raises(ValueError, match="rng_seed"):
            isolated.call("draw")
    finally:
        isolated.rng_seed = 0
    assert isolated.call("draw") == _expected(0, 1)[0]  # the worker was not touched


# -- a whole check of code that resamples with np.random.choice ----------------------------------


def _own_generator_workspace(root: Path) -> Path:
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", root / "python" / "tinyllm")
    path = root / "python" / "tinyllm" / "prob" / "rejection.py"
    text = path.read_text()
    old = "    return sample_categorical(residual_distribution(p_arr, q_arr), u_resample), False\n"
    assert old in text
    path.write_text(text.replace(old, "    r = residual_distribution(p_arr, q_arr)\n"
                                      "    return int(np.random.choice(len(r), p=r)), False\n"))
    return root


@pytest.mark.slow
def test_code_with_its_own_generator_fails_the_same_tests_on_every_run(tmp_path):
    ws = _own_generator_workspace(tmp_path / "ws")
    runs = []
    for i in range(3):
        report = tmp_path / f"run{i}.json"
        assert main(["check", "M07.6", "--workspace", str(ws), "--json", str(report),
                     "--no-diagnosis"]) == 1
        tests = json.loads(report.read_text())["tests"]
        runs.append([(t["name"], t["outcome"], t["category"], t["message"]) for t in tests])
    failing = [{name for name, outcome, *_ in run if outcome != "passed"} for run in runs]
    assert failing[0] and failing[0] == failing[1] == failing[2]
    assert runs[0] == runs[1] == runs[2]
