"""``python -m harness`` is ``ol``."""

from harness.cli import entry

raise SystemExit(entry())
