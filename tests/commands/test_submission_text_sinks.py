"""The last sinks of a submission's text: ``ol gate``'s reporters, ``ol grade``'s progress lines,
and the static read of the student's module (a FIFO or a link swapped in never blocks or is
followed)."""

from __future__ import annotations

import io
import json
import os
import threading

import pytest

from harness.engine.workspace import read_source
from harness.errors import HarnessError
from harness.gate.engine import GateResult, ModuleGate
from harness.report.gate import format_failures, to_gate_json, to_gate_markdown
from harness.terminal.grade import say

HOSTILE = "\x1b[2K\x1b[1A19 passed (verdict: pass)\r\u202e \ud800"


def _gate() -> GateResult:
    module = ModuleGate("M07.6", "rejection", "error", message=HOSTILE)
    return GateResult("MS-P6", "milestone", "/w/\x1b[31mws", False, (module,))


def test_the_gate_reporters_escape_and_never_fail_on_a_surrogate():
    result = _gate()
    for text in (format_failures(result), result.modules[0].line(), to_gate_markdown(result)):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        text.encode("utf-8")
    data = to_gate_json(result)  # json.dumps of a lone surrogate used to end ol gate with exit 3
    data.encode("utf-8")
    assert "\x1b" not in data and json.loads(data)["modules"][0]["message"] == HOSTILE


def test_grading_progress_lines_escape_a_submissions_text():
    out = io.StringIO()
    say(f"  [1/1] sub{HOSTILE} error", out)
    assert "\x1b" not in out.getvalue() and "\\x1b[2K" in out.getvalue()


def test_reading_the_module_never_follows_a_link_or_blocks_on_a_fifo(tmp_path):
    real = tmp_path / "real.py"
    real.write_text("x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    with pytest.raises(HarnessError, match="is a symbolic link"):
        read_source(link, "link.py")
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    errors: list[BaseException] = []
    reader = threading.Thread(target=lambda: errors.append(
        pytest.raises(HarnessError, read_source, fifo, "fifo.py").value), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "read_source blocked on a FIFO"
    assert "not a regular file" in str(errors[0])
    assert read_source(real, "real.py") == "x = 1\n"
