"""Put a warm lab cache in the state an edit leaves it in, for ``bench/run.py``'s lab re-runs.

    python3 bench/lab_cache_edit.py CACHE MODULE --test NAME     # as if test NAME had been edited
    python3 bench/lab_cache_edit.py CACHE MODULE --mutant ID     # as if mutant ID had been added

``CACHE`` is an ``OL_CACHE_DIR`` that a lab of ``MODULE`` filled (on the public cases, or on
``--seed N``'s). Editing a test
changes its key, so every cell of its column, the reference's included, is a miss; adding a
mutant leaves its row without any cell. Removing exactly those cells from the cache is the same
state, and so the same work for the next ``ol lab``, without editing the checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants
from harness.lab.cache import LabCache, mutant_digest
from harness.lab.engine import LAB_TEST_LIMIT_S


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("module")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--test")
    what.add_argument("--mutant")
    parser.add_argument("--seed", default="public", help="the lab's seed (default: public)")
    opts = parser.parse_args()
    os.environ["OL_CACHE_DIR"] = str(opts.cache)
    os.environ.pop("OL_NO_CACHE", None)
    module = load_course().module(opts.module)
    names = [info.name for info, _ in collect(module)]
    seed = None if opts.seed == "public" else int(opts.seed)
    store = LabCache.open("use", module, names, seed, LAB_TEST_LIMIT_S)
    assert store.folder is not None
    if opts.mutant:
        mutant = next(m for m in load_mutants(module.id) if m.id == opts.mutant)
        path = store.folder / f"row-{store.row_key(mutant_digest(mutant, module))}.json"
        path.unlink()
        return 0
    key = store.tests[opts.test]
    found = 0
    for path in store.folder.glob("*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry["cells"].pop(key, None) is not None:
            found += 1
            path.write_text(json.dumps(entry), encoding="utf-8")
    assert found, f"no cell of {opts.test} in {opts.cache}"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
