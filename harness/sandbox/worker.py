"""The isolated worker: imports a student's module and answers call requests from the parent.

Started only by ``harness.sandbox.isolated`` as
``python -I harness/sandbox/worker.py REQUEST_FD REPLY_FD PROGRESS_FD CONFIG_JSON``.

Order matters, because the student's code runs in this process:

1. before anything else loads: the parent's pids cgroup, resource limits, a read-only view of
   the file system (but for the worker's temporary directory), no network, a PID namespace of
   its own (this process stays outside as a shim that mirrors how PID 1 ends), dropped
   capabilities and ``no_new_privs`` (cgroup and namespaces need root; without them the worker
   runs with the limits only, and says so in its ``ready`` message);
2. the harness functions this loop needs are captured (``harness.sandbox.codec``, ``invoke``,
   ``frames`` and ``capture``, ``harness.engine.uniforms``)
   with only the repository root on ``sys.path``, then the harness's modules are dropped from
   ``sys.modules``, so a student package named ``harness`` or a monkey-patch of what
   ``sys.modules`` holds cannot replace what the loop already holds (``_forget_harness``);
3. the student's module is imported with its ``python/`` directory first on ``sys.path``,
   and the outcome is reported (``{"op": "ready", "problem": ...}``, with what the import
   printed);
4. requests are served until the request pipe closes.

Messages are length-prefixed JSON (4 bytes, big-endian) on two pipes of their own. What the
student's code writes to ``sys.stdout`` and ``sys.stderr`` is captured per request (bounded,
``harness.sandbox.capture``) and sent inside the chunks of replies (``out``, ``dropped``); what
it writes to the descriptors 1 and 2 goes to a third pipe the parent drains and caps. An
exception's reply carries its frames in the student's files (``harness.sandbox.frames``). A
request arrives in frames (the calls, piece by piece, in rows or by column: ``calls_of``);
replies stream back in chunks (every ``CHUNK_CALLS`` calls or ``CHUNK_S`` seconds, repeated small
replies sent once), and the index of the call in progress is kept in a shared 16-byte page so the
parent can name a call that hangs.
Nothing here is trusted by the parent: it decodes every reply as plain data and fails closed.
"""

from __future__ import annotations

import array
import binascii
import contextlib
import ctypes
import gc
import importlib
import json
import mmap
import os
import resource
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from harness.sandbox.protocol import Channel

CHUNK_CALLS = 256
CHUNK_S = 0.05
CHUNK_BYTES = 1 << 20

# prctl options and the capability ABI (linux/prctl.h, linux/capability.h).
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522
# Namespaces and mounts (linux/sched.h, linux/mount.h, fcntl.h).
_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWPID = 0x00020000, 0x40000000, 0x20000000
_CLONE_NEWIPC, _CLONE_NEWUSER, _CLONE_NEWUTS = 0x08000000, 0x10000000, 0x04000000
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1


def _set_limits(limits: dict) -> None:
    """Soft = hard, so the student's code cannot raise them back."""
    pairs = [
        (resource.RLIMIT_AS, limits["memory_bytes"]),
        (resource.RLIMIT_CPU, limits["cpu_s"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"]),
        (resource.RLIMIT_CORE, 0),
    ]
    if os.getuid() != 0:  # root is exempt from RLIMIT_NPROC: the parent kills strays instead
        pairs.append((resource.RLIMIT_NPROC, _user_tasks() + limits["max_processes"]))
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def _user_tasks() -> int:
    """Processes and threads of this user now: RLIMIT_NPROC counts them all, so the worker gets
    ``max_processes`` more than a developer's desktop already runs, not 64 in total."""
    uid, count = str(os.getuid()), 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if fields["Uid"].split()[0] == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return count


def _user_namespace(libc: ctypes.CDLL) -> bool:
    """Best effort: a user namespace of its own, the same uid and gid inside as outside (files
    keep their owners). For root it is a prison: no capability reaches the host any more, and
    keys the student's code adds to the user keyrings die with the namespace. For any other user
    it is what makes the namespaces below possible without privileges (where the kernel allows
    unprivileged user namespaces). Must run single-threaded."""
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWUSER) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                f.write(text)
    except OSError:
        return True  # unmapped: still no host capability; the mounts below may then fail
    if _SYS_KEYCTL is not None:  # a session keyring of its own too (not the harness's)
        libc.syscall(_SYS_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)
    # No user namespace inside this one: the code under test gets no capabilities of its own.
    with contextlib.suppress(OSError), open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    return True


def _sandbox(libc: ctypes.CDLL, writable: str) -> bool:
    """Best effort, as root: a private mount namespace where everything is read-only except
    ``writable`` (the worker's temporary directory) and ``/run`` is an empty read-only tmpfs (no
    socket of the host's daemons there to connect to: a read-only mount does not stop
    ``connect``), a network namespace with no network, an IPC namespace of its own (SysV shared
    memory, message queues, semaphores and POSIX message queues the student's code creates are
    gone with the worker's last process) and a UTS namespace (a host name of its own).

    So the student's code cannot change the harness, its catalogs, reports or another workspace
    (at import time, say, before the parent loads a catalog). Whether it worked is reported.
    """
    if (libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0
            and libc.unshare(_CLONE_NEWNS) != 0):
        return False
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False  # never change mounts that propagate back to the host
    path = writable.encode()
    read_only = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    read_write = (ctypes.c_uint64 * 4)(0, _MOUNT_ATTR_RDONLY, 0, 0)
    setattr_ = libc.mount_setattr if hasattr(libc, "mount_setattr") else None
    if setattr_ is None:
        return False
    if os.path.isdir("/run") and not os.path.realpath(writable).startswith("/run/"):
        libc.mount(b"tmpfs", b"/run", b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                   b"size=4k,mode=755")
    if (setattr_(_AT_FDCWD, b"/", _AT_RECURSIVE, read_only, 32) != 0
            or libc.mount(path, path, None, _MS_BIND, None) != 0
            or setattr_(_AT_FDCWD, path, 0, read_write, 32) != 0):
        return False
    os.chdir(writable)  # the working directory still refers to the read-only mount below
    return True


def _contain(libc: ctypes.CDLL) -> bool:
    """Best effort, inside the sandbox: a PID namespace, so the student's code can neither see nor
    signal any process outside it (it cannot stop or kill the harness), and everything it forks
    dies with it, whatever ``setsid`` or double forks it tries.

    The process the parent started stays outside as a shim (``_shim``) that mirrors how its only
    child, PID 1 of the namespace, ends. Returns True in that child, False if there is no namespace.
    """
    parent = os.getppid()
    if libc.unshare(_CLONE_NEWPID) != 0:
        return False
    child = os.fork()
    if child != 0:
        _shim(child, parent)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the shim is killed: so are we
    # A process group without the shim: here getppid() is 0, and kill(0, ...), the student's
    # "kill my parent", would signal the whole group; now it reaches this side only (and PID 1
    # ignores its own signals), so nothing of the harness is in reach.
    os.setpgid(0, 0)
    # A read-only /proc of this namespace: no host process is visible either.
    libc.mount(b"proc", b"/proc", b"proc", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    return True


def _shim(child: int, parent: int) -> NoReturn:
    """Wait for the namespace's PID 1 and end as it ended (the same exit code or signal); kill it
    if the harness dies. Holds no descriptor, so the parent sees the protocol close with the child.
    """
    os.closerange(0, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    watch = select.poll()
    watch.register(os.pidfd_open(child), select.POLLIN)
    while not watch.poll(1000):
        if os.getppid() != parent:
            os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 1)


def _drop_privileges(libc: ctypes.CDLL) -> None:
    """Become a subreaper, drop every capability, forbid gaining privileges (best effort).

    As a subreaper, processes the student's code orphans stay below this worker, where the
    parent finds them. Without capabilities a root worker cannot undo the sandbox, raise its
    hard limits, ptrace the parent or write its memory.
    """
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # EINVAL past the last capability, or EPERM without CAP_SETPCAP
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable for two 32-bit words
    if hasattr(libc, "capset"):
        libc.capset(header, data)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _watch_parent() -> None:
    """Without a shim: exit when the parent dies, even while a call hangs (PDEATHSIG is per
    thread of the parent, so it could fire while the harness lives)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="ol-watch-parent", daemon=True).start()


def _text(exc: BaseException) -> str:
    """An exception's message; a hostile ``__str__`` must not break the report."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001
        text = "<unprintable>"
    return text[:2000] if isinstance(text, str) else "<unprintable>"


def _import(import_name: str, python_dir: str):
    """Import the student's module: ``(module, None)`` or ``(None, problem)``."""
    try:
        return importlib.import_module(import_name), None
    except SyntaxError as exc:  # also IndentationError, TabError
        return None, {"kind": "syntax", "message": f"{type(exc).__name__}: {exc.msg}",
                      "file": exc.filename, "line": exc.lineno}
    except (SystemExit, KeyboardInterrupt) as exc:
        return None, {"kind": "crash", "file": None, "line": None,
                      "message": f"importing {import_name} raised {type(exc).__name__}"
                                 f"({_text(exc)}); a module must not exit the interpreter"}
    except BaseException as exc:  # noqa: BLE001 - any failure of the import is reported, not raised
        file = line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename.startswith(python_dir):
                file, line = frame.filename, frame.lineno
        return None, {"kind": "import", "message": f"{type(exc).__name__}: {_text(exc)}",
                      "file": file, "line": line}


def _reap_children() -> None:
    """Collect children the parent killed after the previous request."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _value_key(value: dict) -> object:
    """A hashable form of a small encoded scalar or tuple of scalars; None for anything else."""
    tag = value.get("t")
    if tag in ("bool", "int", "float"):
        return (tag, value.get("cls"), value.get("v"))
    if tag == "none":
        return ("none",)
    if tag == "tuple" and len(value.get("items", ())) <= 4:
        items = tuple(_value_key(item) for item in value["items"])
        return None if None in items else ("tuple", items)
    return None


def _reply_key(reply: dict) -> object:
    """Equal keys mean equal replies; None: send this reply on its own."""
    if reply.get("status") != "returned" or reply.get("mutated") or reply.get("aliased"):
        return None
    value = _value_key(reply["value"])
    return None if value is None else (value, tuple(reply.get("draws", ())))


def calls_of(piece: dict, floats: Any = array.array, from_base64: Any = binascii.a2b_base64,
             swap: bool = sys.byteorder != "little") -> list:
    """A piece's calls, each its encoded arguments (a list, or a tuple from columns), from its rows
    (``calls``) or its columns (``isolated._piece``): ``f64`` floats as float64 bytes, ``same``
    one argument for every call, ``json`` a list. ``SystemExit(3)`` for columns of unequal lengths."""
    if "calls" in piece:
        return piece["calls"]
    count, columns = piece["n"], []
    for column in piece["columns"]:
        if "f64" in column:
            data = floats("d", from_base64(column["f64"]))
            if swap:
                data.byteswap()
            columns.append(data.tolist())
        elif "same" in column:
            columns.append([column["same"]] * count)
        else:
            columns.append(column["json"])
    if any(len(items) != count for items in columns):
        raise SystemExit(3)  # the parent never sends this: end, and it sees a crash
    return list(zip(*columns, strict=True)) if columns else [()] * count


_GONE = object()  # stands for a handle this worker never issued
_NUMBERS = (float, int, bool)  # what a request's JSON numbers decode to


class Server:
    """Answers ``call`` requests with the harness functions captured before the student's import."""

    def __init__(self, channel: Channel, progress_fd: int, python_dir: str) -> None:
        from harness.engine import uniforms as sources
        from harness.sandbox import capture, codec, frames, invoke

        self.channel = channel
        self.capture = capture.Capture(capture.KEPT)
        self.streams = (capture.Stream(self.capture, "<stdout>"),
                        capture.Stream(self.capture, "<stderr>"))
        self.files = frames.under(python_dir)  # the staged copy the student's module runs from
        self.decode, self.encode_error = codec.decode, codec.encode_error
        self.invoke, self.invoke_immutable = invoke.invoke_encoded, invoke.invoke_immutable
        self.own_copy = invoke.own_copy
        self.source_from_spec, self.draw_count = sources.source_from_spec, sources.draw_count
        self.recording = sources.RecordingSource
        self.dumps, self.monotonic = json.JSONEncoder(separators=(",", ":")).encode, time.monotonic
        self.progress = memoryview(mmap.mmap(progress_fd, 16)).cast("q")
        self.module: Any = None  # the student's module: requests are served only once it imported
        self.objects: dict[object, object] = {}  # by handle number; a request may name any id
        self.ctor: type | None = None
        self.values: list = []
        self.frozen: list[bool] = []  # per value: a tuple of numbers, which no call can change

    def _arg(self, data: object, shared: list) -> object:
        if type(data) is list:  # [i]: a value sent once per request; each call gets its own copy
            return self.own_copy(self.values[data[0]])
        if type(data) is not dict:  # a plain float, int or bool, sent as a JSON number
            return data
        if data.get("t") == "sref":  # a source shared by every call of the request, as in-process
            return shared[data["i"]]
        if data.get("t") == "handle":  # an object an earlier call of this worker returned
            return self.objects.get(data.get("id"), _GONE)
        return self.decode(data)

    def _immutable_args(self, encoded: list) -> tuple | None:
        """The call's arguments if each is a number or a tuple of numbers sent once (``[i]``),
        which every call may share as in-process; else None."""
        out = []
        for a in encoded:
            if type(a) is list:
                if not self.frozen[a[0]]:
                    return None
                a = self.values[a[0]]
            elif type(a) is dict:
                return None
            out.append(a)
        return tuple(out)

    def register(self, obj: object) -> int | None:
        """Keep what a contract class's constructor returned; its number crosses instead."""
        if self.ctor is None or type(obj) is not self.ctor:
            return None
        self.objects[len(self.objects) + 1] = obj
        return len(self.objects)

    def resolve(self, name: str) -> object:
        """A module function, or for ``Class.method`` a caller of that method on its first argument."""
        if "." not in name:
            return getattr(self.module, name, None)
        cls, method = name.split(".", 1)
        if getattr(self.module, cls, None) is None:
            return None

        def call_method(obj: object, *args: object, **kwargs: object) -> object:
            if obj is _GONE:
                raise LookupError("the object no longer exists (its worker was restarted)")
            if type(obj).__name__ != cls:
                raise TypeError(f"{name} called on a {type(obj).__name__}")
            return getattr(obj, method)(*args, **kwargs)

        return call_method

    def capture_output(self) -> None:
        """``sys.stdout`` and ``sys.stderr`` are the capture's again (whatever the code under test
        made of them), with a fresh budget: what is printed from now on belongs to the request."""
        sys.stdout, sys.stderr = self.streams
        self.capture.begin()

    def printed(self) -> str:
        """What was printed since the last chunk, as the JSON members of a message (or "")."""
        taken = self.capture.take()
        if taken is None:
            return ""
        return f',"out":{self.dumps(taken[0])},"dropped":{taken[1]}'

    def _call(self, func: object, name: str, args: tuple, kwargs: dict) -> dict:
        sources = [a for a in (*args, *kwargs.values()) if isinstance(a, self.recording)]
        if func is None:
            missing = AttributeError(f"module {self.module.__name__!r} has no attribute {name!r}")
            return {"status": "raised", "error": self.encode_error(missing), "mutated": [],
                    "draws": [0 for _ in sources]}
        before = [self.draw_count(s) for s in sources]
        reply = self.invoke(func, args, kwargs, self.register, self.files)
        # Counts per call, not cumulative: the parent replays them into its own objects in order.
        reply["draws"] = [self.draw_count(s) - b for s, b in zip(sources, before, strict=True)]
        return reply

    def _send(self, rid: int, start: int, replies: list[dict], printed: str) -> None:
        """One chunk: the distinct replies once (``table``) and, per call, its entry (``index``),
        and ``printed`` (``printed()``: what the calls printed, JSON-encoded inside the message).

        Cheap calls mostly repeat a few small answers (True, False, (2, True)), so the parent
        decodes each once. A chunk too large is halved, so a message stays far below the cap.
        """
        table: list[dict] = []
        index: list[int] = []
        seen: dict[object, int] = {}
        by_id: dict[int, int] = {}  # one reply object shared by calls (invoke_immutable's)
        for reply in replies:
            slot = by_id.get(id(reply))
            if slot is None:
                key = _reply_key(reply)
                slot = seen.get(key) if key is not None else None
                if slot is None:
                    slot = len(table)
                    table.append(reply)
                    if key is not None:
                        seen[key] = slot
                by_id[id(reply)] = slot
            index.append(slot)
        text = self.dumps(table)
        if len(text) > CHUNK_BYTES and len(replies) > 1:
            half = len(replies) // 2
            self._send(rid, start, replies[:half], printed)
            self._send(rid, start + half, replies[half:], "")
            return
        self.channel.send_text(f'{{"op":"replies","id":{rid},"start":{start},'
                               f'"index":{self.dumps(index)},"table":{text}{printed}}}')

    def _pieces(self, request: dict, shared: list) -> Iterator[tuple[list, bool]]:
        """The request's calls as they arrive, piece by piece, each with whether it is plain."""
        piece = request
        while True:
            shared.extend(self.source_from_spec(spec) for spec in piece["sources"])
            for v in piece.get("values", ()):
                value = self.decode(v)
                self.values.append(value)
                self.frozen.append(type(value) is tuple and all(type(x) in _NUMBERS for x in value))
            calls = calls_of(piece)
            yield calls, all(type(a) is not dict and type(a) is not list
                             for encoded in calls for a in encoded)
            more = self.channel.recv()
            if more is None or more.get("op") != "more" or more.get("id") != request["id"]:
                raise SystemExit(3)  # the parent never sends this: end, and it sees a crash
            piece = more

    def handle(self, request: dict) -> None:
        rid, name, total = request["id"], request["fn"], request["count"]
        self.capture_output()
        self.values, self.frozen = [], []
        shared: list = []
        pieces = self._pieces(request, shared)
        calls, plain = next(pieces)
        kwargs = {k: self._arg(v, shared) for k, v in request["kwargs"].items()}
        func = self.resolve(name)
        # Only a call of one of the module's classes (a constructor, e.g. PCG32) makes a handle.
        self.ctor = func if isinstance(func, type) and func.__module__ == self.module.__name__ else None
        progress, monotonic, arg, call, invoke, immutable_args, invoke_immutable, files = (
            self.progress, self.monotonic, self._arg, self._call, self.invoke,
            self._immutable_args, self.invoke_immutable, self.files)
        kw_sources = any(isinstance(v, self.recording) for v in kwargs.values())
        kw_frozen = all(type(v) in _NUMBERS or (type(v) is tuple and all(type(x) in _NUMBERS for x in v))
                        for v in kwargs.values())
        answers: dict = {}  # invoke_immutable's replies of this request, one per distinct result
        progress[0] = rid
        pending: list[dict] = []
        start, last, offset = 0, monotonic(), 0
        for i in range(total):
            if i - offset == len(calls):
                offset += len(calls)
                calls, plain = next(pieces)
            encoded = calls[i - offset]
            progress[1] = i
            frozen = immutable_args(encoded) if kw_frozen and func is not None else None
            if frozen is not None:
                # The common case, kept lean: this loop is the cost of a cheap call.
                pending.append(invoke_immutable(func, frozen, kwargs, self.register, answers, files))
            elif plain and not kw_sources and func is not None:
                pending.append(invoke(func, tuple(encoded), kwargs, self.register, files))
            else:
                pending.append(call(func, name, tuple([arg(a, shared) for a in encoded]), kwargs))
            now = monotonic()
            if len(pending) >= CHUNK_CALLS or now - last >= CHUNK_S or i == total - 1:
                self._send(rid, start, pending, self.printed())
                start += len(pending)
                pending, last = [], now

    def serve(self) -> None:
        while True:
            request = self.channel.recv()
            if request is None:
                return
            _reap_children()  # what the parent killed after the previous request, dead by now
            self.handle(request)


def _forget_harness() -> None:
    """Drop the harness's modules from ``sys.modules`` once the server holds what it needs.

    The captured functions keep their own module dictionaries; without this, code that patched
    ``sys.modules["harness.sandbox.codec"]`` (its aliasing or in-place checks, say) would change what the
    loop calls. Importing ``harness`` again now gives a fresh copy that nothing here uses. (A
    determined student can still walk the stack to the live ones: see docs/isolation.md.)
    """
    for name in [n for n in sys.modules if n == "harness" or n.startswith("harness.")]:
        del sys.modules[name]


def harden(config: dict) -> tuple[bool, bool]:
    """Step 1 of the module docstring, for this process and all it starts: the parent's pids
    cgroup, the resource limits, the read-only sandbox, a PID namespace, no privileges, and an
    exit with the parent. Must run before any thread starts (unshare of the mount table and fork
    need a single thread). Returns (sandboxed, contained). ``harness.own_tests.engine``'s fork
    server uses it too.
    """
    if config.get("cgroup"):  # the parent's cap on the tasks of this whole tree
        with contextlib.suppress(OSError), open(f"{config['cgroup']}/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
    _set_limits(config["limits"])
    libc = ctypes.CDLL(None, use_errno=True)
    _user_namespace(libc)
    sandboxed = _sandbox(libc, os.getcwd())
    contained = sandboxed and _contain(libc)  # the new /proc must stay in the private mounts
    _drop_privileges(libc)
    if not contained:
        _watch_parent()
    sys.dont_write_bytecode = True
    return sandboxed, contained


def main(argv: list[str]) -> int:
    request_fd, reply_fd, progress_fd = (int(a) for a in argv[1:4])
    config = json.loads(argv[4])
    sandboxed, contained = harden(config)
    for fd in (request_fd, reply_fd, progress_fd):
        os.set_inheritable(fd, False)  # a program the student's code execs gets none of them
    sys.path.insert(0, config["repo_root"])
    from harness.sandbox.protocol import Channel

    server = Server(Channel(request_fd, reply_fd), progress_fd, config["python_dir"])
    sys.path.remove(config["repo_root"])
    _forget_harness()
    # What the server holds (its functions, their globals, the captured checks) moves to the
    # permanent generation: gc.get_objects() and gc.get_referrers() no longer list it.
    gc.freeze()
    sys.path.insert(0, config["python_dir"])
    server.capture_output()  # what the import prints is reported with it, apart from any test's
    server.module, problem = _import(config["import_name"], config["python_dir"])
    ready = {"op": "ready", "problem": problem, "sandboxed": sandboxed, "contained": contained}
    server.channel.send_text(json.dumps(ready)[:-1] + server.printed() + "}")
    try:
        if problem is None:
            server.serve()
    finally:  # a failure of the loop itself goes to the drained pipe, as the interpreter's own
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
