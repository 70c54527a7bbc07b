"""Project test configuration: ``import tinyllm`` imports the reference workspace, and the
session has a temporary directory of its own.

``reference/python`` is put first on ``sys.path`` (computed from this file's location, so the
tests work from any clone and any working directory).

Every test, and every process a test starts, uses a private ``TMPDIR`` made for this session:
nothing here ever lists or walks the machine's shared temporary directory (where another
process may have left anything, a tree thousands of levels deep included). When the session
ends, any ``ol-*`` folder still in it is something ol failed to clean up: the session fails.

Under ``pytest-xdist`` (``-n``, pyproject's ``addopts``) the controller makes that folder and each
worker works in a subfolder of its own, ``<folder>/gw0``, ... (short: sockets' paths are capped at
108 bytes); the controller, which alone decides the exit status, checks them all for leftovers
once the workers are done, and removes the whole tree.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

REFERENCE_PYTHON = (Path(__file__).resolve().parent.parent / "reference" / "python").resolve()


def _put_reference_first() -> None:
    entry = str(REFERENCE_PYTHON)
    # Drop any earlier occurrence so the reference ends up exactly first.
    sys.path[:] = [p for p in sys.path if p != entry]
    sys.path.insert(0, entry)


_put_reference_first()

_PRIVATE_TMP: list[str] = []


def _xdist_worker(config) -> str | None:
    """``gw0``, ``gw1``, ... in a pytest-xdist worker; None in the controller or a plain run."""
    return getattr(config, "workerinput", {}).get("workerid")


_TERMINAL = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """(pytest-xdist's controller) Tell the worker the terminal variables of the session: a
    worker starts with COLUMNS=80 and LINES=24 set, which ol would read as the width of its text."""
    node.workerinput["ol_terminal"] = {k: os.environ.get(k) for k in _TERMINAL}


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path factory reads --basetemp
def pytest_configure(config) -> None:
    worker = _xdist_worker(config)
    if worker is None:
        private = tempfile.mkdtemp(prefix="oltests-")
    else:  # the controller's folder (inherited as TMPDIR) / gw0: it checks and removes it
        for name, value in config.workerinput.get("ol_terminal", {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        controller = os.environ["TMPDIR"]
        private = os.path.join(controller, worker)
        os.mkdir(private, 0o700)
        # The worker's tmp_path folders in its own folder: <folder>/gw0/t/test_x0 is shorter
        # than a plain run's <folder>/pytest-of-USER/pytest-0/test_x0 (xdist's own choice,
        # .../pytest-0/popen-gw0/test_x0, is longer: a socket's path is capped at 108 bytes).
        # A --basetemp given on the command line is kept.
        given = config.option.basetemp
        if not given or os.path.commonpath([os.path.abspath(given), controller]) == controller:
            config.option.basetemp = os.path.join(private, "t")
    os.environ["TMPDIR"] = private
    # ``ol lab`` keeps a cache of its cells in the user's cache folder: never in a test, unless
    # the test turns it on with a folder of its own (tests/lab/test_cache.py).
    os.environ["OL_NO_CACHE"] = "1"
    tempfile.tempdir = private
    if worker is None:
        _PRIVATE_TMP.append(private)


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _PRIVATE_TMP:  # a worker: its controller checks its folder
        return
    from harness.sandbox.fs import remove_tree

    root = _PRIVATE_TMP[0]
    folders = [root, *(os.path.join(root, e) for e in sorted(os.listdir(root))
                       if e.startswith("gw") and os.path.isdir(os.path.join(root, e)))]
    left = [os.path.join(f, e) for f in folders for e in sorted(os.listdir(f)) if e.startswith("ol-")]
    if left:
        for path in left:
            name = os.path.basename(path)
            if name.startswith("ol-crash-") and os.path.isfile(path):  # say what crashed
                with open(path, errors="replace") as log:
                    print(f"\n{name}:\n{log.read()[-3000:]}")
            remove_tree(path)
        shown = ", ".join(os.path.relpath(p, root) for p in left[:5])
        print(f"\nol left {len(left)} folder(s) in its temporary directory: {shown}")
        session.exitstatus = 1


def pytest_unconfigure(config) -> None:
    if _PRIVATE_TMP:
        from harness.sandbox.fs import remove_tree

        remove_tree(_PRIVATE_TMP.pop())


@pytest.fixture(scope="session")
def lab_cache(tmp_path_factory):
    """``lab_cache(request)``: ``run_lab(request)`` with the lab's cache in a folder of the session's
    own (the session turns the cache off everywhere else). ``real_lab`` and ``module_lab`` run
    with ``cache="fresh"``: every cell run, as without a cache, and stored, so that a later
    ``exhaustive`` lab with ``cache="use"`` (``exhaustive_lab``) runs only the cells they did not."""
    from harness.lab.engine import run_lab

    folder = tmp_path_factory.mktemp("lab-cache")

    def run(request):
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv("OL_NO_CACHE", raising=False)
            mp.setenv("OL_CACHE_DIR", str(folder))
            return run_lab(request)

    return run


@pytest.fixture(scope="session")
def real_lab(lab_cache):
    """One real ``run_lab("M07.6")`` shared by every test that needs the whole kill matrix (every
    cell run: ``cache="fresh"`` only writes the cells down, see ``lab_cache``)."""
    from harness.engine.requests import LabRequest

    return lab_cache(LabRequest("M07.6", jobs=2, cache="fresh"))


@pytest.fixture(scope="session")
def module_lab(request, lab_cache):
    """``module_lab(module_id)``: one real ``run_lab`` per course module for the whole session.

    Each module's lab runs the first time a test asks for it (deselected modules cost nothing);
    M07.6's is ``real_lab`` itself, so the suite never runs a module's lab twice. Every cell is
    run (``cache="fresh"``) and written to the session's cache (``lab_cache``).
    """
    from harness.engine.requests import LabRequest

    labs = {}

    def lab_of(module_id: str):
        if module_id not in labs:
            labs[module_id] = (request.getfixturevalue("real_lab") if module_id == "M07.6"
                               else lab_cache(LabRequest(module_id, jobs=2, cache="fresh")))
        return labs[module_id]

    return lab_of


@pytest.fixture(scope="session")
def exhaustive_lab(module_lab, lab_cache):
    """``exhaustive_lab(module_id)``: ``run_lab(exhaustive=True)`` of the module after its
    ``module_lab``, with the session's cache: the cells ``module_lab`` ran come from the cache
    (the same cells, keyed by everything that decides them), and every cell it did not run
    (``not_run``) is run now. ``reuse`` says how many of each."""
    from harness.engine.requests import LabRequest

    def full(module_id: str):
        module_lab(module_id)
        return lab_cache(LabRequest(module_id, jobs=2, exhaustive=True, cache="use"))

    return full


@pytest.fixture(scope="module")
def isolated_module(tmp_path_factory):
    """``isolated_module(source, functions, returns)``: an ``IsolatedTarget`` on a package whose
    ``tinyllm.prob.rejection`` is ``source`` (closed with the test module)."""
    import contextlib
    import textwrap

    from harness.engine.isolated import IsolatedTarget

    with contextlib.ExitStack() as stack:
        def make(source: str, functions, returns=None) -> IsolatedTarget:
            root = tmp_path_factory.mktemp("isolated")
            prob = root / "python" / "tinyllm" / "prob"
            prob.mkdir(parents=True)
            (prob.parent / "__init__.py").write_text("")
            (prob / "__init__.py").write_text("")
            (prob / "rejection.py").write_text(textwrap.dedent(source))
            return stack.enter_context(IsolatedTarget(
                root.name, root / "python", "tinyllm.prob.rejection", tuple(functions),
                returns or {}))

        yield make


def _make_special(path: Path, kind: str) -> Path:
    """Put a ``kind`` of non-regular file at ``path``: fifo, socket, device (a character device,
    root only), directory, or a link (link-to-zero, -fifo, -file, -directory)."""
    import socket
    import stat

    path.parent.mkdir(parents=True, exist_ok=True)
    behind = path.parent / f"behind-{path.name}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)  # a relative name: a socket's path is capped at 108 bytes
        try:
            sock.bind(path.name)
        finally:
            os.chdir(here)
            sock.close()
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    elif kind == "directory":
        path.mkdir()
    elif kind == "link-to-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-to-fifo":
        os.mkfifo(behind)
        path.symlink_to(behind)
    elif kind == "link-to-file":
        behind.write_text("# mine\n")
        path.symlink_to(behind)
    elif kind == "link-to-directory":
        path.symlink_to(path.parent)
    else:
        raise ValueError(kind)
    return path


@pytest.fixture
def special_file():
    """``special_file(path, kind)``: see ``_make_special``."""
    return _make_special


@pytest.fixture
def run_ol(tmp_path):
    """``run_ol(*args, timeout=..., peak=..., watch=..., limit_as=..., env=...)``: ``ol ARGS`` run
    as its users run it (a fresh process from the checkout, a session and a TMPDIR of its own,
    killed past its time-out), bound to the test's ``tmp_path``; ``tests/olrun.py`` says what it
    returns. The one way the tests start ol as a process."""
    from functools import partial

    from olrun import ol

    return partial(ol, tmp_path)
