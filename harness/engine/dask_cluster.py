"""A Dask client for ``--executor dask`` (``ol grade``, ``ol lab``): one given by ``--scheduler``,
or a ``LocalCluster`` of single-threaded workers started for the run and closed after it: worker
processes for ``ol lab`` (its cells import mutants into the worker's own interpreter), worker
threads in ol's process for ``ol grade`` (each task only drives a grading slot, a process of its
own; a cluster of processes cost about 3.5 s to start and close, one of threads 0.06 s).

A local cluster's scratch space (``dask-scratch-space`` and its lock files) goes in a run folder
of ol's own, removed at the end, not in the machine's temporary directory. Dask is an optional
extra (``pip install "ol[dask]"``): without it, a one-line ``HarnessError`` says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from harness.errors import HarnessError


def connect(scheduler: str | None, workers: int, processes: bool = True) -> tuple[Any, Any]:
    """(client, the local cluster or None): ``scheduler``'s, else a new local cluster's, of
    worker processes or (``processes=False``) worker threads."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise HarnessError("--executor dask needs dask.distributed",
                           'pip install "ol[dask]" (or "dask[distributed]")') from None
    if scheduler:
        try:
            return Client(scheduler, timeout="30s"), None
        except (OSError, TimeoutError) as exc:
            raise HarnessError(f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                               "check the address (tcp://HOST:8786) and that it is running"
                               ) from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                           dashboard_address=None)
    return Client(cluster), cluster


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int, processes: bool = True) -> Iterator[Any]:
    """A client for the block: the cluster it started (if any) is closed and its scratch space
    removed when the block ends."""
    from harness.sandbox.fs import remove_tree
    from harness.sandbox.rundirs import run_dir

    try:
        import dask
    except ImportError:
        raise HarnessError("--executor dask needs dask.distributed",
                           'pip install "ol[dask]" (or "dask[distributed]")') from None
    scratch = run_dir("dask")
    try:
        with dask.config.set({"temporary-directory": str(scratch)}):
            client, cluster = connect(scheduler, workers, processes)
        try:
            yield client
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    finally:
        remove_tree(scratch)
