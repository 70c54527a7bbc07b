"""The sweep of dead owners' run folders in a shared temporary directory (issue #24, item 6).

Anyone who can write to the temporary directory (``/tmp`` on a shared machine) can plant an
``ol-*`` folder there and rearrange it while a sweep removes it. The attack that was found: while
the sweep is deep inside a planted folder, a subfolder is renamed up into the temporary
directory; a removal that climbs back with ``..`` then lands one level too high and removes, by
the names it listed before the climb, a folder *beside* the temporary directory.

Each scenario below is a plain function of a base folder (``BASE/tmp`` is the temporary
directory, ``BASE/sentinel`` the folder beside it), run in this process (as whoever runs the
suite: root, or a plain user) and, as root, again as ``nobody`` in a process of its own, with the
base folder handed over as a descriptor (``/proc/self/fd/N``: no ancestor of it need be open to
``nobody``). The rename happens at a deterministic point: when the walk lists the deepest planted
folder (a hook on ``os.scandir``, which every walk of ``harness.sandbox.fs`` lists through; each
test checks that the hook fired).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.sandbox import fs
from harness.sandbox.fs import remove_tree
from harness.sandbox.rundirs import owner_alive, run_dir, sweep_folders

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NOBODY = 65534
ROOT = os.geteuid() == 0
CAN_BE_NOBODY = ROOT and bool(shutil.which("unshare")) and bool(shutil.which("setpriv"))
# An owner that is gone: no pid is above 2**22 (the largest pid_max).
DEAD = f"{2**22 + 1}.1"


def planted(suffix: str) -> str:
    """The name of a run folder whose owner is gone (so the sweep considers it)."""
    name = f"ol-worker-{DEAD}-{suffix}"
    assert not owner_alive(name), name
    return name


def _write(path: str, text: str = "keep\n") -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _layout(base: str) -> tuple[str, str]:
    """``BASE/tmp`` (the temporary directory) and ``BASE/sentinel`` beside it, holding a file."""
    tmp, sentinel = os.path.join(base, "tmp"), os.path.join(base, "sentinel")
    os.mkdir(tmp)
    os.chmod(tmp, 0o700)
    os.mkdir(sentinel)
    _write(os.path.join(sentinel, "keep"))
    return tmp, sentinel


# --- scenarios (also run as nobody: plain data in, plain data out) ---------------------------

def race(base: str, through: str = "sweep", foreign: bool = False) -> dict:
    """Plant ``tmp/ol-worker-DEAD-race/sentinel/y/z`` (a run folder of ours, or with ``foreign``
    of ``nobody``'s) and, once the walk lists ``z``, rename ``.../sentinel/y`` to ``tmp/y``; then
    remove it ``through`` the sweep or ``remove_tree``. What is left."""
    tmp, sentinel = _layout(base)
    run = os.path.join(tmp, planted("race"))
    os.mkdir(run)
    os.chmod(run, 0o700)
    deep = os.path.join(run, "sentinel", "y", "z")
    os.makedirs(deep)
    _write(os.path.join(deep, "file"))
    if foreign:
        for folder, _, files in os.walk(run):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(name, NOBODY, NOBODY)
    target = os.stat(deep)
    swapped: list[bool] = []
    real_scandir = os.scandir

    def scandir(path=None):  # type: ignore[no-untyped-def]
        if isinstance(path, int) and not swapped:
            st = os.fstat(path)
            if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                os.rename(os.path.join(run, "sentinel", "y"), os.path.join(tmp, "y"))
                swapped.append(True)
        return real_scandir(path) if path is not None else real_scandir()

    os.scandir = scandir  # type: ignore[assignment]
    try:
        removed = (sweep_folders(tmp) if through == "sweep"
                   else [planted("race")] if remove_tree(run) else [])
    finally:
        os.scandir = real_scandir
    return {"swapped": bool(swapped), "removed": removed,
            "sentinel": sorted(os.listdir(sentinel)) if os.path.isdir(sentinel) else None,
            "base": sorted(os.listdir(base)), "tmp": sorted(os.listdir(tmp)),
            "harness": fs.__file__}


def sweep(base: str) -> dict:
    """Sweep ``BASE/tmp``; the names removed and what is left there."""
    tmp = os.path.join(base, "tmp")
    removed = sweep_folders(tmp)
    return {"removed": sorted(removed), "tmp": sorted(os.listdir(tmp)), "harness": fs.__file__}


SCENARIOS = {"race": race, "sweep": sweep}


# --- running a scenario here or as nobody ----------------------------------------------------

def as_nobody(base: Path, scenario: str, *args: object) -> dict:
    """``scenario(BASE, *args)`` run as ``nobody``, with ``BASE`` (owned by nobody) as
    ``/proc/self/fd/N`` (and this Python made reachable for nobody the way
    tests/hostile/test_non_root.py does it)."""
    from test_non_root import _reach_script

    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        call = f"t.{scenario}({', '.join(map(repr, [f'/proc/self/fd/{fd}', *args]))})"
        code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import test_sweep as t; "
                f"print(json.dumps({call}))")
        reach = _reach_script([Path(sys.base_prefix).resolve(), Path(sys.executable).resolve(),
                               Path(sys.prefix).resolve(), REPO])
        inner = shlex.join(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                            "env", "-i", "PATH=/usr/bin:/bin", f"TMPDIR=/proc/self/fd/{fd}/tmp",
                            sys.executable, "-c", code])
        script = f"{reach}\ncd {shlex.quote(str(REPO))}\nexec {inner}"
        done = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                              text=True, timeout=120, check=False, pass_fds=(fd,))
    finally:
        os.close(fd)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def base_for(tmp_path: Path, user: str) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    if user == "nobody":
        os.chown(base, NOBODY, NOBODY)
        base.chmod(0o700)
    return base


USERS = [pytest.param("me", id="as-this-user"),
         pytest.param("nobody", id="as-nobody",
                      marks=pytest.mark.skipif(not CAN_BE_NOBODY,
                                               reason="needs root, unshare and setpriv"))]


def run(user: str, base: Path, scenario: str, *args: object) -> dict:
    """``scenario(BASE, *args)`` as this user (here) or as ``nobody``."""
    result = (as_nobody(base, scenario, *args) if user == "nobody"
              else SCENARIOS[scenario](str(base), *args))
    assert result.pop("harness").startswith(str(REPO / "harness")), "the harness under test"
    return result


# --- the tests ---------------------------------------------------------------------------------

@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("through", ["sweep", "remove_tree"])
def test_a_folder_renamed_while_the_walk_is_inside_takes_it_nowhere_else(tmp_path, user, through):
    base = base_for(tmp_path, user)
    result = run(user, base, "race", through)
    assert result["swapped"], "the hook renamed the folder while the walk was inside it"
    # Nothing beside the temporary directory was touched (a climb with ``..`` removed it) ...
    assert result["sentinel"] == ["keep"]
    assert result["base"] == ["sentinel", "tmp"]
    # ... the run folder went, and what was renamed out of it is left where it went, untouched.
    assert result["removed"] == [planted("race")]
    assert result["tmp"] == ["y"]


@pytest.mark.skipif(not ROOT, reason="plants a folder of another user's")
def test_root_never_enters_a_folder_that_another_user_planted(tmp_path):
    """The attack as found: another user plants the folder, root's ol sweeps."""
    result = race(str(tmp_path), "sweep", foreign=True)
    assert not result["swapped"], "the sweep never entered the planted folder"
    assert result["sentinel"] == ["keep"]
    assert result["removed"] == []
    assert result["tmp"] == [planted("race")]


@pytest.mark.parametrize("user", USERS)
def test_only_a_folder_of_ours_with_the_mode_of_a_run_folder_is_removed(tmp_path, user):
    base = base_for(tmp_path, user)
    tmp = base / "tmp"
    tmp.mkdir(mode=0o700)
    me = NOBODY if user == "nobody" else os.geteuid()
    other = 0 if user == "nobody" else NOBODY
    plant = {"mine": (me, 0o700), "mode_755": (me, 0o755), "mode_2700": (me, 0o2700),
             "mode_777": (me, 0o777)}
    if ROOT:  # only root can give a folder to another user
        plant["other_700"] = (other, 0o700)
        plant["other_777"] = (other, 0o777)  # everyone may empty it, and rmdir it from tmp
    for suffix, (uid, mode) in plant.items():
        folder = tmp / planted(suffix)
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "file").write_text("x")
        (folder / "file").write_text("x")
        for path in (folder / "sub" / "file", folder / "file", folder / "sub", folder):
            if ROOT:
                os.chown(path, uid, uid)
            path.chmod(mode if path == folder else 0o777 if path.is_dir() else 0o666)
    if user == "nobody":
        os.chown(tmp, NOBODY, NOBODY)
    result = run(user, base, "sweep")
    kept = sorted(planted(s) for s in plant if s != "mine")
    assert result["removed"] == [planted("mine")]
    assert result["tmp"] == kept
    for name in kept:  # untouched, contents included
        assert sorted(os.listdir(tmp / name)) == ["file", "sub"]
        assert os.listdir(tmp / name / "sub") == ["file"]


@pytest.mark.parametrize("user", USERS)
def test_a_link_named_like_a_run_folder_is_neither_followed_nor_removed(tmp_path, user):
    base = base_for(tmp_path, user)
    tmp, sentinel = base / "tmp", base / "sentinel"
    for folder in (tmp, sentinel):
        folder.mkdir(mode=0o700)
    (sentinel / "keep").write_text("keep\n")
    (tmp / planted("link")).symlink_to(sentinel)
    inside = tmp / planted("holds_a_link")  # a run folder of ours with a link to the sentinel
    inside.mkdir(mode=0o700)
    (inside / "escape").symlink_to(sentinel)
    if user == "nobody":
        for path in (tmp, sentinel, sentinel / "keep", tmp / planted("link"), inside,
                     inside / "escape"):
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    result = run(user, base, "sweep")
    assert result["removed"] == [planted("holds_a_link")]
    assert result["tmp"] == [planted("link")]
    assert os.readlink(tmp / planted("link")) == str(sentinel)
    assert os.listdir(sentinel) == ["keep"]


def _deep_tree(root: Path, depth: int) -> None:
    """``root/d/d/.../d`` ``depth`` levels below ``root``, a file at each level (made through
    descriptors: its paths are far longer than PATH_MAX)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


@pytest.mark.slow
def test_a_dead_owners_3000_level_tree_is_swept_quickly(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    folder = tmp / planted("deep")
    folder.mkdir(mode=0o700)
    _deep_tree(folder, 3000)
    cpu = time.process_time()
    assert sweep_folders(tmp) == [planted("deep")]  # no RecursionError, no ENAMETOOLONG
    assert time.process_time() - cpu < 10.0  # about 0.3 s of CPU; the disk's time varies
    assert os.listdir(tmp) == []


DEEP_WITH_FEW_DESCRIPTORS = """
import os, resource, sys
sys.path.insert(0, {here!r})
from test_sweep import _deep_tree
from harness.sandbox.fs import remove_tree
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
os.mkdir({root!r})
_deep_tree({root!r}, 3000)
print(remove_tree({root!r}), os.path.lexists({root!r}), len(os.listdir("/proc/self/fd")))
"""


@pytest.mark.slow
def test_a_tree_deeper_than_the_descriptor_limit_is_removed(tmp_path):
    """The walk holds a bounded number of descriptors (not one per level): with a soft limit of
    64 open files, a 3000-level tree still goes."""
    root = str(tmp_path / "deep")
    done = subprocess.run([sys.executable, "-c",
                           DEEP_WITH_FEW_DESCRIPTORS.format(here=str(HERE), root=root)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["True", "False"]
    assert not os.path.lexists(root)


def test_a_run_folder_has_the_mode_the_sweep_expects_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        strict = run_dir("worker", tmp_path)
    finally:
        os.umask(old)
    (tmp_path / "setgid").mkdir()
    (tmp_path / "setgid").chmod(0o2777)  # new folders inherit the set-group-ID bit
    inherited = run_dir("worker", tmp_path / "setgid")
    for folder in (strict, inherited):
        assert folder.stat().st_mode & 0o7777 == 0o700
        assert folder.stat().st_uid == os.geteuid()
