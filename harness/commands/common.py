"""What the command adapters share: their own output lines, the width, the seed and limit options."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from harness.engine.seeding import FRESH, PUBLIC, PUBLIC_CASES, Seed


def out(text: str = "", width: int | None = None) -> None:
    """One line of a command's own output; a path or name in it may come from a submission.
    With ``width``, a longer line is wrapped, its continuation lines indented."""
    from harness.escape import printable
    from harness.report.text import fit

    print(fit(printable(text), width), flush=True)


def text_width(args: argparse.Namespace) -> int | None:
    """The width ``ol check`` and ``ol tests`` fit their lines to: ``COLUMNS`` when set, else
    100; None with ``--wide`` (every line whole, for grep)."""
    return None if getattr(args, "wide", False) else columns()


def columns(environ: Mapping[str, str] | None = None) -> int:
    """The width the text reports fit: ``COLUMNS`` when it is set to a number (at least
    ``MIN_WIDTH``), else ``WIDTH`` (100), whatever the terminal: the output is the same in a
    terminal, a pipe and a CI log."""
    from harness.report.text import MIN_WIDTH, WIDTH

    text = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    try:
        value = int(text)
    except ValueError:
        return WIDTH
    return max(value, MIN_WIDTH) if value > 0 else WIDTH


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
