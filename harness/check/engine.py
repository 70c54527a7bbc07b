"""``ol check``: one catalog against one target, and the record of passes that ``ol diff`` reads."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import importlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from harness.diagnosis.record import Recorder
from harness.engine.catalog import collect
from harness.engine.course import Course, Module, load_course
from harness.engine.events import Listener, Step
from harness.engine.requests import CheckRequest
from harness.engine.results import RunResult, TestResult
from harness.engine.runner import IN_PROCESS_TEST_LIMIT_S, run_catalog, select_cases
from harness.engine.target import Target
from harness.engine.workspace import (
    Submission,
    Workspace,
    content_hash,
    prepare_overlay,
    read_submission,
)
from harness.errors import HarnessError
from harness.files import file_kind
from harness.sandbox.fs import remove_tree

if TYPE_CHECKING:
    from harness.engine.isolated import Limits

PASSES_FILE = ".ol/passes.json"


def import_lazily_used(module: Module) -> None:
    """The catalog and what its tests import only when they run (its ``LAZY_IMPORTS``)."""
    with contextlib.suppress(Exception):  # the test that needs it imports it again, and reports
        catalog = importlib.import_module(module.catalog_module)
        for name in getattr(catalog, "LAZY_IMPORTS", ()):
            importlib.import_module(name)


@contextlib.contextmanager
def isolated_target(ws: Workspace, submission: Submission, module: Module, course: Course,
                    limits: Limits | None, whole_catalog: bool = False) -> Iterator[Target]:
    """A worker for the staged copy of the student's code, with the copy removed afterwards.

    The worker starts at once (an interpreter, numpy, the student's import: about 0.2 s); when the
    whole catalog is about to run, the parent meanwhile imports what its tests will need anyway
    (scipy.special for the chi-square's tail: about 0.5 s), instead of waiting idle for the worker first.
    """
    from harness.engine.isolated import IsolatedTarget

    overlay = prepare_overlay(submission)
    target = None
    try:
        target = IsolatedTarget(f"workspace {ws.root}", overlay, module.import_name,
                                module.functions, course.returns, limits)
        if whole_catalog:
            import_lazily_used(module)
        status = target.import_status()
        if status is not None and status.kind in ("syntax", "import"):
            where = f"{_shown_file(status.file, overlay, ws, module)}, line {status.line}: " \
                if status.line else ""
            raise HarnessError(f"importing {module.import_name} failed: {where}{status.message}",
                               _import_hint(status.message, module))
        yield target
    finally:
        if target is not None:
            target.close()
        remove_tree(overlay.parent)


def _shown_file(file: str | None, overlay: Path, ws: Workspace, module: Module) -> str:
    """The staged file an import failed in, as the workspace names it (``python/...``)."""
    try:
        return "python/" + Path(file or "").relative_to(overlay).as_posix()
    except ValueError:
        return ws.relative(module)


def _import_hint(message: str, module: Module) -> str:
    """What to do about a failed import: a module of the ``tinyllm`` package that is not there
    was not staged (an import ``read_submission`` could not see)."""
    if message.startswith("ModuleNotFoundError: No module named 'tinyllm."):
        return (f"a check of {module.id} runs only the contract's files of {module.id} and of the "
                f"modules it needs: move that code into python/{module.file}")
    return "fix the import, then run ol check again"


# What the last check of a module in a workspace ran, in this process: (workspace, module id) ->
# the digest of the module's file in the staged copy. ``record_pass`` records that digest, not
# the one of the file as it is after the run.
_RAN: dict[tuple[str, str], str] = {}


def ran_digest(ws: Workspace, module: Module) -> str | None:
    """The digest of the module's file in the copy the last check of it in ``ws`` ran, if any."""
    return _RAN.get((str(ws.root), module.id))


@contextlib.contextmanager
def checked_target(request: CheckRequest, ws: Workspace | None,
                   tree_digest: str | None = None) -> Iterator[tuple[Target, tuple[str, ...]]]:
    """The target a check runs against (the reference, a mutant in process, or the workspace's
    staged copy in a worker) and the notes of its staging. ``tree_digest``: the digest the
    workspace's tree must still have (``ol grade`` hashed it when it planned)."""
    course = load_course()
    module = course.module(request.module_id)
    if request.target == "reference":
        from harness.engine.own_code import reference_target

        yield reference_target(module), ()
    elif request.target == "student":
        assert ws is not None
        submission = read_submission(ws, module, course, request.ref_deps, tree_digest)
        _RAN[(str(ws.root), module.id)] = submission.module_digest
        with isolated_target(ws, submission, module, course, request.limits,
                             whole_catalog=request.pattern is None) as target:
            yield target, submission.notes
    else:
        from harness.engine.mutants import find_mutant, mutant_target

        yield mutant_target(find_mutant(module.id, request.target), module), ()


@contextlib.contextmanager
def open_target(request: CheckRequest, ws: Workspace | None) -> Iterator[Target]:
    """The target a check runs against: the reference, a mutant (in-process), or the workspace."""
    with checked_target(request, ws) as (target, _):
        yield target


def run_check(request: CheckRequest, ws: Workspace | None, events: Listener | None = None,
              tree_digest: str | None = None) -> RunResult:
    """The catalog of ``request`` against its target, telling ``events`` (``running`` once the
    target is ready, just before the first test; a ``step`` with its ``TestResult`` after each
    test, of the tests selected)."""
    course = load_course()
    module = course.module(request.module_id)
    label = str(ws.root) if ws is not None else request.target
    events = events or Listener()
    total = len(select_cases(collect(module), request.pattern))
    done = 0

    def finished_test(test: TestResult) -> None:
        nonlocal done
        done += 1
        events.step(Step(done, total, test.name, test))

    with checked_target(request, ws, tree_digest) as (target, notes):
        # The worker enforces its own limits; in process, the runner's alarm bounds each test.
        limit = None if request.target == "student" else getattr(
            request.limits, "test_timeout_s", IN_PROCESS_TEST_LIMIT_S)
        recorder = Recorder() if request.diagnose else None
        events.running()
        result = run_catalog(module, target, label, request.pattern, limit, finished_test, recorder,
                             seed=request.seed.number, maxfail=request.maxfail)
        target.recorder = None
        confinement = getattr(target, "confinement", None) if request.target == "student" else None
        if recorder is not None and result.failed and result.tests:
            # While the target is open: the diagnosis may ask a call of it again.
            result = with_diagnosis(module, result, recorder, target)
    if confinement:
        result = dataclasses.replace(result, confinement=dict(confinement))
        if result.unconfined():
            notes = (*notes, unconfined_note(result.unconfined()))
    if not result.tests:
        raise HarnessError(f"-k {request.pattern!r} selects no test of {module.id}",
                           f"`ol tests {module.id}` lists the test names")
    if notes:
        result = dataclasses.replace(result, notes=(*result.notes, *notes))
    # What the replay of this run needs (``ol gate`` and ``ol grade`` report it too).
    return dataclasses.replace(result, ref_deps=request.ref_deps, pattern=request.pattern)


def unconfined_note(missing: list[str]) -> str:
    """The one line that says what confinement the code under test ran without."""
    return f"the sandbox is partial here (missing: {', '.join(missing)}); see docs/isolation.md"


def with_diagnosis(module: Module, result: RunResult, recorder: Recorder,
                   target: Target | None = None) -> RunResult:
    """``result`` with its diagnosis; the verdict stands even if the diagnosis itself fails.
    ``target``: the target still open, of which the diagnosis may ask a call again."""
    from harness.diagnosis.determinism import asker
    from harness.diagnosis.engine import diagnose

    try:
        found = diagnose(module, result, recorder, asker(target) if target is not None else None)
    except Exception as exc:  # noqa: BLE001 - a diagnosis is advice; the verdict is decided
        note = f"ol could not diagnose this run ({type(exc).__name__}: {exc}); the verdict stands"
        return dataclasses.replace(result, notes=(*result.notes, note))
    return dataclasses.replace(result, diagnosis=found)


# -- the record of passes, for ``ol diff`` -------------------------------------------------------
#
# ``<workspace>/.ol/passes.json`` is written by the harness's own process (as root, in grading) in
# a folder the student owns, so it is read and written only through directory descriptors and
# ``O_NOFOLLOW``: a ``.ol`` or ``passes.json`` that is a symbolic link, a FIFO or a device is
# refused (one line, exit 2; ``ol check`` asks before its run, so no verdict is lost), never
# followed, never opened (``lstat`` first; a FIFO would block the read forever).

PASSES_DIR, PASSES_NAME = PASSES_FILE.split("/")
MAX_PASSES_BYTES = 1 << 20  # far more than any record; a bigger file is not ours


def _passes_path(ws: Workspace) -> Path:
    return ws.root / PASSES_FILE


def _refusal(shown: str, what: str) -> HarnessError:
    return HarnessError(f"{shown} is {what}", "ol records its passes there and follows no link, "
                        "opens no special file: remove it; the next passing ol check recreates it")


def _lstat_at(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def _open_passes_dir(ws: Workspace, create: bool) -> int | None:
    """A descriptor of ``.ol`` (created when ``create``), or None when it does not exist.

    A ``.ol`` that is a link or not a directory is a ``HarnessError``; so is one swapped for a
    link between the check and the open (``O_NOFOLLOW``)."""
    shown = str(ws.root / PASSES_DIR)
    root_fd = os.open(ws.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        info = _lstat_at(PASSES_DIR, root_fd)
        if info is None and create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(PASSES_DIR, 0o755, dir_fd=root_fd)
            info = _lstat_at(PASSES_DIR, root_fd)
        if info is None:
            return None
        if not stat.S_ISDIR(info.st_mode):
            raise _refusal(shown, file_kind(info.st_mode) + ("" if stat.S_ISLNK(info.st_mode)
                                                         else ", not a directory"))
        try:
            return os.open(PASSES_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                           dir_fd=root_fd)
        except OSError as exc:  # ELOOP, ENOTDIR: swapped meanwhile
            raise _refusal(shown, "no longer a directory") from exc
    finally:
        os.close(root_fd)


def _check_passes_file(ws: Workspace, dir_fd: int) -> os.stat_result | None:
    info = _lstat_at(PASSES_NAME, dir_fd)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise _refusal(str(_passes_path(ws)), file_kind(info.st_mode))
    return info


def check_passes_store(ws: Workspace) -> None:
    """Refuse, before a run, a ``.ol`` or ``passes.json`` ol could not use safely (one line)."""
    dir_fd = _open_passes_dir(ws, create=False)
    if dir_fd is not None:
        try:
            _check_passes_file(ws, dir_fd)
        finally:
            os.close(dir_fd)


def load_passes(ws: Workspace) -> dict:
    """The record, ``{}`` when there is none or it is unreadable; a ``HarnessError`` when ``.ol``
    or ``passes.json`` is a link or a special file (neither is followed nor opened)."""
    dir_fd = _open_passes_dir(ws, create=False)
    if dir_fd is None:
        return {}
    try:
        info = _check_passes_file(ws, dir_fd)
        if info is None:
            return {}
        try:
            fd = os.open(PASSES_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dir_fd)
        except OSError:
            return {}  # gone, or swapped for a link meanwhile (ELOOP): no record
        with os.fdopen(fd, "rb") as fh:
            now = os.fstat(fh.fileno())
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
                return {}
            raw = fh.read(MAX_PASSES_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_PASSES_BYTES else None
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):  # the student's file: a nesting bomb is no record
        return {}
    finally:
        os.close(dir_fd)


def record_pass(ws: Workspace, module: Module, source: str | bytes) -> str | None:
    """Remember that the module passed its whole catalog: the digest of its file in the staged
    copy the last check of it in ``ws`` ran in this process (``ran_digest``), whatever the file
    holds now; ``source``'s digest only when this process ran no check of it there.

    ``source`` is the file read again after the run (``check_module_file``): an error there (the
    file changed meanwhile) stops the caller before it records. Returns None (recorded, or
    recorded already), or why nothing was recorded (a read-only workspace, a ``.ol`` turned
    into a link during the run): the verdict stands either way, and ``ol diff`` asks for a pass
    again.
    """
    key = ran_digest(ws, module) or content_hash(source)
    try:
        passes = load_passes(ws)
        entry = passes.setdefault(module.id, {})
        if key in entry:
            return None  # recorded already: the first pass's time is kept
        entry[key] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        _write_passes(ws, json.dumps(passes, indent=2) + "\n")
    except HarnessError as exc:
        return exc.message
    except OSError as exc:
        return f"cannot write {_passes_path(ws)}: {exc.strerror or exc}"
    return None


def _write_passes(ws: Workspace, text: str) -> None:
    """A temporary file in ``.ol``, fsynced, renamed over ``passes.json``: all through ``.ol``'s
    descriptor, created ``O_EXCL | O_NOFOLLOW`` (the rename replaces a link, never follows it)."""
    dir_fd = _open_passes_dir(ws, create=True)
    assert dir_fd is not None
    tmp = f".{PASSES_NAME}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            _check_passes_file(ws, dir_fd)
            os.replace(tmp, PASSES_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def has_passed(ws: Workspace, module: Module, source: str | bytes) -> bool:
    """Whether a check recorded a pass of exactly these bytes (a text: its UTF-8 encoding)."""
    return content_hash(source) in load_passes(ws).get(module.id, {})
