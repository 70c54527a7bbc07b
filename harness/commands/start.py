"""``ol start MODULE``: the stubs of a module written into the student's workspace."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from harness.commands.common import out
from harness.engine.course import Course, Module, load_course
from harness.errors import EXIT_PASS


def run(args: argparse.Namespace) -> int:
    from harness.check.stubs import start

    course = load_course()
    module = course.module(args.module)
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
    for line in next_steps(module, course, root, kept):
        out(line)
    return EXIT_PASS


def next_steps(module: Module, course: Course, root: Path, kept: bool = False,
               cwd: Path | None = None) -> list[str]:
    """What to run next, as the student can paste it: ``--workspace`` when ``ol check`` run from
    ``cwd`` would not find this workspace, ``--ref-deps`` (and why) while a module this one needs
    is not written in it (without it the check stops at once: "M07.6 needs M07.1")."""
    from harness.engine.workspace import Workspace, module_state

    ws = Workspace(root.resolve())
    here = (cwd or Path.cwd()).resolve()
    check = f"ol check {module.id}"
    if ws.root != here and ws.root not in here.parents:
        check += f" --workspace {shlex.quote(str(ws.root))}"
    missing = [dep for dep in _needs(module, course)
               if module_state(ws, course.module(dep)) != "written"]
    if missing:
        check += " --ref-deps"
    lines = [f"next: `ol tests {module.id}` to read the catalog, then `{check}`"
             + ("" if not kept else " (your edited files were left as they are)")]
    if missing:
        names = " and ".join(missing) if len(missing) <= 2 else ", ".join(missing)
        lines.append(f"  (--ref-deps: {module.id} needs {names}, not written here yet: the check "
                     "uses the reference's)")
    return lines


def _needs(module: Module, course: Course) -> list[str]:
    """Every module ``module`` needs, the direct needs first."""
    seen: list[str] = []
    todo = list(module.needs)
    while todo:
        dep = todo.pop(0)
        if dep not in seen:
            seen.append(dep)
            todo += course.module(dep).needs
    return seen
