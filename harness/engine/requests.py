"""The typed requests of ol's commands: what the CLI parses and the Python API takes.

Each request is checked when it is built, against the same ranges and with the same one-line
``HarnessError`` messages as the command-line options (``harness.engine.limits``), so a request
made in code fails as the command line would. ``harness.api`` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.engine.limits import (
    SUBMISSION_TIMEOUT_MAX_S,
    check_jobs,
    check_seconds,
    worker_limits,
)
from harness.engine.seeding import FRESH, PUBLIC_CASES, Seed
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.engine.isolated import Limits


@dataclass(frozen=True)
class CheckRequest:
    """``ol check``: the catalog of ``module_id`` against one target.

    ``target`` is ``"student"`` (the workspace, in an isolated worker), ``"reference"`` or a
    mutant id (in this process). ``seed``: the public cases (``Seed()``, the default) or a run
    seed's (``Seed(N)``); an int or None is taken as one (``Seed.of``); never ``FRESH``.
    """

    module_id: str
    workspace: str | None = None  # None: the current directory, else the bundled student/
    target: str = "student"
    ref_deps: bool = False
    pattern: str | None = None  # -k: only tests whose name contains it
    limits: Limits | None = None  # the worker's (student) or each test's (in-process) limits
    diagnose: bool = True  # after a failure, name the known mistake the code behaves like
    seed: Seed = PUBLIC_CASES
    maxfail: int | None = None  # stop after this many failed tests (None: run them all)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", Seed.of(self.seed, fresh=False))
        if self.target != "student" and (self.workspace is not None or self.ref_deps):
            raise HarnessError(f"--workspace and --ref-deps only apply to --target student, not "
                               f"{self.target}", "drop one of them")
        if self.maxfail is not None and self.maxfail < 1:
            raise HarnessError(f"--maxfail must be at least 1, got {self.maxfail}",
                               "e.g. -x (the same as --maxfail 1)")
        if self.target not in ("student", "reference"):
            from harness.engine.mutants import find_mutant

            find_mutant(self.module_id, self.target)  # an unknown one: the valid ids, in one line


@dataclass(frozen=True)
class LabRequest:
    """``ol lab``: the reference and every hand-written mutant against the catalog.

    ``cache``: "use" takes each cell whose key is in the lab's cache from it (``ol lab``'s
    default), "fresh" runs every cell and stores it (``--fresh``), "off" neither reads nor
    writes it (the API's default: a caller that times the lab times a whole run)."""

    module_id: str
    jobs: int | None = None  # None: every core
    exhaustive: bool = False  # run every cell, also those the coverage knows the outcome of
    seed: Seed = PUBLIC_CASES
    cache: str = "off"  # "use" | "fresh" | "off"
    executor: str = "local"  # "local" | "dask"
    scheduler: str | None = None  # a Dask scheduler's address

    def __post_init__(self) -> None:
        check_jobs(self.jobs)
        object.__setattr__(self, "seed", Seed.of(self.seed, fresh=False))
        if self.cache not in ("use", "fresh", "off"):
            raise HarnessError(f"the lab's cache must be use, fresh or off, got {self.cache!r}",
                               "e.g. --fresh (run every cell again)")
        check_executor(self.executor, self.scheduler, self.jobs)


def check_executor(executor: str, scheduler: str | None, jobs: int | None) -> None:
    """``--executor``, ``--scheduler`` and ``--jobs`` together, as ``ol grade`` and ``ol lab``
    take them."""
    if executor not in ("local", "dask"):
        raise HarnessError(f"--executor must be local or dask, got {executor!r}",
                           "e.g. --executor dask")
    if scheduler and executor != "dask":
        raise HarnessError("--scheduler goes with --executor dask",
                           "e.g. --executor dask --scheduler tcp://HOST:8786")
    if scheduler and jobs is not None:
        raise HarnessError("--jobs does not apply to an existing Dask cluster",
                           "its size is its workers' threads; drop --jobs")


@dataclass(frozen=True)
class AuditRequest:
    """``ol audit``: mutmut over the reference, and the power of the sampled tests."""

    module_id: str
    seeds: int | None = None  # per mutant of the power audit (None: the default)
    log_dir: Path | None = None  # where mutmut's log goes (None: reports/)
    compare_lab: bool = False  # --mutmut: also run ``ol lab`` in the same run, for its cost per mutant

    def __post_init__(self) -> None:
        if self.seeds is not None and self.seeds < 1:
            raise HarnessError(f"--seeds must be a positive number of seeds for --power, got "
                               f"{self.seeds}", "e.g. --power --seeds 200")


@dataclass(frozen=True)
class GateRequest:
    """``ol gate``: every module of a milestone, in dependency order, on one seed's cases."""

    milestone: str
    workspace: str | None = None
    ref_deps: bool = False
    seed: Seed = FRESH  # FRESH: draw one when the gate starts

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", Seed.of(self.seed, fresh=True))


@dataclass(frozen=True)
class GradeRequest:
    """``ol grade``: every workspace in ``submissions`` checked into a resumable gradebook."""

    module_id: str
    submissions: str
    out: str | None = None  # None: reports/grade-MODULE-FOLDER
    jobs: int | None = None
    executor: str = "local"  # "local" | "dask"
    scheduler: str | None = None  # a Dask scheduler's address
    ref_deps: bool = False
    timeout_s: float | None = None
    memory_mb: int | None = None
    submission_timeout_s: float | None = None  # None: the default (600 s)
    seed: Seed = FRESH  # FRESH: the gradebook's own, else a fresh one
    disk_mb: int | None = None  # the worker's run folder (a tmpfs); None: the default (64)

    def __post_init__(self) -> None:
        check_jobs(self.jobs)
        object.__setattr__(self, "seed", Seed.of(self.seed, fresh=True))
        if self.executor not in ("local", "dask"):
            raise HarnessError(f"--executor must be local or dask, got {self.executor!r}",
                               "e.g. --executor dask")
        if self.scheduler and self.executor != "dask":
            raise HarnessError("--scheduler goes with --executor dask",
                               "ol grade MODULE DIR --executor dask --scheduler tcp://HOST:8786")
        if self.scheduler and self.jobs is not None:
            raise HarnessError("--jobs does not apply to an existing Dask cluster",
                               "its size is its workers' threads; drop --jobs")
        if self.submission_timeout_s is not None:
            check_seconds("--submission-timeout", float(self.submission_timeout_s),
                          SUBMISSION_TIMEOUT_MAX_S, "--submission-timeout 600")
        worker_limits(self.timeout_s, self.memory_mb, self.disk_mb)


@dataclass(frozen=True)
class OwnTestsRequest:
    """``ol tests MODULE --mine PATH``: the student's own tests against correct and buggy code."""

    module_id: str
    suite: str  # a file or folder of pytest tests
    workspace: str | None = None  # where a relative ``suite`` is found
    jobs: int | None = None
    mutant_ids: tuple[str, ...] | None = field(default=None)  # None: every mutant
    exhaustive: bool = False  # every test on every bug, not only those that reach its function
    budget_s: float | None = None  # wall clock of the whole run (None: the default, 600 s)

    def __post_init__(self) -> None:
        check_jobs(self.jobs)
        if self.budget_s is not None:
            check_seconds("--budget", float(self.budget_s), SUBMISSION_TIMEOUT_MAX_S,
                          "--budget 1800")


@dataclass(frozen=True)
class StartRequest:
    """``ol start``: the stubs of ``module_id`` written into a workspace."""

    module_id: str
    workspace: str | None = None  # None: the current directory
    force: bool = False  # replace an edited file (a timestamped backup kept first)


@dataclass(frozen=True)
class DiffRequest:
    """``ol diff``: the workspace's module against the reference, once exactly it has passed."""

    module_id: str
    workspace: str | None = None  # None: found as ``ol check`` finds it
