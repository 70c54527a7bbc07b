"""Without root: the worker gets its namespaces through an unprivileged user namespace, so a
process that escapes the session (setsid, double fork) dies with the worker and cannot rewrite
the reports after ol exits.

The test runs ``ol check`` as ``nobody``. As root it makes this Python and the repository reachable
for that user first: in a private mount namespace, an ancestor folder that ``nobody`` cannot enter
(``/root`` for a pyenv Python) is covered by a tmpfs through which only the needed folders are
bound back (the host's mounts are untouched)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.paths import REPO_ROOT

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare")
                                 or not shutil.which("setpriv"),
                                 reason="runs ol as nobody: needs root, unshare and setpriv")]
NOBODY = 65534

ESCAPE = '''
import ctypes as _c, os as _o, time as _t, json as _j
def _ol_escape(paths):
    _c.CDLL(None).prctl(36, 0, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER off: orphans go further up
    if _o.fork() == 0:
        try:
            _o.setsid()
            if _o.fork() == 0:
                _t.sleep(2.0)
                forged = {{"verdict": "pass", "passed": 19, "failed": 0, "forged": True}}
                for path in paths:
                    try:
                        with open(path, "w") as f:
                            _j.dump(forged, f)
                    except OSError:
                        pass
        finally:
            _o._exit(0)
_ol_escape({paths!r})
'''


def _blocked_ancestor(path: Path) -> Path | None:
    """The outermost ancestor of ``path`` that others cannot enter, if any."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & stat.S_IXOTH:
            return parent
    return None


def _reach_script(paths: list[Path]) -> str:
    """Shell commands, run in a private mount namespace, that let ``nobody`` reach ``paths``."""
    lines = ["set -e", "mount --make-rprivate /"]
    covered: dict[Path, list[Path]] = {}
    for path in paths:
        blocked = _blocked_ancestor(path)
        if blocked is not None:
            child = blocked / path.relative_to(blocked).parts[0]
            covered.setdefault(blocked, [])
            if child not in covered[blocked]:
                covered[blocked].append(child)
    for n, (blocked, children) in enumerate(covered.items()):
        for m, child in enumerate(children):
            lines.append(f"mkdir -p /run/ol-reach-{n}-{m} && mount --bind {shlex.quote(str(child))} "
                         f"/run/ol-reach-{n}-{m}")
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {shlex.quote(str(blocked))}")
        for m, child in enumerate(children):
            lines.append(f"mkdir -p {shlex.quote(str(child))} && mount --bind /run/ol-reach-{n}-{m} "
                         f"{shlex.quote(str(child))}")
    return "\n".join(lines)


def run_as_nobody(args: list[str], home: Path, timeout: float) -> subprocess.CompletedProcess:
    # The base interpreter, and the virtual environment it runs in if any (its site-packages, and
    # sys.executable as invoked: tox's .tox/ is a folder that only its owner can enter).
    prefix = Path(sys.base_prefix).resolve()
    reach = _reach_script([prefix, Path(sys.executable).resolve(), Path(sys.prefix).resolve(),
                           REPO_ROOT])
    inner = shlex.join(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "env", "-i", f"HOME={home}", f"TMPDIR={home}", "PATH=/usr/bin:/bin",
                        sys.executable, "-m", "harness", *args])
    script = f"{reach}\ncd {shlex.quote(str(REPO_ROOT))}\nexec {inner}"
    return subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                          text=True, timeout=timeout, check=False)


def _nobody_home(name: str) -> Path:
    """A folder in the session's TMPDIR that nobody can write, and our folders above it that
    nobody can pass through."""
    tmp = Path(os.environ["TMPDIR"])
    # The session's folder (tests/conftest.py): TMPDIR, or its parent in a pytest-xdist worker
    # (TMPDIR is then <session's folder>/gw0).
    session = tmp.parent if os.environ.get("PYTEST_XDIST_WORKER") else tmp
    home = tmp / f"{name}-{os.getpid()}"
    home.mkdir(mode=0o777)
    for folder in [home, *home.parents]:  # our own folders: let nobody through
        if folder == session.parent:
            break
        folder.chmod(folder.stat().st_mode | 0o711)
    home.chmod(0o777)
    return home


def test_an_escaped_process_cannot_rewrite_the_reports_after_ol_exits(tmp_path):
    home = _nobody_home("nobody")
    try:
        report = home / "report.json"
        junit = home / "junit.xml"
        ws = home / "ws"
        shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", ws / "python" / "tinyllm",
                        ignore=shutil.ignore_patterns("__pycache__"))
        module = ws / "python" / "tinyllm" / "prob" / "rejection.py"
        source = module.read_text().replace("return u < p_x / q_x", "return u <= p_x / q_x")
        assert source != module.read_text()
        module.write_text(source + ESCAPE.format(paths=[str(report), str(junit)]))
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
        done = run_as_nobody(["check", "M07.6", "--workspace", str(ws), "--json", str(report),
                              "--junit", str(junit)], home, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
        written = report.read_text()
        time.sleep(4.0)  # the escaped process would write after 2 s
        assert report.read_text() == written
        data = json.loads(written)
        assert data["verdict"] == "fail" and "forged" not in data
        assert "forged" not in junit.read_text()
        assert [e for e in os.listdir(home) if e.startswith("ol-")] == []
    finally:
        shutil.rmtree(home, ignore_errors=True)


PEEK = '''
import os as _o
def _ol_peek(repo):
    """What this user's worker can see: ol's checkout, the host's folders, its own identity."""
    seen = []
    for path in (repo + "/reference/python/tinyllm/prob/rejection.py", repo + "/mutants",
                 repo + "/harness/own_tests/alternatives", "/home", "/etc/passwd", "/var"):
        if _o.path.exists(path):
            seen.append(path)
    return seen, _o.getuid(), sorted(_o.listdir("/"))
_OL_SEEN = _ol_peek({repo!r})
'''


def test_without_root_the_worker_sees_only_its_view(tmp_path):
    """#24: as a plain user too, the code under test runs in a root of its own: ol's checkout and
    the host's folders are not there; it is seen as nobody (65534) inside."""
    home = _nobody_home("nobody-view")
    try:
        report = home / "report.json"
        ws = home / "ws"
        shutil.copytree(REPO_ROOT / "reference" / "python" / "tinyllm", ws / "python" / "tinyllm",
                        ignore=shutil.ignore_patterns("__pycache__"))
        module = ws / "python" / "tinyllm" / "prob" / "rejection.py"
        source = module.read_text().replace(
            "    p_x = _finite(\"p_x\", p_x)",
            "    raise RuntimeError(f'seen {_OL_SEEN!r}')\n    p_x = _finite(\"p_x\", p_x)", 1)
        assert "_OL_SEEN" in source
        module.write_text(source + PEEK.format(repo=str(REPO_ROOT)))
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
        done = run_as_nobody(["check", "M07.6", "--workspace", str(ws), "--json", str(report),
                              "-k", "test_accept_is_strict"], home, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
        message = json.loads(report.read_text())["tests"][0]["message"]
        seen = message.split("seen ", 1)[1]
        assert seen.startswith("([], 65534, ["), message  # nothing of the checkout or the host
        for name in ("home", "var", "boot", "srv"):
            assert f"'{name}'" not in seen.split("], 65534, ")[1]
    finally:
        shutil.rmtree(home, ignore_errors=True)
