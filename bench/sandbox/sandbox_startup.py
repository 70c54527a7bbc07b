"""Start-up cost of each sandbox mechanism: ``python -I -c "import numpy"`` plain and sandboxed.

    python3 bench/sandbox_startup.py [--rounds 21] [--user oltest] [--python PYTHON] [--target true]

One interleaved run: every round times each variant once (a fresh process each, the order
rotated from round to round, so a change in the machine's load hits all of them alike); the
table gives the median wall time per variant, its ratio to the plain start of the same user and
the difference in milliseconds, and the same for the CPU time of the process tree (as root from
a ``cpuacct`` cgroup per variant, else ``wait4``), which other load on the machine disturbs less.
Variants (each as root, and with ``--user`` as that
user too, its uid and gid set before exec, as ``bench/sandbox_properties.py`` does):

- ``plain``: ``PYTHON -I -c "import numpy"``;
- ``wrapper``: ``PYTHON -I bench/sandbox_mechanisms.py none W numpy`` (the wrapper script that the
  two hand-written variants use, importing ``harness.sandbox.worker`` but without a sandbox: the baseline
  of the hand-written variants, as ``plain`` is bwrap's);
- ``harden``: the same with ``harness.sandbox.harden.harden`` first (today's worker; as a plain user it
  only sets limits);
- ``userns``: the same with the hand-written user namespace of ``sandbox_mechanisms.py``;
- ``unshare -Urpimn``: ``unshare -Urpimn --fork --mount-proc PYTHON -I -c "import numpy"``
  (namespaces only, no read-only file system: the kernel's cost alone);
- ``bwrap``: ``bwrap $(bwrap_argv(W, extra_ro=(prefix,))) PYTHON -I -c "import numpy"``, with the
  flags of ``bench/sandbox/bwrap_flags.py``.

``--target true`` times ``/bin/true`` instead (plain, ``unshare``, ``bwrap``): the fixed cost of
the namespaces and mounts alone.

W is a fresh directory under /tmp (as the worker's is), owned by the user who runs the variant.
Must run as root to time both users; as any other user only that user's variants run.
"""

from __future__ import annotations

import argparse
import os
import platform
import pwd
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MECHANISMS = HERE / "sandbox_mechanisms.py"
NUMPY = ["-I", "-c", "import numpy"]


def variants(python: str, bwrap: str | None, writable: str, who: str,
             target: str = "numpy") -> dict[str, list[str]]:
    sys.path[:0] = [str(REPO), str(HERE)]
    from bwrap_flags import bwrap_command

    if target == "true":  # the sandboxes' fixed cost alone, without an interpreter
        true = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"
        out = {f"plain ({who})": [true]}
        if shutil.which("unshare"):
            out[f"unshare -Urpimn ({who})"] = [shutil.which("unshare"), "-Urpimn", "--fork",
                                               "--mount-proc", true]
        if bwrap:
            out[f"bwrap ({who})"] = [*bwrap_command(bwrap, writable), true]
        return out
    prefix = str(Path(python).absolute().parent.parent)  # a venv under /tmp stays visible
    out = {
        f"plain ({who})": [python, *NUMPY],
        f"wrapper + harness.sandbox.worker, no sandbox ({who})": [python, "-I", str(MECHANISMS), "none",
                                                          writable, "numpy"],
        f"harden ({who})": [python, "-I", str(MECHANISMS), "harden", writable, "numpy"],
        f"hand-written userns ({who})": [python, "-I", str(MECHANISMS), "userns", writable, "numpy"],
    }
    unshare = shutil.which("unshare")
    if unshare:
        out[f"unshare -Urpimn ({who})"] = [unshare, "-Urpimn", "--fork", "--mount-proc", python,
                                           *NUMPY]
    if bwrap:
        out[f"bwrap ({who})"] = [*bwrap_command(bwrap, writable, extra_ro=(prefix,)), python, *NUMPY]
    return out


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _cpu_cgroup() -> Path | None:
    """A cgroup v1 ``cpuacct`` group for one variant (root only): it counts the CPU time of every
    task of the variant, including those nobody reaps into a ``wait4`` (bwrap's outer process exits
    on its PID 1's word, before reaping it)."""
    if os.geteuid() != 0 or not (CPUACCT / "cpuacct.usage").exists():
        return None
    path = CPUACCT / f"ol-bench-{os.urandom(4).hex()}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def _as(uid: int, gid: int, cgroup: Path | None):
    def preexec() -> None:  # used for every variant, so all start through the same fork path
        if cgroup is not None:
            with open(cgroup / "cgroup.procs", "w", encoding="ascii") as f:
                f.write(str(os.getpid()))
        if os.geteuid() != uid:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
    return preexec


def time_once(argv: list[str], cwd: str, env: dict[str, str], preexec,
              cgroup: Path | None) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of the whole tree: from the variant's ``cpuacct`` group, else
    (not root) from ``wait4``, which counts only the descendants the child reaped."""
    before = int((cgroup / "cpuacct.usage").read_text()) if cgroup else 0
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err,
                                preexec_fn=preexec)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{shlex.join(argv)} exited {proc.returncode}: "
                             f"{err.read().decode()[-500:]}")
    if cgroup is not None:
        for _ in range(100):  # bwrap's PID 1 may still be exiting
            if not (cgroup / "cgroup.procs").read_text().strip():
                break
            time.sleep(0.002)
        return elapsed, (int((cgroup / "cpuacct.usage").read_text()) - before) / 1e9
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--user", help="also time the variants as this user (needs root)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter timed (the user must be able to run it)")
    parser.add_argument("--bwrap", help="the bwrap binary (default: bwrap_flags.find_bwrap)")
    parser.add_argument("--target", choices=("numpy", "true"), default="numpy",
                        help="true: time /bin/true plain, under unshare and under bwrap only")
    opts = parser.parse_args()
    sys.path[:0] = [str(REPO), str(HERE)]
    from bwrap_flags import bwrap_version, bwrap_works, find_bwrap

    bwrap = opts.bwrap or find_bwrap()
    if bwrap and not bwrap_works(bwrap):
        print(f"note: {bwrap} cannot make the sandbox here; its variants are skipped")
        bwrap = None
    users = [(pwd.getpwuid(os.geteuid()).pw_name, os.geteuid(), os.getegid())]
    if opts.user and os.geteuid() == 0:
        entry = pwd.getpwnam(opts.user)
        users.append((opts.user, entry.pw_uid, entry.pw_gid))
    jobs: dict[str, tuple] = {}
    groups: list[Path] = []
    plain_of: dict[str, str] = {}
    base_of: dict[str, str] = {}  # harden and userns against the wrapper, the rest against plain
    dirs = []
    for name, uid, gid in users:
        writable = tempfile.mkdtemp(prefix="ol-bench-")
        dirs.append(writable)
        os.chown(writable, uid, gid)
        env = {"PATH": "/usr/bin:/bin", "HOME": writable, "TMPDIR": writable, "LANG": "C.UTF-8",
               "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        who = "root" if uid == 0 else name
        for label, argv in variants(opts.python, bwrap, writable, who, opts.target).items():
            cgroup = _cpu_cgroup()
            if cgroup is not None:
                groups.append(cgroup)
            jobs[label] = (argv, writable, env, _as(uid, gid, cgroup), cgroup)
            plain_of[label] = f"plain ({who})"
            base_of[label] = (f"wrapper + harness.sandbox.worker, no sandbox ({who})"
                              if label.startswith(("harden", "hand-written")) else f"plain ({who})")
    times: dict[str, list[float]] = {label: [] for label in jobs}
    cpu: dict[str, list[float]] = {label: [] for label in jobs}
    labels = list(jobs)
    try:
        for label in labels:  # one warm-up run each (page cache, bytecode), not counted
            time_once(*jobs[label])
        for r in range(opts.rounds):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            for label in order:
                wall, used = time_once(*jobs[label])
                times[label].append(wall)
                cpu[label].append(used)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
        for group in groups:
            for _ in range(200):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.01)
    med = {label: statistics.median(v) for label, v in times.items()}
    med_cpu = {label: statistics.median(v) for label, v in cpu.items()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, kernel {platform.release()}, "
          f"Python {platform.python_version()} (driver), timed: {opts.python}")
    if bwrap:
        print(f"bwrap: {bwrap} {'.'.join(map(str, bwrap_version(bwrap)))}")
    print(f"medians of {opts.rounds} interleaved rounds (fresh process each; wall ms, and CPU ms "
          f"of the process tree{' (cpuacct cgroup)' if groups else ' (wait4)'}, which a busy machine "
          f"disturbs less; neither counts the kernel threads that tear a network namespace down "
          f"afterwards)\n")
    print("| variant | wall median ms | wall min ms | wall / plain | CPU median ms | CPU / plain "
          "| sandbox's own cost: wall, CPU ms (vs baseline) |")
    print("|---|---|---|---|---|---|---|")
    for label in labels:
        plain, plain_cpu = med[plain_of[label]], med_cpu[plain_of[label]]
        base, base_cpu = med[base_of[label]], med_cpu[base_of[label]]
        own = ("baseline" if base_of[label] == label else
               f"{(med[label] - base) * 1e3:+.1f}, {(med_cpu[label] - base_cpu) * 1e3:+.1f} "
               f"(vs {base_of[label].split(' ')[0]})")
        print(f"| {label} | {med[label] * 1e3:.1f} | {min(times[label]) * 1e3:.1f} | "
              f"{med[label] / plain:.2f} | {med_cpu[label] * 1e3:.1f} | "
              f"{med_cpu[label] / plain_cpu:.2f} | {own} |")
    print(f"\nload average after the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\ncommands:")
    for label in labels:
        print(f"  {label}: {shlex.join(jobs[label][0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
