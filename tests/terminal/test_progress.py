"""Progress (``harness.terminal.progress``): a rich bar on a terminal, plain lines elsewhere, and
plain lines when ``rich`` is not installed (students install only numpy, scipy and pytest)."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

from harness.engine.events import Step
from harness.grade.row import GradeRow
from harness.terminal.progress import Progress, interactive

needs_rich = pytest.mark.skipif(importlib.util.find_spec("rich") is None,
                                reason="rich is not installed (the plain form is tested anyway)")


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_console(buffer: io.StringIO):
    from rich.console import Console

    return Console(force_terminal=True, file=buffer, width=100)


@pytest.fixture
def terminal_env(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def test_a_terminal_gets_the_live_form_unless_ci_or_a_dumb_terminal(terminal_env, monkeypatch):
    assert interactive(FakeTerminal()) and not interactive(io.StringIO())
    monkeypatch.setenv("CI", "1")
    assert not interactive(FakeTerminal())
    monkeypatch.setenv("CI", "")  # an empty CI is no CI
    assert interactive(FakeTerminal())
    monkeypatch.setenv("TERM", "dumb")
    assert not interactive(FakeTerminal())


@needs_rich
def test_on_a_terminal_the_bar_is_rich(terminal_env):
    stream = FakeTerminal()
    with Progress("lab M07.6", "mutants", stream=stream) as show:
        assert show.live
        show.step(Step(1, 2, "s01"))
        show.step(Step(2, 2, "s02"))
    assert "2/2" in stream.getvalue() and "\x1b[" in stream.getvalue()


def test_the_plain_form_with_ci_set_prints_counter_lines(monkeypatch):
    monkeypatch.setenv("CI", "1")
    stream, clock = FakeTerminal(), Clock()
    with Progress("lab M07.6", "mutants", stream=stream, every_s=10, clock=clock) as show:
        assert not show.live
        for done, label in enumerate(("s01", "s02", "s03", "s04"), start=1):
            clock.now += 6  # a line every 10 s at most: after s02 (12 s), after s04 (24 s)
            show.step(Step(done, 4, label))
    assert stream.getvalue().splitlines() == [
        "lab M07.6: 2/4 mutants (s02), 12 s, about 12 s left",
        "lab M07.6: 4/4 mutants in 24 s",
    ]


def test_a_short_plain_run_prints_nothing_and_every_step_when_asked(monkeypatch):
    monkeypatch.setenv("CI", "1")
    quiet, each = io.StringIO(), io.StringIO()
    with Progress("lab M07.6", "mutants", stream=quiet) as show:
        for done in (1, 2):
            show.step(Step(done, 2, f"s0{done}"))
    with Progress("lab M07.6", "mutants", stream=each, every_s=0) as show:
        for done in (1, 2):
            show.step(Step(done, 2, f"s0{done}"))
    assert quiet.getvalue() == ""
    assert each.getvalue().splitlines()[0].startswith("lab M07.6: 1/2 mutants (s01), 0 s")
    assert len(each.getvalue().splitlines()) == 2


@needs_rich
def test_an_injected_console_gets_the_rich_bar_and_the_lines_above_it(monkeypatch):
    monkeypatch.setenv("CI", "1")  # the injected console is used all the same
    buffer = io.StringIO()
    with Progress("audit M07.6 --mutmut", console=fake_console(buffer)) as bar:
        assert bar.live
        bar.line("[   0.1 s] audit M07.6 --mutmut: mutmut 3.8.1 run")
    text = buffer.getvalue()
    assert "[   0.1 s] audit M07.6 --mutmut: mutmut 3.8.1 run" in text
    assert "audit M07.6 --mutmut" in text.replace("[   0.1 s] audit M07.6 --mutmut:", "")


def test_the_plain_form_when_rich_cannot_be_imported(terminal_env, monkeypatch):
    for name in [m for m in sys.modules if m == "rich" or m.startswith("rich.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rich", None)  # `import rich...` raises ImportError
    stream = FakeTerminal()
    with Progress("tests M07.6 --mine", "implementations", stream=stream, every_s=0) as show:
        assert not show.live
        show.step(Step(1, 1, "reference"))
        show.line("a line of the command's own")
    assert stream.getvalue().splitlines() == ["tests M07.6 --mine: 1/1 implementations in 0 s",
                                              "a line of the command's own"]


def test_a_label_from_a_submission_is_shown_not_obeyed(monkeypatch):
    monkeypatch.setenv("CI", "1")
    stream = io.StringIO()
    with Progress("grade M07.6", "submissions", stream=stream, every_s=0) as show:
        show.step(Step(1, 2, "bob\x1b[2K\r"))
    assert "bob\\x1b[2K\\r" in stream.getvalue() and "\x1b" not in stream.getvalue()


# -- the commands' progress -------------------------------------------------------------------

ROW = GradeRow(submission="alice", verdict="pass", tests={f"t{i}": "passed" for i in range(20)},
               passed=20, failed=0, score=25, max_score=25, time_s=1.25, message="")


@needs_rich
def test_grade_keeps_its_lines_and_draws_the_bar_on_a_terminal(capsys):
    from harness.grade.engine import GradePlanned
    from harness.terminal.grade import GradeProgress

    buffer = io.StringIO()
    bob = ROW.with_(submission="bob", verdict="error", tests={}, message="no python/ folder")
    with GradeProgress(console=fake_console(buffer)) as events:
        events.started(GradePlanned("M07.6", Path("/subs"), 2, 0, 2, "4 processes", None,
                                    "ol check M07.6 --workspace /subs/NAME --seed public", False))
        events.step(Step(1, 2, "alice", ROW))
        events.step(Step(2, 2, "bob", bob))
        events.finished()
    assert capsys.readouterr().out.splitlines() == [
        ("ol grade M07.6: 2 submissions in /subs; 0 unchanged since graded, 2 to check on "
         "4 processes"),
        ("cases: public, recorded in the gradebook (replay one submission: ol check M07.6 "
         "--workspace /subs/NAME --seed public)"),
        "  [1/2] alice                pass      20 passed,   0 failed  score 25/25     1.2 s",
        "  [2/2] bob                  error    no python/ folder",
    ]
    assert "grade M07.6" in buffer.getvalue() and "submissions" in buffer.getvalue()


def test_grade_off_a_terminal_prints_its_lines_only(capsys):
    from harness.grade.engine import GradePlanned
    from harness.terminal.grade import GradeProgress

    with GradeProgress(bar=io.StringIO()) as events:
        assert not events.progress.live
        events.started(GradePlanned("M07.6", Path("/subs"), 1, 0, 1, "1 process", 5,
                                    "ol check ...", True))
        events.step(Step(1, 1, "alice", ROW))
        events.finished()
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].startswith("  [1/1] alice")
    assert captured.err == ""


@needs_rich
def test_the_gate_prints_each_module_line_and_names_the_next_module(monkeypatch):
    from harness.gate.engine import ModuleGate
    from harness.terminal.gate import GateProgress

    lines: list[str] = []
    buffer = io.StringIO()
    with GateProgress("MS-P6", ["M06.3", "M07.1"], 5, lines.append,
                      console=fake_console(buffer)) as on_module:
        assert on_module.bar.live
        on_module.step(Step(1, 2, "M06.3", ModuleGate("M06.3", "PCG32", "error", message="it broke")))
        on_module.step(Step(2, 2, "M07.1",
                            ModuleGate("M07.1", "Categorical", "blocked", message="by M06.3")))
    assert lines == ["  M06.3  error    it broke", "  M07.1  blocked  by M06.3"]
    assert "gate MS-P6" in buffer.getvalue() and "M07.1" in buffer.getvalue()


def test_the_audit_sink_keeps_its_lines(monkeypatch, capsys):
    from harness.terminal.lines import TimedLines

    monkeypatch.setenv("CI", "1")
    with Progress("audit M07.6 --power") as bar:
        TimedLines("audit M07.6 --power", bar).line("trials: 12 seeded runs")
    err = capsys.readouterr().err
    assert err.endswith("] audit M07.6 --power: trials: 12 seeded runs\n") and err.startswith("[")
