"""The JSON report: ``RunResult.to_json``, the shape a worker sends back and ``--json`` writes."""

from __future__ import annotations

from harness.engine.results import RunResult
from harness.report.common import json_text


def to_json_text(result: RunResult) -> str:
    """``result.to_json()`` with indent 2, keys in the model's order, and a trailing newline.

    Round-trips: ``RunResult.from_json(json.loads(to_json_text(r)))`` equals ``r`` (durations are
    written exactly); the document is tagged ``"$type": "RunResult"`` with its format version.
    """
    return json_text(result.to_json(), allow_nan=False)
