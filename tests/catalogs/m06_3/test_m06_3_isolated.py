"""M06.3 checked isolated: its generators are handles, and they cross the process boundary intact.

What every module's lab and ``ol check`` promise is tested for all modules at once, in
tests/commands/test_lab.py and tests/commands/test_check.py.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import main
from harness.engine.course import load_course
from harness.engine.mutants import find_mutant, mutant_source
from harness.paths import REFERENCE_PYTHON

MODULE = load_course().module("M06.3")


def _workspace(dest, source=None):
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", dest / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if source is not None:
        (dest / "python" / MODULE.file).write_text(source, encoding="utf-8")
    return dest


@pytest.mark.slow
def test_the_reference_passes_isolated_where_generators_are_handles(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["check", "M06.3", "--workspace", str(_workspace(tmp_path / "ws")),
                 "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert (data["verdict"], data["passed"], data["failed"]) == ("pass", 12, 0)


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", ["s05", "x15", "x18"])
def test_an_isolated_workspace_with_a_bug_fails_its_designated_test(mutant_id, tmp_path, capsys):
    """Words swapped, shared state, numpy seeds: each crosses the process boundary intact."""
    mutant = find_mutant("M06.3", mutant_id)
    ws = _workspace(tmp_path / "ws", mutant_source(mutant, MODULE))
    assert main(["check", "M06.3", "--workspace", str(ws), "-k", mutant.designated[0]]) == 1
    out = capsys.readouterr().out
    assert f"see ol pitfall {mutant.pitfall} (ol's own, listed by `ol tests M06.3`):" in out
