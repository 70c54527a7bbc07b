"""``ol tests --mine --budget S``: a bound on the whole run, not only on each run.

Found by an attacker (session 37, finding 6): each run of the student's suite is bounded by
``RUN_LIMIT_S`` (60 s), but nothing bounded the whole. A suite whose test sleeps 59 s ran against
all 71 implementations: about 35 minutes at two jobs, a hung autograder under ``--gradescope``.
Now past the budget no run starts, the runs in flight are killed with the server, and the result
is partial and fails closed: an implementation not run is neither caught nor passed, the verdict
is ``partial`` (exit 4, ``ol check``'s convention for a partial run with no failure) unless a
test failed on correct code (exit 1), and every report says so in one line.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.engine.mutants import load_mutants
from harness.engine.requests import OwnTestsRequest
from harness.errors import EXIT_PARTIAL, HarnessError, exit_code
from harness.own_tests import engine as mine
from harness.report.own_tests import format_text, to_gradescope

# Reaches every function (so every mutant runs it, none is settled without a run), then sleeps.
SLOW_SUITE = '''\
import contextlib, time
import tinyllm.prob.rejection as R


class _Src:
    def uniform(self):
        return 0.25


def test_slow():
    for call in (lambda: R.rejection_accept(0.5, 0.5, 0.1),
                 lambda: R.acceptance_probability([0.5, 0.5], [0.5, 0.5]),
                 lambda: R.residual_distribution([0.5, 0.5], [0.25, 0.75]),
                 lambda: R.speculative_step([0.5, 0.5], [0.25, 0.75], 0, 0.9, 0.1),
                 lambda: R.rejection_sample([0.5, 0.5], [0.5, 0.5], 1.0, _Src())):
        with contextlib.suppress(Exception):
            call()
    time.sleep(1)
'''


# == the command, end to end =======================================================================

def test_a_slow_suite_stops_at_the_budget_with_a_partial_report(run_ol, tmp_path):
    """71 runs of 1 s at --jobs 1 took over a minute; with --budget 3 the command ends within
    seconds of it, kills what was running, leaves nothing behind, and exits 4, not 0."""
    (tmp_path / "python" / "tinyllm").mkdir(parents=True)  # a workspace
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_slow.py").write_text(SLOW_SUITE)
    out_json, out_gs = tmp_path / "mine.json", tmp_path / "results.json"
    ol = run_ol("tests", "M07.6", "--mine", "tests", "--workspace", str(tmp_path), "--jobs", "1",
                "--budget", "3", "--json", str(out_json), "--gradescope", str(out_gs),
                timeout=120)
    assert ol.rc == EXIT_PARTIAL, ol.text
    assert ol.wall_s < 25, ol.wall_s  # the budget, the server's start and its kill; not 71 s
    assert ol.left() == []
    line = "PARTIAL: the whole run's budget of 3 s ran out"
    assert line in " ".join(ol.out.split()), ol.text

    doc = json.loads(out_json.read_text())
    assert doc["verdict"] == "partial" and doc["out_of_budget"] is True and doc["budget_s"] == 3
    bugs, correct = doc["bugs"], doc["correct"]
    not_run = [b for b in bugs if b["run"] == "not run"] + [c for c in correct
                                                             if c["status"] == "not run"]
    assert 0 < len(not_run) == doc["not_run"] and len(not_run) < len(bugs) + len(correct) + 1
    assert all("budget of 3 s ran out" in b["problem"] for b in not_run)
    assert not any(b["caught"] for b in bugs if b["run"] == "not run")  # never "caught"
    assert doc["score"] == sum(b["caught"] for b in bugs)

    gs = json.loads(out_gs.read_text())
    assert line in " ".join(gs["output"].split())
    assert gs["tests"][0]["status"] == "failed"  # correct code not run is never "passes"
    assert gs["score"] == doc["score"]


@pytest.mark.parametrize("value, message", [
    ("0", "--budget must be positive"),
    ("-5", "--budget must be positive"),
    ("nan", "--budget must be positive"),
    ("inf", "--budget must be positive"),
    ("soon", "--budget must be a number of seconds, got 'soon'"),
])
def test_a_bad_budget_is_one_line_and_exit_2(value, message, monkeypatch, capsys):
    monkeypatch.setattr(mine, "run_mine", lambda *a, **k: pytest.fail("must not run"))
    suite = str(Path(__file__).parent / "conftest.py")
    assert main(["tests", "M07.6", "--mine", suite, "--budget", value]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("ol: ") and len(err.strip().splitlines()) == 1


def test_budget_goes_with_mine(capsys):
    assert main(["tests", "M07.1", "--budget", "10"]) == 2
    assert "--budget goes with --mine" in capsys.readouterr().err


def test_the_request_checks_the_budget_as_the_command_line_does():
    with pytest.raises(HarnessError, match="--budget must be positive"):
        OwnTestsRequest("M07.6", "tests", budget_s=0)
    assert OwnTestsRequest("M07.6", "tests", budget_s=5).budget_s == 5


# == the engine: what runs past the budget =========================================================

PASSED = json.dumps({"format": 1, "finished": True, "exit": 0, "errors": [],
                     "tests": {"test_a.py::test_a": {"outcome": "passed", "message": ""}}})


class _OneThenSilent:
    """Starts every run it is given; ends the first with a passing report, then says nothing."""

    limits = None

    def __init__(self) -> None:
        self.runs: list[int] = []
        self.told: list[dict] = []
        self.kills: list[int] = []

    def send(self, message: dict) -> None:
        if message["op"] == "run":
            self.runs.append(message["id"])
            self.told.append({"op": "started", "id": message["id"]})
            if len(self.runs) == 1:
                self.told.append({"op": "done", "id": message["id"], "status": 0,
                                  "report": PASSED})
        else:
            self.kills.append(message["id"])

    def recv(self, deadline: float) -> dict:
        if self.told:
            return self.told.pop(0)
        time.sleep(max(0.0, deadline - time.monotonic()))
        raise mine._Late()


def _impls() -> list[mine.Implementation]:
    bugs = load_mutants("M07.6")[:3]
    return ([mine.Implementation("reference", "the reference", ""),
             mine.Implementation("loops", "hidden implementation 'loops'", "")]
            + [mine.Implementation(m.id, f"bug {m.id}", "", mutant=m) for m in bugs])


def test_past_the_budget_no_run_starts_and_the_rest_is_not_run():
    """One run ends, the next hangs (under a run limit of 60 s): at the budget, 0.5 s, the loop
    returns; the hanging run and those never started are "not run", for the budget. Before, it
    waited out the run's limit and started every other run after it."""
    server, start = _OneThenSilent(), time.monotonic()
    runs = mine.run_all(server, _impls(), 1, 60.0, exhaustive=True,
                        budget=(0.5, time.monotonic() + 0.5))
    elapsed = time.monotonic() - start
    assert elapsed < 5, elapsed
    assert len(server.runs) == 2  # the one that ended, the one in flight: no third
    assert sorted(r.status for r in runs.values()) == ["not run"] * 4 + ["ran"]
    problem = mine.budget_problem(0.5)
    assert all(r.problem == problem for r in runs.values() if not r.ran)


# == the verdict and the reports of a partial result ===============================================

def _result(*, wrong: bool = False, loops_ran: bool = False) -> mine.MineResult:
    """A result the budget cut short: the reference ran, 'loops' and one bug did not; the other
    bug was caught (by a test that failed on it and passed on the reference)."""
    caught_bug, left_bug = load_mutants("M07.6")[:2]
    not_run = mine.Run("not run", problem=mine.budget_problem(3))
    loops = mine.Run("ran", {"t": "failed" if wrong else "passed"}) if loops_ran else not_run
    return mine.MineResult(
        "M07.6", "tests",
        ((mine.Implementation("reference", "the reference", ""), mine.Run("ran", {"t": "passed"})),
         (mine.Implementation("loops", "hidden implementation 'loops'", ""), loops)),
        ((mine.Implementation(caught_bug.id, f"bug {caught_bug.id}", "", mutant=caught_bug),
          mine.Run("ran", {"t": "failed"})),
         (mine.Implementation(left_bug.id, f"bug {left_bug.id}", "", mutant=left_bug), not_run)),
        {}, 3.2, 1, budget_s=3, out_of_budget=True)


def test_a_partial_result_credits_nothing_it_could_not_check():
    """With a correct implementation not run no test is trusted: nothing caught, and correct
    code is not said to pass; the verdict is partial, exit 4."""
    result = _result()
    assert result.verdict == "partial" and exit_code(result.verdict) == EXIT_PARTIAL
    assert result.caught == 0 and result.not_run == 2
    text = " ".join(format_text(result).split())
    assert "PARTIAL: the whole run's budget of 3 s ran out; 2 of 4 implementations not run" in text
    assert "every test passes on all" not in text
    assert "no test failed on the 1 of 2 correct implementations that ran" in text
    gs = json.loads(to_gradescope(result))
    assert gs["score"] == 0 and gs["tests"][0]["status"] == "failed"
    assert "budget of 3 s ran out" in gs["tests"][2]["output"]


def test_every_correct_implementation_ran_the_catches_count_but_it_is_still_partial():
    result = _result(loops_ran=True)
    assert result.caught == 1 and result.not_run == 1
    assert result.verdict == "partial"  # a bug not run: not a full pass, not exit 0


def test_a_test_that_fails_on_correct_code_fails_even_when_the_budget_ran_out():
    result = _result(wrong=True, loops_ran=True)
    assert result.verdict == "fail" and exit_code(result.verdict) == 1


def test_a_partial_result_survives_its_json():
    result = _result(loops_ran=True)
    again = mine.MineResult.from_json(result.to_json())
    assert (again.verdict, again.out_of_budget, again.budget_s) == ("partial", True, 3)
    assert again.caught == 1 and again.not_run == 1
