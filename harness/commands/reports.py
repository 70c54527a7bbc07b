"""The one writer of reports, and the check of their paths before a run.

``check_report_paths`` refuses, before anything runs, a report path that must not or cannot be
written. ``write_files`` (the reports asked for with a flag and a path: ``--json F``) and
``write_folder`` (the reports a command writes into its folder: ``lab-M07.6.html``) take their
formats from the registry (``harness.report.formats``), render every document first (a reporter
that fails leaves no report of this run), then write each atomically (``harness.files.write_atomic``:
the old file or the new one, never half of either, never through a link).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.commands.quotes import quotes_of
from harness.errors import HarnessError
from harness.paths import PACKAGE_DIR, REFERENCE_PYTHON
from harness.report.formats import folder_formats, format_named
from harness.report.quotes import NO_QUOTES


@dataclass(frozen=True)
class Written:
    """The files a writer wrote, in order, and why any format was left out."""

    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def write_files(result: Any, asked: Mapping[str, str | Path | None], **context: Any) -> list[Path]:
    """Each file format of ``result`` asked for, ``format name -> path`` (None: not asked)."""
    kind = type(result).__name__
    paths = {name: Path(path) for name, path in asked.items() if path}
    formats = [format_named(kind, name) for name in paths]
    quotes = quotes_of(result) if any(f.quotes for f in formats) else NO_QUOTES
    documents = [(path, fmt.render(result, quotes, **context))
                 for fmt, path in zip(formats, paths.values(), strict=True)]
    return _write([(path, _one(text)) for path, text in documents])


def write_folder(result: Any, folder: Path | str | None, **context: Any) -> Written:
    """Every folder format of ``result`` into ``folder`` (``reports/`` when None): its file
    name, or the several files a renderer returns under it. A format whose package is missing
    (``needs``) is left out, with its note."""
    from harness.files import default_reports_dir

    base = Path(folder) if folder is not None else default_reports_dir()
    documents: list[tuple[Path, str | bytes]] = []
    notes: list[str] = []
    module = str(getattr(result, "module", ""))
    formats = folder_formats(type(result).__name__)
    quotes = quotes_of(result) if any(f.quotes for f in formats) else NO_QUOTES
    for fmt in formats:
        try:
            rendered = fmt.render(result, quotes, **context)
        except ImportError:
            if not fmt.needs:
                raise
            notes.append(fmt.missing)
            continue
        if isinstance(rendered, Mapping):
            documents.extend((base / name, text) for name, text in rendered.items())
        else:
            documents.append((base / fmt.file_name(module), rendered))
    return Written(_write(documents), notes)


def _one(rendered: object) -> str | bytes:
    if not isinstance(rendered, (str, bytes)):
        raise TypeError(f"a file format renders one document, not {type(rendered).__name__}")
    return rendered


def _write(documents: Sequence[tuple[Path, str | bytes]]) -> list[Path]:
    from harness.files import write_atomic

    return [write_atomic(path, text) for path, text in documents]


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
