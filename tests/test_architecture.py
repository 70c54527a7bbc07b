"""The layout's rules, read from the source: no import cycle between modules nor between packages,
no private name imported across modules, every package imports only the layers below it (``LAYERS``,
no exemptions), and only known modules start processes. ``docs/architecture.md``'s layer table is
generated from the same graph (``bench/layers.py``) and checked here.

Every import counts, also one inside a function (a lazy import is still a dependency); only the
names under ``if TYPE_CHECKING:`` are left out, as they never run. Each module is parsed once.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

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


@functools.cache
def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """``(module, imported name or None, line)`` for every harness import of module ``name``
    (parsed once: every test reads the same list; do not modify it)."""
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


@functools.cache
def _edges() -> dict[str, set[str]]:
    """Module -> the harness modules it imports (``from pkg import mod`` is an edge to ``pkg.mod``);
    computed once, do not modify it."""
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


def package_of(name: str) -> str:
    """The package a module belongs to: ``harness.engine.runner`` -> ``engine``, a top module
    ``harness.api`` -> ``api``, and ``harness`` itself (its ``__init__``: the version) -> ``harness``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "harness"


# The layers, bottom-up. A package imports only packages of a lower layer (and itself): never one
# of its own layer, never one above. Leaves first: the version, the exit codes and errors, the
# fixed paths, the escaping of untrusted text, the harness's own uniforms, a dataclass's JSON from
# its fields; the file writer; the
# sandbox (processes and the wire format, the only door to untrusted code); the engine (the course,
# the catalog protocol and runner, the targets, typed requests and results); what stands on the
# engine alone (the catalogs, the diagnosis, the lab, the student's own tests); ol check and the
# audit; the gate, which runs checks; the grade, which runs gates; the reporters and the Python API;
# the commands; the CLI.
LAYERS: list[tuple[str, ...]] = [
    ("harness", "errors", "paths", "escape", "uniforms", "fields"),
    ("files",),
    ("sandbox",),
    ("engine",),
    ("catalogs", "diagnosis", "lab", "own_tests"),
    ("check", "audit"),
    ("gate",),
    ("grade",),
    ("report", "api"),
    ("terminal",),
    ("commands",),
    ("cli",),
    ("__main__",),
]
LEVEL = {package: level for level, layer in enumerate(LAYERS) for package in layer}


@functools.cache
def package_imports() -> list[tuple[str, str, str]]:
    """``(package, imported package, "file:line imports module")`` for every import that crosses
    from one package to another, in file order."""
    found = []
    for name in MODULES:
        for module, imported, line in _imports(name):
            target = f"{module}.{imported}" if imported and f"{module}.{imported}" in MODULES else module
            if target in MODULES and package_of(target) != package_of(name):
                where = f"{MODULES[name].relative_to(PACKAGE.parent)}:{line}"
                found.append((package_of(name), package_of(target), f"{where} imports {target}"))
    return list(dict.fromkeys(found))  # one entry per module a statement imports


def package_graph() -> dict[str, set[str]]:
    """Package -> the packages it imports."""
    graph: dict[str, set[str]] = {package_of(name): set() for name in MODULES}
    for package, other, _ in package_imports():
        graph[package].add(other)
    return graph


def test_the_layers_name_every_package_once():
    named = [package for layer in LAYERS for package in layer]
    assert len(named) == len(set(named))
    assert set(named) == {package_of(name) for name in MODULES}


def test_every_package_imports_only_the_layers_below_it():
    upward = [f"{where} ({package}, layer {LEVEL.get(package, '?')} -> {other}, "
              f"layer {LEVEL.get(other, '?')})"
              for package, other, where in package_imports()
              if LEVEL.get(other, len(LAYERS)) >= LEVEL.get(package, -1)]
    assert upward == []


def test_the_packages_have_no_import_cycle():
    assert _cycles(package_graph()) == []


def _label(package: str) -> str:
    if package == "harness":
        return "`__init__.py`"
    return f"`{package}.py`" if (PACKAGE / f"{package}.py").is_file() else f"`{package}/`"


def layer_table() -> str:
    """The layers as a Markdown table, top layer first: each package and the packages it imports
    (``bench/layers.py`` prints it; ``docs/architecture.md`` holds it between its markers)."""
    graph = package_graph()
    rows = ["| layer | package | imports |", "|---|---|---|"]
    for level in reversed(range(len(LAYERS))):
        for package in LAYERS[level]:
            imported = ", ".join(_label(p) for p in sorted(graph.get(package, ()),
                                                             key=lambda p: (-LEVEL[p], p)))
            rows.append(f"| {level} | {_label(package)} | {imported or '—'} |")
    return "\n".join(rows) + "\n"


DOCS = PACKAGE.parent / "docs" / "architecture.md"
BEGIN, END = "<!-- layers: begin (generated by bench/layers.py) -->\n", "<!-- layers: end -->\n"


def test_the_layer_table_in_the_docs_is_the_one_the_code_has():
    text = DOCS.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    printed = subprocess.run([sys.executable, str(PACKAGE.parent / "bench" / "layers.py")],
                             capture_output=True, text=True, check=True, timeout=60).stdout
    assert printed == layer_table()
    assert block == printed, "docs/architecture.md's layer table is stale: run bench/layers.py --write"


def test_nothing_below_the_commands_imports_the_cli_or_the_commands():
    wrong = [f"{name} imports {target}" for name, targets in _edges().items()
             for target in targets
             if package_of(target) in ("cli", "commands")
             and package_of(name) not in ("cli", "commands", "__main__")]
    assert wrong == []


# Modules that start processes. The student's code runs only through the sandbox's supervisor;
# the hardening (``sandbox.harden``) forks the shim's PID 1 and a helper that writes the user
# namespace's maps from outside, before any student code loads; the audit runs mutmut on ol's
# own reference (trusted) in a child; the own-tests fork server forks the student's tests inside
# a worker that the supervisor started; the lab and the audits fork pools over ol's own mutants,
# all made by ``engine.pools``; the own-tests stage reads the student's test file (parse,
# rewrite, compile) in a bounded child of its own (#24: ol's code on their data); the zygote
# (``sandbox.zygote``) forks workers that harden themselves before any student code loads, and
# ``sandbox.prestarted`` starts it through the supervisor and adopts what it forks (#27).
SPAWNERS = {"harness.sandbox.supervisor", "harness.sandbox.harden", "harness.audit.mutmut_run",
            "harness.audit.matrix", "harness.engine.pools",
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
