"""Pre-started workers (issue #27 item 1): a worker forked by the zygote is confined exactly as
one started as a fresh interpreter, is the caller's child, holds nothing of the caller, and a
zygote that dies or a hostile import costs nothing but the saving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from harness.engine.isolated import IsolatedTarget, Limits
from harness.engine.target import TargetCrashed, TargetTimedOut
from harness.sandbox import prestarted
from harness.sandbox.prestarted import Adopted
from harness.sandbox.rundirs import sweep_folders

PROBES = """
import os, sys

def add(x):
    return x + 1

def ppid():
    return os.getppid()

def environ_names():
    return sorted(os.environ)

def harness_modules():
    return sorted(m for m in sys.modules if m.startswith(("harness", "reference", "ol_")))

def spin():
    while True:
        pass
"""


def package(root: Path, source: str) -> Path:
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(source))
    return root / "python"


def target(python: Path, limits: Limits | None = None) -> IsolatedTarget:
    return IsolatedTarget("t", python, "tinyllm.prob.rejection",
                          ("add", "ppid", "environ_names", "harness_modules", "spin"), {}, limits)


def launched_by_zygote(t: IsolatedTarget) -> bool:
    worker = t._worker
    return worker is not None and isinstance(worker.process.proc, Adopted)


@pytest.fixture
def zygote():
    prestarted.start()
    zygote = prestarted.current()
    assert zygote is not None and zygote.alive()
    yield zygote
    prestarted.stop()


def ol_folders() -> set[str]:
    tmp = os.environ.get("TMPDIR", "/tmp")
    return {n for n in os.listdir(tmp) if n.startswith("ol-")}


def test_a_worker_from_the_zygote_is_confined_as_a_fresh_one(tmp_path):
    python = package(tmp_path, PROBES)
    with target(python) as fresh:
        assert fresh.map("add", [(1,)])[0].value == 2
        assert not launched_by_zygote(fresh)
        confinement = fresh.confinement
    prestarted.start()
    try:
        with target(python) as forked:
            assert forked.map("add", [(1,), (2,)])[0].value == 2
            assert launched_by_zygote(forked)
            assert forked.confinement == confinement
            assert forked.sandboxed == fresh.sandboxed and forked.contained == fresh.contained
    finally:
        prestarted.stop()
    if os.geteuid() == 0:
        assert confinement["view"] and confinement["nobody"] and confinement["no_caps"]


def test_the_worker_is_the_callers_child_not_the_zygotes(tmp_path, zygote):
    with target(package(tmp_path, PROBES)) as t:
        t.map("add", [(1,)])
        pid = t._worker.process.pid
        stat = Path(f"/proc/{pid}/stat").read_text()
        assert int(stat[stat.rindex(")") + 2:].split()[1]) == os.getpid()
        assert os.getsid(pid) == pid  # a session of its own, as Popen(start_new_session) gives


def memory_holds(pid: int, needle: bytes) -> bool:
    """Whether any readable mapping of ``pid`` holds ``needle`` (read through /proc/PID/mem)."""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except (OSError, OverflowError, ValueError):
                continue
    return False


def test_the_code_finds_nothing_of_the_caller(tmp_path):
    """The zygote is a fresh interpreter: what its caller holds (a run seed, root's environment)
    is nowhere in its memory, so nowhere in a worker it forks. The scan is shown to find the
    secret where it is (this process)."""
    secret = ("ol-secret-" + os.urandom(8).hex()).encode()
    os.environ["OL_TEST_SECRET"] = secret.decode()  # in the caller's environment and memory
    try:
        prestarted.start()
        zygote = prestarted.current()
        assert zygote is not None and zygote.alive()
        assert memory_holds(os.getpid(), secret)  # the scan finds it where it is
        assert not memory_holds(zygote.process.pid, secret)
        with target(package(tmp_path, PROBES)) as t:
            assert launched_by_zygote(t)
            assert t.map("harness_modules", [()])[0].value == []
            assert t.map("environ_names", [()])[0].value == sorted(
                ["PATH", "HOME", "TMPDIR", "LANG", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "MKL_NUM_THREADS", *[n for n in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                                      if n in os.environ]])
    finally:
        del os.environ["OL_TEST_SECRET"]
        prestarted.stop()


def test_a_dead_zygote_costs_only_the_saving(tmp_path, zygote):
    os.kill(zygote.process.pid, signal.SIGKILL)
    with target(package(tmp_path, PROBES)) as t:
        assert t.map("add", [(41,)])[0].value == 42
        assert not launched_by_zygote(t)


def test_a_hostile_import_does_not_spoil_the_next_worker(tmp_path, zygote):
    hostile = package(tmp_path / "hostile", """
        import os, signal
        for pid in range(2, 4096):  # everything it can see, its parent and the zygote included
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for fd in range(3, 256):
            try:
                os.close(fd)
            except OSError:
                pass
        os._exit(3)
    """)
    with target(hostile) as t, pytest.raises(TargetCrashed, match="exited with code 3"):
        t.map("add", [(1,)])
    assert zygote.alive()
    with target(package(tmp_path / "next", PROBES)) as t:
        assert t.map("add", [(1,)])[0].value == 2
        assert launched_by_zygote(t)


def test_a_hung_worker_is_killed_and_reaped(tmp_path, zygote):
    limits = Limits(call_timeout_s=1.0, test_timeout_s=5.0)
    with target(package(tmp_path, PROBES), limits) as t:
        t.begin_test()
        assert launched_by_zygote(t)
        pid = t._worker.process.pid
        with pytest.raises(TargetTimedOut):
            t.map("spin", [()])
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped: not even a zombie


def test_nothing_is_left_behind(tmp_path):
    before = ol_folders()
    prestarted.start()
    zygote = prestarted.current()
    with target(package(tmp_path, PROBES)) as t:
        t.map("add", [(1,)])
    pid = zygote.process.pid
    prestarted.stop()
    assert prestarted.current() is None
    assert not Path(f"/proc/{pid}").exists()
    assert ol_folders() == before


@pytest.mark.slow
def _state(pid: int) -> str:
    """The state letter of ``/proc/PID/stat`` (``Z``: a zombie), or ``gone``."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return "gone"


def test_a_zygote_exits_when_its_caller_dies(tmp_path):
    root = str(Path(__file__).resolve().parents[2])
    code = (f"import sys, time; sys.path.insert(0, {root!r}); "
            "from harness.sandbox import prestarted; prestarted.start(); z = prestarted.current(); "
            "z.alive(); print(z.process.pid, flush=True); time.sleep(60)")
    caller = subprocess.Popen([sys.executable, "-c", code],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert caller.stdout is not None
        zygote_pid = int(caller.stdout.readline())
        caller.kill()
        caller.wait()
        # Exited: gone, or a zombie of whoever adopted it (this process, if another test made
        # it a subreaper, never reaps it: waiting for it to go would wait out the deadline).
        deadline = time.monotonic() + 10
        while (state := _state(zygote_pid)) not in ("gone", "Z") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert state in ("gone", "Z")  # exited (a zombie at most, never running)
        # The killed caller's folder is left for the next run's sweep (as after any SIGKILL):
        # that sweep removes it, and here it must, or the session reports it left behind.
        left = [e.name for e in os.scandir(tempfile.gettempdir())
                if e.name.startswith(f"ol-zygote-{caller.pid}.")]
        assert len(left) == 1, left
        assert sweep_folders(owner=left[0].split("-")[2]) == left
    finally:
        caller.kill()


def test_a_grading_slot_starts_its_workers_from_a_zygote():
    from harness.grade.slots import Slot

    slot = Slot("M07.6")
    try:
        deadline = time.monotonic() + 60
        found = []
        while not found and time.monotonic() < deadline:
            for name in os.listdir("/proc"):
                if name.isdigit():
                    try:
                        stat = Path(f"/proc/{name}/stat").read_text()
                        cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
                    except OSError:
                        continue
                    ppid = int(stat[stat.rindex(")") + 2:].split()[1])
                    if ppid == slot.process.pid and b"zygote.py" in cmdline:
                        found.append(int(name))
            time.sleep(0.1)
        assert found, "the slot started no zygote"
    finally:
        slot.close()
