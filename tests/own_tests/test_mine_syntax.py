"""A test file of the student's own that does not parse (issue #25, item 10): ``ol tests --mine``
says so in one line (the file, the line, what is wrong, what to do), exit 2, before any run.

Before: every implementation's run failed to collect, and the student read pytest's 25-line
collection traceback (ol's and pytest's own frames) under "your tests cannot run on the reference".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main

GOOD = "def test_ok():\n    assert 1 + 1 == 2\n"


def _ol_tests(capsys, suite: Path) -> tuple[int, str, str]:
    code = main(["tests", "M07.6", "--mine", str(suite)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("source,line,what,near", [
    ("import numpy as np\n\n" + GOOD + "\ndef test_two(:\n    pass\n", 6,
     "SyntaxError: invalid syntax", "def test_two(:"),
    (GOOD + "def test_tab():\n    x = 1\n\treturn x\n", 5,
     "TabError: inconsistent use of tabs and spaces in indentation", "return x"),
    (GOOD + "def test_indent():\nassert True\n", 4,
     "IndentationError: expected an indented block after function definition on line 3",
     "assert True"),
])
def test_a_test_file_that_does_not_parse_is_one_line(tmp_path, capsys, source, line, what, near):
    suite = tmp_path / "test_mine.py"
    suite.write_text(source)
    code, out, err = _ol_tests(capsys, suite)
    assert code == 2
    assert err == (f"ol: --mine: {suite}, line {line}: {what} at `{near}` (no test runs until every "
                   f"test file parses: fix it, then run `ol tests M07.6 --mine {suite}` again)\n")
    assert "Traceback" not in out + err and "_pytest" not in out + err
    assert "score" not in out  # nothing ran


def test_a_conftest_that_does_not_parse_in_a_folder_is_named(tmp_path, capsys):
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "test_a.py").write_text(GOOD)
    (folder / "conftest.py").write_text("import pytest\n\n@pytest.fixture\ndef p(:\n    return 1\n")
    code, _, err = _ol_tests(capsys, folder)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"ol: --mine: {folder / 'conftest.py'}, line 4: SyntaxError: ")


def test_a_long_line_is_cut_in_the_message(tmp_path, capsys):
    suite = tmp_path / "test_long.py"
    suite.write_text(GOOD + "x = [" + ", ".join(["1"] * 100) + ",,]\n")
    code, _, err = _ol_tests(capsys, suite)
    assert code == 2 and err.count("\n") == 1
    assert "x = [1, 1, 1" in err and "...` (" in err and len(err) < 400


def test_the_line_shown_cannot_drive_the_terminal(tmp_path, capsys):
    suite = tmp_path / "test_esc.py"
    suite.write_text('x = "\x1b[2J\x1b[31m" + (\n' + GOOD)
    code, _, err = _ol_tests(capsys, suite)
    assert code == 2 and "\x1b" not in err and 'at `x = "\\x1b[2J\\x1b[31m" + (`' in err
