"""The floor of one check, for ``bench/run.py``: the catalog's own compute and nothing else.

    python3 bench/floor.py M07.6

A fresh process imports numpy (and what the catalog's tests import), then calls every catalog
test of the module against the reference in this process: no CLI, no runner (no per-test time
limit, no results), no reports, no diagnosis, no worker. ``ol check MODULE --target reference``
does this and the rest; issue #16 asks it to cost at most twice this floor.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's harness

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.own_code import reference_target


def main(module_id: str) -> int:
    module = load_course().module(module_id)
    target = reference_target(module)
    for _info, test in collect(module):
        test(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "M07.6"))
