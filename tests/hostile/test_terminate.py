"""SIGTERM and SIGHUP to ol (what ``timeout``, systemd, a CI runner's cancel and a closed terminal
send) clean up as Ctrl-C does: every run folder, process and cgroup removed, one line on stderr,
the shell's exit code (128 + the signal). Found by an attack (session 37, finding 4): ol ended at
once, exit 143, and left the staged copy of the student's code, the worker's, the slots' and the
zygotes' folders and their cgroups behind.

Only ol itself gets the signal (``kill PID``, as ``timeout`` sends it), not its process group:
whatever ol started must be ended by ol. The student's code sleeps a minute in its first call, so
the check is surely running when the signal comes.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import textwrap
import threading
import time
from pathlib import Path

import pytest
from olrun import Ol

from harness.paths import REPO_ROOT
from harness.sandbox import supervisor
from harness.sandbox.rundirs import pids_parent, v1_parent

slow = pytest.mark.slow  # each run starts a catalog and a worker or a pool (3-8 s)
UP_BOUND_S = 90.0  # until the worker is up; a few seconds on a quiet machine
END_BOUND_S = 60.0  # from the signal to ol's exit: the clean-up's waits are bounded by seconds

SLEEPER = '''

_rejection_sample = rejection_sample


def rejection_sample(p, q, m, rng, max_tries=10000):
    import time
    time.sleep(60)
    return _rejection_sample(p, q, m, rng, max_tries)
'''


def sleeper(root: Path) -> Path:
    """The reference workspace, its rejection_sample waiting a minute before it answers."""
    shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    module = root / "python" / "tinyllm" / "prob" / "rejection.py"
    module.write_text(module.read_text() + textwrap.dedent(SLEEPER))
    return root


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                ppid = int(stat[stat.rindex(")") + 2:].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pids: set[int]) -> list[int]:
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if "zombie" not in Path(f"/proc/{pid}/status").read_text().lower():
                out.append(pid)
    return out


def cgroups_of(pids: set[int]) -> list[str]:
    """The pids and memory cgroups that any of ``pids`` made (``ol-*-PID.START...``)."""
    found = []
    for parent in (pids_parent(), v1_parent("memory")):
        if parent is None or not os.path.isdir(parent):
            continue
        for name in os.listdir(parent):
            if name.startswith("ol-") and any(f"-{pid}." in name for pid in pids):
                found.append(os.path.join(parent, name))
    return found


def wait_until(what, bound_s: float = UP_BOUND_S) -> None:
    due = time.monotonic() + bound_s
    while not what():
        assert time.monotonic() < due, "ol did not get as far as the test needs"
        time.sleep(0.1)


def read_until(run: Ol, text: str, bound_s: float = UP_BOUND_S) -> str:
    """ol's stdout until it holds ``text`` (the rest ``run.wait`` reads)."""
    got, due = b"", time.monotonic() + bound_s
    fd = run.proc.stdout.fileno()
    while text.encode() not in got:
        assert time.monotonic() < due, f"ol did not get as far as the test needs: {got!r}"
        if select.select([fd], [], [], 0.2)[0]:
            block = os.read(fd, 4096)
            assert block, f"ol ended before the test could stop it: {got!r}"
            got += block
    return got.decode(errors="replace")


def stop(run: Ol, *signals: int, gap_s: float = 0.0) -> tuple[set[int], list[str]]:
    """Send ``signals`` to ol alone (not its group), ``gap_s`` apart; wait for it to end. What ran
    below ol and the cgroups there were just before the signal."""
    time.sleep(0.5)  # the first test's call is running
    below = descendants(run.proc.pid)
    cgroups = cgroups_of(below | {run.proc.pid})
    for sig in signals:
        with contextlib.suppress(ProcessLookupError):
            os.kill(run.proc.pid, sig)
        time.sleep(gap_s)
    run.wait(END_BOUND_S)
    return below, cgroups


def assert_clean(run: Ol, sig: int, below: set[int], cgroups: list[str]) -> None:
    name = signal.Signals(sig).name
    assert run.rc == 128 + sig, run.text
    lines = run.err.splitlines()
    assert lines[-1:] == [f"ol: interrupted ({name})"], run.text
    assert "Traceback" not in run.err, run.text
    due = time.monotonic() + 10
    while alive(below) and time.monotonic() < due:
        time.sleep(0.1)
    assert alive(below) == [], f"processes outlived ol: {alive(below)}"
    assert run.left() == [], run.text
    assert [c for c in cgroups if os.path.exists(c)] == []


@slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_check_cleans_up_as_ctrl_c_does(tmp_path, sig):
    ws = sleeper(tmp_path / "ws")
    run = Ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    try:
        read_until(run, "test_hand_example")  # the first test is done: the second one sleeps
        below, cgroups = stop(run, sig)
    finally:
        run.kill()
    assert_clean(run, sig, below, cgroups)


@slow
def test_signals_that_keep_coming_during_the_clean_up_do_not_cut_it_short(tmp_path):
    # A burst: the first stops the check, the rest arrive while it kills and removes the worker.
    ws = sleeper(tmp_path / "ws")
    run = Ol(tmp_path, "check", "M07.6", "--workspace", str(ws))
    try:
        read_until(run, "test_hand_example")
        burst = [signal.SIGTERM] + [signal.SIGTERM, signal.SIGHUP] * 15
        below, cgroups = stop(run, *burst, gap_s=0.005)
    finally:
        run.kill()
    assert_clean(run, signal.SIGTERM, below, cgroups)


@slow
def test_a_terminated_grade_ends_its_slots_and_their_workers(tmp_path):
    subs = tmp_path / "subs"
    for name in ("s1", "s2"):
        sleeper(subs / name)
    out = tmp_path / "gb"
    run = Ol(tmp_path, "grade", "M07.6", str(subs), "--out", str(out), "--jobs", "2")

    def both_slots_check() -> bool:
        names = os.listdir(run.tmp)
        return (sum(n.startswith("ol-slot-") for n in names) == 2
                and sum(n.startswith("ol-worker-") for n in names) == 2)

    try:
        wait_until(both_slots_check)
        below, cgroups = stop(run, signal.SIGTERM)
    finally:
        run.kill()
    assert_clean(run, signal.SIGTERM, below, cgroups)
    # No file half-written in the gradebook's folder (a report is written to a temporary file,
    # then renamed): whatever is there is whole.
    assert [p.name for p in out.rglob(".*.tmp")] == []


@slow
def test_a_terminated_lab_stops_its_forked_processes_without_a_word_from_them(tmp_path):
    # ol lab runs its mutants in a pool of processes forked from ol, which the pool ends with
    # SIGTERM: they must die of it, not raise what ol raises (a traceback from each).
    run = Ol(tmp_path, "lab", "M07.1", "--jobs", "2", env={"OL_NO_CACHE": "1"})
    try:
        wait_until(lambda: len(descendants(run.proc.pid)) >= 2)
        below, cgroups = stop(run, signal.SIGTERM)
    finally:
        run.kill()
    assert_clean(run, signal.SIGTERM, below, cgroups)
    assert run.err == "ol: interrupted (SIGTERM)\n", run.text


@slow
def test_ctrl_c_of_a_lab_is_one_line_not_one_traceback_per_forked_process(tmp_path):
    # Ctrl-C goes to the whole process group, the pool's forked processes too: they leave it to
    # ol (which ends the pool), where each printed "Process ForkPoolWorker-N: ... Traceback".
    run = Ol(tmp_path, "lab", "M07.6", "--jobs", "2", env={"OL_NO_CACHE": "1"})
    try:
        wait_until(lambda: len(descendants(run.proc.pid)) >= 2)
        time.sleep(1.0)  # the forked processes are in their mutants' tests (M07.6's take seconds)
        below = descendants(run.proc.pid)
        os.killpg(run.proc.pid, signal.SIGINT)
        run.wait(END_BOUND_S)
    finally:
        run.kill()
    assert run.rc == 130 and run.err == "ol: interrupted\n", run.text
    assert alive(below) == [] and run.left() == []


@slow
def test_a_terminated_mine_run_ends_its_fork_server_and_the_test_that_hangs(tmp_path):
    # The student's own suite hangs (and ignores SIGTERM): the fork server and its forks must go.
    suite = REPO_ROOT / "tests" / "own_tests" / "suites" / "hostile_hang"
    run = Ol(tmp_path, "tests", "M07.6", "--mine", str(suite), "--jobs", "2")
    try:
        wait_until(lambda: len(descendants(run.proc.pid)) >= 3)  # the server and a fork or two
        below, cgroups = stop(run, signal.SIGHUP)
    finally:
        run.kill()
    assert_clean(run, signal.SIGHUP, below, cgroups)


class Stopped(Exception):
    pass


def test_a_signal_during_a_kill_waits_for_its_end_even_when_another_thread_gets_it():
    # The main thread blocks the signal while it kills a tree; the kernel then gives a signal sent
    # to the process to another thread (ol always has one: the pipe's drain), and Python runs the
    # handler in the main thread all the same: inside the kill, unless the handler waits too.
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are the main thread's")
    stop_waiting = threading.Event()
    other = threading.Thread(target=stop_waiting.wait, args=(10,), daemon=True)
    other.start()

    def stopped(signum, frame):
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stopped)
    reached = []
    try:
        with pytest.raises(Stopped), supervisor._signals_held():
            os.kill(os.getpid(), signal.SIGTERM)  # to the process, as `kill PID` sends it
            for _ in range(200):  # bytecodes and sleeps: where a handler would run
                time.sleep(0.001)
            reached.append("the end of the kill")
        assert reached == ["the end of the kill"]
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop_waiting.set()
        other.join(10)
