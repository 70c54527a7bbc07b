"""The layout's rules, read from the source: no import cycle, no private name imported across
modules, the layers import downwards, and only known modules start processes.

Every import counts, also one inside a function (a lazy import is still a dependency); only the
names under ``if TYPE_CHECKING:`` are left out, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "harness"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """``(module, imported name or None, line)`` for every harness import of module ``name``."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.startswith("harness")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if base.startswith("harness"):
                found += [(base, a.name, node.lineno) for a in node.names]
    return found


def _edges() -> dict[str, set[str]]:
    """Module -> the harness modules it imports (``from pkg import mod`` is an edge to ``pkg.mod``)."""
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for name in MODULES:
        for module, imported, _ in _imports(name):
            target = f"{module}.{imported}" if imported and f"{module}.{imported}" in MODULES else module
            if target in MODULES and target != name:
                edges[name].add(target)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle():
    assert _cycles(_edges()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_private_name_is_imported_from_another_module():
    crossing = []
    for name in MODULES:
        for module, imported, line in _imports(name):
            if module != name and imported is not None and _is_private(imported):
                crossing.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} imports "
                                f"{imported} from {module}")
            if any(_is_private(part) for part in module.split(".")):
                crossing.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} imports "
                                f"the private module {module}")
    assert crossing == []


def _layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


# What each layer may import (besides itself and the modules any layer may use). The CLI parses;
# commands adapt; the engines run; reporters format; the sandbox is the door to untrusted code.
ANYONE = {"errors", "engine", "paths", "uniforms"}
# Two leaf modules any layer may use: how untrusted text is shown (``printable``) and how a file
# is written (atomically, never through a link). They import nothing of the layers above.
SHARED = {"harness.escape", "harness.files"}
ALLOWED = {
    "cli": {"commands"},
    "__main__": {"cli"},
    "commands": {"api", "report", "catalogs", "lab", "own_tests", "gate", "audit", "grade", "check"},
    "api": {"lab", "audit", "gate", "grade", "own_tests", "check"},
    "engine": {"sandbox", "catalogs", "diagnosis", "lab"},
    "check": {"sandbox", "diagnosis", "lab"},
    "catalogs": set(),
    "diagnosis": {"sandbox"},
    "sandbox": set(),
    "lab": {"catalogs"},
    "audit": {"lab", "catalogs"},
    "gate": {"catalogs", "check"},
    "grade": {"gate", "sandbox", "catalogs", "check"},
    "own_tests": {"sandbox", "lab"},
    "report": {"lab", "audit", "gate", "grade", "own_tests", "catalogs"},
}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_what_it_stands_on(layer):
    wrong = []
    for name, targets in _edges().items():
        if _layer(name) != layer:
            continue
        for target in sorted(targets):
            other = _layer(target)
            if target in SHARED:
                continue
            if other and other != layer and other not in ANYONE | ALLOWED[layer]:
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_nothing_below_the_commands_imports_the_cli_or_the_commands():
    wrong = [f"{name} imports {target}" for name, targets in _edges().items()
             for target in targets
             if _layer(target) in ("cli", "commands") and _layer(name) not in ("cli", "commands", "__main__")]
    assert wrong == []


# Modules that start processes. The student's code runs only through the sandbox's supervisor;
# the hardening (``sandbox.harden``) forks the shim's PID 1 and a helper that writes the user
# namespace's maps from outside, before any student code loads; the audit runs mutmut on ol's
# own reference (trusted) in a child; the own-tests fork server forks the student's tests inside
# a worker that the supervisor started; the lab and the power audit fork pools over ol's own
# mutants; the own-tests stage reads the student's test file (parse, rewrite, compile) in a
# bounded child of its own (#24: ol's code on their data); the zygote (``sandbox.zygote``) forks
# workers that harden themselves before any student code loads, and ``sandbox.prestarted`` starts
# it through the supervisor and adopts what it forks (#27).
SPAWNERS = {"harness.sandbox.supervisor", "harness.sandbox.harden", "harness.audit.mutmut_run",
            "harness.audit.matrix", "harness.audit.power", "harness.lab.engine",
            "harness.own_tests.server", "harness.own_tests.stage", "harness.sandbox.zygote",
            "harness.sandbox.prestarted"}


def test_only_known_modules_start_processes():
    spawning = set()
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if any(word in text for word in ("subprocess", "os.fork(", "Popen", "os.exec", "os.spawn",
                                         "multiprocessing")):
            spawning.add(name)
    assert spawning == SPAWNERS
