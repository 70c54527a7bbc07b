"""A catalog test that raises by itself is ol's bug: an internal error (exit 3), never a failure."""

from __future__ import annotations

import tempfile

import pytest

import harness.catalogs.m07_6.test_catalog as catalog
from harness.cli import main
from harness.engine.course import load_course
from harness.engine.own_code import reference_target
from harness.engine.runner import CatalogError, run_case

MODULE = load_course().module("M07.6")


def broken(target):
    target.residual_distribution([0.5, 0.5], [0.5, 0.5])
    return [1, 2][5]  # the catalog's own IndexError


def test_the_catalogs_own_exception_is_not_the_students(monkeypatch):
    info = catalog.test_hand_example.ol_case
    with pytest.raises(CatalogError, match="bug of ol's catalog"):
        run_case(MODULE, info, broken, reference_target(MODULE))


def test_the_students_exception_stays_a_failure():
    info = catalog.test_hand_example.ol_case

    def calls_badly(target):
        target.rejection_accept(0.5, 0.0, 0.5)  # q_x = 0: the code under test raises ValueError

    result = run_case(MODULE, info, calls_badly, reference_target(MODULE))
    assert result.outcome.value == "error" and "the code under test raised ValueError" in result.message


def test_ol_check_exits_3_and_names_the_log(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the crash log goes
    monkeypatch.setattr(catalog, "test_hand_example", _with_case(broken, catalog.test_hand_example))
    assert main(["check", "M07.6", "--target", "reference", "-k", "test_hand_example"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("ol: internal error: CatalogError: test_hand_example itself raised IndexError")
    assert err.count("\n") == 1 and "the traceback is in" in err
    logs = list(tmp_path.glob("ol-crash-*.log"))
    assert len(logs) == 1 and "IndexError" in logs[0].read_text()


def _with_case(fn, original):
    fn.ol_case = original.ol_case
    fn.__code__ = fn.__code__.replace(co_firstlineno=original.__code__.co_firstlineno)
    return fn
