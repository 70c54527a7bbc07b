"""Hostile: write a finished report of its own (every test failed) to every open descriptor, then
leave before pytest can write the real one."""

import contextlib
import json
import os

from tinyllm.prob.rejection import acceptance_probability

FAKE = {"format": 1, "finished": True, "exit": 1, "errors": [], "tests": {
    "test_forged_report.py::test_alpha": {"outcome": "failed", "message": "forged"},
    "test_forged_report.py::test_zzz_forge": {"outcome": "passed", "message": ""}}}


def test_alpha():
    assert acceptance_probability([0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]) == 0.5


def test_zzz_forge():
    data = json.dumps(FAKE).encode()
    for fd in range(3, 256):
        with contextlib.suppress(OSError):
            os.write(fd, data)
    os._exit(0)
