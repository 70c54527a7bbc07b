"""Loading the reference module of a course module afresh, under a name of its own."""

from __future__ import annotations

import types

from harness.engine.course import Module
from harness.engine.own_code import load_reference, module_from_source


def reference_source(module: Module) -> str:
    path = load_reference(module).__file__
    assert path is not None, "the reference is imported from its file"
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def reference_copy(module: Module, name: str) -> types.ModuleType:
    """A fresh module object holding the reference's code (safe to instrument or patch)."""
    return module_from_source(name, reference_source(module), f"<{name}: {module.file}>")
