"""The command line and the Python API on the same request behave alike (#28 item 2).

Each command only translates: arguments -> one typed request -> one ``harness.api`` call ->
reporters -> exit code. So ``ol check`` and ``api.check`` (and ``ol gate`` and ``api.gate``) give
the same result, record the same pass, draw the seed in the same place and refuse a bad workspace
with the same line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness import api
from harness.check.engine import PASSES_FILE, has_passed
from harness.cli import main
from harness.engine import seeding
from harness.engine.course import load_course
from harness.engine.workspace import Workspace, check_module_file
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON

TIMES = {"duration_s", "started", "finished", "created", "python", "platform"}


def reference_copy(dest: Path) -> Path:
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", dest / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def timeless(data: Any, root: Path | None = None) -> Any:
    """``data`` without what differs between two runs of one request: the times (and where the
    workspace is, ``root`` written as ``WS``)."""
    if isinstance(data, dict):
        return {k: timeless(v, root) for k, v in data.items() if k not in TIMES}
    if isinstance(data, list):
        return [timeless(v, root) for v in data]
    if isinstance(data, str) and root is not None:
        return data.replace(str(root), "WS")
    return data


def passed_as_it_is(ws: Path, module_id: str) -> bool:
    module = load_course().module(module_id)
    w = Workspace(ws.resolve())
    return has_passed(w, module, check_module_file(w, module))


def test_check_from_the_cli_and_the_api_gives_one_result_and_records_the_pass(tmp_path, capsys):
    by_cli, by_api = reference_copy(tmp_path / "cli"), reference_copy(tmp_path / "api")
    report = tmp_path / "cli.json"
    code = main(["check", "M06.3", "--workspace", str(by_cli), "--seed", "5", "--json", str(report)])
    capsys.readouterr()
    result = api.check(api.CheckRequest("M06.3", workspace=str(by_api), seed=5))
    assert code == 0 and result.verdict == "pass"
    assert timeless(result.to_json(), by_api.resolve()) == \
        timeless(json.loads(report.read_text()), by_cli.resolve())
    assert (by_cli / PASSES_FILE).is_file() and (by_api / PASSES_FILE).is_file()
    assert passed_as_it_is(by_cli, "M06.3") and passed_as_it_is(by_api, "M06.3")


def test_the_api_tells_what_it_resolved_before_the_run_and_a_lost_record_as_a_warning(
        tmp_path, monkeypatch):
    ws = reference_copy(tmp_path / "ws")
    monkeypatch.chdir(ws / "python" / "tinyllm")  # found as git finds its repository
    seen: list[Any] = []

    class Events(api.CheckEvents):
        def resolved(self, workspace):
            seen.append(("resolved", workspace))

        def started(self, start):
            seen.append(("started", start))

        def warned(self, message):
            seen.append(("warned", message))

        def step(self, step):  # what the student's code could do during the run
            if not (ws / ".ol").is_symlink():
                (ws / ".ol").symlink_to(tmp_path)

    result = api.check(api.CheckRequest("M06.3", seed=9), Events())
    assert result.verdict == "pass"
    (_, found), (_, start), (_, why) = seen
    assert found == Workspace(ws.resolve()) and start.workspace == found
    assert start.seed == 9 and start.records_pass
    assert start.replay == f"ol check M06.3 --workspace {ws.resolve()} --seed 9" == result.replay
    assert ".ol is a symbolic link" in why and not (tmp_path / "passes.json").exists()


def test_a_partial_check_records_no_pass_from_the_api_either(tmp_path):
    ws = reference_copy(tmp_path / "ws")
    result = api.check(api.CheckRequest("M06.3", workspace=str(ws), pattern="published"))
    assert result.verdict == "partial" and not (ws / ".ol").exists()


def test_a_bad_workspace_is_one_line_alike_from_the_cli_and_the_api(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    report = tmp_path / "r.json"
    assert main(["check", "M06.3", "--workspace", str(missing), "--json", str(report)]) == 2
    err = capsys.readouterr().err
    with pytest.raises(HarnessError) as raised:
        api.check(api.CheckRequest("M06.3", workspace=str(missing)))
    assert err == raised.value.line() + "\n"
    assert json.loads(report.read_text())["error"] == raised.value.line()
    assert main(["gate", "MS-P6", "--workspace", str(missing)]) == 2
    err = capsys.readouterr().err
    with pytest.raises(HarnessError) as raised:
        api.gate(api.GateRequest("MS-P6", workspace=str(missing)))
    assert err == raised.value.line() + "\n"


@pytest.mark.slow
def test_gate_from_the_cli_and_the_api_gives_one_result(tmp_path, capsys):
    ws = reference_copy(tmp_path / "ws")
    report = tmp_path / "gate.json"
    assert main(["gate", "MS-P6", "--workspace", str(ws), "--seed", "11", "--json", str(report),
                 "--markdown", str(tmp_path / "gate.md")]) == 0
    capsys.readouterr()
    result = api.gate(api.GateRequest("MS-P6", workspace=str(ws), seed=11))
    assert timeless(result.to_json()) == timeless(json.loads(report.read_text()))


def test_the_gates_fresh_seed_is_drawn_behind_the_api_and_told_before_a_module_runs(
        tmp_path, capsys, monkeypatch):
    ws = reference_copy(tmp_path / "ws")
    drawn: list[int] = []

    def fresh() -> int:
        drawn.append(4242 + len(drawn))
        return drawn[-1]

    monkeypatch.setattr(seeding, "fresh_seed", fresh)
    monkeypatch.setattr("harness.gate.engine.check_one", lambda *a: pytest.fail("a module ran"))
    seen: list[Any] = []

    class Stop(api.Listener):
        def started(self, start):  # the caller may refuse what was resolved: nothing runs then
            seen.append(start)
            raise HarnessError("stopped by the caller", "a test")

    with pytest.raises(HarnessError, match="stopped by the caller"):
        api.gate(api.GateRequest("MS-P6", workspace=str(ws)), Stop())
    (start,) = seen
    assert drawn == [4242] and start.seed == 4242 and start.workspace.root == ws.resolve()
    assert start.replay == f"ol gate MS-P6 --workspace {ws.resolve()} --seed 4242"


def test_diff_from_the_cli_and_the_api_after_a_pass_recorded_by_the_api(tmp_path, capsys):
    ws = reference_copy(tmp_path / "ws")
    mine = ws / "python" / "tinyllm" / "prob" / "pcg32.py"
    mine.write_text(mine.read_text() + "\n# mine now\n")
    assert main(["diff", "M06.3", "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    with pytest.raises(HarnessError) as raised:
        api.diff(api.DiffRequest("M06.3", str(ws)))
    assert err == raised.value.line() + "\n" and "has not passed" in err
    assert api.check(api.CheckRequest("M06.3", workspace=str(ws))).verdict == "pass"
    assert main(["diff", "M06.3", "--workspace", str(ws)]) == 0  # the API's pass counts
    shown = capsys.readouterr().out
    diff = api.diff(api.DiffRequest("M06.3", str(ws)))
    assert shown == diff.diff and diff.diff.endswith("+# mine now\n")
    assert diff.workspace == str(ws.resolve())


def test_start_from_the_cli_and_the_api_writes_the_same_files(tmp_path, capsys):
    by_cli, by_api = tmp_path / "cli", tmp_path / "api"
    assert main(["start", "M07.6", "--workspace", str(by_cli)]) == 0
    out = capsys.readouterr().out
    started = api.start(api.StartRequest("M07.6", str(by_api)))
    assert started.unwritten_needs == ("M07.1", "M06.3") and "--ref-deps" in out
    files = sorted(p.relative_to(by_cli) for p in by_cli.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(by_api) for p in by_api.rglob("*") if p.is_file())
    assert {(a.path.relative_to(by_api), a.action) for a in started.actions} == \
        {(p, "written") for p in files}
    assert all((by_cli / p).read_bytes() == (by_api / p).read_bytes() for p in files)


def test_own_tests_exhaustive_goes_through_the_api_as_the_command_does(monkeypatch, tmp_path):
    import harness.own_tests.engine as mine

    seen: list[dict] = []

    def fake(*args, **kwargs):
        seen.append(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(mine, "run_mine", fake)
    (tmp_path / "test_mine.py").write_text("def test_nothing():\n    pass\n")
    with pytest.raises(SystemExit):
        main(["tests", "M07.6", "--mine", str(tmp_path / "test_mine.py"), "--exhaustive"])
    with pytest.raises(SystemExit):
        api.own_tests(api.OwnTestsRequest("M07.6", str(tmp_path / "test_mine.py"), exhaustive=True))
    cli, by_api = ({k: v for k, v in kw.items() if k != "listener"} for kw in seen)
    assert cli == by_api and cli["exhaustive"] is True
