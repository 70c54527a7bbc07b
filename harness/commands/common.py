"""What the command adapters share: their own output lines, the seed option, report paths."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from harness.engine.seeding import FRESH, PUBLIC, PUBLIC_CASES, Seed
from harness.errors import HarnessError
from harness.paths import PACKAGE_DIR, REFERENCE_PYTHON


def out(text: str = "", width: int | None = None) -> None:
    """One line of a command's own output; a path or name in it may come from a submission.
    With ``width``, a longer line is wrapped, its continuation lines indented."""
    from harness.escape import printable
    from harness.report.text import fit

    print(fit(printable(text), width), flush=True)


def text_width(args: argparse.Namespace) -> int | None:
    """The width ``ol check`` and ``ol tests`` fit their lines to: ``COLUMNS`` when set, else
    100; None with ``--wide`` (every line whole, for grep)."""
    from harness.report.text import columns

    return None if getattr(args, "wide", False) else columns()


def seed_option(args: argparse.Namespace, fresh: bool) -> Seed:
    """``--seed`` as a request takes it: ``Seed(N)``, ``Seed()`` for ``public``, and when it is
    not given ``FRESH`` (``ol gate``, ``ol grade``) or ``Seed()``, the public cases (``ol check``,
    ``ol lab``)."""
    given = getattr(args, "seed", None)
    if given is None:
        return FRESH if fresh else PUBLIC_CASES
    return PUBLIC_CASES if given == PUBLIC else Seed.of(given, fresh=False)


def worker_limits_of(args: argparse.Namespace):
    """The isolated worker's limits from ``--timeout``, ``--memory-mb`` and ``--disk-mb``."""
    from harness.engine.limits import worker_limits

    return worker_limits(getattr(args, "timeout", None), getattr(args, "memory_mb", None),
                         getattr(args, "disk_mb", None))


def check_report_paths(paths: Sequence[str | None | tuple[str, str | None]],
                       workspace: Path | str | None = None,
                       protected: Sequence[tuple[Path, str]] = ()) -> None:
    """Fail before the run, not after it, when a report cannot or must not be written.

    ``paths`` are ``(option, path)`` pairs (or bare paths), None for a report not asked for.
    Refused, each in one line and before anything is created: a path inside ``workspace``'s
    ``python/`` tree, the reference's, ol's own code, or a ``protected`` tree (a ``(path, what)``
    pair, such as the suite of ``ol tests --mine``); two options naming one file (after
    resolving links, or the same file under two names); an existing path that is not a regular
    file (``harness.files.refuse_special``: nothing is opened). Then each folder is probed.
    """
    from harness.files import ensure_writable, refuse_special

    given = [p if isinstance(p, tuple) else ("report", p) for p in paths]
    named = [(flag, str(p)) for flag, p in given if p is not None]
    trees = [*protected, (REFERENCE_PYTHON, "the reference's python/ folder"),
             (PACKAGE_DIR, "ol's own code (harness/)")]
    if workspace is not None:
        trees.insert(0, (Path(workspace) / "python", "the workspace's python/ folder, your code"))
    seen: dict[object, str] = {}
    for flag, path in named:
        where = _resolved(path)
        for tree, what in trees:
            root = _resolved(tree)
            if where == root or where.is_relative_to(root):
                raise HarnessError(f"{flag} {path} is inside {what}",
                                   "write reports outside it, e.g. in reports/")
        refuse_special(path)
        for key in _identities(path, where):
            if key in seen:
                raise HarnessError(f"{seen[key]} and {flag} name the same file {path}",
                                   "give each report a file of its own")
        for key in _identities(path, where):
            seen[key] = flag
    for _flag, path in named:
        ensure_writable(path)


def _resolved(path: Path | str) -> Path:
    """``path`` made absolute with every link resolved (as far as it exists); never fails."""
    try:
        return Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    except (OSError, ValueError):
        return Path(os.path.abspath(os.fspath(path)))


def _identities(path: str, where: Path) -> list[object]:
    """What makes two report paths the same file: the resolved path, and the inode if it exists."""
    keys: list[object] = [where]
    try:
        info = os.stat(path)  # stat, not open: a FIFO never blocks here
        keys.append((info.st_dev, info.st_ino))
    except (OSError, ValueError):
        pass
    return keys


def write_asked(reports: Sequence[tuple[str | None, object]], result: object,
                width: int | None = None) -> None:
    """Each ``(path, render)`` asked for, written atomically (``write_atomic``: the old file or
    the new one, never half of either), then named on its own line. Every report is rendered
    before the first is written: a reporter that fails leaves no report of this run."""
    from harness.files import write_atomic

    documents = [(path, render(result)) for path, render in reports if path]  # type: ignore[operator]
    for path, text in documents:
        write_atomic(Path(path), text)
        out(f"wrote {path}", width)
