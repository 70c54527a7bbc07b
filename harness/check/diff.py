"""``ol diff``: the workspace's module against the reference, once exactly its bytes have passed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from harness.check.engine import has_passed
from harness.engine.course import load_course
from harness.engine.requests import DiffRequest
from harness.engine.workspace import read_module, resolve_workspace, text_of
from harness.errors import HarnessError
from harness.paths import REFERENCE_PYTHON


@dataclass(frozen=True)
class ModuleDiff:
    """The unified diff of the reference's module (``a``) and the workspace's (``b``); ``""``
    when they are identical. The student's text as written: show it through ``printable``."""

    module_id: str
    workspace: str
    diff: str


def module_diff(request: DiffRequest) -> ModuleDiff:
    """The diff, or a one-line ``HarnessError`` while the file as it is now has not passed
    ``ol check`` (the diff is the reward)."""
    module = load_course().module(request.module_id)
    ws = resolve_workspace(request.workspace, module_id=request.module_id)
    # One read, through staging as ol check reads it: the bytes whose digest is looked up are
    # the bytes shown, and a recorded digest is the one of the file in the copy that passed.
    data = read_module(ws, module)
    if not has_passed(ws, module, data):
        raise HarnessError(f"{ws.relative(module)} has not passed `ol check {module.id}` as it is now",
                           f"pass `ol check {module.id}` first; the diff is the reward")
    source = text_of(data, ws.relative(module))
    reference = (REFERENCE_PYTHON / module.file).read_text(encoding="utf-8")
    diff = difflib.unified_diff(reference.splitlines(keepends=True), source.splitlines(keepends=True),
                                f"reference/{module.file}", f"yours/{module.file}")
    return ModuleDiff(module.id, str(ws.root), "".join(diff))
