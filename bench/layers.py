"""The layer table of ``docs/architecture.md``, generated from the code.

    python3 bench/layers.py            # print the table (Markdown)
    python3 bench/layers.py --write    # replace the table between the markers in docs/architecture.md

The layers are ``LAYERS`` in ``tests/test_architecture.py`` and the imports are read from the
source by the same parser that enforces them (every import, inside functions too, but those under
``if TYPE_CHECKING:``), so the table cannot drift from the code: ``tests/test_architecture.py``
fails when the docs' table differs from what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_architecture as architecture


def main(argv: list[str]) -> int:
    table = architecture.layer_table()
    if argv[1:] != ["--write"]:
        sys.stdout.write(table)
        return 0
    docs = architecture.DOCS
    text = docs.read_text(encoding="utf-8")
    begin, end = architecture.BEGIN, architecture.END
    head, rest = text.split(begin, 1)
    docs.write_text(head + begin + table + end + rest.split(end, 1)[1], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
