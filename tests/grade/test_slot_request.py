"""The request a grading slot reads (``SlotRequest``) round-trips JSON; a bad one is one line."""

from __future__ import annotations

import json

import pytest

from harness.fields import FieldError
from harness.grade.row import renamed
from harness.grade.slots import SlotRequest
from harness.sandbox.limits import Limits

REQUESTS = [
    SlotRequest("ana", "M07.6", "/subs/ana", False, Limits()),
    SlotRequest("b\u00e9a \u2603", "M06.3", "", True, Limits(call_timeout_s=2, memory_mb=512, disk_mb=8),
                seed=20261202, digest="0" * 64),
]


@pytest.mark.parametrize("request_", REQUESTS)
def test_a_slot_request_round_trips_through_json_text(request_):
    text = json.dumps(request_.to_json(), allow_nan=False)
    assert SlotRequest.from_json(json.loads(text)) == request_


def test_its_json_is_every_field_with_the_limits_inside():
    data = REQUESTS[1].to_json()
    assert list(data) == ["id", "module", "workspace", "ref_deps", "limits", "seed", "digest"]
    assert data["limits"] == Limits(call_timeout_s=2, memory_mb=512, disk_mb=8).to_json()


@pytest.mark.parametrize(("change", "message"), [
    ({"ref_deps": "no"}, 'SlotRequest.ref_deps: must be a boolean, got "no"'),
    ({"limits": {"memory_mb": -0.5}}, "SlotRequest.limits: Limits.memory_mb: must be an integer, got -0.5"),
    ({"seed": "public"}, 'SlotRequest.seed: must be an integer, got "public"'),
    ({"op": "graded"}, 'SlotRequest has no field "op"'),
])
def test_a_bad_slot_request_is_one_line(change, message):
    with pytest.raises(FieldError) as info:
        SlotRequest.from_json({**REQUESTS[0].to_json(), **change})
    assert str(info.value) == message


def test_renamed_names_the_folder_as_the_submission_everywhere():
    row = {"message": "/tmp/x/w/python changed", "run": {"workspace": "/tmp/x/w",
           "tests": [{"name": "t", "message": "in /tmp/x/w/python/a.py"}]}, "n": 1.5,
           "tests": {"/tmp/x/w": "passed"}, "pitfalls": ("/tmp/x/w",), "none": None}
    assert renamed(row, "/tmp/x/w", "ana \u2603") == {
        "message": "ana \u2603/python changed", "run": {"workspace": "ana \u2603",
        "tests": [{"name": "t", "message": "in ana \u2603/python/a.py"}]}, "n": 1.5,
        "tests": {"ana \u2603": "passed"}, "pitfalls": ["ana \u2603"], "none": None}
