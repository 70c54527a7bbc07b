"""The JSON report: ``RunResult.to_json``, the shape a worker sends back and ``--json`` writes."""

from __future__ import annotations

import json

from harness.model import RunResult


def to_json_text(result: RunResult) -> str:
    """``result.to_json()`` with indent 2, keys in the model's order, and a trailing newline.

    Round-trips: ``RunResult.from_json(json.loads(to_json_text(r)))`` equals ``r`` up to the
    rounding of durations to microseconds.
    """
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
