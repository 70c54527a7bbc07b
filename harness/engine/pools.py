"""The forked process pools of the lab and the audits: one way to make them.

A worker of such a pool is a child of ol in its process group, so Ctrl-C reaches it as well as
ol. ol stops the pool itself (leaving the ``with`` block terminates it), so a worker ignores
SIGINT: without that, each worker printed its own ``KeyboardInterrupt`` traceback ("Process
ForkPoolWorker-2: ...") under ol's one line.
"""

from __future__ import annotations

import multiprocessing
import signal
from multiprocessing.pool import Pool


def _leave_interrupts_to_the_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def forked_pool(jobs: int) -> Pool:
    """A pool of ``jobs`` forked processes that ignore Ctrl-C (their parent ends them)."""
    return multiprocessing.get_context("fork").Pool(jobs, initializer=_leave_interrupts_to_the_parent)
