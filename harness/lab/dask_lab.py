"""``ol lab --executor dask``: the mutants' cells on the workers of a Dask cluster.

Each mutant that has cells to run is one task: the module's id, the mutant itself (plain data:
its edits travel with it, so the workers need no copy of the mutant library, only ``ol``
installed at the same version, whose reference and catalog decide the cells), the tests to run,
the seed and the per-test limit (``harness.lab.engine.shipped_cells``). The results come back as
JSON and are put in the matrix here, so the matrix is the one the local executor makes, cell for
cell. Without ``--scheduler`` a ``LocalCluster`` of ``--jobs`` single-threaded workers is started,
as ``ol grade --executor dask`` does (``harness.engine.dask_cluster``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.engine.dask_cluster import dask_client
from harness.engine.mutants import Mutant
from harness.errors import HarnessError


def run_on_dask(task: Callable[..., tuple[list[dict[str, Any]], float]], module_id: str,
                work: list[tuple[Mutant, list[str]]], seed: int | None, limit: float,
                scheduler: str | None, workers: int,
                finished: Callable[[str, list[dict[str, Any]], float], None]) -> None:
    """``task(module_id, mutant, tests, seed, limit)`` for every ``(mutant, tests)`` of ``work``,
    one Dask task each; ``finished(mutant id, results as JSON, seconds)`` is called here, in this
    thread, as each comes back. A task that fails (a lost worker, no ol there) stops the lab with
    one line: a cell is never guessed."""
    from distributed import as_completed

    with dask_client(scheduler, workers) as client:
        futures = {client.submit(task, module_id, mutant, names, seed, limit, pure=False,
                                 key=f"ol-lab-{module_id}-{mutant.id}"): mutant.id
                   for mutant, names in work}
        for future in as_completed(list(futures)):
            try:
                results, seconds = future.result()
            except Exception as exc:  # noqa: BLE001 - whatever the cluster raised, said in one line
                raise HarnessError(f"the Dask task of mutant {futures[future]} failed: "
                                   f"{type(exc).__name__}: {exc}",
                                   "check that every worker has this ol installed, or run "
                                   "without --executor dask") from None
            finished(futures[future], results, seconds)
