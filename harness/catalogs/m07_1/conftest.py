"""``pytest harness/catalogs/m07_1`` runs the catalog against the reference, in-process."""

import pytest

from harness.engine.course import load_course
from harness.engine.own_code import reference_target


@pytest.fixture(scope="session")
def target():
    return reference_target(load_course().module("M07.1"))
