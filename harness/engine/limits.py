"""The ranges of ol's numeric settings and their one-line errors.

Shared by the argument parser (each value is checked as it is parsed) and the typed requests of
the Python API (a request built in code is checked the same way).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.engine.isolated import Limits

TIMEOUT_MAX_S = 3600.0  # per call: an hour; a test's calls together get 120 s anyway
SUBMISSION_TIMEOUT_MAX_S = 86400.0  # one submission of ol grade: a day
# RLIMIT_AS bounds address space, not RAM (numpy reserves far more than it touches), so the cap
# is not the machine's memory: 1 TiB, whose byte count (2**40) no rlimit can overflow.
MEMORY_MB_MIN, MEMORY_MB_MAX = 256, 1 << 20
JOBS_MAX = 256
MEMORY_HINT = "the default is 4096; numpy alone needs about 100 MB"
# The worker's run folder is a tmpfs of its own (#24): its pages are memory, so the cap is modest.
DISK_MB_MIN, DISK_MB_MAX = 1, 16384
DISK_HINT = "the default is 64: what the code under test may write in its run folder"


def check_seconds(flag: str, value: float, maximum: float, example: str,
                  shown: str | None = None) -> float:
    """``value`` if ``0 < value <= maximum`` (so neither nan nor inf), else a ``HarnessError``."""
    if not 0 < value <= maximum:
        raise HarnessError(f"{flag} must be positive and at most {maximum:g} seconds, got "
                           f"{shown if shown is not None else format(value, 'g')}",
                           f"e.g. {example}")
    return value


def check_count(flag: str, value: int, low: int, high: int, hint: str,
                shown: str | None = None) -> int:
    """``value`` if ``low <= value <= high``, else a ``HarnessError`` naming the range."""
    if not low <= value <= high:
        raise HarnessError(f"{flag} must be at least {low} and at most {high}"
                           + (" (1 TiB)" if high == MEMORY_MB_MAX and flag == "--memory-mb" else "")
                           + f", got {shown if shown is not None else value}", hint)
    return value


def check_jobs(jobs: int | None) -> int | None:
    """``--jobs``: None (all cores) or from 1 to ``JOBS_MAX``."""
    return None if jobs is None else check_count("--jobs", jobs, 1, JOBS_MAX, "e.g. --jobs 2")


def worker_limits(timeout_s: float | None, memory_mb: int | None,
                  disk_mb: int | None = None) -> Limits:
    """The isolated worker's limits from ``--timeout``, ``--memory-mb`` and ``--disk-mb`` (None:
    the default)."""
    from harness.engine.isolated import Limits

    limits = Limits()
    if timeout_s is not None:
        limits = dataclasses.replace(limits, call_timeout_s=check_seconds(
            "--timeout", float(timeout_s), TIMEOUT_MAX_S, "--timeout 10"))
    if memory_mb is not None:
        limits = dataclasses.replace(limits, memory_mb=check_count(
            "--memory-mb", int(memory_mb), MEMORY_MB_MIN, MEMORY_MB_MAX, MEMORY_HINT))
    if disk_mb is not None:
        limits = dataclasses.replace(limits, disk_mb=check_count(
            "--disk-mb", int(disk_mb), DISK_MB_MIN, DISK_MB_MAX, DISK_HINT))
    return limits
