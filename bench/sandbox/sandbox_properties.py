"""What each sandbox mechanism isolates, checked from inside and from the host afterwards.

    python3 bench/sandbox_properties.py [--user oltest] [--python /usr/bin/python3] [--json OUT]

Run as root. For every mechanism (today's ``harness.sandbox.harden.harden`` as root and as a plain user,
the hand-written user namespace of ``bench/sandbox_mechanisms.py`` as both, ``bwrap`` with
``bench/sandbox/bwrap_flags.py.bwrap_argv`` as both) the driver starts a probe inside the sandbox (as
the plain user: uid/gid of ``--user``, no capabilities, set before exec with the limits) and
afterwards looks on the host for what the probe left: processes, SysV IPC objects, POSIX message
queues, keys, files. Then it kills what escaped, removes every object and prints a table.

The probe (``probe``) checks from inside: writes outside the writable directory, the network
(interfaces, TCP to a listener of the driver on 127.0.0.1, an abstract and a path Unix socket of
the driver), the processes it can see and signal (the driver's pid, its parent), ``ptrace`` of
its parent, a ``setsid`` + double-fork child, SysV shm (``IPC_PRIVATE``, 512 MiB and a few
bytes that name the run)/msg/sem and a POSIX queue, ``add_key`` to the user and session
keyrings, its capabilities, ``no_new_privs``, its rlimits, how many processes it can fork (pids
cgroup or ``RLIMIT_NPROC``), and whether it
can leave its cgroup or nest a user namespace. A second phase kills the mechanism's outermost
process with SIGKILL while the probe sleeps: does anything of the sandbox survive?
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import json
import os
import pwd
import resource
import secrets
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MECHANISMS = HERE / "sandbox_mechanisms.py"

IPC_CREAT, IPC_RMID = 0o1000, 0
SHM_BYTES = 512 << 20
SYS_ADD_KEY, SYS_KEYCTL = 248, 250  # x86_64
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_DESCRIBE, KEYCTL_READ = 1, 6, 11
KEYCTL_UNLINK, KEYCTL_INVALIDATE = 9, 21
PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    return libc


def _librt() -> ctypes.CDLL:
    try:
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
    except OSError:
        rt = ctypes.CDLL(None, use_errno=True)
    rt.mq_open.restype = ctypes.c_int
    return rt


def _err(code: int) -> str:
    return errno.errorcode.get(code, str(code))


def _try(fn) -> str:
    try:
        result = fn()
    except OSError as exc:
        return _err(exc.errno) if exc.errno else type(exc).__name__
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return "ok" if result is None else str(result)


def _status() -> dict:
    out = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("CapPrm", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp"):
                out[key] = value.strip()
    return out


def _write_file(path: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write("probe\n")


# ------------------------------------------------------------------ the probe, inside the sandbox

def _ptrace(libc: ctypes.CDLL, pid: int) -> str:
    if pid <= 0:
        return f"no target (ppid {pid})"
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        return _err(ctypes.get_errno())
    with_status = _try(lambda: os.waitpid(pid, WALL))
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    return f"ATTACHED ({with_status})"


def _undo_read_only(libc: ctypes.CDLL) -> str:
    """mount_setattr(/, AT_RECURSIVE, clear MOUNT_ATTR_RDONLY): the code making / writable."""
    read_write = (ctypes.c_uint64 * 4)(0, 1, 0, 0)
    if libc.mount_setattr(-100, b"/", 0x8000, read_write, 32) == 0:
        return "DONE"
    return _err(ctypes.get_errno())


def _escapee(python: str, token: str) -> str:
    """setsid + double fork: a grandchild in a session of its own, orphaned at once."""
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.execv(python, [python, "-c", "import time; time.sleep(60)", f"ol-escape-{token}"])
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    return "forked"


def _fork_count(limit: int) -> str:
    r, w = os.pipe()
    children, outcome = [], "no limit hit"
    for _ in range(limit):
        try:
            pid = os.fork()
        except OSError as exc:
            outcome = _err(exc.errno)
            break
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        children.append(pid)
    os.close(w)
    os.close(r)
    for pid in children:
        os.waitpid(pid, 0)
    return f"{len(children)} forks, then {outcome}"


def _connect(family: int, address, timeout: float = 1.0) -> str:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(address)
        return "CONNECTED"
    except OSError as exc:
        return _err(exc.errno) if exc.errno else type(exc).__name__
    finally:
        s.close()


def probe(config_json: str) -> int:
    cfg = json.loads(config_json)
    token, libc, rt = cfg["token"], _libc(), _librt()
    res: dict[str, object] = {"uid": os.getuid(), "pid": os.getpid(), "ppid": os.getppid(),
                              "status": _status()}
    with open("/proc/self/uid_map", encoding="ascii") as f:
        res["uid_map"] = " ".join(f.read().split())
    # The file system.
    res["write_writable"] = _try(lambda: _write_file(os.path.join(os.getcwd(), "probe-ok")))
    res["write_outside"] = _try(lambda: _write_file(os.path.join(cfg["outside"], "planted")))
    res["write_tmp"] = _try(lambda: _write_file(f"/tmp/ol-probe-{token}"))
    res["write_dev_shm"] = _try(lambda: _write_file(f"/dev/shm/ol-probe-{token}"))
    res["leave_cgroup"] = _try(lambda: _write_file("/sys/fs/cgroup/pids/cgroup.procs"))
    res["undo_read_only"] = _undo_read_only(libc)
    res["nested_userns"] = _try(lambda: subprocess.run(
        ["unshare", "-U", "true"], check=False, capture_output=True).returncode)
    # The network.
    res["interfaces"] = _try(lambda: ",".join(n for _, n in socket.if_nameindex()))
    res["tcp_127.0.0.1"] = _connect(socket.AF_INET, ("127.0.0.1", cfg["port"]))
    res["abstract_unix"] = _connect(socket.AF_UNIX, "\0" + cfg["abstract"])
    res["path_unix"] = _connect(socket.AF_UNIX, cfg["unix_path"])
    res["run_unix"] = _connect(socket.AF_UNIX, cfg["run_path"])
    # Processes.
    res["procs_visible"] = sum(1 for n in os.listdir("/proc") if n.isdigit())
    host = cfg["host_pid"]
    try:
        with open(f"/proc/{host}/cmdline", "rb") as f:
            res["host_pid_visible"] = b"sandbox_properties" in f.read()
    except OSError:
        res["host_pid_visible"] = False
    res["kill_host_pid_0"] = _try(lambda: os.kill(host, 0))
    res["kill_ppid_0"] = _try(lambda: os.kill(os.getppid(), 0)) if os.getppid() > 0 else "ppid 0"
    res["ptrace_ppid"] = _ptrace(libc, os.getppid())
    res["ptrace_host_pid"] = _ptrace(libc, host) if res["host_pid_visible"] else "not visible"
    res["escapee"] = _escapee(cfg["python"], token)
    # IPC.
    shm = libc.shmget(0, cfg["shm_bytes"], IPC_CREAT | 0o600)
    res["shmget"] = f"id {shm}" if shm >= 0 else _err(ctypes.get_errno())
    msg = libc.msgget(cfg["ipc_key"], IPC_CREAT | 0o600)
    res["msgget"] = f"id {msg}" if msg >= 0 else _err(ctypes.get_errno())
    sem = libc.semget(cfg["ipc_key"], 1, IPC_CREAT | 0o600)
    res["semget"] = f"id {sem}" if sem >= 0 else _err(ctypes.get_errno())
    mq = rt.mq_open(f"/ol-probe-{token}".encode(), ctypes.c_int(os.O_CREAT | os.O_RDWR),
                    ctypes.c_int(0o600), None)
    res["mq_open"] = f"fd {mq}" if mq >= 0 else _err(ctypes.get_errno())
    # Keys.
    for name, ring in (("user", KEY_SPEC_USER_KEYRING), ("session", KEY_SPEC_SESSION_KEYRING)):
        serial = libc.syscall(ctypes.c_long(SYS_ADD_KEY), b"user", f"ol-probe-{name}-{token}".encode(),
                              b"data", ctypes.c_size_t(4), ctypes.c_long(ring))
        res[f"add_key_{name}"] = f"serial {serial}" if serial >= 0 else _err(ctypes.get_errno())
    # Limits.
    res["rlimits"] = {name: resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))[0]
                      for name in ("AS", "CPU", "FSIZE", "NPROC", "CORE")}
    res["forks"] = _fork_count(cfg["fork_attempts"])
    with open("/proc/self/cgroup", encoding="ascii") as f:
        res["cgroup"] = next((line.strip() for line in f if ":pids:" in line), "?")
    print(json.dumps(res), flush=True)
    if cfg.get("hold"):  # the parent-death phase: wait to be killed
        time.sleep(60)
    return 0


# -------------------------------------------------------------------- the driver, on the host

def _tasks_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}")
                if st.st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


def _find(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(name))
            except OSError:
                continue
    return found


def _pids_cgroup(limit: int) -> str | None:
    path = f"/sys/fs/cgroup/pids/ol-probe-{secrets.token_hex(4)}"
    try:
        os.mkdir(path)
        Path(path, "pids.max").write_text(str(limit))
    except OSError:
        return None
    return path


def _sysvipc(kind: str) -> list[list[str]]:
    with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
        return [line.split() for line in list(f)[1:]]


def _session_keys(libc: ctypes.CDLL) -> dict[int, str]:
    buf = (ctypes.c_int32 * 4096)()
    n = libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_READ),
                     ctypes.c_long(KEY_SPEC_SESSION_KEYRING), buf, ctypes.c_size_t(4 * 4096))
    out = {}
    for serial in list(buf)[:max(0, n) // 4]:
        desc = ctypes.create_string_buffer(512)
        libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_DESCRIBE),
                     ctypes.c_long(serial), desc, ctypes.c_size_t(512))
        out[serial] = desc.value.decode(errors="replace")
    return out


def _as_user_keys(python: str, uid: int, gid: int, token: str, wait_s: float) -> list[str]:
    """As ``uid``: the probe's keys in /proc/keys (which shows a user all its keys) once they
    stop vanishing (the kernel collects a dead namespace's keyrings asynchronously, within about
    2 s here), at most ``wait_s``; each found is then unlinked from the user keyring and
    invalidated. Lines "serial description +seconds waited"."""
    code = ("import ctypes,sys,time\nlibc=ctypes.CDLL(None,use_errno=True)\n"
            "start=time.monotonic()\n"
            "while True:\n"
            "    found=[l.strip() for l in open('/proc/keys') if sys.argv[1] in l]\n"
            "    if not found or time.monotonic()-start>=float(sys.argv[2]): break\n"
            "    time.sleep(0.25)\n"
            "waited=time.monotonic()-start\n"
            "for line in found:\n"
            "    serial=int(line.split()[0],16)\n"
            "    libc.syscall(250, 9, serial, -4)\n"
            "    libc.syscall(250, 21, serial)\n"
            "    print(line.split(None, 8)[-1].split(':')[0], '+%.1fs' % waited)\n"
            "if not found: print('none +%.1fs' % waited)\n")
    proc = subprocess.run([python, "-I", "-c", code, token, str(wait_s)], check=False,
                          capture_output=True, text=True, preexec_fn=_drop_to(uid, gid, None, {}))
    return [line for line in proc.stdout.splitlines() if line]


def _drop_to(uid: int, gid: int, cgroup: str | None, limits: dict):
    def preexec() -> None:
        if cgroup:
            with open(f"{cgroup}/cgroup.procs", "w", encoding="ascii") as f:
                f.write(str(os.getpid()))
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))
        if uid != 0:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
    return preexec


def mechanisms(python: str, bwrap: str | None, wheel: str | None) -> list[tuple[str, bool, object]]:
    """(name, as_root, argv builder)."""
    from bwrap_flags import bwrap_command

    def mech(mode):
        return lambda w, cfg: [python, "-I", str(MECHANISMS), mode, w, "probe", cfg]

    # The interpreter's prefix (a venv under /tmp, say) stays visible although /tmp is replaced.
    prefix = Path(python).absolute().parent.parent

    def bw(binary, mode="none", **options):
        return lambda w, cfg: [*bwrap_command(binary, w, extra_ro=(prefix,), **options), python,
                               "-I", str(MECHANISMS), mode, w, "probe", cfg]

    out = [("none (plain user)", False, mech("none")),
           ("harden, root (today)", True, mech("harden")),
           ("harden, plain user (today)", False, mech("harden")),
           ("hand-written userns, root", True, mech("userns")),
           ("hand-written userns, plain user", False, mech("userns"))]
    if bwrap:
        out += [("bwrap 0.8 (apt), root", True, bw(bwrap)),
                ("bwrap 0.8 (apt), root, no userns", True, bw(bwrap, unshare_user=False)),
                ("bwrap 0.8 (apt), plain user", False, bw(bwrap)),
                ("bwrap 0.8 + a fresh session keyring, root", True, bw(bwrap, "keyring")),
                ("bwrap 0.8 + a fresh session keyring, plain user", False, bw(bwrap, "keyring"))]
    if wheel:
        out += [("bwrap 0.11 (wheel), plain user", False, bw(wheel))]
    return out


def run_one(name: str, as_root: bool, build, opts, libc) -> dict:
    user = pwd.getpwnam(opts.user)
    uid, gid = (0, 0) if as_root else (user.pw_uid, user.pw_gid)
    token = secrets.token_hex(5)
    base = Path(f"/var/tmp/ol-probe-{token}")
    base.mkdir(mode=0o755)
    writable, outside = base / "w", base / "outside"
    writable.mkdir()
    outside.mkdir()
    os.chown(writable, uid, gid)
    os.chmod(outside, 0o1777)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    abstract = f"ol-probe-{token}"
    abs_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abs_sock.bind("\0" + abstract)
    abs_sock.listen(8)
    unix_path = str(base / "sock")
    path_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path_sock.bind(unix_path)
    path_sock.listen(8)
    os.chmod(unix_path, 0o777)
    run_path = f"/run/ol-probe-{token}.sock"  # where daemons' sockets live (docker, dbus)
    run_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    run_sock.bind(run_path)
    run_sock.listen(8)
    os.chmod(run_path, 0o777)
    cgroup = _pids_cgroup(opts.max_pids) if as_root else None  # a plain user has none
    limits = {resource.RLIMIT_AS: 4096 << 20, resource.RLIMIT_CPU: 600,
              resource.RLIMIT_FSIZE: 64 << 20, resource.RLIMIT_CORE: 0}
    if uid != 0:
        limits[resource.RLIMIT_NPROC] = _tasks_of(uid) + opts.max_pids
    if "harden" in name:
        limits = {}  # harden sets them itself (soft = hard), as the worker does
    ipc_key = int(token[:7], 16)
    # 512 MiB and a few bytes of this run's own, so the host side finds exactly its segment
    # (IPC_PRIVATE has no key; other users of the machine may make 512 MiB segments too).
    shm_bytes = SHM_BYTES + 1 + ipc_key % 4093
    cfg = {"token": token, "outside": str(outside), "port": tcp.getsockname()[1],
           "abstract": abstract, "unix_path": unix_path, "run_path": run_path,
           "host_pid": os.getpid(),
           "python": opts.python, "ipc_key": ipc_key, "shm_bytes": shm_bytes,
           "fork_attempts": 300}
    env = {"PATH": "/usr/bin:/bin", "HOME": str(writable), "TMPDIR": str(writable),
           "LANG": "C.UTF-8", "OL_BENCH_CGROUP": cgroup or "",
           "OL_BENCH_MAX_PIDS": str(opts.max_pids)}
    result: dict[str, object] = {"mechanism": name, "token": token}
    # Phase 1: the probe runs to its end.
    proc = subprocess.run(build(str(writable), json.dumps(cfg)), check=False,
                          capture_output=True, text=True, cwd=writable, env=env,
                          preexec_fn=_drop_to(uid, gid, cgroup, limits), timeout=120)
    result["exit"] = proc.returncode
    try:
        result["inside"] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        result["inside"] = {}
        result["stderr"] = proc.stderr[-2000:]
    # A connection waiting in a listener's backlog holds the client's credentials (SO_PEERCRED),
    # and with them its user namespace and keyrings: close what the probe connected first.
    _drain(tcp, abs_sock, path_sock, run_sock)
    time.sleep(3.0)  # the kernel frees dead namespaces and keys asynchronously (1 s is too short)
    host: dict[str, object] = {}
    host["escapee_alive"] = _find(f"ol-escape-{token}")
    host["planted_outside"] = (outside / "planted").exists()
    host["planted_tmp"] = Path(f"/tmp/ol-probe-{token}").exists()
    host["planted_dev_shm"] = Path(f"/dev/shm/ol-probe-{token}").exists()
    shm = [r for r in _sysvipc("shm") if int(r[3]) == shm_bytes]
    msg = [r for r in _sysvipc("msg") if int(r[0]) == ipc_key]
    sem = [r for r in _sysvipc("sem") if int(r[0]) == ipc_key]
    host["shm_left"], host["msg_left"], host["sem_left"] = len(shm), len(msg), len(sem)
    rt = _librt()
    mq = rt.mq_open(f"/ol-probe-{token}".encode(), ctypes.c_int(os.O_RDONLY))
    host["mq_left"] = mq >= 0
    session = {s: d for s, d in _session_keys(libc).items() if token in d}
    host["session_keys_left"] = sorted(d.rsplit(";", 1)[-1] for d in session.values())
    own = _as_user_keys(opts.python, uid, gid, token, 10.0)
    host["keys_in_proc_keys"] = [line for line in own if not line.startswith("none")]
    host["keys_wait"] = own[-1].split()[-1] if own else "?"
    result["host"] = host
    # Clean up phase 1.
    for pid in host["escapee_alive"]:
        with _quiet():
            os.kill(pid, signal.SIGKILL)
    for row in shm:
        libc.shmctl(int(row[1]), IPC_RMID, None)
    for row in msg:
        libc.msgctl(int(row[1]), IPC_RMID, None)
    for row in sem:
        libc.semctl(int(row[1]), 0, IPC_RMID)
    if mq >= 0:
        rt.mq_close(mq)
        rt.mq_unlink(f"/ol-probe-{token}".encode())
    for serial in session:
        libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_UNLINK), ctypes.c_long(serial),
                     ctypes.c_long(KEY_SPEC_SESSION_KEYRING))
        libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_INVALIDATE), ctypes.c_long(serial))
    for leftover in (Path(f"/tmp/ol-probe-{token}"), Path(f"/dev/shm/ol-probe-{token}")):
        with _quiet():
            leftover.unlink()
    # Phase 2: SIGKILL the outermost process while the probe holds; does anything survive?
    cfg2 = dict(cfg, hold=True, token=token + "h", fork_attempts=0)
    holder = subprocess.Popen(build(str(writable), json.dumps(cfg2)), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=writable, env=env,
                              preexec_fn=_drop_to(uid, gid, cgroup, limits))
    ready, _, _ = select.select([holder.stdout], [], [], 60)
    line = holder.stdout.readline() if ready else b""
    holder.kill()
    holder.wait()
    holder.stdout.close()
    time.sleep(1.0)
    _drain(tcp, abs_sock, path_sock, run_sock)
    survivors = _find(token + "h")
    host["after_outer_sigkill"] = ("probe never ready" if not line else
                                   f"{len(survivors)} survivors")
    for pid in survivors:
        with _quiet():
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    for row in _sysvipc("shm"):
        if int(row[3]) == shm_bytes:
            libc.shmctl(int(row[1]), IPC_RMID, None)
    for kind, ctl in (("msg", libc.msgctl), ("sem", None)):
        for row in _sysvipc(kind):
            if int(row[0]) == ipc_key:
                (ctl(int(row[1]), IPC_RMID, None) if ctl else libc.semctl(int(row[1]), 0, IPC_RMID))
    rt.mq_unlink(f"/ol-probe-{token}h".encode())
    for leftover in (Path(f"/tmp/ol-probe-{token}h"), Path(f"/dev/shm/ol-probe-{token}h")):
        with _quiet():
            leftover.unlink()
    for serial, desc in _session_keys(libc).items():
        if token in desc:
            libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_UNLINK),
                         ctypes.c_long(serial), ctypes.c_long(KEY_SPEC_SESSION_KEYRING))
    _as_user_keys(opts.python, uid, gid, token, 3.0)
    for s in (tcp, abs_sock, path_sock, run_sock):
        s.close()
    os.unlink(run_path)
    subprocess.run(["rm", "-rf", str(base)], check=False)
    if cgroup:
        for _ in range(200):
            try:
                os.rmdir(cgroup)
                break
            except OSError:
                time.sleep(0.01)
    return result


def _drain(*listeners: socket.socket) -> None:
    for listener in listeners:
        listener.setblocking(False)
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                break
            conn.close()


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], OSError)


def _cell(result: dict) -> dict[str, str]:
    i, h = result.get("inside", {}), result.get("host", {})
    if not i:
        return {"start": f"FAILED (exit {result.get('exit')}): "
                         f"{(result.get('stderr') or '').strip().splitlines()[-1:]}"}
    st = i.get("status", {})
    return {
        "uid / uid_map": f"{i['uid']} / {i['uid_map']}",
        "write outside": i["write_outside"] + (" PLANTED" if h["planted_outside"] else ""),
        "write /tmp": i["write_tmp"] + (" (on the host's /tmp)" if h["planted_tmp"] else ""),
        "write /dev/shm": i["write_dev_shm"] + (" (on the host)" if h["planted_dev_shm"] else ""),
        "undo read-only": i["undo_read_only"],
        "interfaces": i["interfaces"],
        "TCP 127.0.0.1": i["tcp_127.0.0.1"],
        "abstract unix": i["abstract_unix"],
        "path unix (/var/tmp)": i["path_unix"],
        "path unix (/run)": i["run_unix"],
        "procs visible": str(i["procs_visible"]),
        "host pid visible": str(i["host_pid_visible"]),
        "kill(host pid, 0)": i["kill_host_pid_0"],
        "kill(ppid, 0)": f"{i['kill_ppid_0']} (ppid {i['ppid']})",
        "ptrace ppid": i["ptrace_ppid"],
        "ptrace host pid": i["ptrace_host_pid"],
        "setsid+double fork alive after": str(len(h["escapee_alive"])),
        "after SIGKILL of outer": h["after_outer_sigkill"],
        "shm/msg/sem made": f"{i['shmget']}, {i['msgget']}, {i['semget']}",
        "shm/msg/sem left on host": f"{h['shm_left']}/{h['msg_left']}/{h['sem_left']}",
        "mq_open / left": f"{i['mq_open']} / {h['mq_left']}",
        "add_key user / session": f"{i['add_key_user']} / {i['add_key_session']}",
        "keys left: parent's session": ",".join(h["session_keys_left"]) or "none",
        "keys left: /proc/keys (same uid)": (", ".join(h["keys_in_proc_keys"])
                                             or f"none (gone after {h['keys_wait']})"),
        "CapEff / CapBnd": f"{st.get('CapEff')} / {st.get('CapBnd')}",
        "NoNewPrivs": st.get("NoNewPrivs", "?"),
        "nested userns (rc)": i["nested_userns"],
        "rlimits AS/FSIZE/NPROC": "/".join(str(i["rlimits"][k]) for k in ("AS", "FSIZE", "NPROC")),
        "forks (pids.max or NPROC)": i["forks"],
        "leave pids cgroup": i["leave_cgroup"],
        "cgroup": i["cgroup"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="oltest", help="the plain user to run as (must exist)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter inside (the plain user must be able to run it)")
    parser.add_argument("--max-pids", type=int, default=24)
    parser.add_argument("--json", help="write the raw results here")
    parser.add_argument("--only", nargs="*", help="mechanism names containing these words")
    opts = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root (it starts the probe as root and as --user)")
    sys.path[:0] = [str(REPO), str(HERE)]
    from bwrap_flags import find_bwrap, wheel_bwrap

    libc = _libc()
    # A session keyring of the driver's own, as a login shell has: the sandbox inherits it.
    libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                 b"ol-probe-driver")
    bwrap = find_bwrap()
    wheel = wheel_bwrap()
    results = []
    for name, as_root, build in mechanisms(opts.python, bwrap, wheel):
        if opts.only and not any(w in name for w in opts.only):
            continue
        results.append(run_one(name, as_root, build, opts, libc))
    if opts.json:
        Path(opts.json).write_text(json.dumps(results, indent=1))
    cells = [_cell(r) for r in results]
    rows = list(dict.fromkeys(k for c in cells for k in c))
    for result, cell in zip(results, cells, strict=True):
        print(f"\n## {result['mechanism']}  (exit {result['exit']})")
        for row in rows:
            if row in cell:
                print(f"  {row:34} {cell[row]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
