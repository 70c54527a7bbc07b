"""Project test configuration: ``import tinyllm`` imports the reference workspace.

``reference/python`` is put first on ``sys.path`` (computed from this file's location, so the
tests work from any clone and any working directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

REFERENCE_PYTHON = (Path(__file__).resolve().parent.parent / "reference" / "python").resolve()


def _put_reference_first() -> None:
    entry = str(REFERENCE_PYTHON)
    # Drop any earlier occurrence so the reference ends up exactly first.
    sys.path[:] = [p for p in sys.path if p != entry]
    sys.path.insert(0, entry)


_put_reference_first()


import pytest


@pytest.fixture(scope="session")
def real_lab():
    """One real ``run_lab("M07.6")`` shared by every test that needs the whole kill matrix."""
    from harness.lab import run_lab

    return run_lab("M07.6", jobs=2)


@pytest.fixture(scope="session")
def module_lab(request):
    """``module_lab(module_id)``: one real ``run_lab`` per course module for the whole session.

    Each module's lab runs the first time a test asks for it (deselected modules cost nothing);
    M07.6's is ``real_lab`` itself, so the suite never runs a module's lab twice.
    """
    from harness.lab import run_lab

    labs = {}

    def lab_of(module_id: str):
        if module_id not in labs:
            labs[module_id] = (request.getfixturevalue("real_lab") if module_id == "M07.6"
                               else run_lab(module_id, jobs=2))
        return labs[module_id]

    return lab_of
