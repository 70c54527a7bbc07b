"""``harness.engine.serial``: floats JSON has no room for, written as text and read back."""

from __future__ import annotations

import json
import math

from harness.engine.serial import float_from_json, nonfinite_as_text, restored


def test_nonfinite_floats_are_written_as_text_throughout_and_read_back():
    data = {"p": math.inf, "q": [-math.inf, 0.5, (math.nan, 2)], "s": "nan", "n": None}
    out = nonfinite_as_text(data)
    assert out == {"p": "inf", "q": ["-inf", 0.5, ["nan", 2]], "s": "nan", "n": None}
    json.dumps(out, allow_nan=False)  # strict JSON
    back = restored(json.loads(json.dumps(out)))
    assert back["p"] == math.inf and back["q"][0] == -math.inf and math.isnan(back["q"][2][0])
    assert float_from_json(out["q"][2][0]) is math.nan
    assert nonfinite_as_text(1.25) == 1.25 and nonfinite_as_text(True) is True
