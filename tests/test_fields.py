"""``harness.fields``: a dataclass's JSON from its fields, and back, with one-line errors."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.fields import FieldError, from_fields, to_fields


class Colour(str, enum.Enum):  # noqa: UP042 - as the results' enums
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    n: int
    x: float = 0.0


@dataclass(frozen=True)
class Outer:
    name: str
    colour: Colour
    inner: Inner
    seed: int | None = None
    tags: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    items: list[Inner] = field(default_factory=list)
    free: Any = None
    flag: bool = False


SAMPLES = [
    Outer("a", Colour.RED, Inner(1)),
    Outer("b", Colour.BLUE, Inner(2, 2.5), seed=7, tags=("x", "y"), counts={"p": 1},
          items=[Inner(3), Inner(4, -1.0)], free={"k": [1, "two"]}, flag=True),
]


@pytest.mark.parametrize("value", SAMPLES)
def test_round_trip(value):
    data = json.loads(json.dumps(to_fields(value)))
    assert from_fields(Outer, data) == value


def test_the_json_is_plain_and_in_field_order():
    assert to_fields(SAMPLES[1]) == {
        "name": "b", "colour": "blue", "inner": {"n": 2, "x": 2.5}, "seed": 7, "tags": ["x", "y"],
        "counts": {"p": 1}, "items": [{"n": 3, "x": 0.0}, {"n": 4, "x": -1.0}],
        "free": {"k": [1, "two"]}, "flag": True}


def test_converters_by_field_name():
    data = to_fields(SAMPLES[0], write={"name": str.upper})
    assert data["name"] == "A"
    assert from_fields(Outer, data, read={"name": str.lower}) == SAMPLES[0]


def test_extra_keys_are_refused_unless_allowed():
    data = {**to_fields(SAMPLES[0]), "later": 1}
    with pytest.raises(FieldError, match='^Outer has no field "later"$'):
        from_fields(Outer, data)
    assert from_fields(Outer, data, extra=True) == SAMPLES[0]


@pytest.mark.parametrize(("change", "message"), [
    ({"colour": "green"}, "Outer.colour: must be one of 'red', 'blue', got \"green\""),
    ({"inner": {"n": "1"}}, "Outer.inner: Inner.n: must be an integer, got \"1\""),
    ({"inner": {}}, "Outer.inner: Inner lacks its field 'n'"),
    ({"seed": 1.5}, "Outer.seed: must be an integer, got 1.5"),
    ({"tags": "xy"}, "Outer.tags: must be a JSON array, got \"xy\""),
    ({"counts": {"p": None}}, "Outer.counts: must be an integer, got null"),
    ({"flag": 1}, "Outer.flag: must be a boolean, got 1"),
])
def test_bad_json_is_one_line(change, message):
    data = {**to_fields(SAMPLES[0]), **change}
    with pytest.raises(FieldError) as info:
        from_fields(Outer, data)
    assert str(info.value) == message


def test_a_missing_required_field():
    with pytest.raises(FieldError, match="^Outer lacks its field 'name'$"):
        from_fields(Outer, {"colour": "red", "inner": {"n": 1}})
