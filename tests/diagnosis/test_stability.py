"""The diagnosis is a function of the code alone (issue #25): the same text on every run, under
load, and for code that draws from a generator of its own; its entries say what they know.

The wrong implementations here are small edits of the reference written for these tests (each
says its edit), not ol's mutants: code with its own randomness as students write it
(``np.random.choice``, ``random.random()``), a returned tuple in the wrong order, five mistakes
at once.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_corpus import check_in_process, workspace_with

from harness.diagnosis.engine import MAX_ENTRIES
from harness.engine.course import load_course
from harness.engine.own_code import module_from_source
from harness.engine.runner import run_catalog
from harness.engine.target import InProcessTarget
from harness.paths import REFERENCE_PYTHON, REPO_ROOT

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "M07.6"
MODULE = load_course().module("M07.6")
REFERENCE = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8")
RESAMPLE = "    return sample_categorical(residual_distribution(p_arr, q_arr), u_resample), False\n"
NP_CHOICE = ("    r = residual_distribution(p_arr, q_arr)\n"
             "    return int(np.random.choice(len(r), p=r)), False\n")
RANDOM_RANDOM = ("    import random\n"
                 "    return sample_categorical(residual_distribution(p_arr, q_arr), "
                 "random.random()), False\n")


def edited(*edits: tuple[str, str]) -> str:
    source = REFERENCE
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return source


class Edited:
    """A corpus-like entry for ``check_in_process`` and ``workspace_with``: a file of our own."""

    def __init__(self, tmp: Path, name: str, source: str) -> None:
        self.module, self.name = "M07.6", name
        self.path = tmp / f"{name}.py"
        self.path.write_text(source, encoding="utf-8")


def check_json(entry, tmp: Path, round_: int) -> dict:
    ws = workspace_with(entry, tmp / f"ws{round_}")
    report = tmp / f"r{round_}.json"
    run = subprocess.run([sys.executable, "-m", "harness", "check", "M07.6", "--workspace", str(ws),
                          "--json", str(report)], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 1, run.stderr
    return json.loads(report.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("resample", [NP_CHOICE, RANDOM_RANDOM], ids=["np.random.choice",
                                                                   "random.random"])
def test_code_with_its_own_generator_is_named_at_once_and_the_same_on_every_run(resample, tmp_path):
    entry = Edited(tmp_path, "own_generator", edited((RESAMPLE, resample)))
    runs = [check_json(entry, tmp_path, n) for n in range(3)]
    outcomes = [[(t["name"], t["outcome"]) for t in r["tests"]] for r in runs]
    texts = [[d["text"] for d in r["diagnosis"]] for r in runs]
    assert outcomes[0] == outcomes[1] == outcomes[2]  # the worker seeds the global generators
    assert texts[0] == texts[1] == texts[2]
    top = runs[0]["diagnosis"][0]
    assert top["kind"] == "unstable" and top["pitfall"] == 17, top
    assert "when asked again with the same arguments and uniforms" in top["text"]
    said = re.search(r"returned (\(\d+, \w+\)), and (\(\d+, \w+\)) when asked again", top["text"])
    assert said and said.group(1) != said.group(2), top["text"]  # both answers, and they differ
    # Its failures follow from it: no other pitfall is blamed for them.
    assert [d["kind"] for d in runs[0]["diagnosis"]] == ["unstable"], runs[0]["diagnosis"]


def test_the_determinism_probe_does_not_fire_on_code_that_answers_alike(tmp_path):
    """A wrong but deterministic resample (from q) is matched as pitfall 5, never as pitfall 17."""
    entry = Edited(tmp_path, "from_q", edited(
        (RESAMPLE, "    return sample_categorical(q_arr, u_resample), False\n")))
    run = check_in_process(entry)
    assert run.diagnosis[0].kind == "pitfall" and run.diagnosis[0].pitfall == 5, run.diagnosis


def _burn(stop) -> None:  # pragma: no cover - runs in a child process
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@pytest.mark.slow
def test_the_same_diagnosis_under_parallel_load():
    """A two-bug file diagnosed idle and with busy processes on every core: the same words (no
    wall-clock filter decides what is compared)."""
    entry = next(e for e in _corpus() if e.path.stem == "two_03_10")
    idle = [d.text for d in check_in_process(entry).diagnosis]
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
               for _ in range(2 * (multiprocessing.cpu_count() or 1))]
    for b in burners:
        b.start()
    try:
        loaded = [d.text for d in check_in_process(entry).diagnosis]
    finally:
        stop.set()
        for b in burners:
            b.join(10)
    assert loaded == idle
    assert len(idle) >= 2


def test_the_diagnosis_reads_no_clock():
    """What is compared is chosen by counts (calls, uniforms drawn), never by a measured time."""
    outcome = REPO_ROOT / "harness" / "engine" / "outcome.py"  # the outcome keys compared
    for path in [*(REPO_ROOT / "harness" / "diagnosis").glob("*.py"), outcome]:
        source = path.read_text(encoding="utf-8")
        for clock in ("perf_counter", "monotonic", "time.time", "process_time"):
            assert clock not in source, f"{path.name} reads {clock}"


def _corpus():
    from diagnosis_corpus import entries

    return entries("M07.6")


def _diagnosis(tmp_path, name: str, source: str):
    return check_in_process(Edited(tmp_path, name, source)).diagnosis


def test_a_tuple_in_the_wrong_order_is_told_as_structure(tmp_path):
    diagnosis = _diagnosis(tmp_path, "swapped", edited(
        ("        return x, True\n", "        return True, x\n"),
        (RESAMPLE, "    return False, sample_categorical(residual_distribution(p_arr, q_arr), "
                   "u_resample)\n")))
    top = diagnosis[0]
    assert top.kind == "structure" and "right values in the wrong places" in top.text, diagnosis
    assert top.pitfall is None and len(diagnosis) == 1, diagnosis  # no draw-order pitfall blamed


def test_no_known_mistake_is_said_first_with_the_first_differing_call():
    entry = next(e for e in _corpus() if e.path.stem == "p04_residual_drops_last_id")
    top = check_in_process(entry).diagnosis[0]
    assert top.text.startswith("matches no known mistake"), top.text
    assert "first: residual_distribution([0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]) returned" \
        in top.text
    assert "test_speculative_chi_square" in top.text and "as a result" in top.text


@pytest.mark.slow
def test_a_draw_count_difference_is_in_the_line_that_names_it():
    entry = next(e for e in _corpus() if e.path.stem == "p10_skip_second_draw")
    top = check_in_process(entry).diagnosis[0]
    assert "after drawing 1 uniform, expected (0, 1) after drawing 2 uniforms" in top.text, top.text


@pytest.mark.parametrize(("stem", "blamed"), [("p02_ratio_upside_down", 1),
                                              ("p16_float32_residual", 4)])
@pytest.mark.slow
def test_failures_that_follow_from_the_first_mistake_blame_no_other_pitfall(stem, blamed):
    entry = next(e for e in _corpus() if e.path.stem == stem)
    diagnosis = check_in_process(entry).diagnosis
    assert all(blamed not in d.pitfalls for d in diagnosis), [d.text for d in diagnosis]


def test_more_mistakes_than_entries_are_named_not_dropped(tmp_path):
    diagnosis = _diagnosis(tmp_path, "five_bugs", edited(
        ("    return u < p_x / q_x\n", "    return u <= p_x / q_x\n"),
        ("    return numerators / z\n", "    return numerators\n"),
        ("    for tries in range(1, int(max_tries) + 1):", "    for tries in range(int(max_tries)):"),
        ("    if not 0 <= x < p_arr.size:", "    if x >= p_arr.size:"),
        (RESAMPLE, "    return x, False\n")))
    assert len(diagnosis) == MAX_ENTRIES, [d.text for d in diagnosis]
    more = diagnosis[-1]
    assert more.kind == "more" and more.text.startswith("and "), more.text
    count = int(more.text.split()[1])
    assert count >= 2 and len(more.text.split(":", 1)[1].split(";")) == count, more.text


def test_one_entry_per_pitfall_on_every_mutant_free_run(tmp_path):
    """Two tests failing the same pitfall's check, with no mutant answering as the code does,
    are one entry, not two."""
    source = edited(("    return numerators / z\n", "    return numerators[:-1] / z\n"))
    diagnosis = _diagnosis(tmp_path, "drops_last", source)
    leads = [d.pitfall for d in diagnosis if d.pitfall is not None]
    assert len(leads) == len(set(leads)), [d.text for d in diagnosis]


def test_a_module_without_a_pitfall_for_its_own_randomness_still_says_what_it_saw():
    """M07.1 has no pitfall for code with its own generator: the entry says it all the same."""
    module = load_course().module("M07.1")
    source = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    marker = "def sample_categorical("
    assert marker in source
    source = source.replace(marker, "import random as _ol_test_random\n\n\ndef _unused():\n"
                            "    pass\n\n\n" + marker, 1)
    body = re.search(r"def sample_categorical\([^)]*\)[^:]*:\n", source)
    assert body
    at = body.end()
    source = source[:at] + "    u = _ol_test_random.random()\n" + source[at:]
    mod = module_from_source("ol_test_m07_1_random", source, "m07_1_random.py")
    target = InProcessTarget("random", mod, module.functions, load_course().returns)
    from harness.check.engine import with_diagnosis
    from harness.diagnosis.record import Recorder

    recorder = Recorder()
    run = run_catalog(module, target, "t", recorder=recorder, limit=30)
    run = with_diagnosis(module, run, recorder, target)
    top = run.diagnosis[0]
    assert top.kind == "unstable" and top.pitfall is None, top
    assert "answers the same call differently" in top.text
