"""Hostile: a test ends the process, so pytest never finishes and never reports."""

import os

from tinyllm.prob.rejection import acceptance_probability


def test_alpha():
    assert acceptance_probability([0.5, 0.5], [0.5, 0.5]) == 1.0


def test_leave():
    os._exit(0)
