"""``ol start MODULE``: the stubs of a module written into the student's workspace."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from harness.commands.common import out
from harness.engine.course import load_course
from harness.engine.requests import StartRequest
from harness.errors import EXIT_PASS


def run(args: argparse.Namespace) -> int:
    from harness import api

    module = load_course().module(args.module)
    started = api.start(StartRequest(module.id, args.workspace, args.force))
    root = started.root
    out(f"ol start {module.id}: workspace {root.resolve()}")
    kept = False
    for a in started.actions:
        rel = a.path.relative_to(root) if a.path.is_relative_to(root) else a.path
        if a.action == "kept":
            kept = True
            out(f"  kept      {rel}: it differs from the stub (your edits); --force replaces it")
        elif a.action == "replaced":
            kept_in = a.backup.name if a.backup is not None else "a backup"
            out(f"  replaced  {rel} (your version is in {kept_in})")
        else:
            out(f"  {a.action:<9} {rel}")
    for line in next_steps(module.id, root, started.unwritten_needs, kept):
        out(line)
    return EXIT_PASS


def next_steps(module_id: str, root: Path, missing: tuple[str, ...], kept: bool = False,
               cwd: Path | None = None) -> list[str]:
    """What to run next, as the student can paste it: ``--workspace`` when ``ol check`` run from
    ``cwd`` would not find this workspace, ``--ref-deps`` (and why) while a module this one needs
    is not written in it (``missing``: without it the check stops at once: "M07.6 needs M07.1")."""
    root = root.resolve()
    here = (cwd or Path.cwd()).resolve()
    check = f"ol check {module_id}"
    if root != here and root not in here.parents:
        check += f" --workspace {shlex.quote(str(root))}"
    if missing:
        check += " --ref-deps"
    lines = [f"next: `ol tests {module_id}` to read the catalog, then `{check}`"
             + ("" if not kept else " (your edited files were left as they are)")]
    if missing:
        names = " and ".join(missing) if len(missing) <= 2 else ", ".join(missing)
        lines.append(f"  (--ref-deps: {module_id} needs {names}, not written here yet: the check "
                     "uses the reference's)")
    return lines
