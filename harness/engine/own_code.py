"""Loading our own code (the reference, a mutant) into this process, and building targets for it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import CodeType, ModuleType

from harness.engine.course import Module, load_course
from harness.engine.target import InProcessTarget
from harness.paths import REFERENCE_PYTHON


def ensure_reference_path() -> None:
    """Put the reference workspace first on ``sys.path`` so ``tinyllm`` is ours."""
    path = str(REFERENCE_PYTHON)
    if sys.path[:1] != [path]:
        if path in sys.path:
            sys.path.remove(path)
        sys.path.insert(0, path)


def load_reference(module: Module) -> ModuleType:
    ensure_reference_path()
    return importlib.import_module(module.import_name)


def module_from_source(name: str, source: str, filename: str) -> ModuleType:
    """Execute ``source`` as a fresh module ``name`` (not registered under the real name)."""
    return module_from_code(name, compile(source, filename, "exec"))


def module_from_code(name: str, code: CodeType) -> ModuleType:
    """Execute compiled ``code`` as a fresh module ``name``; its ``__file__`` is the code's file name."""
    ensure_reference_path()
    filename = code.co_filename
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    assert spec is not None, "without a loader, spec_from_loader always makes a spec"
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = filename
    sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)  # noqa: S102 - our own reference or mutant source
    finally:
        sys.modules.pop(name, None)
    return mod


def reference_target(module: Module) -> InProcessTarget:
    course = load_course()
    return InProcessTarget("reference", load_reference(module), module.functions, course.returns)


def reference_file(module: Module) -> str:
    """The path of the reference's source file of ``module``."""
    path = load_reference(module).__file__
    assert path is not None, "the reference is a package of plain files"
    return path


def reference_source(module: Module) -> str:
    with open(reference_file(module), encoding="utf-8") as fh:
        return fh.read()


def reference_copy(module: Module, name: str) -> ModuleType:
    """A fresh module object holding the reference's code (safe to instrument or patch)."""
    return module_from_source(name, reference_source(module), f"<{name}: {module.file}>")
