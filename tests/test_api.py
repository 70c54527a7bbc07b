"""The Python API (``harness.api``): each command as one call on a typed request, no printing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness import api
from harness.engine.seeding import FRESH
from harness.errors import HarnessError
from harness.paths import REFERENCE_DIR


def workspace(root: Path) -> Path:
    """A copy of the reference workspace: correct code for every module."""
    shutil.copytree(REFERENCE_DIR / "python", root / "python")
    return root


class Told(api.CheckEvents):
    """Every event of a check, in order: ``running`` as the string, each step as itself."""

    def __init__(self) -> None:
        self.seen: list = []

    def running(self) -> None:
        self.seen.append("running")

    def step(self, step):
        self.seen.append(step)


def test_a_check_of_the_reference_from_python_passes_and_prints_nothing(capsys):
    told = Told()
    result = api.check(api.CheckRequest("M06.3", target="reference"), told)
    assert result.verdict == "pass" and result.failed == 0
    assert told.seen[0] == "running" and "running" not in told.seen[1:]
    seen = told.seen[1:]
    assert [s.item.name for s in seen] == [t.name for t in result.tests] and len(seen) > 5
    assert [(s.done, s.total, s.label) for s in seen] == [
        (i, len(result.tests), t.name) for i, t in enumerate(result.tests, start=1)]
    assert capsys.readouterr() == ("", "")


def test_the_steps_of_a_run_in_part_count_the_tests_selected():
    told = Told()
    result = api.check(api.CheckRequest("M07.1", target="reference", pattern="*_i*_*"), told)
    steps = told.seen[1:]
    assert told.seen[0] == "running" and len(steps) == len(result.tests) >= 2
    assert result.not_run > 0  # a part: the total is what -k selected, not the catalog
    assert [(s.done, s.total) for s in steps] == [(i, len(steps)) for i in range(1, len(steps) + 1)]


def test_a_check_of_the_students_workspace_runs_in_the_worker(tmp_path):
    result = api.check(api.CheckRequest("M06.3", workspace=str(workspace(tmp_path / "ws")),
                                        seed=1234))
    assert result.verdict == "pass" and result.seed == 1234
    assert result.workspace == str((tmp_path / "ws").resolve())


def test_maxfail_stops_the_run_and_says_how_many_were_not_run():
    full = api.check(api.CheckRequest("M07.6", target="s07", diagnose=False))
    assert full.failed >= 2, "the mutant must fail more than one test for this to mean anything"
    first = api.check(api.CheckRequest("M07.6", target="s07", diagnose=False, maxfail=1))
    assert first.failed == 1 and first.verdict == "fail"
    assert len(first.tests) < len(full.tests)
    left = len(full.tests) - len(first.tests)
    assert first.notes == (f"stopped after 1 failed test (--maxfail 1): {left} tests not run",)


@pytest.mark.slow
def test_a_lab_from_python_gives_the_kill_matrix():
    result = api.lab(api.LabRequest("M06.3", jobs=2))
    assert result.verdict == "pass"
    assert result.to_json()["mutants"], "the lab ran no mutant"


@pytest.mark.slow
def test_a_gate_from_python_on_correct_code_passes_on_a_fresh_seed(tmp_path):
    seen: list[api.Step] = []

    class Modules(api.Listener):
        def step(self, step):
            seen.append(step)

    result = api.gate(api.GateRequest("MS-P6", workspace=str(workspace(tmp_path / "ws"))),
                      Modules())
    assert result.verdict == "pass" and result.seed is not None
    assert [s.item.module for s in seen] == [m.module for m in result.modules] == \
        ["M06.3", "M07.1", "M07.6"]
    assert [(s.done, s.total) for s in seen] == [(1, 3), (2, 3), (3, 3)]


def test_a_grade_from_python_writes_the_gradebook_and_tells_one_listener(tmp_path, capsys):
    subs = tmp_path / "subs"
    workspace(subs / "alice")
    (subs / "notes.txt").write_text("no submission")
    told = Recorder()
    outcome = api.grade(api.GradeRequest("M06.3", str(subs), out=str(tmp_path / "book"), jobs=1,
                                         seed=7), told)
    assert outcome.counts() == {"pass": 1, "fail": 0, "error": 0, "internal": 0}
    assert outcome.exit_code == 0 and outcome.book.seed == 7
    assert outcome.book.json_path.is_file() and outcome.book.csv_path.is_file()
    kinds = [kind for kind, _ in told.events]
    assert kinds == ["warned", "started", "step", "finished"], told.events
    planned, step = told.events[1][1], told.events[2][1]
    assert isinstance(planned, api.GradePlanned) and planned.names == 1 and planned.seed == 7
    assert (step.done, step.total, step.label) == (1, 1, "alice") and step.item.verdict == "pass"
    assert "skipped notes.txt" in told.events[0][1]
    assert capsys.readouterr() == ("", "")  # the API prints nothing


class Recorder(api.Listener):
    """Every event, in order."""

    def __init__(self):
        self.events = []

    def started(self, start):
        self.events.append(("started", start))

    def step(self, step):
        self.events.append(("step", step))

    def line(self, text):
        self.events.append(("line", text))

    def warned(self, message):
        self.events.append(("warned", message))

    def finished(self):
        self.events.append(("finished", None))


@pytest.mark.slow
def test_the_lab_tells_a_step_per_mutant_then_finished():
    told = Recorder()
    result = api.lab(api.LabRequest("M06.3", jobs=2), told)
    steps = [e for kind, e in told.events if kind == "step"]
    assert [kind for kind, _ in told.events][-1] == "finished"
    assert steps[-1].done == steps[-1].total == len(result.rows)
    assert [s.done for s in steps] == sorted(s.done for s in steps)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: api.CheckRequest("M07.6", seed=-1), "--seed must be 'public' or an integer"),
    (lambda: api.CheckRequest("M07.6", seed=FRESH), "--seed must be 'public' or an integer"),
    (lambda: api.CheckRequest("M07.6", target="reference", workspace="ws"),
     "--workspace and --ref-deps only apply to --target student"),
    (lambda: api.CheckRequest("M07.6", maxfail=0), "--maxfail must be at least 1"),
    (lambda: api.CheckRequest("M07.6", target="s99"), "unknown mutant id 's99' for M07.6"),
    (lambda: api.LabRequest("M07.6", jobs=0), "--jobs must be at least 1"),
    (lambda: api.AuditRequest("M07.6", seeds=0), "--seeds must be a positive number"),
    (lambda: api.GateRequest("MS-P6", seed=2**63), "--seed must be 'public' or an integer"),
    (lambda: api.GradeRequest("M07.6", "subs", scheduler="tcp://h:8786"),
     "--scheduler goes with --executor dask"),
    (lambda: api.GradeRequest("M07.6", "subs", executor="threads"), "--executor must be local or dask"),
    (lambda: api.GradeRequest("M07.6", "subs", memory_mb=1), "--memory-mb must be at least 256"),
    (lambda: api.GradeRequest("M07.6", "subs", submission_timeout_s=0),
     "--submission-timeout must be positive"),
    (lambda: api.OwnTestsRequest("M07.6", "tests", jobs=10**6), "--jobs must be at least 1"),
])
def test_a_request_built_in_code_is_checked_as_the_options_are(build, message):
    with pytest.raises(HarnessError, match=message.replace("(", r"\(")):
        build()


def test_the_fresh_seed_is_drawn_when_the_run_starts():
    from harness.engine.seeding import resolve_seed

    assert api.GateRequest("MS-P6").seed == FRESH
    seeds = {resolve_seed(FRESH) for _ in range(5)}
    assert all(isinstance(s, int) for s in seeds) and len(seeds) > 1


@pytest.mark.slow
def test_the_readmes_python_example_runs_as_written(capsys):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fail 0 ")  # the bundled workspace holds the stubs
    assert lines[-1].startswith("pass ") and lines[-1].endswith(" mutants")
