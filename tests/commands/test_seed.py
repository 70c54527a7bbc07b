"""``--seed N|public``: parsed and checked for every command, in force for every test of the run,
named in every report of ``ol check`` and ``ol lab``, and the same seed gives the same run.

``ol check`` and ``ol lab`` default to the public cases; ``ol gate`` and ``ol grade`` (tested in
tests/gate/test_gate_seed.py and tests/grade/test_grade_seed.py) to a fresh seed.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

import harness.engine.mutants as mutants_mod
import harness.engine.runner
import harness.lab.engine
from harness.check.engine import CheckRequest, run_check
from harness.cli import main
from harness.engine import seeding
from harness.engine.requests import GateRequest, LabRequest
from harness.engine.results import RunResult
from harness.engine.seeding import Seed, resolve_seed
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON

SEED = 424242


def workspace(tmp_path: Path, edit=None) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", ws / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if edit is not None:
        path = ws / "python/tinyllm/prob/rejection.py"
        path.write_text(edit(path.read_text()))
    return ws


def accept_on_equality(source: str) -> str:
    """Pitfall 1: ``u <= r``."""
    assert "return u < p_x / q_x" in source
    return source.replace("return u < p_x / q_x", "return u <= p_x / q_x")


def without_durations(doc: dict) -> dict:
    """A run's JSON without what differs between two runs of the same cases: the times."""
    doc = json.loads(json.dumps(doc))
    doc.pop("duration_s", None)
    for test in doc["tests"]:
        test.pop("duration_s")
    return doc


def check_json(tmp_path: Path, name: str, *args: str) -> tuple[int, dict]:
    report = tmp_path / f"{name}.json"
    code = main(["check", "M07.6", *args, "--json", str(report)])
    return code, json.loads(report.read_text())


@pytest.fixture
def seeds_in_force(monkeypatch):
    """The run seed in force (``seeding.current()``) as each catalog test ran, in order."""
    seen: list[int | None] = []
    real = harness.engine.runner.run_case

    def recording(*args, **kwargs):
        seen.append(seeding.current())
        return real(*args, **kwargs)

    monkeypatch.setattr(harness.engine.runner, "run_case", recording)
    return seen


# -- parsing and checking the option -------------------------------------------------------------

BAD = [("abc", "--seed takes 'public' or a non-negative integer, got 'abc'"),
       ("-1", "--seed must be between 0 and 9223372036854775807, got -1"),
       (str(2**63), f"--seed must be between 0 and 9223372036854775807, got {2**63}"),
       ("1.5", "--seed takes 'public' or a non-negative integer, got '1.5'"),
       ("", "--seed takes 'public' or a non-negative integer, got ''")]


def _argv(command: str, tmp_path: Path) -> list[str]:
    return {"check": ["check", "M07.6", "--target", "reference"],
            "gate": ["gate", "MS-P6", "--workspace", str(tmp_path)],
            "grade": ["grade", "M07.6", str(tmp_path / "subs"), "--out", str(tmp_path / "book")],
            "lab": ["lab", "M07.6", "--out", str(tmp_path / "lab")]}[command]


@pytest.mark.parametrize("command", ["check", "gate", "grade", "lab"])
@pytest.mark.parametrize("value, says", BAD, ids=[v or "empty" for v, _ in BAD])
def test_a_bad_seed_is_one_line_and_exit_2_before_anything_runs(command, value, says, tmp_path,
                                                                 capsys):
    (tmp_path / "subs").mkdir()
    code = main([*_argv(command, tmp_path), "--seed", value])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err == f"ol: {says} (e.g. --seed 1234, or --seed public for the public cases)\n"
    assert not (tmp_path / "book").exists() and not (tmp_path / "lab").exists()


@pytest.mark.parametrize("command", ["check", "gate", "grade", "lab"])
def test_two_different_seeds_are_refused(command, tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    assert main([*_argv(command, tmp_path), "--seed", "1", "--seed", "public"]) == 2
    assert "--seed given twice (1 and public)" in capsys.readouterr().err


def test_the_option_parses_to_a_seed_or_public():
    from harness.cli import build_parser

    parser = build_parser()
    for argv, expected in ((["--seed", "12"], 12), (["--seed", "PUBLIC"], "public"),
                           (["--seed", " 7 "], 7), ([], None)):
        args = parser.parse_args(["check", "M07.6", *argv])
        assert args.seed == expected


def test_a_request_or_a_namespace_built_otherwise_is_checked_too():
    from harness.commands.common import seed_option
    from harness.engine.seeding import FRESH

    for bad in (-1, 2**63, 1.0, True, "3"):
        with pytest.raises(HarnessError, match="--seed must be 'public' or an integer"):
            CheckRequest("M07.6", target="reference", seed=bad)
    assert CheckRequest("M07.6", seed=2**63 - 1).seed == Seed(2**63 - 1)
    assert seed_option(argparse.Namespace(seed=None), fresh=False) == Seed()
    assert seed_option(argparse.Namespace(seed="public"), fresh=True) == Seed()
    assert seed_option(argparse.Namespace(seed=5), fresh=False) == Seed(5)
    assert seed_option(argparse.Namespace(seed=None), fresh=True) == FRESH
    with pytest.raises(HarnessError, match="got 'five'"):  # a Namespace built otherwise
        GateRequest("MS-P6", seed=seed_option(argparse.Namespace(seed="five"), fresh=True))
    assert isinstance(resolve_seed(FRESH), int)


def test_a_requests_seed_is_a_type_of_its_own_public_fresh_or_a_number():
    from harness.engine.seeding import FRESH

    assert CheckRequest("M07.6").seed == Seed() and Seed().public and str(Seed()) == "public"
    assert CheckRequest("M07.6", seed=Seed(5)).seed == CheckRequest("M07.6", seed=5).seed == Seed(5)
    assert LabRequest("M07.6", seed=None).seed == Seed() and str(Seed(5)) == "5"
    assert GateRequest("MS-P6").seed == GateRequest("MS-P6", seed="fresh").seed == FRESH
    assert str(FRESH) == "fresh" and not FRESH.public and FRESH.number is None
    assert Seed(5).drawn() == 5 and Seed().drawn() is None and isinstance(FRESH.drawn(), int)
    with pytest.raises(HarnessError, match="--seed must be 'public' or an integer .* got -1"):
        Seed(-1)
    with pytest.raises(HarnessError, match="got 'fresh'"):  # a check draws no seed of its own
        CheckRequest("M07.6", seed=FRESH)


def test_the_run_seed_is_a_context_variable_not_a_module_global():
    import threading

    seen: list = []
    with seeding.cases_from(SEED):
        other = threading.Thread(target=lambda: seen.append(seeding.current()))
        other.start()
        other.join()
        assert seeding.current() == SEED
    assert seen == [None]  # another thread is on its own cases, not on this run's
    assert seeding.current() is None
    assert not [name for name, value in vars(seeding).items()
                if name.startswith("_") and isinstance(value, int | type(None))
                and not name.startswith("__")]


# -- ol check ------------------------------------------------------------------------------------

def test_check_defaults_to_the_public_cases_and_says_so(capsys, seeds_in_force):
    assert main(["check", "M07.6", "--target", "reference", "-k", "hand_example"]) == 4  # partial
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["ol check M07.6: target reference", "cases: public"]
    assert seeds_in_force == [None, None]


def test_check_with_a_seed_runs_every_test_on_it_and_says_how_to_replay(capsys, seeds_in_force):
    assert main(["check", "M07.6", "--target", "s01", "--seed", str(SEED),
                 "-k", "accept_is_strict"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (f"cases: hidden, seed {SEED} (replay: ol check M07.6 --target s01 "
                        f"-k accept_is_strict --seed {SEED})")
    assert seeds_in_force == [SEED]
    assert seeding.current() is None  # only for the run


def test_the_workspace_replay_names_the_workspace_and_ref_deps(tmp_path, capsys):
    ws = workspace(tmp_path)
    assert main(["check", "M07.6", "--workspace", str(ws), "--ref-deps", "--seed", "9",
                 "-k", "hand_example"]) == 4  # -k: a partial run, no verdict
    lines = capsys.readouterr().out.split("\n  test_")[0].splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("cases: "))
    line = " ".join(" ".join(lines[at:]).split())  # wrapped to 100 columns
    assert line == (f"cases: hidden, seed 9 (replay: ol check M07.6 --workspace {ws} --ref-deps "
                    "-k hand_example --seed 9)")


def test_every_check_report_records_the_seed(tmp_path, capsys):
    ws = workspace(tmp_path, accept_on_equality)
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "junit", "gradescope")}
    args = ["check", "M07.6", "--workspace", str(ws), "--seed", str(SEED), "-k", "accept_is_strict"]
    for k, p in paths.items():
        args += [f"--{k}", str(p)]
    assert main(args) == 1
    replay = f"ol check M07.6 --workspace {ws} -k accept_is_strict --seed {SEED}"
    assert json.loads(paths["json"].read_text())["seed"] == SEED
    junit = paths["junit"].read_text()
    assert f'<property name="seed" value="{SEED}" />' in junit
    assert f'<property name="replay" value="{replay}" />' in junit
    output = json.loads(paths["gradescope"].read_text())["output"]
    assert f"cases: hidden, seed {SEED} (replay: {replay})" in output


@pytest.mark.slow
def test_seed_public_is_the_default_check(tmp_path, capsys):
    code, default = check_json(tmp_path, "default", "--target", "s01")
    code_public, public = check_json(tmp_path, "public", "--target", "s01", "--seed", "public")
    assert code == code_public == 1
    assert default["seed"] is None and without_durations(default) == without_durations(public)


@pytest.mark.slow
def test_the_same_seed_twice_gives_the_same_run_in_process(tmp_path, capsys):
    first = check_json(tmp_path, "a", "--target", "s01", "--seed", str(SEED))
    second = check_json(tmp_path, "b", "--target", "s01", "--seed", str(SEED))
    assert first[0] == second[0] == 1
    assert first[1]["seed"] == SEED and first[1]["diagnosis"]
    assert without_durations(first[1]) == without_durations(second[1])


@pytest.mark.slow
def test_the_same_seed_twice_gives_the_same_run_in_the_worker(tmp_path, capsys):
    ws = workspace(tmp_path, accept_on_equality)
    first = check_json(tmp_path, "a", "--workspace", str(ws), "--seed", str(SEED))
    second = check_json(tmp_path, "b", "--workspace", str(ws), "--seed", str(SEED))
    assert first[0] == second[0] == 1
    assert without_durations(first[1]) == without_durations(second[1])
    assert {t["name"] for t in first[1]["tests"] if t["outcome"] != "passed"} >= {
        "test_accept_is_strict"}


def test_a_failing_seeded_report_round_trips_with_its_diagnosis(tmp_path, capsys):
    code, doc = check_json(tmp_path, "r", "--target", "s01", "--seed", str(SEED))
    assert code == 1 and doc["seed"] == SEED and doc["diagnosis"]
    result = RunResult.from_json(doc)
    assert result.seed == SEED and result.verdict == "fail"
    assert result.to_json() == doc


def test_run_check_takes_the_seed_from_the_request(seeds_in_force):
    result = run_check(CheckRequest("M07.6", target="reference", pattern="hand_example",
                                    seed=7), None)
    assert result.seed == 7 and seeds_in_force == [7, 7]


# -- ol lab --------------------------------------------------------------------------------------

@pytest.fixture
def two_mutants(tmp_path, monkeypatch):
    """The mutant library of M07.6 cut down to s01 and s02 (a lab of seconds)."""
    shutil.copytree(mutants_mod.mutants_dir(), tmp_path / "mutants")
    monkeypatch.setattr(mutants_mod, "mutants_dir", lambda: tmp_path / "mutants")
    for path in (tmp_path / "mutants" / "M07.6").glob("*.toml"):
        if path.stem not in ("s01", "s02"):
            path.unlink()


@pytest.fixture
def lab_seeds(monkeypatch):
    """The run seed in force as each cell of the lab ran: the reference's coverage run, and
    every mutant's cells (``--jobs 1``: in this process)."""
    import harness.lab.reach

    seen: dict[str, list] = {"reference": [], "mutant": []}
    for where, module in (("reference", harness.lab.reach), ("mutant", harness.lab.engine)):
        real = module.run_case

        def recording(*args, _real=real, _where=where, **kwargs):
            seen[_where].append(seeding.current())
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "run_case", recording)
    return seen


@pytest.mark.slow
def test_the_lab_defaults_to_the_public_cases(two_mutants, lab_seeds, tmp_path, capsys):
    assert main(["lab", "M07.6", "--jobs", "1", "--out", str(tmp_path / "lab")]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "cases: public"
    assert json.loads((tmp_path / "lab" / "lab-M07.6.json").read_text())["seed"] is None
    assert set(lab_seeds["reference"]) == set(lab_seeds["mutant"]) == {None}


@pytest.mark.slow
def test_the_lab_on_a_seed_runs_every_cell_on_it_and_records_it(two_mutants, lab_seeds, tmp_path,
                                                                capsys):
    out = tmp_path / "lab"
    assert main(["lab", "M07.6", "--jobs", "1", "--out", str(out), "--seed", str(SEED)]) == 0
    line = f"cases: hidden, seed {SEED} (replay: ol lab M07.6 --seed {SEED})"
    assert capsys.readouterr().out.splitlines()[1] == line
    assert set(lab_seeds["reference"]) == set(lab_seeds["mutant"]) == {SEED}
    assert lab_seeds["mutant"]  # the cells that reach the mutated function did run
    doc = json.loads((out / "lab-M07.6.json").read_text())
    assert doc["seed"] == SEED and doc["reference"]["seed"] == SEED and doc["verdict"] == "pass"
    stryker = json.loads((out / "mutation-report-M07.6.json").read_text())
    assert stryker["config"]["seed"] == SEED
    assert line in (out / "lab-M07.6.md").read_text()
    assert line in (out / "lab-M07.6.html").read_text()


@pytest.mark.slow
def test_the_lab_forked_on_a_seed_and_exhaustive_gives_the_same_matrix(two_mutants, tmp_path):
    from harness.lab.engine import run_lab

    forked = run_lab(LabRequest("M07.6", jobs=2, seed=SEED))
    full = run_lab(LabRequest("M07.6", jobs=1, exhaustive=True, seed=SEED))
    assert forked.seed == full.seed == SEED
    assert forked.jobs == 2  # forked processes
    assert {r.mutant.id: r.run.seed for r in forked.rows} == {"s01": SEED, "s02": SEED}
    assert [r.killed_by for r in forked.rows] == [r.killed_by for r in full.rows]
