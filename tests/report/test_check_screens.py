"""Issue #25, items 2, 5, 6 and 7: what ``ol check`` shows and writes, end to end.

- every report asked for is written whatever the outcome: a setup error (exit 2) is a report too;
- every line of ``ol check``, ``ol tests`` and ``ol tests --mine`` fits 100 columns (``COLUMNS``
  when set); ``-v`` and ``--wide`` show long values whole;
- a partial run (``-k``, ``--maxfail``) says how many tests did not run and has no verdict;
- every replay a report prints, run as a command, checks the same cases against the same code;
  every report names the Python and the platform that ran the check.

The workspaces hold bugs written here, each independent of ol's mutant library.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.commands.quotes import quotes_of
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.errors import EXIT_PARTIAL
from harness.paths import REFERENCE_PYTHON
from harness.report.text import failures_and_summary, fit

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent / "schemas" / "check-report.schema.json"
JUNIT_XSD = HERE.parent / "schemas" / "junit.xsd"
MODULE = load_course().module("M07.6")
SIZE = len(collect(MODULE))  # never hard-coded: the catalog grows
POINTS = sum(MODULE.points_of(info.name) for info, _ in collect(MODULE))  # course.toml's [points]
REJECTION = "python/tinyllm/prob/rejection.py"

# Bugs a student could write, as (what the reference says, what the bug says instead).
BUGS = {
    "residual_upside_down": ("numerators = np.maximum(p_arr - q_arr, 0.0)",
                             "numerators = np.maximum(q_arr - p_arr, 0.0)"),
    "residual_float32": ("    return numerators / z\n",
                         "    return (numerators / z).astype(np.float32)\n"),
    "acceptance_np_sum": ("    total = 0.0\n    for p_i, q_i in zip(p_arr.tolist(), q_arr.tolist()):"
                          "\n        total += min(p_i, q_i)\n    return total\n",
                          "    return float(np.sum(np.minimum(p_arr, q_arr)))\n"),
    "accept_on_equal": ("    return u < p_x / q_x\n", "    return u <= p_x / q_x\n"),
}


def workspace(root: Path, bug: str | None = None, only_rejection: bool = False) -> Path:
    """A copy of the reference (only its M07.6 file with ``only_rejection``), with ``bug``."""
    if only_rejection:
        prob = root / "python" / "tinyllm" / "prob"
        prob.mkdir(parents=True)
        for name in ("__init__.py", "prob/__init__.py", "prob/rejection.py"):
            shutil.copy(REFERENCE_PYTHON / "tinyllm" / name, root / "python" / "tinyllm" / name)
    else:
        shutil.copytree(REFERENCE_PYTHON / "tinyllm", root / "python" / "tinyllm",
                        ignore=shutil.ignore_patterns("__pycache__"))
    if bug is not None:
        path = root / REJECTION
        old, new = BUGS[bug]
        text = path.read_text()
        assert text.count(old) == 1, f"the reference changed: update the bug {bug}"
        path.write_text(text.replace(old, new))
    return root


def check(argv, capsys) -> tuple[int, str, str]:
    code = main(["check", "M07.6", *[str(a) for a in argv]])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if len(line) > width]


@pytest.fixture(scope="module")
def schema():
    import jsonschema

    doc = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


@pytest.fixture(scope="module")
def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema11(str(JUNIT_XSD))


def reports(tmp_path: Path) -> dict[str, Path]:
    return {"--json": tmp_path / "out" / "r.json", "--junit": tmp_path / "out" / "r.xml",
            "--gradescope": tmp_path / "out" / "results.json"}


def report_args(paths: dict[str, Path]) -> list[str]:
    return [str(x) for flag, path in paths.items() for x in (flag, path)]


# -- item 2: a setup error is a report too ---------------------------------------------------------

def _syntax_error(root: Path) -> list[str]:
    ws = workspace(root)
    (ws / REJECTION).write_text((ws / REJECTION).read_text() + "\ndef broken(:\n")
    return ["--workspace", str(ws)]


def _import_error(root: Path) -> list[str]:
    ws = workspace(root)
    (ws / REJECTION).write_text((ws / REJECTION).read_text() + "\nimport no_such_module_of_ol_tests\n")
    return ["--workspace", str(ws)]


def _missing_dependency(root: Path) -> list[str]:
    return ["--workspace", str(workspace(root, only_rejection=True))]


def _no_workspace(root: Path) -> list[str]:
    return ["--workspace", str(root / "not-there")]


SETUP_ERRORS = {
    "syntax error": (_syntax_error, "syntax error in python/tinyllm/prob/rejection.py"),
    "import error": (_import_error, "no_such_module_of_ol_tests"),
    "missing dependency": (_missing_dependency, "M07.6 needs M07.1"),
    "no workspace": (_no_workspace, "does not exist"),
}


@pytest.mark.parametrize("case", sorted(SETUP_ERRORS))
def test_a_setup_error_writes_every_report_asked_for(case, tmp_path, capsys, schema, junit_schema):
    make, words = SETUP_ERRORS[case]
    paths = reports(tmp_path)
    code, out, err = check([*make(tmp_path / "ws"), *report_args(paths)], capsys)
    assert code == 2
    line = err.strip()
    assert len(err.splitlines()) == 1 and line.startswith("ol: ") and words in line
    for path in paths.values():
        assert f"wrote {path}" in out

    data = json.loads(paths["--json"].read_text())
    schema.validate(data)
    assert (data["verdict"], data["error"], data["tests"], data["not_run"]) == \
        ("error", line, [], SIZE)
    assert data["python"] and data["platform"]

    xml = paths["--junit"].read_text()
    junit_schema.validate(xml)
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None and suite.get("errors") == "1"
    errors = suite.findall("testcase/error")
    assert len(errors) == 1 and errors[0].get("message") == line and errors[0].text == line
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "error" and props["python"] and props["platform"]

    grade = json.loads(paths["--gradescope"].read_text())
    assert (grade["score"], grade["output"], grade["max_score"]) == (0, line, POINTS)
    assert grade["visibility"] == "visible"
    assert [(t["score"], t["status"], t["visibility"]) for t in grade["tests"]] == \
        [(0, "failed", "visible")]
    assert grade["tests"][0]["output"].startswith(line)


def test_no_report_is_half_written_when_a_reporter_fails(tmp_path, capsys, monkeypatch):
    """Every report is built before the first is written: a reporter that fails leaves none."""
    from harness.report import junit

    def broken(results):
        raise RuntimeError("the JUnit reporter broke")

    monkeypatch.setattr(junit, "to_junit", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the crash log goes
    paths = reports(tmp_path)
    code, _, err = check([*_syntax_error(tmp_path / "ws"), *report_args(paths)], capsys)
    assert code == 3 and "the JUnit reporter broke" in err
    assert len(list(tmp_path.glob("ol-crash-*.log"))) == 1  # named on stderr, kept in tmp_path
    assert not any(p.exists() for p in paths.values())
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_a_report_path_inside_the_code_is_refused_and_nothing_is_written(tmp_path, capsys):
    ws = workspace(tmp_path / "ws", only_rejection=True)
    inside = ws / "python" / "r.json"
    code, _, err = check(["--workspace", ws, "--json", inside], capsys)
    assert code == 2 and "inside the workspace's python/ folder" in err and not inside.exists()


# -- item 5: every line within 100 columns, or COLUMNS -----------------------------------------------

@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.parametrize("columns", [None, "80"])
@pytest.mark.slow
def test_every_line_of_a_failing_check_fits_the_width(bug, columns, tmp_path, capsys, monkeypatch):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    width = int(columns or 100)
    ws = workspace(tmp_path / "ws", bug)
    code, out, _ = check(["--workspace", ws], capsys)
    assert code == 1 and "(verdict: fail)" in out
    assert too_wide(out, width) == []
    code, out, _ = check(["--workspace", ws, "-v"], capsys)
    assert code == 1 and too_wide(out, width) == []


def test_long_values_are_cut_and_shown_whole_with_v_or_wide(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    ws = workspace(tmp_path / "ws", "residual_upside_down")
    _, short, _ = check(["--workspace", ws, "-k", "ascending"], capsys)
    assert "... 8 more ..." in short and "-v or --wide shows them whole" in short
    _, verbose, _ = check(["--workspace", ws, "-k", "ascending", "-v"], capsys)
    _, wide, _ = check(["--workspace", ws, "-k", "ascending", "--wide"], capsys)
    for text in (verbose, wide):
        assert "more ..." not in text and "shows them whole" not in text
    assert too_wide(verbose, 100) == [] and too_wide(wide, 100) != []
    ids = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]"
    assert ids in wide and ids in " ".join(verbose.split())


def _run_with(message: str) -> RunResult:
    test = TestResult("test_thousand", Kind.UNIT, Outcome.FAILED, 0.1, message, 3, "a pitfall")
    return RunResult("M07.6", "/ws", "workspace /ws", (test,), python="3.12.1 (CPython)",
                     platform="Linux")


def test_an_array_of_1000_entries_is_cut_to_what_the_reader_needs():
    values = [i / 1000 for i in range(1000)]
    run = _run_with(f"residual_distribution(p, q) returned {values}, expected {values[::-1]}")
    text = failures_and_summary(run, 100, whole=False)
    assert too_wide(text, 100) == [] and len(text.splitlines()) < 15
    assert "[0.0, 0.001, 0.002, ... 996 more ..., 0.999]" in text
    whole = failures_and_summary(run, 100, whole=True)
    assert str(values[-1]) in whole and "more ..." not in whole and too_wide(whole, 100) == []
    assert "[0.0, 0.001, 0.002, 0.003," in " ".join(failures_and_summary(run, None).split())


def test_fit_wraps_long_lines_with_indented_continuations():
    line = "    " + " ".join(["word"] * 40)
    lines = fit(line, 60).splitlines()
    assert all(len(x) <= 60 for x in lines) and lines[1].startswith("        word")
    assert fit("  1. " + "a " * 60, 40).splitlines()[1].startswith("     a")
    assert all(len(x) <= 40 for x in fit("x" * 130, 40).splitlines())  # no space: still cut


@pytest.mark.parametrize("columns", [None, "80"])
def test_the_catalog_fits_the_width(columns, capsys, monkeypatch):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["tests", "M07.6"]) == 0
    out = capsys.readouterr().out
    assert too_wide(out, int(columns or 100)) == [] and f"M07.6 {MODULE.title}: {SIZE} tests" in out


@pytest.fixture(scope="module")
def mine_result():
    """``ol tests --mine`` of a suite with a wrong test, against a few of the known bugs."""
    from harness.own_tests.engine import run_mine

    suite = HERE.parent / "own_tests" / "suites" / "wrong"
    ids = ["s01", "s03", "s05", "x01"]
    return suite, run_mine(MODULE, suite, 2, mutant_ids=ids)


@pytest.mark.parametrize("columns", [None, "80"])
@pytest.mark.slow
def test_ol_tests_mine_fits_the_width(columns, mine_result, capsys, monkeypatch):
    from harness import api

    suite, result = mine_result
    monkeypatch.setattr(api, "own_tests", lambda *a, **k: result)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["tests", "M07.6", "--mine", str(suite)]) == 1
    out = capsys.readouterr().out
    assert "WRONG" in out and too_wide(out, int(columns or 100)) == []


# -- item 6: a partial run says so, and is never a pass ----------------------------------------------

def test_a_partial_run_with_no_failure_has_no_verdict(tmp_path, capsys, schema):
    ws = workspace(tmp_path / "ws", "acceptance_np_sum")
    report = tmp_path / "r.json"
    code, out, _ = check(["--workspace", ws, "-k", "chi", "--json", report], capsys)
    assert code == EXIT_PARTIAL != 0
    chi = MODULE.points_of("test_speculative_chi_square")
    assert (f"M07.6: 1 passed, 0 failed, {SIZE - 1} not run (-k chi), score {chi:g}/{POINTS:g} "
            "(partial run: no verdict)" in out.splitlines())
    assert "verdict: pass" not in out
    data = json.loads(report.read_text())
    schema.validate(data)
    assert (data["verdict"], data["partial"], data["not_run"], data["not_run_by"]) == \
        ("partial", True, SIZE - 1, ["-k chi"])
    assert not (ws / ".ol" / "passes.json").exists()  # a partial run never records a pass


def test_a_run_stopped_by_maxfail_says_how_many_did_not_run(tmp_path, capsys, schema):
    ws = workspace(tmp_path / "ws", "residual_upside_down")
    report = tmp_path / "r.json"
    code, out, _ = check(["--workspace", ws, "-x", "--json", report], capsys)
    data = json.loads(report.read_text())
    schema.validate(data)
    ran = len(data["tests"])
    assert code == 1 and data["partial"] and data["not_run"] == SIZE - ran > 0
    score = sum(MODULE.points_of(t["name"]) for t in data["tests"] if t["outcome"] == "passed")
    assert (data["score"], data["max_score"]) == (score, POINTS)
    assert (f"M07.6: {ran - 1} passed, 1 failed, {SIZE - ran} not run (--maxfail 1), "
            f"score {score:g}/{POINTS:g} (partial run; verdict: fail)") in out.splitlines()


def test_k_selecting_nothing_stays_an_error(tmp_path, capsys):
    code, _, err = check(["--workspace", workspace(tmp_path / "ws"), "-k", "zzz-none"], capsys)
    assert code == 2 and "selects no test" in err


def test_the_exit_codes_are_documented():
    from harness.cli import build_parser

    readme = (HERE.parent.parent / "README.md").read_text()
    assert "4 partial run" in readme
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert "4  partial run" in sub.choices["check"].format_help()  # type: ignore[union-attr]


# -- item 7: every replay is complete; every report names its Python -----------------------------

def _replays(paths: dict[str, Path], out: str) -> dict[str, str]:
    data = json.loads(paths["--json"].read_text())
    suite = ET.fromstring(paths["--junit"].read_text()).find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    grade = json.loads(paths["--gradescope"].read_text())["output"]

    def from_cases_line(text: str) -> str:
        lines = text.splitlines()
        at = next(i for i, x in enumerate(lines) if x.startswith("cases: "))
        follow = [x.strip() for x in lines[at + 1:at + 4] if x.startswith("    ")]  # wrapped
        line = " ".join([lines[at], *follow])
        return line.split("(replay: ", 1)[1].rsplit(")", 1)[0]

    for where in (data["python"], props["python"]):
        assert where.split(" ")[0].count(".") == 2 and where.endswith(")")
    assert f"python: {data['python']}" in grade and f"platform: {data['platform']}" in grade
    assert props["platform"] == data["platform"]
    return {"json": data["replay"], "junit": props["replay"], "gradescope": from_cases_line(grade),
            "terminal": from_cases_line(out.split("  test_", 1)[0])}


def _same_run(a: dict, b: dict) -> None:
    keys = ("module", "workspace", "target", "seed", "ref_deps", "pattern", "passed", "failed")
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert [(t["name"], t["outcome"], t["message"]) for t in a["tests"]] == \
        [(t["name"], t["outcome"], t["message"]) for t in b["tests"]]


def test_every_replay_printed_reproduces_the_cases_and_the_target(tmp_path, capsys):
    ws = workspace(tmp_path / "ws", "residual_upside_down", only_rejection=True)
    paths = reports(tmp_path)
    code, out, _ = check(["--workspace", ws, "--ref-deps", "--seed", "7", "-k", "residual",
                          "--no-diagnosis", *report_args(paths)], capsys)
    assert code == 1
    first = json.loads(paths["--json"].read_text())
    assert first["failed"] and first["seed"] == 7
    replays = _replays(paths, out)
    assert len(set(replays.values())) == 1, replays
    replay = replays["json"]
    assert "--ref-deps" in replay and "-k residual" in replay and "--seed 7" in replay
    again = tmp_path / "again.json"
    argv = shlex.split(replay)
    assert argv[:3] == ["ol", "check", "M07.6"]
    code, _, err = check([*argv[3:], "--no-diagnosis", "--json", again], capsys)
    assert code == 1, err
    _same_run(first, json.loads(again.read_text()))


@pytest.mark.parametrize("target", ["reference", "s03"])
def test_the_replay_of_another_target_names_it(target, tmp_path, capsys):
    report = tmp_path / "r.json"
    check(["--target", target, "-k", "residual_is", "--json", report], capsys)
    data = json.loads(report.read_text())
    assert data["replay"] == f"ol check M07.6 --target {target} -k residual_is --seed public"
    again = tmp_path / "again.json"
    check([*shlex.split(data["replay"])[3:], "--json", again], capsys)
    _same_run(data, json.loads(again.read_text()))


def test_a_gate_suite_replays_its_check_with_the_gates_ref_deps():
    """``ol gate --ref-deps`` checks each module with the reference dependencies: the replay of
    each module's own check says so (else it stops at once: ``M07.6 needs M07.1``)."""
    from harness.gate.engine import GateResult, ModuleGate
    from harness.report.gate import to_gate_junit

    run = _run_with("a message")
    gate = GateResult("MS-P6", "title", "/ws", True, (ModuleGate("M07.6", "t", "fail", run),),
                      seed=5)
    suite = ET.fromstring(to_gate_junit(gate, quotes_of(gate))).find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["replay"] == "ol check M07.6 --workspace /ws --ref-deps --seed public"
    assert props["python"] == "3.12.1 (CPython)"


def test_markdown_names_a_partial_run_and_a_setup_error():
    from harness.report.markdown import to_markdown

    test = TestResult("test_a", Kind.UNIT, Outcome.PASSED, 0.1)
    partial = RunResult("M07.6", "/ws", "workspace /ws", (test,), not_run=19,
                        not_run_by=("-k a",), pattern="a")
    assert "PARTIAL RUN (no verdict)" in to_markdown(partial).splitlines()[0]
    error = RunResult("M07.6", "/ws", "workspace /ws", (), not_run=20, error="ol: it broke")
    text = to_markdown(error)
    assert ": ERROR" in text.splitlines()[0] and "ol: it broke" in text


def test_a_narrow_summary_keeps_its_verdict_on_one_line():
    test = TestResult("test_a", Kind.UNIT, Outcome.FAILED, 0.1, "wrong")
    run = RunResult("M07.6", "/ws", "workspace /ws", (test,), not_run=19,
                    not_run_by=("-k some_long_pattern",), pattern="some_long_pattern")
    lines = failures_and_summary(run, 60).splitlines()
    assert lines[-3:] == ["M07.6: 0 passed, 1 failed, 19 not run (-k",
                          "    some_long_pattern), score 0/20",
                          "    (partial run; verdict: fail)"]
