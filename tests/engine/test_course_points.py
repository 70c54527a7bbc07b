"""Points per test (course.toml ``[points.MODULE]``): every name is a catalog test, every value a
number of points; a test not named is worth 1."""

from __future__ import annotations

import tomllib

import pytest

from harness.engine.course import load_course
from harness.engine.runner import collect
from harness.errors import HarnessError
from harness.paths import PACKAGE_DIR


def test_every_weighted_test_is_a_test_of_its_catalog():
    data = tomllib.loads((PACKAGE_DIR / "course.toml").read_text(encoding="utf-8"))
    course = load_course()
    assert data.get("points"), "course.toml weighs no test: the weighting is untested"
    for module_id, table in data["points"].items():
        names = {info.name for info, _ in collect(course.module(module_id))}
        assert set(table) <= names, f"{module_id}: {sorted(set(table) - names)} are not its tests"


def test_a_test_not_named_is_worth_one_point():
    module = load_course().module("M07.6")
    assert module.points_of("test_speculative_output_is_exactly_p") == 3
    assert module.points_of("test_accept_is_strict") == 1
    total = sum(module.points_of(info.name) for info, _ in collect(module))
    assert total == len(collect(module)) + 5  # four weighted tests, 5 points above one each


@pytest.mark.parametrize("value", ["-1", "'three'", "true", "nan"])
def test_a_value_that_is_not_points_is_refused_in_one_line(tmp_path, value):
    text = (PACKAGE_DIR / "course.toml").read_text(encoding="utf-8").replace(
        "test_speculative_output_is_exactly_p = 3", f"test_speculative_output_is_exactly_p = {value}")
    path = tmp_path / "course.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HarnessError, match="is not a number of points"):
        load_course(path)
