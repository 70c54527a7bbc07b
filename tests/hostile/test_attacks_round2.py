"""Round-2 attacks on ol's sandbox (issue #24 rebuild). Each test asserts the SECURE outcome: a
failing test is an attack that got through. Every attack runs ol end to end (``ol check`` or
``ol tests --mine``) on a hostile workspace or suite in pytest's tmp_path (run with
TMPDIR=/w/s/a2) and is judged from ol's own --json report.

Written by an attacker who did not write the sandbox, against its final code (#24): the first
two got through (runs of a --mine suite shared a network and a PID namespace) and the memfd one
took the machine's memory (no memory cgroup) before the fixes; all hold now.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from olrun import Ol

from harness.paths import REPO_ROOT as REPO

pytestmark = pytest.mark.slow
DATA = Path(__file__).resolve().parent / "round2"  # the attackers' suites and module tails
BOUND_S = 240
OLX = re.compile(r"OLX(.*?)OLX", re.S)


def ol(tmp: Path, *args: str) -> Ol:
    return Ol(tmp, *args).wait(BOUND_S)


def mine(tmp: Path, files: dict[str, str], jobs: str = "2") -> dict:
    suite = tmp / "suite"
    suite.mkdir()
    for name, text in files.items():
        (suite / name).write_text(text)
    report = tmp / "mine.json"
    run = ol(tmp, "tests", "M07.6", "--mine", str(suite), "--json", str(report), "--jobs", jobs)
    assert report.exists(), f"no report (exit {run.rc})\n{run.out[-2000:]}{run.err[-2000:]}"
    return json.loads(report.read_text())


def check(tmp: Path, appended: str, *extra: str, killed_ok: bool = False) -> list[dict]:
    ws = tmp / "ws"
    shutil.copytree(REPO / "reference" / "python", ws / "python")
    with open(ws / "python/tinyllm/prob/rejection.py", "a") as f:
        f.write(appended)
    report = tmp / "check.json"
    run = ol(tmp, "check", "M07.6", "--workspace", str(ws), "--json", str(report),
             "--timeout", "10", *extra)
    assert report.exists(), f"no report (exit {run.rc})\n{run.out[-2000:]}{run.err[-2000:]}"
    data = json.loads(report.read_text())
    found = [json.loads(m) for t in data["tests"] for m in OLX.findall(t.get("message", ""))]
    if killed_ok and not found:  # the worker's memory cgroup: its OOM killer took the worker
        assert all("killed by SIGKILL" in t["message"] and "out of memory" in t["message"]
                   for t in data["tests"] if t["outcome"] == "crashed"), json.dumps(data)[:2000]
        assert any(t["outcome"] == "crashed" for t in data["tests"])
        return []
    assert found, f"the probe never reported: {json.dumps(data)[:2000]}"
    return found


# == --mine: runs comparing notes without any shared folder or IPC ================================

SOCK_SUITE = (DATA / "sock_suite.py.txt").read_text()

COMM_SUITE = (DATA / "comm_suite.py.txt").read_text()

HEAP_SUITE = (DATA / "heap_suite.py.txt").read_text()


def test_mine_runs_cannot_compare_notes_through_a_leftover_daemon_on_an_abstract_socket(tmp_path):
    """The first run leaves a daemon (setsid + double fork) listening on an abstract unix socket;
    every later run sends it the fingerprint of its implementation and gets all earlier ones back.
    Runs share the fork server's network namespace (confine_run unshares only mount and IPC) and
    nothing kills a finished run's orphans, so the daemon lives through all 68 runs."""
    data = mine(tmp_path, {"test_sock_notes.py": SOCK_SUITE})
    assert data["score"] == 0, (
        f"a suite that tests no behaviour scored {data['score']} of {data['max_score']} "
        f"(verdict {data['verdict']}): runs compared notes through a daemon's abstract socket")


def test_mine_runs_cannot_compare_notes_through_leftover_process_names(tmp_path):
    """No socket, file or IPC: each run leaves a sleeping process whose name (PR_SET_NAME, 15
    bytes) encodes 2 hex digits of each function's bytecode hash; later runs read /proc/*/comm
    (one PID namespace for all runs). Shows that a per-run network namespace alone is no fix."""
    data = mine(tmp_path, {"test_comm_notes.py": COMM_SUITE})
    assert data["score"] == 0, (
        f"a suite that tests no behaviour scored {data['score']} of {data['max_score']} "
        f"(verdict {data['verdict']}): runs compared notes through /proc/PID/comm of leftovers")


def test_mine_runs_find_no_earlier_source_in_the_fork_server_heap(tmp_path):
    """Each run scans its own memory (a fork of the server's heap) for sources of the
    implementations the server received before. Held when tried: only its own source is found."""
    data = mine(tmp_path, {"test_heap_notes.py": HEAP_SUITE})
    assert data["score"] == 0, f"scored {data['score']} from the server's heap"


# == memory beyond every stated bound ===============================================================

MEMFD_TAIL = (DATA / "memfd_tail.py.txt").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="the tree's memory cgroup is made as root")
def test_one_worker_holds_no_more_memory_than_its_limit_plus_its_disk(tmp_path):
    """With --memory-mb 256, one call writes eight memfds of 63 MiB (never mapped, so RLIMIT_AS
    does not see them; RLIMIT_FSIZE caps each file, not their number; RLIMIT_NOFILE is 20000) and
    measures what it holds (st_blocks, and /proc/meminfo's Shmem); it closes them before it
    raises. Bounded here at 504 MiB; the same code unbounded drove the 24 GiB host into global
    OOM, whose killer picked ol itself (the memfd pages count in no process's OOM score)."""
    reports = check(tmp_path, MEMFD_TAIL, "--memory-mb", "256", killed_ok=True)
    held = max((r["held_mib"] for r in reports), default=0)
    assert held <= 256 + 64, (
        f"one process of a worker capped at 256 MiB (+64 MiB disk) held {held} MiB of memfd "
        f"memory: {reports[0]}")


XATTR_TAIL = (DATA / "xattr_tail.py.txt").read_text()


def test_xattrs_in_the_run_folder_are_bounded(tmp_path):
    """user.* extended attributes on the run folder's tmpfs are kernel memory, outside size=;
    held when tried: the kernel charges them to the inode budget (about 16 MiB)."""
    reports = check(tmp_path, XATTR_TAIL)
    assert max(r["xattr_mib"] for r in reports) <= 64, reports[0]
