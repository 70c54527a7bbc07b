"""``ol grade --executor dask``: the same grading slots, on the workers of a Dask cluster.

Each submission travels with the task as its staged ``python/`` tree (``harness.sandbox.
staging``: the ``.py`` files whose bytes were hashed, after the same refusals as the local
executor's), so the workers need no shared file system, only ``ol`` installed (``pip install
"ol[dask]"``) at the same version; its request carries the gradebook's run seed, so a worker
checks it on the same cases as the local executor. On a worker, a ``WorkerPlugin`` keeps a pool
of grading slots (``harness.grade.slots``), one per task running at once, so the imports are paid
once per slot there too, and a submission past its budget is killed there without harming the
worker. Without ``--scheduler`` a ``LocalCluster`` of ``--jobs`` single-threaded workers is
started as threads of ol's process (the slots are processes of their own; a cluster of worker
processes cost about 3.5 s to start and close for nothing).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from harness.engine.course import Module
from harness.grade.row import GradeRow, SlotReply

if TYPE_CHECKING:
    from harness.grade.slots import SlotPool, SlotRequest

PLUGIN_NAME = "ol-grade-slots"

try:
    from distributed import WorkerPlugin
except ImportError:  # the plugin is only defined where distributed is installed
    WorkerPlugin = object  # type: ignore[misc,assignment]


class SlotKeeper(WorkerPlugin):
    """On each Dask worker: the grading slots its tasks share; they die with the plugin."""

    name = PLUGIN_NAME

    def __init__(self, module_id: str) -> None:
        self.module_id = module_id
        self.pool: SlotPool | None = None

    def setup(self, worker: Any) -> None:
        from harness.grade.slots import SlotPool

        self.pool = SlotPool(self.module_id)

    def teardown(self, worker: Any) -> None:
        if self.pool is not None:
            self.pool.close()


def grade_shipped(request: SlotRequest, files: dict[str, bytes], budget: float) -> SlotReply:
    """On a Dask worker: write the submission to a temporary workspace and grade it in a slot,
    on the cases of the request's ``seed``.

    The row names the submission, not the folder it was graded in here, and holds valid text
    only, so it is the row the local executor writes for the same submission."""
    import dataclasses

    from harness.grade.slots import SlotPool, materialize
    from harness.sandbox.fs import remove_tree
    from harness.sandbox.rundirs import run_dir

    keeper: Any = None  # the SlotKeeper registered under PLUGIN_NAME, if any
    with contextlib.suppress(ImportError, ValueError):
        from distributed import get_worker

        keeper = get_worker().plugins.get(PLUGIN_NAME)
    pool = keeper.pool if keeper is not None and keeper.pool is not None else None
    tmp = run_dir("grade")
    own = pool is None
    try:
        root = tmp / "workspace"
        root.mkdir()
        materialize(files, root)
        if own:  # called outside a worker that has the plugin: a slot for this call only
            pool = SlotPool(request.module, recycle_after=1)
        assert pool is not None, "the worker's pool, or one of this call's own"
        reply = pool.grade(dataclasses.replace(request, workspace=str(root)), budget)
    finally:
        if own and pool is not None:
            pool.close()
        remove_tree(tmp)
    return reply.renamed(str(root), request.id).cleaned()


def run_dask(module: Module, jobs: list, settings: dict[str, Any], scheduler: str | None,
             workers: int, done) -> None:
    """Every job as one task; ``done`` is called here, in this thread, as results come back."""
    from distributed import as_completed

    from harness.engine.dask_cluster import dask_client

    with dask_client(scheduler, workers, processes=False) as client:
        budget = settings["submission_timeout_s"]
        try:
            client.register_plugin(SlotKeeper(module.id), name=PLUGIN_NAME)
            futures: dict[Any, Any] = {}  # a Dask future: its job
            for job in jobs:
                request = job.request(module.id, settings, "")
                future = client.submit(grade_shipped, request, job.files, budget, pure=False,
                                       key=f"ol-grade-{job.digest[:12]}-{len(futures)}")
                futures[future] = job
            for future in as_completed(list(futures)):
                job = futures[future]
                try:
                    reply = future.result()
                except Exception as exc:  # noqa: BLE001 - a lost task is the harness's problem
                    reply = SlotReply(GradeRow.internal(
                        f"the Dask task failed: {type(exc).__name__}: {exc}"))
                done(job, reply)
        finally:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(PLUGIN_NAME)
