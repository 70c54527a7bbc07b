"""Attacks of an independent security review (docs/attacks-found.md), end to end through ``ol``.

Each test builds a small workspace (a copy of the reference plus one attack), runs ``ol check``
(or ``ol grade``, ``ol diff``) as a subprocess with a ``TMPDIR`` of its own inside ``tmp_path``,
bounds every wait, and then judges what ol said and what it left behind.

- A test marked ``xfail(strict=True)`` is a hole that is still open: it asserts the safe
  behaviour, which ol does not have yet. Once the hole is fixed the test passes, strict xfail
  turns that into a failure, and the mark must go.
- Every other test is an attack ol withstands that the other hostile suites do not cover.

The cases that need the worker's namespaces (cgroups, nested user namespaces, escaped daemons)
are skipped unless this runs as root.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import textwrap
import time
from pathlib import Path

import pytest
from olrun import Ol

from harness.errors import EXIT_PARTIAL  # -k: a partial run, none failed
from harness.paths import REPO_ROOT
from harness.sandbox.rundirs import pids_parent

pytestmark = pytest.mark.slow
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="the worker's namespaces need root here")
RUN_BOUND_S = 120.0  # any single ol command here takes a few seconds; past this it hangs
ESC = "\x1b"


# -- helpers -------------------------------------------------------------------------------------

def workspace(root: Path, extra: str, init: str = "") -> Path:
    """A copy of the reference workspace with ``extra`` appended to rejection.py."""
    shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", root / "python" / "tinyllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    module = root / "python" / "tinyllm" / "prob" / "rejection.py"
    module.write_text(module.read_text() + "\n" + textwrap.dedent(extra))
    if init:
        path = root / "python" / "tinyllm" / "__init__.py"
        path.write_text(path.read_text() + "\n" + textwrap.dedent(init))
    return root


def ol(tmp_path: Path, *args: str, **kwargs) -> Ol:
    return Ol(tmp_path, *args, **kwargs).wait(RUN_BOUND_S)


def check(tmp_path: Path, ws: Path, *extra: str, timeout: str = "3", **kwargs) -> Ol:
    return ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "--timeout", timeout, *extra,
              **kwargs)


def outcomes_in(report: Path) -> dict[str, dict]:
    return {t["name"]: t for t in json.loads(report.read_text())["tests"]}


def cgroups_of(pid: int) -> list[Path]:
    """The pids cgroups ol process ``pid`` made (``ol-worker-PID.START-...``), deepest first."""
    parent = pids_parent()
    if parent is None:
        return []
    found = []
    for entry in Path(parent).iterdir():
        if entry.name.startswith(f"ol-worker-{pid}."):
            found += sorted((p for p in entry.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
            found.append(entry)
    return found


def remove_cgroups(paths: list[Path]) -> None:
    for path in paths:  # deepest first; a cgroup with no task left is removed by rmdir
        for _ in range(50):
            try:
                path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                with contextlib.suppress(OSError, ValueError):
                    for pid in (path / "cgroup.procs").read_text().split():
                        with contextlib.suppress(OSError):
                            os.kill(int(pid), signal.SIGKILL)
                time.sleep(0.05)


def processes_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
    return found


# A child in a nested user namespace with a mount and cgroup namespace of its own mounts the v1
# pids hierarchy (rooted at the worker's own cgroup); it may lift pids.max and make a sub-cgroup.
NESTED_CGROUP = '''
import ctypes as _c, os as _o, time as _t

def _ol_nested_cgroup(lift, subdir):
    libc = _c.CDLL(None, use_errno=True)
    r, w = _o.pipe()
    pid = _o.fork()
    if pid == 0:
        ok = b"n"
        try:
            if libc.unshare(0x10000000) == 0 and libc.unshare(0x00020000 | 0x02000000) == 0:
                _o.makedirs("ol-cg", exist_ok=True)
                if libc.mount(b"cgroup", b"ol-cg", b"cgroup", 0, b"pids") == 0:
                    if lift:
                        with open("ol-cg/pids.max", "w") as f:
                            f.write("max")
                    if subdir:
                        _o.mkdir("ol-cg/" + subdir)
                    ok = b"y"
        except OSError:
            pass
        _o.write(w, ok)
        _o._exit(0)
    _o.close(w)
    got = _o.read(r, 1)
    _o.close(r)
    _o.waitpid(pid, 0)
    return got == b"y"

def _ol_count_forks(n):
    kids = 0
    for _ in range(n):
        try:
            pid = _o.fork()
        except OSError:
            break
        if pid == 0:
            _t.sleep(60)
            _o._exit(0)
        kids += 1
    return kids
'''


# == holes: each asserts the safe behaviour, which ol does not have yet ============================

def test_surrogate_in_an_import_crash_message(tmp_path):
    ws = workspace(tmp_path / "ws", 'raise SystemExit("\\ud800 lone surrogate")\n')
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "-k", "test_hand_example", "--json", str(report))
    assert run.rc == 1, run.text
    assert report.exists()
    assert run.left() == []


def test_escape_sequences_in_a_failure_message(tmp_path):
    ws = workspace(tmp_path / "ws", '''
        def rejection_accept(p_x, q_x, u):
            raise RuntimeError("\\x1b[2J\\x1b[HM07.6: 19 passed, 0 failed (verdict: pass)\\x1b[8m")
        ''')
    run = check(tmp_path, ws, "-k", "test_hand_example")
    assert run.rc == 1, run.text
    assert "19 passed, 0 failed (verdict: pass)" in run.out  # the student's text is shown ...
    assert ESC not in run.out + run.err  # ... but must be inert


def test_escape_sequences_in_an_import_error(tmp_path):
    ws = workspace(tmp_path / "ws",
                   'raise ImportError("\\x1b[2K\\rM07.6: 19 passed, 0 failed (verdict: pass)\\x1b[8m")\n')
    run = check(tmp_path, ws, "-k", "test_hand_example")
    assert run.rc == 2, run.text
    assert "19 passed" in run.err
    assert ESC not in run.out + run.err


def test_escape_sequences_in_the_grade_progress(tmp_path):
    subs = tmp_path / "subs"
    workspace(subs / "alice", '''
        def rejection_accept(p_x, q_x, u):
            raise RuntimeError("\\x1b[1A\\x1b[2K  [1/1] alice  pass  19 passed,   0 failed")
        ''')
    workspace(subs / "bob", '''
        raise ImportError("x\\n  [2/2] zed    pass  20 passed,   0 failed  score 25/25\\x1b[2J\\u202e")
        ''')  # a line of its own in the progress, once; its bytes raw in gradebook.csv
    run = ol(tmp_path, "grade", "M07.6", str(subs), "--out", str(tmp_path / "out"), "--jobs", "1",
             "--timeout", "3")
    assert run.rc == 0, run.text
    assert "raised RuntimeError" in run.out
    assert ESC not in run.out + run.err
    assert not [line for line in run.out.splitlines() if line.startswith("  [2/2] zed")], run.out
    assert "\\n  [2/2] zed" in run.out and "\\u202e" in run.out
    for name in ("gradebook.csv", "scores.csv", "report.md"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert ESC not in text and "\u202e" not in text, name


def test_a_fifo_as_the_record_of_passes(tmp_path):
    ws = workspace(tmp_path / "ws", "")
    (ws / ".ol").mkdir()
    fifo = ws / ".ol" / "passes.json"
    os.mkfifo(fifo)
    run = Ol(tmp_path, "check", "M07.6", "--workspace", str(ws), "--timeout", "3")
    blocked = 0
    deadline = time.monotonic() + RUN_BOUND_S
    try:
        while run.proc.poll() is None and time.monotonic() < deadline:
            try:  # succeeds only while a reader has the FIFO open: ol is stuck reading it
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.05)
                continue
            blocked += 1
            os.close(fd)  # end of file: ol goes on (it reads the record twice)
            time.sleep(0.5)
    finally:
        run.wait(30)
    assert blocked == 0, f"ol check blocked {blocked} times reading a FIFO in the workspace"
    assert run.rc == 2, run.text  # refused before the run, in one line, nothing written
    assert run.err.count("\n") == 1 and run.err.startswith("ol: "), run.err


def test_dev_zero_as_the_record_of_passes(tmp_path):
    ws = workspace(tmp_path / "ws", "")
    (ws / ".ol").mkdir()
    (ws / ".ol" / "passes.json").symlink_to("/dev/zero")
    run = check(tmp_path, ws, "--memory-mb", "1024", limit_as=2 << 30)
    assert run.rc == 2, run.text  # refused before the run, in one line, nothing written
    assert run.err.count("\n") == 1 and run.err.startswith("ol: "), run.err
    assert run.left() == []


def test_the_record_of_passes_is_written_through_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"  # stands for the repository, /etc, another workspace
    elsewhere.mkdir()
    ws = workspace(tmp_path / "ws", "")
    (ws / ".ol").symlink_to(elsewhere)
    run = check(tmp_path, ws)
    assert run.rc == 2, run.text  # refused before the run, in one line, nothing written
    assert run.err.count("\n") == 1 and run.err.startswith("ol: "), run.err
    assert list(elsewhere.iterdir()) == [], "ol wrote outside the workspace"


@pytest.mark.xfail(strict=True, reason="hole: ol diff trusts .ol/passes.json: a forged record shows "
                   "the reference's diff (the 'reward') without any pass")
def test_a_forged_record_of_passes_unlocks_ol_diff(tmp_path):
    ws = workspace(tmp_path / "ws", "")
    source = (ws / "python" / "tinyllm" / "prob" / "rejection.py").read_text()
    source = source.replace("return u < p_x / q_x", "return u <= p_x / q_x")  # a real bug
    (ws / "python" / "tinyllm" / "prob" / "rejection.py").write_text(source)
    import hashlib

    digest = hashlib.sha256(source.encode()).hexdigest()
    (ws / ".ol").mkdir()
    (ws / ".ol" / "passes.json").write_text(json.dumps({"M07.6": {digest: "forged"}}))
    run = ol(tmp_path, "diff", "M07.6", "--workspace", str(ws))
    assert run.rc == 2, run.text
    assert "has not passed" in run.err


@pytest.mark.xfail(strict=True, reason="hole: the worker's testimony: code that walks the stack at "
                   "import to the serving loop rewrites its replies, so in-place edits and a "
                   "returned caller's array pass (documented in docs/isolation.md)")
def test_a_stack_walk_hides_in_place_edits_and_aliasing(tmp_path):
    ws = workspace(tmp_path / "ws", '''
        import json as _j, sys as _s

        def _ol_patch():
            f = _s._getframe()
            while f is not None:
                if f.f_code.co_name in ("main", "run") and "server" in f.f_locals:
                    channel = f.f_locals["server"].channel
                    real = channel.send_text

                    def send_text(text):
                        msg = _j.loads(text)
                        for reply in msg.get("table", []):
                            reply["mutated"], reply["aliased"] = [], False
                        real(_j.dumps(msg))

                    channel.send_text = send_text
                    return
                f = f.f_back

        _ol_patch()
        _ol_real_residual = residual_distribution

        def residual_distribution(p, q):
            result = _ol_real_residual(p, q)
            if isinstance(p, np.ndarray) and p.dtype == np.float64:  # an int64 p: a wrong type
                if np.array_equal(result, p):
                    return p  # the caller's own array
                p[...] = 0.0  # and an in-place edit
            elif isinstance(p, list):
                p.reverse()
            return result
        ''')
    run = check(tmp_path, ws, "-k", "residual")
    assert run.rc == 1, run.text


@pytest.mark.xfail(strict=True, reason="hole: the draw counts are the worker's testimony, kept in "
                   "the very rng object the student gets: a sampler that draws one uniform too "
                   "many and pops it from rng.drawn passes the draw-count checks")
def test_forged_draw_counts(tmp_path):
    ws = workspace(tmp_path / "ws", '''
        _ol_real_rs = rejection_sample

        def rejection_sample(p, q, m, rng, max_tries=10000):
            try:
                return _ol_real_rs(p, q, m, rng, max_tries)
            finally:
                try:
                    rng.uniform()  # the bug: one uniform more than two per try
                    drew = True
                except Exception:
                    drew = False
                if drew:  # hidden from the count the worker reports
                    if type(rng).__name__ == "PCGSource":
                        rng.count -= 1
                    else:
                        rng.drawn.pop()
        ''')
    run = check(tmp_path, ws, "-k", "rejection_sample")
    assert run.rc == 1, run.text


def test_a_shrunk_progress_page_kills_ol_check(tmp_path):
    ws = workspace(tmp_path / "ws", '''
        import os as _o, sys as _s

        def rejection_accept(p_x, q_x, u):
            _o.ftruncate(int(_s.argv[3]), 0)  # the progress page, under the parent's mmap
            _o._exit(7)  # the parent now reads it to name the call
        ''')
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "-k", "test_hand_example", "--json", str(report))
    try:
        assert run.rc == 1, run.text
        # The page is sealed: the truncation fails in the worker (an error of the code), and
        # the parent never reads past its mapping.
        # (failed: the catalog calls rejection_accept through a batch and reports the raise)
        assert outcomes_in(report)["test_hand_example"]["outcome"] in ("crashed", "error", "failed")
        assert run.left() == []
    finally:
        remove_cgroups(cgroups_of(run.proc.pid))


def test_a_shrunk_progress_page_makes_ol_grade_exit_3(tmp_path):
    subs = tmp_path / "subs"
    workspace(subs / "mallory", '''
        import os as _o, sys as _s

        def rejection_accept(p_x, q_x, u):
            _o.ftruncate(int(_s.argv[3]), 0)
            _o._exit(7)
        ''')
    out = tmp_path / "out"
    run = ol(tmp_path, "grade", "M07.6", str(subs), "--out", str(out), "--jobs", "1",
             "--timeout", "3")
    assert run.rc == 0, run.text
    row = json.loads((out / "gradebook.json").read_text())["submissions"][0]
    assert row["verdict"] == "fail", row


@needs_root
def test_a_sub_cgroup_outlives_the_check(tmp_path):
    if pids_parent() is None:
        pytest.skip("no v1 pids hierarchy")
    ws = workspace(tmp_path / "ws", NESTED_CGROUP + '\n_ol_nested_cgroup(False, "ol-leftover")\n')
    run = check(tmp_path, ws, "-k", "test_hand_example")
    left = cgroups_of(run.proc.pid)
    try:
        assert run.rc == EXIT_PARTIAL, run.text
        assert left == [], "cgroups left after ol exited"
    finally:
        remove_cgroups(left)


@needs_root
def test_the_task_cap_cannot_be_lifted(tmp_path):
    if pids_parent() is None:
        pytest.skip("no v1 pids hierarchy")
    ws = workspace(tmp_path / "ws", NESTED_CGROUP + textwrap.dedent('''
        _OL_LIFTED = _ol_nested_cgroup(True, "")

        def rejection_accept(p_x, q_x, u):
            raise RuntimeError(f"lifted={_OL_LIFTED} forked={_ol_count_forks(150)}")
        '''))
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "-k", "test_hand_example", "--json", str(report))
    try:
        assert report.exists(), run.text
        message = outcomes_in(report)["test_hand_example"]["message"]
        forked = int(message.split("forked=")[1].split()[0].rstrip(";"))
        assert forked < 64, message
    finally:
        remove_cgroups(cgroups_of(run.proc.pid))


# == attacks ol withstands (not covered by the other hostile suites) ===============================

def test_frames_injected_on_the_reply_pipe_fail_closed(tmp_path):
    """A frame that is not an object, a 4 GiB length, and a forged reply (the live request id read
    from the progress page) whose ``mutated`` holds Infinity: each is a failure of that test,
    never a pass, and ol exits 1 with its reports."""
    ws = workspace(tmp_path / "ws", '''
        import mmap as _mm, os as _o, struct as _st, sys as _s

        _ol_page = memoryview(_mm.mmap(int(_s.argv[3]), 16)).cast("q")

        def _ol_send(body):
            _o.write(int(_s.argv[2]), _st.pack(">I", len(body)) + body)

        _ol_real_accept, _ol_real_ap = rejection_accept, acceptance_probability
        _ol_real_rd = residual_distribution

        def rejection_accept(p_x, q_x, u):
            _ol_send(b"[1, 2, 3]")
            return _ol_real_accept(p_x, q_x, u)

        def acceptance_probability(p, q):
            _o.write(int(_s.argv[2]), b"\\xff\\xff\\xff\\xff" + b"x" * 64)
            return _ol_real_ap(p, q)

        def residual_distribution(p, q):
            _ol_send(('{"op":"replies","id":%d,"start":0,"index":[0],"table":[{"status":'
                      '"returned","value":{"t":"none"},"mutated":[Infinity]}]}'
                      % _ol_page[0]).encode())
            return _ol_real_rd(p, q)
        ''')
    report = tmp_path / "r.json"
    # Every test but speculative_step's four ("test_" then not "sp"): the asserted ones all run,
    # and those four add only more calls of the same three functions (the chi-square's many)
    run = check(tmp_path, ws, "--json", str(report), "-k", "test_?[!p]*")
    assert run.rc == 1, run.text
    tests = outcomes_in(report)
    assert not any(name.startswith("test_speculative_") for name in tests) and len(tests) == 16
    for name in ("test_hand_example", "test_accept_is_strict", "test_residual_is_a_distribution",
                 "test_residual_disjoint_supports_is_p"):
        assert tests[name]["outcome"] != "passed", tests[name]
    assert "not an object" in tests["test_accept_is_strict"]["message"]
    assert "4294967295 bytes" in tests["test_residual_disjoint_supports_is_p"]["message"]
    assert run.left() == []


def test_closed_descriptors_a_fork_bomb_a_huge_reply_and_a_hostile_exception(tmp_path):
    """One workspace, four sabotages: every descriptor closed, a fork bomb (capped at 64 tasks),
    a reply of 40 MB (over the 32 MiB cap), an exception whose metaclass raises
    KeyboardInterrupt for ``__mro__`` and whose ``__str__`` raises SystemExit. Each affected test
    fails, the others pass, ol exits 1, and nothing is left."""
    marker = f"olfb{secrets.token_hex(3)}"
    ws = workspace(tmp_path / "ws", f'''
        import ctypes as _c, os as _o
        import numpy as _np

        def rejection_accept(p_x, q_x, u):
            _o.closerange(3, 1024)
            return True

        def acceptance_probability(p, q):
            _c.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)
            while True:
                try:
                    _o.fork()
                except OSError:
                    pass

        def residual_distribution(p, q):
            return tuple(_np.full(100_000, 0.5) for _ in range(40))

        class _Meta(type):
            @property
            def __mro__(cls):
                raise KeyboardInterrupt("mro")

            @property
            def __name__(cls):
                return 12345

        class _Hostile(Exception, metaclass=_Meta):
            def __str__(self):
                raise SystemExit(9)

        def speculative_step(p, q, x, u_accept, u_resample):
            raise _Hostile()
        ''')
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "--json", str(report), timeout="2")
    assert run.rc == 1, run.text
    tests = outcomes_in(report)
    rejection = [n for n in tests if n.startswith("test_rejection_sample")]
    assert all(tests[n]["outcome"] == "passed" for n in rejection), tests
    assert tests["test_accept_is_strict"]["outcome"] == "crashed"
    assert tests["test_residual_sum_is_ascending"]["outcome"] == "crashed"
    assert "bytes (the limit is" in tests["test_residual_sum_is_ascending"]["message"]
    assert tests["test_speculative_rejects_bad_drafts"]["outcome"] == "crashed"
    assert tests["test_shapes_and_distributions_are_checked"]["outcome"] == "timeout"
    assert run.left() == []
    assert processes_named(marker) == []
    assert cgroups_of(run.proc.pid) == []


def test_an_answer_the_encoder_cannot_carry_is_no_raise(tmp_path):
    """Returning, instead of raising, an int of 5000 digits (past ``str()``'s limit) on bad
    arguments: once taken for the encoder's ValueError, which is what these tests expect (an
    unearned pass), and once a crash of the worker on the lean path. Both tests now fail: each
    names the object that came back."""
    ws = workspace(tmp_path / "ws", '''
        _ol_real_step, _ol_real_accept = speculative_step, rejection_accept

        def speculative_step(p, q, x, u_accept, u_resample):
            try:
                return _ol_real_step(p, q, x, u_accept, u_resample)
            except ValueError:
                return 10**5000

        def rejection_accept(p_x, q_x, u):
            try:
                return _ol_real_accept(p_x, q_x, u)
            except ValueError:
                return 10**5000
        ''')
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "-k", "*rejects_bad*", "--json", str(report))
    assert run.rc == 1, run.text
    tests = outcomes_in(report)
    assert set(tests) == {"test_speculative_rejects_bad_drafts", "test_accept_rejects_bad_arguments"}
    for name, test in sorted(tests.items(), reverse=True):  # speculative_step's, the pass, first
        assert test["outcome"] == "failed", (name, test)
        assert "int of 16610 bits" in test["message"], (name, test["message"])
    assert run.left() == []


@needs_root
def test_a_nested_user_namespace_cannot_write_outside(tmp_path):
    """A nested user namespace has every capability over mount namespaces of its own, but the
    inherited mounts stay locked read-only: no remount of /, no file outside, no uid map (the
    worker's /proc is read-only)."""
    planted = tmp_path / "planted-by-a-student"
    ws = workspace(tmp_path / "ws", f'''
        import ctypes as _c, os as _o

        def _ol_try():
            libc = _c.CDLL(None, use_errno=True)
            r, w = _o.pipe()
            pid = _o.fork()
            if pid == 0:
                res = ["user:%d" % libc.unshare(0x10000000)]
                try:
                    with open("/proc/self/uid_map", "w") as f:
                        f.write("0 0 1")
                    res.append("uid_map:written")
                except OSError as e:
                    res.append("uid_map:" + e.strerror)
                res.append("ns:%d" % libc.unshare(0x00020000))
                res.append("remount:%d" % libc.mount(None, b"/", None, 32 | 4096 | 16384, None))
                try:
                    open({str(planted)!r}, "w").close()
                    res.append("write:done")
                except OSError as e:
                    res.append("write:" + e.strerror)
                _o.write(w, " ".join(res).encode())
                _o._exit(0)
            _o.close(w)
            data = _o.read(r, 4096)
            _o.waitpid(pid, 0)
            return data.decode()

        def rejection_accept(p_x, q_x, u):
            raise RuntimeError(_ol_try())
        ''')
    report = tmp_path / "r.json"
    run = check(tmp_path, ws, "-k", "test_hand_example", "--json", str(report))
    message = outcomes_in(report)["test_hand_example"]["message"]
    # No nested user namespace at all now (max_user_namespaces is 0 inside the worker's);
    # had there been one, its remount and writes would fail as well.
    assert ("user:-1" in message or "remount:-1" in message) and "write:Read-only" in message, \
        message
    assert "uid_map:written" not in message and "write:done" not in message, message
    assert not planted.exists()
    assert run.rc == 1 and run.left() == []


@needs_root
def test_a_daemon_that_clears_the_subreaper_flag_dies_with_the_worker(tmp_path):
    """As root (the non-root case is tests/hostile/test_non_root.py): subreaper off, setsid,
    double fork, a daemon that waits past ol's exit and then tries to write a report."""
    marker = f"olda{secrets.token_hex(3)}"
    target = tmp_path / "written-late.json"
    ws = workspace(tmp_path / "ws", f'''
        import ctypes as _c, os as _o, time as _t
        _ol_real_rs = rejection_sample

        def rejection_sample(p, q, m, rng, max_tries=10000):
            _c.CDLL(None).prctl(36, 0, 0, 0, 0)
            if _o.fork() == 0:
                try:
                    _o.setsid()
                    if _o.fork() == 0:
                        _c.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)
                        _t.sleep(3)
                        with open({str(target)!r}, "w") as f:
                            f.write("forged")
                finally:
                    _o._exit(0)
            return _ol_real_rs(p, q, m, rng, max_tries)
        ''')
    run = check(tmp_path, ws, "-k", "test_rejection_sample_draw_order")
    assert run.rc == EXIT_PARTIAL, run.text
    assert processes_named(marker) == []
    time.sleep(4)
    assert not target.exists()
    assert run.left() == [] and cgroups_of(run.proc.pid) == []


def test_a_submission_folder_named_with_escapes_is_shown_inert(tmp_path):
    subs = tmp_path / "subs"
    workspace(subs / "eve\x1b[2J\x1b[Hwins", "")
    # M07.1: the folder's name is the attack, whatever module is graded; its catalog is the
    # cheapest (about 0.3 s against M07.6's 1.7 s)
    run = ol(tmp_path, "grade", "M07.1", str(subs), "--out", str(tmp_path / "out"), "--jobs", "1",
             "--timeout", "3")
    assert run.rc == 0, run.text
    assert "eve\\x1b[2J\\x1b[Hwins" in run.out
    assert ESC not in run.out + run.err
    assert run.left() == []


def test_a_hard_link_as_the_record_of_passes_is_not_written_through(tmp_path):
    """``.ol/passes.json`` hard-linked to a file elsewhere (a repository file, say): the record
    is replaced by a rename, the other file keeps its content."""
    precious = tmp_path / "precious.py"
    precious.write_text("# a file of the repository\n")
    ws = workspace(tmp_path / "ws", "")
    (ws / ".ol").mkdir()
    os.link(precious, ws / ".ol" / "passes.json")
    # M07.1: a pass of any module is recorded the same way (a whole catalog that passed), and its
    # catalog is the cheapest (about 0.3 s against M07.6's 1.7 s)
    run = ol(tmp_path, "check", "M07.1", "--workspace", str(ws), "--timeout", "3")
    assert run.rc == 0, run.text
    assert precious.read_text() == "# a file of the repository\n"
    assert os.stat(precious).st_nlink == 1
    assert "M07.1" in json.loads((ws / ".ol" / "passes.json").read_text())
