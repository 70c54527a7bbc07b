"""Issue #24, item 5: ol's own code is bounded on a submission's data, end to end through ``ol``.

Each case builds a workspace (a copy of the reference with one function replaced, or a test
suite for ``--mine``), runs ``ol`` as a subprocess with a ``TMPDIR`` of its own inside
``tmp_path``, bounds every wait, and judges the exit code, the message and what it cost:

- a reply frame built to be expensive to parse (32 MiB of empty lists) is refused before it is
  parsed: a crash of that call, and ol's memory stays far below what parsing it took;
- wrong answers the catalog's exact arithmetic cannot take (NaN, inf, 1e308, answers that make
  the bisection give up) are failures of the submission (exit 1) that say what came back, never
  an internal error (exit 3).
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import textwrap
from pathlib import Path

import pytest
from olrun import Ol

from harness.paths import REPO_ROOT

pytestmark = pytest.mark.slow
RUN_BOUND_S = 180.0  # any single ol command here takes seconds; past this it hangs
MODULE_FILES = {"M07.6": "rejection.py", "M06.3": "pcg32.py", "M07.1": "categorical.py"}


def workspace(root: Path, module: str, extra: str) -> Path:
    """A copy of the reference workspace with ``extra`` appended to the module's file (a function
    defined there replaces the reference's)."""
    shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    path = root / "python" / "tinyllm" / "prob" / MODULE_FILES[module]
    path.write_text(path.read_text() + "\n" + textwrap.dedent(extra))
    return root


def ol(tmp_path: Path, *args: str) -> Ol:
    """``ol ARGS`` with its peak resident memory (``VmHWM``) read while it runs."""
    return Ol(tmp_path, *args, peak=True).wait(RUN_BOUND_S)


def check(tmp_path: Path, module: str, ws: Path, *extra: str) -> tuple[Ol, dict[str, dict]]:
    """``ol check MODULE`` on ``ws`` with a JSON report: the run and the report's tests by name."""
    report = tmp_path / f"report-{secrets.token_hex(3)}.json"
    run = ol(tmp_path, "check", module, "--workspace", str(ws), "--json", str(report), *extra)
    tests = ({t["name"]: t for t in json.loads(report.read_text())["tests"]}
             if report.exists() else {})
    return run, tests


# == finding 1: a reply frame built to be expensive to parse =======================================

def test_a_frame_of_empty_lists_is_refused_before_it_is_parsed(tmp_path):
    """The worker (the student's code: the reply descriptor is argv[2]) writes a 32 MiB frame of
    ``[[],[],...]`` before its answer. Before, ol parsed it whole (11 million lists: 0.9 GB and
    about a minute) before saying 'not an object'; now the call crashes at once, with ol's memory
    at a small multiple of the frame."""
    ws = workspace(tmp_path / "ws", "M07.6", '''
        import os as _o, struct as _st, sys as _s

        _ol_real_rd = residual_distribution

        def residual_distribution(p, q):
            body = b"[" + b"[]," * ((32 << 20) // 3 - 10) + b"[]]"
            _o.write(int(_s.argv[2]), _st.pack(">I", len(body)) + body)
            return _ol_real_rd(p, q)
        ''')
    run, tests = check(tmp_path, "M07.6", ws, "-k", "test_residual_sum_is_ascending")
    assert run.rc == 1, run.text
    test = tests["test_residual_sum_is_ascending"]
    assert test["outcome"] == "crashed", test
    assert "the worker sent a message of more than 262144 values" in test["message"], test
    assert run.peak_kb < 400 << 10, f"ol peaked at {run.peak_kb >> 10} MiB"


# == finding 2: ``ol tests --mine`` reads the student's files in a process of its own =============

def _compiles(source: str) -> bool:
    """Whether this Python's parser and compiler take ``source`` (deep chains: not before 3.13)."""
    try:
        compile(source, "<deep>", "exec")
    except (RecursionError, MemoryError, SyntaxError):
        return False
    return True


@pytest.mark.parametrize("source, why", [
    ("X = [" + "0," * (1 << 20) + "]\n", "its syntax tree needs more than 512 MiB"),
    ("X = " + "1 + " * 5000 + "1\n", "it is nested too deep to parse"),
], ids=["a list literal of 2 MiB", "a chain of 5000 additions"])
def test_a_suite_too_large_or_too_deep_to_read_is_one_line_and_exit_2(tmp_path, source, why):
    """Before: the 2 MiB literal cost ol a gigabyte (then the suite ran, a minute and a half); the
    chain ended in 'internal error: RecursionError', exit 3. Now each is one line, exit 2, and
    ol's own memory stays that of its start."""
    suite = tmp_path / "tests"
    suite.mkdir()
    (suite / "test_mine.py").write_text(source + "\n\ndef test_x():\n    assert X\n")
    run = ol(tmp_path, "tests", "M07.6", "--mine", str(suite))
    if why.startswith("it is nested") and _compiles(source):
        # Python 3.13's compiler takes the chain: the suite is read and runs, no traceback.
        assert run.rc in (0, 1) and "Traceback" not in run.text, run.text
        return
    assert run.rc == 2, run.text
    assert run.err.strip() == (f"ol: --mine: ol cannot read {suite / 'test_mine.py'}: {why} "
                               "(split the file, and build large or deeply nested data in a "
                               "fixture when the tests run, not as a literal)"), run.text
    assert run.peak_kb < 200 << 10, f"ol peaked at {run.peak_kb >> 10} MiB"


# == finding 3: wrong answers the catalog's exact arithmetic cannot take =========================

RESIDUAL = """
    _ol_real_rd = residual_distribution

    def residual_distribution(p, q):
        res = _ol_real_rd(p, q)
        res[{where}] = {value}
        return res
    """
UNIFORM = """
    def _ol_uniform(self):
        self.next_u32()
        self.next_u32()
        return {value}

    PCG32.uniform = _ol_uniform
    """
# rejection_accept: wrong at u = 0, right at the other ends of the contract's cells, and in
# between an error whose message names the uniform: a new answer at every point the bisection
# asks, so the code's boundary cannot be found within 256 pieces.
PIECES = """
    import math as _m
    from fractions import Fraction as _F

    _ol_real_ra = rejection_accept

    def rejection_accept(p_x, q_x, u):
        got = _ol_real_ra(p_x, q_x, u)
        k, r = int(u * 2**53), p_x / q_x
        c = min(2**53, _m.ceil(_F(r) * 2**53)) if r > 0 else 0
        if k == 0:
            return not got
        if k in (c - 1, c, 2**53 - 1):
            return got
        raise ValueError(f"no answer at k = {k}")
    """


@pytest.mark.parametrize("where, value, shown", [
    ("0", "float('nan')", "[nan, 0. , 0.5, 0. ]"), ("-1", "float('inf')", "[0.5, 0. , 0.5, inf]"),
    (":", "-1e308", "[-1.e+308, -1.e+308, -1.e+308, -1.e+308]")], ids=["nan", "inf", "-1e308"])
def test_a_residual_that_is_not_finite_is_a_failure(tmp_path, where, value, shown):
    """NaN and infinities reached ``Fraction`` in the exact check (exit 3, 'CatalogError')."""
    ws = workspace(tmp_path / "ws", "M07.6", RESIDUAL.format(where=where, value=value))
    run, tests = check(tmp_path, "M07.6", ws, "-k", "test_residual_is_a_distribution")
    assert run.rc == 1, run.text
    message = tests["test_residual_is_a_distribution"]["message"]
    if where != ":":
        assert message == ("residual_distribution([0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]) "
                           f"returned {shown}: not a probability vector (an entry is not a finite "
                           "number)"), message
    else:  # negative: the catalog's own words for it (pitfall 3), before any exact arithmetic
        assert "returned [-1.e+308," in message, message


@pytest.mark.parametrize("value", ["float('nan')", "float('inf')", "1e308"])
def test_a_uniform_that_is_nan_inf_or_huge_is_a_failure(tmp_path, value):
    """``int(u * 2**53)`` raised on them (exit 3); M06.3 is the first module of ``ol gate MS-P6``,
    which crashed with it."""
    ws = workspace(tmp_path / "ws", "M06.3", UNIFORM.format(value=value))
    run, tests = check(tmp_path, "M06.3", ws)
    assert run.rc == 1, run.text
    test = tests["test_uniform_granularity_is_2_to_minus_53"]
    shown = {"float('nan')": "nan", "float('inf')": "inf", "1e308": "1e+308"}[value]
    assert test["outcome"] == "failed", test
    assert test["message"].startswith(f"PCG32(2024, 1).uniform() call 1 returned {shown}: not an "
                                      "integer k in [0, 2**53)"), test
    if value == "float('nan')":
        gate = ol(tmp_path, "gate", "MS-P6", "--workspace", str(ws), "--seed", "public",
                  "--markdown", str(tmp_path / "gate.md"))
        assert gate.rc == 1, gate.text
        assert re.search(r"^MS-P6: 0 pass, 1 fail, 0 error, 2 blocked, score \d+/\d+ \(verdict: fail\)$",
                         gate.out, re.M), gate.text


def test_answers_that_make_the_bisection_give_up_are_a_failure(tmp_path):
    """``TooManyPieces`` was uncaught in the acceptance-rate test (exit 3)."""
    ws = workspace(tmp_path / "ws", "M07.6", PIECES)
    run, tests = check(tmp_path, "M07.6", ws, "-k",
                       "test_acceptance_rate_matches_acceptance_probability")
    assert run.rc == 1, run.text
    message = tests["test_acceptance_rate_matches_acceptance_probability"]["message"]
    assert message == ("rejection_accept(0.5, 0.25, 0.0) returned False but rejection_accept(0.5, "
                       "0.25, 0.9999999999999999) returned True; for every u in [0.0, 1) the "
                       "contract accepts (r = p_x / q_x = 2.0); its answers change too often along "
                       "the uniforms (an answer, then another, then another: more than 256 pieces) "
                       "to find where it accepts"), message
