"""``python -m harness`` is ``ol``."""

from harness.cli import main

raise SystemExit(main())
