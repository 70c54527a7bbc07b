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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def real_lab():
    """One real ``run_lab("M07.6")`` shared by every test that needs the whole kill matrix."""
    from harness.lab import run_lab

    return run_lab("M07.6", jobs=2)
