"""``harness.own_tests.pytest_start``: pytest's start made once gives each run what ``pytest.main``
gives it. Each side runs in a fresh interpreter (``PluginFixtures`` installs itself in pytest's
classes for the process), on one suite that uses what students use: a ``conftest.py`` fixture
that shadows nothing and one that shadows a builtin (``monkeypatch`` wrapped), pytest's own
fixtures, parametrised ids, a class, an xfail, a failure; each test writes the fixtures it sees
and the fixture names the session knows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

CONFTEST = '''
import pytest

@pytest.fixture(scope="session")
def shared():
    return 41

@pytest.fixture
def monkeypatch(monkeypatch):  # a suite's own fixture over one of pytest's
    monkeypatch.setenv("SEEN", "1")
    return monkeypatch
'''
SUITE = '''
import json, os
import pytest

def _note(request):
    manager = request._fixturemanager  # every fixture name the session knows, as pytest keeps them
    known = next(getattr(manager, n) for n in ("_arg2node2fixturedefs", "_arg2nodeid2fixturedefs",
                                               "_arg2fixturedefs") if hasattr(manager, n))
    with open(os.environ["OL_NOTES"], "a") as f:
        f.write(json.dumps({"test": request.node.nodeid, "sees": request.fixturenames,
                            "known": sorted(known)}) + "\\n")

def test_shared(shared, request):
    _note(request)
    assert shared == 41

@pytest.mark.parametrize("x", [1, "a b::c[d]"])
def test_builtins(x, tmp_path, monkeypatch, capsys, request):
    _note(request)
    print(x)
    assert capsys.readouterr().out == f"{x}\\n" and os.environ["SEEN"] == "1"

class TestGrouped:
    def test_in_a_class(self, request, tmp_path_factory):
        _note(request)

@pytest.mark.xfail(strict=True)
def test_expected_to_fail(request):
    _note(request)
    assert False

def test_fails(request):
    _note(request)
    assert 1 == 2
'''
RUN = '''
import os, sys
sys.path.insert(0, {root!r})
suite, ini, how = sys.argv[1], sys.argv[2], sys.argv[3]
args = [suite, "-c", ini, "--rootdir", os.path.dirname(suite), "--confcutdir",
        os.path.dirname(suite), "-p", "no:cacheprovider", "--tb=short", "-q"]

class Recorder:
    def __init__(self):
        self.seen = []
    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.seen.append((report.nodeid, report.outcome))

recorder = Recorder()
if how == "main":
    import pytest
    code = pytest.main(args, plugins=[recorder])
else:
    from harness.own_tests.pytest_start import PytestStart
    code = PytestStart(args, recorder, os.path.dirname(suite)).main()
print("RESULT", int(code), recorder.seen)
'''


def _run(tmp_path: Path, how: str) -> tuple[str, list[dict]]:
    suite = tmp_path / how / "suite"
    suite.mkdir(parents=True)
    (suite / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (suite / "test_suite.py").write_text(textwrap.dedent(SUITE))
    ini = tmp_path / how / "pytest.ini"
    ini.write_text("[pytest]\n")
    notes = tmp_path / how / "notes.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(OL_NOTES=str(notes), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run([sys.executable, "-c", RUN.format(root=str(ROOT)),
                           str(suite / "test_suite.py"), str(ini), how],
                          cwd=suite.parent, env=env, capture_output=True, text=True, timeout=120)
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert result, done.stdout + done.stderr
    return result[0].replace(str(suite), "SUITE"), [
        json.loads(line) for line in notes.read_text().splitlines()]


def test_a_run_from_the_start_made_once_is_a_run_of_pytest_main(tmp_path):
    plain, plain_notes = _run(tmp_path, "main")
    made_once, notes = _run(tmp_path, "start")
    assert plain.startswith("RESULT 1 ") and "'failed'" in plain  # the suite ran, and failed
    assert made_once == plain
    assert len(notes) == 6 and notes == plain_notes  # the same fixtures, in the same order


def test_what_parsefactories_reads_is_a_stand_in_only_for_unchanged_plugins():
    code = textwrap.dedent('''
        import sys, types
        sys.path.insert(0, {root!r})
        import pytest
        from harness.own_tests.pytest_start import PluginFixtures
        plugin = types.ModuleType("a_plugin")
        exec("import pytest\\n@pytest.fixture\\ndef f():\\n    return 1\\nx = 2\\n", vars(plugin))
        read = PluginFixtures([plugin])
        if read.fixture_type is None:
            print("old pytest"); raise SystemExit
        stand_in = read.stand_in(plugin)
        assert stand_in is not plugin and sorted(n for n in vars(stand_in)
                                                  if not n.startswith("__")) == ["f"]
        plugin.x = 3  # a name it does not act on: still the stand-in
        assert read.stand_in(plugin) is stand_in
        exec("@pytest.fixture\\ndef g():\\n    return 2\\n", vars(plugin))  # a new fixture
        assert read.stand_in(plugin) is plugin  # read whole
        other = types.ModuleType("never_seen")
        assert read.stand_in(other) is other
        print("ok")
    ''').format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() in ("ok", "old pytest"), done.stdout + done.stderr
    if done.stdout.strip() == "old pytest":
        pytest.skip("pytest before 8.4 has no FixtureFunctionDefinition: plugins are read whole")
