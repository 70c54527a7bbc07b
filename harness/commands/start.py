"""``ol start MODULE``: the stubs of a module written into the student's workspace."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.common import out
from harness.engine.course import load_course
from harness.errors import EXIT_PASS


def run(args: argparse.Namespace) -> int:
    from harness.engine.stubs import start

    module = load_course().module(args.module)
    root = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    actions = start(module, root, force=args.force)
    out(f"ol start {module.id}: workspace {root.resolve()}")
    kept = False
    for a in actions:
        rel = a.path.relative_to(root) if a.path.is_relative_to(root) else a.path
        if a.action == "kept":
            kept = True
            out(f"  kept      {rel}: it differs from the stub (your edits); --force replaces it")
        elif a.action == "replaced":
            kept_in = a.backup.name if a.backup is not None else "a backup"
            out(f"  replaced  {rel} (your version is in {kept_in})")
        else:
            out(f"  {a.action:<9} {rel}")
    out(f"next: `ol tests {module.id}` to read the catalog, then `ol check {module.id}`"
        + ("" if not kept else " (your edited files were left as they are)"))
    return EXIT_PASS
