"""What one worker may use: ``Limits``, with its JSON (how limits cross a process or go in a file).

A module of its own, importing nothing heavy, so that the grade's parent side can build and send
limits without the codec (numpy) the supervisor needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.fields import from_fields, to_fields

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """What one worker may use. Soft = hard, set before the student's code loads."""

    call_timeout_s: float = 10.0  # wall clock per call, enforced by the parent
    test_timeout_s: float = 120.0  # wall clock for all the calls of one catalog test, likewise
    memory_mb: int = 4096  # RLIMIT_AS: numpy imports comfortably under 4 GiB
    cpu_s: int = 600  # RLIMIT_CPU over the worker's whole life: a backstop only
    output_bytes: int = 65536  # stdout + stderr kept; the rest is counted and cut
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE
    max_processes: int = 64  # tasks of the tree: a pids cgroup as root, else RLIMIT_NPROC
    # Memory of the whole tree, tmpfs and memfds included (a memory cgroup as root): at most this,
    # and at most memory_mb + disk_mb, so --memory-mb bounds the tree too.
    tree_memory_mb: int = 2048
    import_timeout_s: float = 30.0  # interpreter start, numpy and the student's import
    disk_mb: int = 64  # the run folder, a tmpfs of its own in the worker's view: all it can write

    def to_json(self) -> dict[str, Any]:
        """Every limit by its name (how limits cross a process or go in a file)."""
        return to_fields(self)

    @classmethod
    def from_json(cls, data: Any) -> Limits:
        """The limits ``to_json`` wrote (a limit not named: its default); anything else is a
        ``harness.fields.FieldError`` of one line."""
        return from_fields(cls, data)
