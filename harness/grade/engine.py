"""``ol grade MODULE SUBMISSIONS_DIR``: every workspace in a folder checked, into a gradebook.

Each subdirectory is one student's workspace, checked exactly as ``ol check MODULE --workspace
DIR [--ref-deps]`` checks it (the student's code in an isolated worker with the same limits), by
long-lived grading slots (``harness.grade.slots``): ``--jobs`` of them on this machine, or one per
Dask worker thread (``harness.grade.dask_executor``). The gradebook (``harness.grade.gradebook``)
is written after every graded submission, so a run killed at any point continues where it stopped when started
again; a submission whose ``python/`` tree and grading context are unchanged is not graded again.

Every submission of a gradebook is checked on the cases of one seed: a fresh run seed for a new
gradebook (hidden cases), ``--seed N`` or ``--seed public`` to choose. The seed is recorded in
the gradebook, so a run that continues it (after a kill, or to grade new submissions) continues on
that seed; a ``--seed`` that differs from it is refused: a gradebook never mixes seeds.

Exit codes: 0 when every submission has a verdict (pass, fail or error: the students' results
are in the gradebook, not in the exit code), 2 for a usage or setup error of the run itself, 3
when the harness could not grade some submission (verdict ``internal``; those are graded again
on the next run).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.engine.course import Module, load_course
from harness.engine.events import QUIET, Listener, Step
from harness.engine.requests import GradeRequest
from harness.engine.results import RunResult, Verdict
from harness.engine.seeding import Seed
from harness.errors import EXIT_INTERNAL, EXIT_PASS, HarnessError, HostError
from harness.escape import valid_data, valid_text
from harness.grade.gradebook import (
    JSON_NAME,
    VERDICTS,
    Gradebook,
    SavedGradebook,
    open_gradebook,
    read_gradebook,
    refusal_digest,
)
from harness.grade.integrity import identity
from harness.grade.row import GradeRow, SlotReply
from harness.grade.slots import SlotRequest
from harness.sandbox.limits import Limits
from harness.sandbox.staging import stage, text_of_name

DEFAULT_SUBMISSION_TIMEOUT_S = 600.0
LOCK_NAME = ".ol-grade.lock"
STAGING_NAME = ".staging"  # in the gradebook's folder: archives unpacked, loose files made workspaces
MAX_RUN_NAME = 200  # bytes of a runs/NAME.json name; longer names are cut and given a hash
GRADESCOPE_DIR = "gradescope"  # gradescope/NAME.json, one per submission in the folder


@dataclass(frozen=True)
class Job:
    """One submission to grade: its name (as text), folder, content hash and (for Dask) its
    staged files."""

    name: str
    path: Path
    digest: str
    files: dict[str, bytes]
    identity: dict[str, str] | None = None  # the module file's (``harness.grade.integrity``)
    shape: str = "workspace"  # how it came: workspace, folder, zip, tar.gz, file

    def request(self, module_id: str, settings: dict[str, Any], workspace: str) -> SlotRequest:
        limits = Limits(call_timeout_s=settings["call_timeout_s"], memory_mb=settings["memory_mb"],
                        disk_mb=settings.get("disk_mb", Limits.disk_mb))
        return SlotRequest(self.name, module_id, workspace, bool(settings["ref_deps"]), limits,
                           settings["seed"], self.digest)


@dataclass
class GradePlan:
    """What a grading run does (``plan``): the jobs to check, the rows unchanged, the rows decided
    without a check, the entries that are no submission."""

    jobs: list[Job]
    unchanged: list[str]
    rejected: list[GradeRow]  # rows decided without a check (not a workspace, too big)
    skipped: list[dict[str, str]]  # entries of the folder that are no submission, and why


def plan(folder: Path, book: Gradebook, staging: Path, module_file: str,
         keep_files: bool = False) -> GradePlan:
    """What to grade now: every submission without a current row in the gradebook.

    The submissions are found in every shape (``harness.grade.intake``: workspaces, folders
    holding only the module's file, ``.zip`` and ``.tar.gz`` archives and loose ``.py`` files,
    the others built or unpacked into ``staging``); what is no submission is in ``skipped``.
    Each submission's ``python/`` tree is staged here (``harness.sandbox.staging``) whatever the
    executor: a tree it refuses, or a submission intake could not take (a bad archive), gets its
    row now, keyed by the refusal, so both executors write the same row and a rerun finds it
    current. The files are kept in the jobs only when they travel with them (Dask)."""
    from harness.grade.intake import intake

    found, skipped = intake(folder, module_file, staging, own=book.out)
    result = GradePlan([], [], [], [{"name": s.name, "why": s.why} for s in skipped])
    for sub in found:
        name, path = sub.name, sub.path
        if sub.problem is not None or path is None:
            problem = sub.problem or f"{name} cannot be checked"
            _refused(result, book, name, problem, sub.shape)
            continue
        try:
            staged = stage(path)
        except HostError as exc:  # the machine's failure, not the submission's: no row kept
            result.rejected.append(GradeRow.internal(exc.message, name, sub.shape))
            continue
        except HarnessError as exc:
            _refused(result, book, name, renamed_text(exc.message, path, name), sub.shape)
            continue
        ident = identity(staged.files.get(f"python/{module_file}"))
        if book.is_current(name, staged.digest):
            result.unchanged.append(name)
            book.rows[name] = book.rows[name].with_(identity=ident)  # of this run's Python
        else:  # intake took it as a workspace: python/tinyllm is there, and no link (staged)
            result.jobs.append(Job(name, path, staged.digest, staged.files if keep_files else {},
                                   ident, sub.shape))
    return result


def _refused(result: GradePlan, book: Gradebook, name: str, problem: str, shape: str) -> None:
    """A submission that cannot be checked: its ``error`` row, keyed by the refusal."""
    digest = refusal_digest(problem)
    if book.is_current(name, digest):
        result.unchanged.append(name)
    else:
        result.rejected.append(GradeRow.refused(name, digest, problem, shape))


def renamed_text(message: str, path: Path, name: str) -> str:
    """A message about ``path`` (a folder in ol's staging, for an archive or a loose file) as
    the submission ``name``: the same words whichever folder was read."""
    return message.replace(str(path), name)


def shown(path: Path) -> str:
    """A path as a line shows it: a submission's name may hold anything."""
    return valid_text(str(path))


# -- executors: each calls ``done(job, row)`` in the calling thread as submissions finish -----------

Done = Callable[[Job, SlotReply], None]


def run_local(module: Module, jobs: list[Job], settings: dict[str, Any], workers: int,
              done: Done) -> None:
    """``workers`` slots on this machine, fed by as many threads (they only wait on pipes)."""
    from harness.grade.slots import SlotPool

    pool = SlotPool(module.id)
    budget = settings["submission_timeout_s"]
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ol-grade") as ex:
            futures = {ex.submit(pool.grade, j.request(module.id, settings, str(j.path)), budget): j
                       for j in jobs}
            try:
                for future in as_completed(futures):
                    done(futures[future], future.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                pool.close()  # the busy threads see their slot die and return at once
                raise
    finally:
        pool.close()


# -- the command -------------------------------------------------------------------------------

@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """One ``ol grade`` at a time per gradebook (the lock dies with the process that holds it)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise HarnessError(f"cannot write the gradebook in {shown(out)}: "
                           f"{(exc.strerror or str(exc)).lower()}",
                           "give a writable folder with --out") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HarnessError(f"another ol grade is writing the gradebook in {out}",
                               "wait for it to finish, or give another --out") from None
        yield
    finally:
        os.close(fd)


def _settings(request: GradeRequest) -> dict[str, Any]:
    from harness.engine.limits import worker_limits

    limits = worker_limits(request.timeout_s, request.memory_mb, request.disk_mb)
    budget = request.submission_timeout_s
    if budget is None:
        budget = DEFAULT_SUBMISSION_TIMEOUT_S
    return {"ref_deps": bool(request.ref_deps), "call_timeout_s": limits.call_timeout_s,
            "memory_mb": limits.memory_mb, "disk_mb": limits.disk_mb,
            "submission_timeout_s": budget}


@dataclass(frozen=True)
class GradePlanned:
    """What a grading run tells its listener as it starts (``harness.engine.events``): how many
    submissions, how many unchanged since graded, how many to check and where, on which cases
    (``replay`` checks one submission again; ``resumed``: the gradebook's seed continued). Each
    submission graded is then a ``step`` with its ``GradeRow``; an entry of the folder that is no
    submission a ``warned`` (``skipped NAME: why``), before the start."""

    module_id: str
    folder: Path
    names: int
    unchanged: int
    to_check: int
    where: str
    seed: int | None
    replay: str
    resumed: bool


@dataclass(frozen=True)
class GradeOutcome:
    """A grading run: the gradebook, the submissions it covered, how many were checked now."""

    book: Gradebook
    names: frozenset[str]
    checked: int
    seconds: float

    def rows(self) -> list[GradeRow]:
        return [self.book.rows[n] for n in sorted(self.names) if n in self.book.rows]

    def counts(self) -> dict[str, int]:
        return {v.value: sum(r.verdict == v for r in self.rows()) for v in VERDICTS}

    def unconfined(self) -> dict[str, list[str]]:
        """Per submission of this run whose worker lacked part of the sandbox, what it lacked."""
        return {r.submission: list(r.partial_sandbox) for r in self.rows() if r.partial_sandbox}

    def result_of(self, name: str) -> RunResult | None:
        """The whole run of submission ``name`` as ``runs/NAME.json`` keeps it; for a row with
        no run (a setup error, a refusal, a check past its budget) a result that could not start,
        with the row's message; None for an ``internal`` row (not graded) or a run file that is
        missing or unreadable (graded again by no one: the row stands, its results file waits)."""
        import json

        row = self.book.rows.get(name)
        if row is None or row.verdict == Verdict.INTERNAL:
            return None
        path = self.book.out / "runs" / run_file_name(name)
        if row.tests:
            try:
                return RunResult.from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
            except (OSError, ValueError, HarnessError):
                return None
        return RunResult(self.book.module, name, f"workspace {name}", (), seed=self.book.seed,
                         not_run=len(self.book.tests),
                         error=row.message or "the check could not start",
                         points={t: self.book.points.get(t, 1.0) for t in self.book.tests})

    @property
    def exit_code(self) -> int:
        """0 when every submission has a verdict, 3 when some could not be graded."""
        return EXIT_INTERNAL if self.counts()[Verdict.INTERNAL] else EXIT_PASS


def _needs_dask() -> None:
    """``--executor dask`` without dask and distributed installed: a usage error, said at once."""
    missing = [name for name in ("dask", "distributed") if importlib.util.find_spec(name) is None]
    if missing:
        raise HarnessError(f"--executor dask needs {' and '.join(missing)}, not installed here",
                           "install the dask extra (python -m pip install -e '.[dask]') or grade "
                           "with --executor local")


def run_grade(request: GradeRequest, listener: Listener | None = None) -> GradeOutcome:
    """Grade every submission of ``request.submissions`` into its gradebook (resumed if any)."""
    from harness.engine.catalog import collect
    from harness.files import default_reports_dir
    from harness.gate.engine import catalog_problem

    module = load_course().module(request.module_id)
    problem = catalog_problem(module)
    if problem is not None:
        raise HarnessError(problem, "grade a module that has a catalog")
    if request.executor == "dask":
        _needs_dask()  # before anything is recorded: no seed written, no gradebook begun
    folder = Path(request.submissions).expanduser()
    if not folder.is_dir():
        raise HarnessError(f"{request.submissions} is not a folder",
                           "give the folder that holds one workspace per student")
    folder = folder.resolve()
    settings = _settings(request)
    # Absolute, not resolved (a link stays the link check_out judges): the grading slots and a
    # Dask worker run in folders of their own, where a relative gradebook (and its .staging,
    # which holds the unpacked archives and loose files) would not be found.
    out = Path(os.path.abspath(Path(request.out).expanduser() if request.out
                               else default_reports_dir() / f"grade-{module.id}-{folder.name}"))
    check_out(out, folder)
    tests = [info.name for info, _ in collect(module)]
    wanted = Seed.of(request.seed, fresh=True)
    given, asked = not wanted.fresh, wanted.number
    with locked(out):
        record = read_gradebook(out, module)
        seed = seed_of_run(record, given, asked, out)
        settings = dict(settings, seed=seed)
        book = open_gradebook(out, module, folder, settings, tests, record)
        return _grade(request, module, folder, book, settings, listener or QUIET,
                      resumed=record is not None)


def seed_of_run(record: SavedGradebook | None, given: bool, asked: int | None, out: Path) -> int | None:
    """The seed this run grades on: the gradebook's own when it continues one (a ``--seed`` that
    differs is refused in one line), else ``asked`` when ``--seed`` was ``given``, else a fresh
    one."""
    from harness.engine.seeding import cases_words, fresh_seed

    if record is None:
        return asked if given else fresh_seed()
    if given and asked != record.seed:
        raise HarnessError(
            f"{shown(out / JSON_NAME)} holds grades on {cases_words(record.seed)}, not on "
            f"{cases_words(asked)}: a gradebook never mixes seeds",
            f"drop --seed to continue it on its own, or give another --out to grade on "
            f"{cases_words(asked)}")
    return record.seed


def check_out(out: Path, folder: Path) -> None:
    """``--out`` must be a folder that is not a submission, nor inside one, nor ``folder``.

    A new folder among the submissions (or one holding a gradebook already, or empty) is fine:
    ``plan`` skips it. A hidden one (``SUBS/.grades``) is never a submission."""
    where = shown(out)
    if out.exists() and not out.is_dir():
        raise HarnessError(f"--out {where} is a file, not a folder",
                           "give a folder for the gradebook (it is created if missing)")
    try:
        parts = out.resolve().relative_to(folder).parts
    except ValueError:
        return  # outside the submissions
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise HarnessError(f"--out {where} cannot be resolved: {exc}",
                           "give a folder for the gradebook") from None
    hint = ("grading never writes into a submission: give a folder outside the submissions, "
            "or a new one among them")
    if not parts:
        raise HarnessError(f"--out {where} is the submissions folder itself", hint)
    if parts[0].startswith("."):
        return
    name = text_of_name(parts[0])
    if len(parts) > 1:
        raise HarnessError(f"--out {where} is inside the submission {name}", hint)
    first = folder / parts[0]
    if first.is_dir() and not first.is_symlink() and not _holds_a_gradebook(first):
        raise HarnessError(f"--out {where} is the submission {name}", hint)


def _holds_a_gradebook(path: Path) -> bool:
    """Whether ``path`` is a gradebook's folder already, or empty (a new one)."""
    try:
        with os.scandir(path) as entries:
            names = {e.name for e in entries}
    except OSError:
        return False
    return not names or JSON_NAME in names or LOCK_NAME in names


def _grade(request: GradeRequest, module: Module, folder: Path, book: Gradebook,
           settings: dict[str, Any], events: Listener, resumed: bool = False) -> GradeOutcome:
    with _staging(book.out) as staging:
        return _grade_staged(request, module, folder, book, settings, events, resumed, staging)


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """ol's own folder for the submissions that are not workspaces (unpacked archives, loose
    files): ``.staging`` in the gradebook's folder, under its lock, emptied when the run starts
    (a run that was killed left it) and removed when it ends."""
    import shutil

    path = out / STAGING_NAME
    shutil.rmtree(path, ignore_errors=True)
    try:
        path.mkdir(mode=0o700)
    except OSError as exc:
        raise HarnessError(f"cannot make {shown(path)}: {(exc.strerror or str(exc)).lower()}",
                           "give a writable folder with --out") from None
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _grade_staged(request: GradeRequest, module: Module, folder: Path, book: Gradebook,
                  settings: dict[str, Any], events: Listener, resumed: bool,
                  staging: Path) -> GradeOutcome:
    dask = request.executor == "dask"
    todo = plan(folder, book, staging, module.file, keep_files=dask)
    book.skipped = todo.skipped
    for entry in todo.skipped:
        events.warned(f"skipped {entry['name']}: {entry['why']}")
    names = {*todo.unchanged, *(r.submission for r in todo.rejected),
             *(j.name for j in todo.jobs)}
    book.mark_present(names)  # before any row is recorded: every save says who is gone
    _forget_gradescope(book)
    workers = request.jobs or os.cpu_count() or 1
    where = (f"Dask scheduler {request.scheduler}" if request.scheduler else
             f"a local Dask cluster of {workers}" if dask else f"{workers} jobs")
    events.started(GradePlanned(module.id, folder, len(names), len(todo.unchanged), len(todo.jobs),
                                where, book.seed, book.replay, resumed))
    total, graded = len(names) - len(todo.unchanged), 0

    def tell(name: str) -> None:
        nonlocal graded
        graded += 1
        events.step(Step(graded, total, name, book.rows[name]))

    for row in todo.rejected:
        book.record(row)
        tell(row.submission)

    def done(job: Job, reply: SlotReply) -> None:
        reply = reply.renamed(str(job.path), job.name).cleaned()  # Dask named it on its worker
        if reply.run is not None:
            _write_run(book.out, job.name, reply.run)
        book.record(reply.row.with_(submission=job.name, content_hash=job.digest,
                                    identity=job.identity, shape=job.shape))
        tell(job.name)

    start = time.perf_counter()
    if todo.jobs:
        if dask:
            from harness.grade.dask_executor import run_dask

            run_dask(module, todo.jobs, settings, request.scheduler, workers, done)
        else:
            run_local(module, todo.jobs, settings, min(workers, len(todo.jobs)), done)
    else:  # nothing checked: the views still follow this run (identities, flags, skipped)
        book.save()
    events.finished()
    return GradeOutcome(book, frozenset(names), len(todo.jobs), time.perf_counter() - start)


def _write_run(out: Path, name: str, run: dict[str, Any]) -> None:
    """The submission's whole run (every failure message), as ``ol check --json`` writes it."""
    import json

    from harness.files import write_atomic

    write_atomic(out / "runs" / run_file_name(name),
                 json.dumps(valid_data(run), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def run_file_name(name: str) -> str:
    """``NAME.json``; a name over ``MAX_RUN_NAME`` bytes is cut, and a hash of it keeps it apart
    from the others (a file name has at most 255 bytes, and ``write_atomic`` adds to it)."""
    import hashlib

    raw = valid_text(name).encode("utf-8")
    if len(raw) <= MAX_RUN_NAME:
        return f"{valid_text(name)}.json"
    cut = raw[:MAX_RUN_NAME - 17].decode("utf-8", "ignore")
    return f"{cut}-{hashlib.sha256(raw).hexdigest()[:16]}.json"


def _forget_gradescope(book: Gradebook) -> None:
    """Remove ``gradescope/NAME.json`` of each row whose submission is no longer in the folder:
    an LMS upload of that folder must not grade it. Only ol's own file of that name, a regular
    file (never a link, never through one: the folder is opened without following links), and
    only when no submission in the folder has that file name; ``unlink`` is atomic. Under the
    gradebook's lock; a run killed before it leaves the file to the next run."""
    import stat

    gone = {run_file_name(n) for n in book.absent} - {
        run_file_name(n) for n, r in book.rows.items() if r.present}
    if not gone:
        return
    try:
        fd = os.open(book.out / GRADESCOPE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return  # no gradescope/ (nothing was written yet), or not ol's folder
    try:
        for file_name in sorted(gone):
            try:
                if stat.S_ISREG(os.stat(file_name, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(file_name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise HarnessError(f"cannot remove {shown(book.out / GRADESCOPE_DIR / file_name)}: "
                                   f"{(exc.strerror or str(exc)).lower()}",
                                   "give a writable folder with --out") from None
    finally:
        os.close(fd)
