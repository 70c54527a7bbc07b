"""The isolated target: hostile code ends in the right failing outcome and the run goes on.

Each test builds a tiny workspace (``python/tinyllm/prob/rejection.py``) in a temporary directory
and calls it through ``IsolatedTarget``; after every failure the same target answers the next call.
"""

from __future__ import annotations

import errno
import importlib
import os
import shutil
import signal
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from harness.engine.course import load_course
from harness.engine.isolated import ImportProblem, IsolatedTarget, Limits
from harness.engine.target import (
    ContractViolation,
    InProcessTarget,
    TargetCrashed,
    TargetError,
    TargetTimedOut,
)
from harness.paths import REFERENCE_PYTHON
from harness.sandbox.codec import MalformedReply, RemoteError
from harness.uniforms import PCGSource, ScriptedSource

IMPORT_NAME = "tinyllm.prob.rejection"

HOSTILE = '''
import ctypes
import os
import signal
import sys
import time

import numpy as np


def rejection_accept(p_x, q_x, u):
    if q_x <= 0:
        raise ValueError("q_x must be > 0")
    return u < p_x / q_x


def hang():
    for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        pass


def hard_exit():
    os._exit(0)


def soft_exit():
    raise SystemExit(0)


def interrupt():
    raise KeyboardInterrupt("pressed by the student")


def segfault():
    return ctypes.string_at(0)


def memory_bomb():
    return len(bytearray(100 * 2**30))


def fork_children():
    """50 sleeping children that ignore SIGTERM; every tenth a daemon (new session, double fork),
    with the worker's subreaper flag cleared first, so an orphan goes as far up as it can."""
    ctypes.CDLL(None).prctl(36, 0, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER off
    r, w = os.pipe()
    for i in range(50):
        if os.fork() == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                if i % 10 == 0:
                    os.setsid()
                    if os.fork() != 0:
                        os._exit(0)
                os.write(w, b"%d\\n" % os.getpid())
                time.sleep(1000)
            finally:
                os._exit(0)
    data = b""
    while data.count(b"\\n") < 50:
        data += os.read(r, 4096)
    with open("pids.txt", "wb") as f:  # in the worker's directory, the only writable one
        f.write(data)
    return True


def escape(harness_pid):
    """What a submission could damage: the harness, files beside it, elsewhere, the network."""
    results = []
    try:
        os.kill(harness_pid, 0)  # only asks whether it could signal (stop, kill) the harness
        results.append(0)
    except OSError as exc:
        results.append(exc.errno)
    for path in (os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted.py"),
                 "/tmp/ol-planted-by-a-student"):
        try:
            with open(path, "w") as f:
                f.write("pwned")
            results.append(0)
        except OSError as exc:
            results.append(exc.errno)
    import socket
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=1).close()
        results.append(0)
    except OSError as exc:
        results.append(exc.errno)
    return tuple(results)


def many_children(n):
    """A fork bomb, bounded: as many sleeping children as the limits allow, up to n."""
    made = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        made += 1
    return made


def flood():
    chunk = b"x" * (1 << 20)
    for _ in range(200):
        os.write(1, chunk)  # the descriptor itself (sys.stdout is captured: test_evidence.py)
    return True


def forge_stdout():
    print("=== 19 passed in 0.12s ===")
    sys.stdout.flush()
    os.write(1, b'\\x00\\x00\\x00\\x2b{"op":"replies","id":1,"start":0,"index":[0]}')
    return False


def forge_protocol():
    for fd in range(3, 256):
        try:
            os.write(fd, b"garbage, not a frame")
        except OSError:
            pass
    return True


def forge_frame():
    for fd in range(3, 256):
        try:
            os.write(fd, b"\\x00\\x00\\x00\\x05hello")
        except OSError:
            pass
    return True


def as_float32():
    return np.float32(0.5)


def as_list(p):
    return [float(v) for v in p]


class Sub(np.ndarray):
    pass


def as_subclass(p):
    return np.array(p, dtype=np.float64).view(Sub)


class Liar(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def liar():
    return Liar(0.5)


def mutate(p):
    p[0] = 1.0
    return np.array(p, dtype=np.float64)


def same(p):
    return p
'''

FUNCTIONS = ("rejection_accept", "hang", "hard_exit", "soft_exit", "interrupt", "segfault",
             "memory_bomb", "fork_children", "flood", "forge_stdout", "forge_protocol",
             "forge_frame", "as_float32", "as_list", "as_subclass", "liar", "mutate", "same",
             "missing", "escape", "many_children")
RETURNS = {"rejection_accept": "bool", "hang": "bool", "hard_exit": "bool", "soft_exit": "bool",
           "interrupt": "bool", "segfault": "bool", "memory_bomb": "int", "fork_children": "bool",
           "flood": "bool", "forge_stdout": "bool", "forge_protocol": "bool", "forge_frame": "bool",
           "as_float32": "float", "as_list": "float64[]", "as_subclass": "float64[]",
           "liar": "float", "mutate": "float64[]", "same": "float64[]", "many_children": "int"}
P = np.array([0.5, 0.25, 0.25, 0.0])
Q = np.array([0.25, 0.5, 0.0, 0.25])


def workspace(root: Path, source: str) -> Path:
    """A workspace whose ``tinyllm/prob/rejection.py`` is ``source``; its python/ directory."""
    prob = root / "python" / "tinyllm" / "prob"
    prob.mkdir(parents=True)
    (prob.parent / "__init__.py").write_text("")
    (prob / "__init__.py").write_text("")
    (prob / "rejection.py").write_text(textwrap.dedent(source))
    return root / "python"


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workspace(tmp_path_factory.mktemp("hostile"), HOSTILE)


@pytest.fixture
def target(hostile_dir: Path):
    with IsolatedTarget("hostile", hostile_dir, IMPORT_NAME, FUNCTIONS, RETURNS) as t:
        yield t


def works(t: IsolatedTarget) -> None:
    """The run continues: the same target answers the next call correctly."""
    assert t.call("rejection_accept", 0.25, 0.5, 0.25) is True
    assert t.call("rejection_accept", 0.25, 0.5, 0.5) is False


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"


# -- escapes ---------------------------------------------------------------------------------

def test_hang_ignoring_signals_times_out_within_the_limit(hostile_dir: Path) -> None:
    with IsolatedTarget("h", hostile_dir, IMPORT_NAME, FUNCTIONS, RETURNS,
                        Limits(call_timeout_s=1.0)) as t:
        t.import_status()
        pid = t._worker.process.pid
        start = time.monotonic()
        with pytest.raises(TargetTimedOut, match=r"hang\(\) did not return within 1 s"):
            t.call("hang")
        assert time.monotonic() - start < 6.0  # 1 s, then the kill, on a busy machine
        assert not alive(pid)
        assert isinstance(t.escape, TargetTimedOut)
        works(t)
        assert t._worker.process.pid != pid  # a fresh worker, started transparently


def test_os_exit_inside_a_function_is_a_crash(target: IsolatedTarget) -> None:
    message = r"exited with code 0 during hard_exit\(\): did the code call os._exit\?"
    with pytest.raises(TargetCrashed, match=message):
        target.call("hard_exit")
    works(target)


def test_system_exit_inside_a_function_is_a_crash(target: IsolatedTarget) -> None:
    pid = target._worker.process.pid
    with pytest.raises(TargetCrashed, match="tried to exit the interpreter"):
        target.call("soft_exit")
    works(target)
    assert target._worker.process.pid == pid  # the codec caught it: the worker lives on


def test_keyboard_interrupt_from_a_function_is_an_answer(target: IsolatedTarget) -> None:
    with pytest.raises(TargetError) as info:
        target.call("interrupt")
    assert info.value.ol_remote == RemoteError("KeyboardInterrupt", info.value.ol_remote.bases,
                                               "pressed by the student")
    works(target)


def test_segfault_is_a_crash_naming_the_signal(target: IsolatedTarget) -> None:
    with pytest.raises(TargetCrashed, match=r"killed by SIGSEGV during segfault\(\)"):
        target.call("segfault")
    works(target)


def test_memory_bomb_fails_without_harm(target: IsolatedTarget) -> None:
    with pytest.raises((MemoryError, TargetCrashed)):
        target.call("memory_bomb")
    works(target)


def processes_of(namespace: str | None, session: int) -> list[int]:
    """Every process in the worker's PID namespace or session (zombies included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if namespace is not None and os.readlink(entry / "ns" / "pid") == namespace:
                found.append(int(entry.name))
                continue
        except OSError:
            pass  # a zombie has no namespaces left: its session still tells
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(b")") + 2:].split()[3]) == session:
            found.append(int(entry.name))
    return found


def test_forked_children_are_killed_and_reaped(hostile_dir: Path) -> None:
    t = IsolatedTarget("f", hostile_dir, IMPORT_NAME, FUNCTIONS, RETURNS)
    try:
        assert t.call("fork_children") is True
        shim, root = t._worker.process.pid, t._worker.root
        # The worker's folder is a tmpfs of its view: seen from here through its root.
        home = Path(f"/proc/{root}/root{t._worker.process.home}") if t.contained else Path(
            t._worker.process.home)
        assert len((home / "pids.txt").read_text().split()) == 50
        namespace = os.readlink(f"/proc/{root}/ns/pid") if t.contained else None
        # Killed right after the request: only the worker is left (a shim and PID 1, as root).
        assert {pid for pid in processes_of(namespace, shim) if alive(pid)} <= {shim, root}
        works(t)
    finally:
        t.close()
    assert processes_of(namespace, shim) == []  # not even zombies: reaped


def test_a_fork_bomb_stops_at_the_process_limit(hostile_dir: Path) -> None:
    limits = Limits(max_processes=16)
    with IsolatedTarget("b", hostile_dir, IMPORT_NAME, FUNCTIONS, RETURNS, limits) as t:
        made = t.call("many_children", 300)
        assert 0 < made < 16  # the worker itself counts too
        works(t)


def test_200_mb_of_output_is_capped_and_quick(target: IsolatedTarget) -> None:
    target.import_status()
    start = time.monotonic()
    assert target.call("flood") is True
    cut = 200 * 2**20 - 65536
    deadline = time.monotonic() + 5.0
    while f"{cut} more bytes" not in target.worker_output() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert time.monotonic() - start < 10.0
    text = target.worker_output(clear=True)
    assert text.startswith("x" * 65536)
    assert text.endswith(f"[ol: {cut} more bytes of output were cut]")
    assert len(text) < 65536 + 100
    works(target)


def test_forged_output_on_stdout_is_never_a_value(target: IsolatedTarget) -> None:
    assert target.call("forge_stdout") is False
    assert "19 passed" in target.output  # print: captured, sent inside a reply
    deadline = time.monotonic() + 5.0
    while '"op":"replies"' not in target.worker_output() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert '"op":"replies"' in target.worker_output()  # os.write: the drained pipe
    works(target)


@pytest.mark.parametrize("fn", ["forge_protocol", "forge_frame"])
def test_garbage_on_the_protocol_pipe_is_a_crash(target: IsolatedTarget, fn: str) -> None:
    with pytest.raises(TargetCrashed, match=f"{fn}: the worker sent"):
        target.call(fn)
    works(target)


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root (as CI and grading run)")
def test_the_harness_files_and_network_are_out_of_reach(target: IsolatedTarget,
                                                               hostile_dir: Path) -> None:
    Path("/tmp/ol-planted-by-a-student").unlink(missing_ok=True)  # from a run without sandbox
    stop, beside, elsewhere, network = target.call("escape", os.getpid())
    assert (target.sandboxed, target.contained) == (True, True)
    assert stop == errno.ESRCH  # the harness is not even visible from the worker
    assert beside == errno.EROFS  # the staged copy: read-only in the view
    assert elsewhere in (errno.EROFS, errno.ENOENT)  # not in the view, or read-only
    assert network in (errno.ENETUNREACH, errno.EHOSTUNREACH)
    assert not (hostile_dir / "tinyllm" / "prob" / "planted.py").exists()
    assert not Path("/tmp/ol-planted-by-a-student").exists()
    works(target)


def test_a_chunk_may_share_only_immutable_replies() -> None:
    """A repeated small reply is sent once; a mutable one shared by two calls is refused."""
    from harness.sandbox.codec import decode_chunk, encode

    def reply(value: object) -> dict:
        return {"status": "returned", "value": encode(value), "mutated": [], "draws": []}

    shared = decode_chunk({"table": [reply(True), reply((2, False))], "index": [0, 1, 0, 0]}, 4)
    assert [r.value for r in shared] == [True, (2, False), True, True]
    for bad in ({"table": [reply(P)], "index": [0, 0]}, {"table": [reply(1)], "index": [1]},
                {"table": [reply(1)], "index": [0, 0, 0]}, {"table": [reply(1)], "index": [-1]},
                {"table": [{"status": "returned", "value": {"t": "pickle"}}], "index": [0]}):
        with pytest.raises(MalformedReply):
            decode_chunk(bad, 2)


def test_a_missing_function_raises_attribute_error(target: IsolatedTarget) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        target.call("missing")
    works(target)


def test_keyboard_interrupt_in_the_parent_kills_the_worker(target: IsolatedTarget) -> None:
    target.import_status()
    pid = target._worker.process.pid

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            target.call("hang")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 6.0
    assert not Path(f"/proc/{pid}").exists()
    works(target)


def test_close_removes_the_temporary_directory(hostile_dir: Path) -> None:
    t = IsolatedTarget("c", hostile_dir, IMPORT_NAME, FUNCTIONS, RETURNS)
    tmp, pid = Path(t._worker.process.home), t._worker.process.pid
    works(t)
    assert tmp.is_dir()
    t.close()
    t.close()  # idempotent
    assert not tmp.exists()
    assert not Path(f"/proc/{pid}").exists()
    with pytest.raises(RuntimeError, match="closed"):
        t.call("rejection_accept", 0.25, 0.5, 0.25)


# -- the import --------------------------------------------------------------------------------

GOOD_ACCEPT = "\ndef rejection_accept(p_x, q_x, u):\n    return u < p_x / q_x\n"


@pytest.mark.parametrize("prelude, kind, message", [
    ("import os\nos._exit(0)\n", "crash", "exited with code 0 while importing"),
    ("raise SystemExit(0)\n", "crash", "raised SystemExit"),
    ("import tinyllm.no_such_module\n", "import", "No module named 'tinyllm.no_such_module'"),
    ("x = (1,\n", "syntax", "SyntaxError"),
])
def test_import_problems_are_reported(tmp_path: Path, prelude: str, kind: str,
                                      message: str) -> None:
    python_dir = workspace(tmp_path, prelude + GOOD_ACCEPT)
    with IsolatedTarget("i", python_dir, IMPORT_NAME, ["rejection_accept"], RETURNS) as t:
        problem = t.import_status()
        assert isinstance(problem, ImportProblem)
        assert (problem.kind, message in problem.message) == (kind, True), problem
        if kind in ("syntax", "import"):
            assert problem.file == str(python_dir / "tinyllm" / "prob" / "rejection.py")
            assert problem.line == 1
        for _ in range(2):  # every call fails, quickly, without a new worker each time
            start = time.monotonic()
            with pytest.raises(TargetCrashed, match="did not import"):
                t.call("rejection_accept", 0.25, 0.5, 0.25)
            assert time.monotonic() - start < 1.0


def test_an_import_that_hangs_times_out(tmp_path: Path) -> None:
    python_dir = workspace(tmp_path, "while True:\n    pass\n" + GOOD_ACCEPT)
    limits = Limits(import_timeout_s=1.5)
    with IsolatedTarget("i", python_dir, IMPORT_NAME, ["rejection_accept"], RETURNS, limits) as t:
        problem = t.import_status()
        assert problem is not None and problem.kind == "timeout"
        with pytest.raises(TargetTimedOut, match="did not finish within 1.5 s"):
            t.call("rejection_accept", 0.25, 0.5, 0.25)


# -- the contract ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args, message", [
    ("as_float32", (), "returned a numpy.float32 where the contract promises float"),
    ("as_list", (P,), "returned a list of .* where the contract promises float64"),
    ("as_subclass", (P,), r"returned an object of class tinyllm.prob.rejection.Sub"),
    ("liar", (), r"returned an object of class tinyllm.prob.rejection.Liar"),
    ("mutate", (P,), "modified argument 1 in place"),
    ("same", (P,), "shares memory with an argument"),
])
def test_contract_violations(target: IsolatedTarget, fn: str, args: tuple, message: str) -> None:
    before = P.copy()
    with pytest.raises(ContractViolation, match=message):
        target.call(fn, *args)
    assert isinstance(target.violation, ContractViolation)
    np.testing.assert_array_equal(P, before)  # the test's own array is never touched
    works(target)


# -- a correct student -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python_dir = tmp_path_factory.mktemp("student") / "python"
    shutil.copytree(REFERENCE_PYTHON / "tinyllm", python_dir / "tinyllm")
    return python_dir


@pytest.fixture(scope="module")
def targets(reference_copy: Path):
    course = load_course()
    module = course.module("M07.6")
    in_process = InProcessTarget("reference", importlib.import_module(IMPORT_NAME),
                                 module.functions, course.returns)
    with IsolatedTarget("student", reference_copy, IMPORT_NAME, module.functions,
                        course.returns) as isolated:
        assert isolated.import_status() is None
        yield in_process, isolated


def outcome(result) -> tuple:
    if result.error is not None:
        return ("raised", type(result.error).__name__, str(result.error))
    value = result.value
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    return ("value", type(value).__name__, value)


def test_a_correct_copy_answers_as_the_reference(targets) -> None:
    in_process, isolated = targets
    cases = [
        ("rejection_accept",
         [(0.5, 0.25, 0.75), (0.25, 0.5, 0.5), (0.0, 0.25, 0.0), (0.5, 0.0, 0.1)]),
        ("acceptance_probability", [(P, Q), (P, P), (P, Q[:3])]),
        ("residual_distribution", [(P, Q), (P, P), ([0.5, 0.5], [0.5, 0.5])]),
        ("speculative_step", [(P, Q, 1, 0.75, 0.75), (P, Q, 1, 0.25, 0.75), (P, Q, 2, 0.5, 0.5)]),
    ]
    for fn, calls in cases:
        mine = [outcome(r) for r in isolated.map(fn, calls)]
        ours = [outcome(r) for r in in_process.map(fn, calls)]
        assert mine == ours, fn


def test_sources_advance_as_in_process(targets) -> None:
    """One source shared by a batch is drawn in order, and the test's object ends where it would."""
    in_process, isolated = targets
    p, q = np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.5, 0.25])
    runs = []
    for t in (in_process, isolated):
        source = PCGSource(2024)
        results = t.map("rejection_sample", [(p, q, 2.0, source)] * 50)
        script = ScriptedSource([0.6, 0.99, 0.1, 0.1, 0.3])
        scripted = t.call("rejection_sample", p, q, 2.0, script)
        runs.append(([r.value for r in results], source.count, source._gen._state,
                     scripted, list(script.drawn)))
    assert runs[0] == runs[1]


def test_a_source_first_seen_in_a_later_frame(targets) -> None:
    """Requests travel in frames; a source first seen after the first frame is shared too."""
    in_process, isolated = targets
    p, q = np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.5, 0.25])
    runs = []
    for t in (in_process, isolated):
        early, late = PCGSource(1), PCGSource(2)
        calls = [(p, q, 2.0, early)] * 300 + [(p, q, 2.0, late)] * 300
        values = [r.value for r in t.map("rejection_sample", calls)]
        runs.append((values, early.count, late.count, late._gen._state))
    assert runs[0] == runs[1]


def test_large_arrays_cross_in_several_frames_and_chunks(targets) -> None:
    in_process, isolated = targets
    rng = np.random.default_rng(7)
    calls = []
    for _ in range(12):
        p, q = rng.random(60_000), rng.random(60_000)
        calls.append((p / p.sum(), q / q.sum()))
    mine = [outcome(r) for r in isolated.map("residual_distribution", calls)]
    assert mine == [outcome(r) for r in in_process.map("residual_distribution", calls)]
    assert mine[0][0] == "array"


def test_20000_cheap_calls_are_batched_not_round_tripped(targets) -> None:
    """A batch pays the process boundary per chunk, not per call: 20000 cheap calls stay far
    below 20000 round trips (about 50 us each). The whole-check ratio to in-process, the figure
    that matters to a user, is measured by bench/run.py and written in the README."""
    in_process, isolated = targets
    calls = [(0.5, 0.25, i / 20000) for i in range(20000)]
    isolated.map("rejection_accept", calls[:1000])  # warm
    best = {"in-process": float("inf"), "isolated": float("inf")}
    for _ in range(3):  # the best of three: a shared machine only ever slows a run down
        for name, t in (("in-process", in_process), ("isolated", isolated)):
            start = time.perf_counter()
            results = t.map("rejection_accept", calls)
            best[name] = min(best[name], time.perf_counter() - start)
            assert [r.value for r in results[:3]] == [True, True, True]
    print(f"\n20000 rejection_accept calls: in-process {best['in-process']:.3f} s, "
          f"isolated {best['isolated']:.3f} s")
    # Batched: under 0.5 s on a quiet machine, 1.7 times in-process. A round trip per call costs
    # 50 us or more, 1 s and 14 times in-process at least. A loaded machine slows both sides
    # alike: the ratio still tells them apart where the seconds alone would not (a load of 10+).
    ratio = best["isolated"] / best["in-process"]
    assert best["isolated"] < 0.5 or ratio < 8, f"{ratio:.1f}x in-process: calls are not batched"


PROBE = '''
import os, resource


def probe():
    env = dict(os.environ)
    try:
        with open("big", "wb") as f:
            f.write(bytes(2 << 20))
        too_big = 0
    except OSError as exc:
        too_big = exc.errno
    return (len(env), resource.getrlimit(resource.RLIMIT_AS)[0] >> 20,
            resource.getrlimit(resource.RLIMIT_CORE)[0], os.getcwd() == env["HOME"],
            env["PATH"] == "/usr/bin:/bin", too_big)


def spin():
    while True:
        pass
'''


def test_the_worker_environment_is_scrubbed_and_limited(tmp_path: Path) -> None:
    python_dir = workspace(tmp_path, PROBE)
    os.environ["OL_TEST_SECRET"] = "not for the worker"
    try:
        limits = Limits(memory_mb=2048, file_bytes=1 << 20)
        with IsolatedTarget("e", python_dir, IMPORT_NAME, ["probe"], {}, limits) as t:
            count, memory_mb, core, cwd_is_home, path, too_big = t.call("probe")
            tmp = Path(t._worker.process.home)
    finally:
        del os.environ["OL_TEST_SECRET"]
    expected = 7 + sum(n in os.environ for n in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    assert (count, memory_mb, core, cwd_is_home, path) == (expected, 2048, 0, True, True)
    assert too_big == errno.EFBIG
    assert not tmp.exists()


def test_the_cpu_limit_is_a_crash_naming_it(tmp_path: Path) -> None:
    python_dir = workspace(tmp_path, PROBE)
    limits = Limits(cpu_s=2, call_timeout_s=60.0)  # CPU time, however loaded the machine is
    with IsolatedTarget("c", python_dir, IMPORT_NAME, ["spin"], {}, limits) as t:
        assert t.import_status() is None
        with pytest.raises(TargetCrashed, match=r"during spin\(\): the CPU time limit of 2 s"):
            t.call("spin")
