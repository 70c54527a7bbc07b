"""Running ``ol`` as its users do, for the tests that need a real process: one shared way.

``Ol(tmp, *args)`` starts ``python -m harness ARGS`` from the checkout, in a session of its own
(so a time-out kills ol and everything it started), with a private ``TMPDIR`` (a fresh folder
under ``tmp``, so what ol leaves behind is seen: ``left()``; ``shared_tmp=True`` uses ``tmp``
itself, for runs that must meet what an earlier one left), no ``PYTHON*`` variable of the
test session and no ``GITHUB_STEP_SUMMARY``. ``wait(timeout)`` kills the session past
``timeout`` and keeps the exit code, the output and the wall time; while it waits it can sample
the command's peak memory (``peak=True``: ``VmHWM``, read from the host) or call ``watch``
every 50 ms and keep what it returns (what the sandbox cannot fake). ``limit_as`` runs ol under
an address-space limit set before it execs. ``ol(tmp, *args, ...)`` is ``Ol(...).wait()``.

The ``run_ol`` fixture (``tests/conftest.py``) is the same bound to the test's ``tmp_path``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from harness.paths import REPO_ROOT

RUN_BOUND_S = 180.0  # any single ol command of the tests takes seconds; past this it hangs
# ol under an address-space limit: set in a small launcher, which then execs ol.
LIMITED = ("import os, resource, sys; n = int(sys.argv[1]); "
           "resource.setrlimit(resource.RLIMIT_AS, (n, n)); "
           "os.execv(sys.executable, [sys.executable, '-m', 'harness', *sys.argv[2:]])")


class Ol:
    """One ol command: a session of its own, a private TMPDIR, killed if it overruns."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None,
                 limit_as: int | None = None, peak: bool = False,
                 watch: Callable[[], object] | None = None, shared_tmp: bool = False) -> None:
        # shared_tmp: ``tmp`` itself is the TMPDIR, shared by several runs (what one leaves,
        # the next one's start-up sweep finds)
        self.tmp = tmp if shared_tmp else tmp / f"oltmp-{secrets.token_hex(3)}"
        self.tmp.mkdir(parents=True, exist_ok=shared_tmp)
        environment = {k: v for k, v in os.environ.items()
                       if not k.startswith("PYTHON") and k != "GITHUB_STEP_SUMMARY"}
        environment.update(TMPDIR=str(self.tmp), PYTHONDONTWRITEBYTECODE="1")
        environment.update(env or {})
        command = [sys.executable, "-m", "harness", *args]
        if limit_as is not None:
            command = [sys.executable, "-c", LIMITED, str(limit_as), *args]
        self._peak, self._watch = peak, watch
        self.peak_kb = 0
        self.samples: list = []
        self.out = self.err = ""
        self.rc: int | None = None
        self.elapsed = 0.0
        self.start = time.monotonic()
        self.proc = subprocess.Popen(command, cwd=REPO_ROOT, env=environment,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)

    def wait(self, timeout: float = RUN_BOUND_S) -> Ol:
        """Wait for the command (killing its session past ``timeout``); its output as text."""
        due = time.monotonic() + timeout
        if self._peak or self._watch is not None:
            out, err = self._sample_until(due)
        else:
            try:
                out, err = self.proc.communicate(timeout=max(due - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                self.kill()
                out, err = self.proc.communicate()
        self.out, self.err = out.decode(errors="replace"), err.decode(errors="replace")
        self.rc = self.proc.returncode
        self.elapsed = time.monotonic() - self.start
        return self

    def _sample_until(self, due: float) -> tuple[bytes, bytes]:
        """Read the peak memory and call ``watch`` every 50 ms until ol ends or ``due`` passes.
        The pipes are drained by a reader thread meanwhile, so a talkative ol cannot block."""
        import threading

        chunks: dict[str, list[bytes]] = {"out": [], "err": []}

        def drain(name: str, pipe) -> None:
            for block in iter(lambda: pipe.read(65536), b""):
                chunks[name].append(block)

        readers = [threading.Thread(target=drain, args=(name, pipe), daemon=True)
                   for name, pipe in (("out", self.proc.stdout), ("err", self.proc.stderr))]
        for reader in readers:
            reader.start()
        status = Path(f"/proc/{self.proc.pid}/status")
        while self.proc.poll() is None and time.monotonic() < due:
            if self._peak:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    for line in status.read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
            if self._watch is not None:
                with contextlib.suppress(Exception):
                    value = self._watch()
                    if value:
                        self.samples.append(value)
            time.sleep(0.05 if self._watch is not None else 0.02)
        if self.proc.poll() is None:
            self.kill()
        self.proc.wait()
        for reader in readers:
            reader.join(timeout=10)
        return b"".join(chunks["out"]), b"".join(chunks["err"])

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def left(self) -> list[str]:
        """What ol left in its TMPDIR."""
        return sorted(os.listdir(self.tmp))

    @property
    def wall_s(self) -> float:
        return self.elapsed

    @property
    def text(self) -> str:
        return f"rc={self.rc}\n--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}"


def ol(tmp: Path, *args: str, timeout: float = RUN_BOUND_S, **kwargs) -> Ol:
    """``ol ARGS`` run to its end (or killed past ``timeout``)."""
    return Ol(tmp, *args, **kwargs).wait(timeout)
