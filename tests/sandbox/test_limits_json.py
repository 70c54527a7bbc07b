"""``Limits`` round-trips JSON (``harness.fields``), and a bad JSON is one line naming the field."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness.fields import FieldError
from harness.sandbox.limits import Limits


@pytest.mark.parametrize("limits", [
    Limits(),
    Limits(call_timeout_s=0.5, memory_mb=256, disk_mb=1),
    Limits(test_timeout_s=7, cpu_s=3, output_bytes=10, file_bytes=1, max_processes=2,
           tree_memory_mb=300, import_timeout_s=1.25),
])
def test_limits_round_trip_through_json_text(limits):
    text = json.dumps(limits.to_json())
    assert Limits.from_json(json.loads(text)) == limits
    assert list(limits.to_json()) == [f.name for f in dataclasses.fields(Limits)]


def test_a_limit_not_named_is_its_default():
    assert Limits.from_json({"memory_mb": 512}) == Limits(memory_mb=512)
    assert Limits.from_json({}) == Limits()


def test_a_whole_number_of_seconds_is_a_float():
    limits = Limits.from_json({"call_timeout_s": 3})
    assert limits.call_timeout_s == 3.0 and type(limits.call_timeout_s) is float


@pytest.mark.parametrize(("data", "message"), [
    ([], "Limits must be a JSON object, got []"),
    ({"memory_mb": "4096"}, "Limits.memory_mb: must be an integer, got \"4096\""),
    ({"memory_mb": 4096.0}, "Limits.memory_mb: must be an integer, got 4096.0"),
    ({"memory_mb": True}, "Limits.memory_mb: must be an integer, got true"),
    ({"call_timeout_s": None}, "Limits.call_timeout_s: must be a number, got null"),
    ({"memory": 1}, "Limits has no field \"memory\""),
])
def test_bad_limits_are_one_line(data, message):
    with pytest.raises(FieldError) as info:
        Limits.from_json(data)
    assert str(info.value) == message
    assert "\n" not in str(info.value)
