"""The zygote: a clean process that has imported what an isolated worker imports, and forks one
worker per request, so a process that starts many workers (a grading slot) pays the interpreter's
start and numpy's import once, not once per submission.

Started only by ``harness.sandbox.prestarted.Zygote`` as
``python -I harness/sandbox/zygote.py CONTROL_FD REPO_ROOT``, by the process that will own its
workers, with nothing of that process's memory (a fresh interpreter: ``exec`` keeps no secret, so
not even a slot's run seed is here) and no descriptor but the control socket. It imports numpy and
the harness modules of the worker's loop (the standard library and ``harness.sandbox``: no
catalog, no reference, no submission), then waits.

A request is one ``SOCK_SEQPACKET`` message: a JSON object (``config``: the worker's, as its
command line would carry it; ``home``: its run folder; ``env``: its environment) and four
descriptors (the request pipe, the reply pipe, the progress page, the output pipe). The zygote
forks twice: the middle process forks the worker and exits at once, so the worker is re-parented
to the nearest subreaper above it, the process that asked (``Supervised`` makes itself one), which
then waits for it, kills its tree and reaps it exactly as it does a worker it started itself. The
worker waits until it is adopted, starts a session of its own, puts the descriptors in place,
enters its run folder and environment, and goes on as ``worker.main`` does after the interpreter's
start: hardening first (limits, namespaces, the view, nobody), then the student's import. So no
untrusted code ever runs in the zygote or before the worker's confinement; the zygote replies with
the worker's pid (or ``0`` if the fork failed) and serves the next request.

The zygote exits when the control socket closes or its parent dies.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import sys
import time
import traceback

MAX_REQUEST = 1 << 20
KEPT_FDS = 4  # request, reply, progress, output


def _worker(request: dict, fds: list[int], middle: int, control: socket.socket) -> None:
    """In the forked worker: wait to be adopted, set the process up, run ``worker.run``. Never
    returns."""
    code = 70
    try:
        deadline = time.monotonic() + 5.0
        while os.getppid() == middle:  # the middle process exits at once; we belong to the asker
            if time.monotonic() > deadline:
                os._exit(72)
            time.sleep(0.0002)
        os.setsid()
        control.close()
        request_fd, reply_fd, progress_fd, output_fd = fds
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        keep = {0, 1, 2, request_fd, reply_fd, progress_fd}
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.chdir(request["home"])
        os.environ.clear()
        os.environ.update(request["env"])
        from harness.sandbox import worker

        sys.argv = [worker.__file__]
        code = worker.run(request_fd, reply_fd, progress_fd, request["config"])
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the worker's own last words, on its output pipe
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code)


def _spawn(request: dict, fds: list[int], control: socket.socket) -> int:
    """Fork the worker through a middle process that exits at once; its pid (0: no fork)."""
    read_end, write_end = os.pipe()
    try:
        middle = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return 0
    if middle == 0:
        os.close(read_end)
        try:
            me = os.getpid()
            child = os.fork()
            if child == 0:
                os.close(write_end)
                _worker(request, fds, me, control)
            os.write(write_end, child.to_bytes(8, "little"))
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    os.close(write_end)
    data = b""
    while len(data) < 8:
        chunk = os.read(read_end, 8 - len(data))
        if not chunk:
            break
        data += chunk
    os.close(read_end)
    os.waitpid(middle, 0)  # once reaped, the worker has been re-parented to the asker
    return int.from_bytes(data, "little") if len(data) == 8 else 0


def serve(control: socket.socket, parent: int) -> None:
    poller = select.poll()
    poller.register(control.fileno(), select.POLLIN)
    while True:
        if not poller.poll(1000):
            if os.getppid() != parent:
                return
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, KEPT_FDS)
        except OSError:
            return
        if not data:
            for fd in fds:
                os.close(fd)
            return
        try:
            request = json.loads(data)
            pid = _spawn(request, fds, control) if len(fds) == KEPT_FDS else 0
        except (ValueError, TypeError, KeyError):
            pid = 0
        finally:
            for fd in fds:
                os.close(fd)
        control.sendall(json.dumps({"pid": pid}).encode())


def main(argv: list[str]) -> int:
    control_fd, repo_root = int(argv[1]), argv[2]
    parent = os.getppid()
    sys.path.insert(0, repo_root)
    # What every worker imports, once: numpy, and the worker's loop with the modules it captures.
    import numpy  # noqa: F401

    from harness import uniforms  # noqa: F401
    from harness.sandbox import (  # noqa: F401
        capture,
        codec,
        frames,
        harden,
        invoke,
        protocol,
        worker,
    )

    sys.path.remove(repo_root)
    control = socket.socket(fileno=control_fd)
    control.sendall(b'{"op": "ready"}')
    serve(control, parent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
