"""The contract stubs (reference/contracts/py/**.pyi) agree with the reference modules.

Parameter names, kinds and defaults must match exactly; annotations are compared loosely (text
with module prefixes and whitespace dropped), and only where the module's annotation is a string.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "reference" / "contracts" / "py"
STUB_MODULES = {
    "tinyllm.prob.pcg32": STUBS / "tinyllm" / "prob" / "pcg32.pyi",
    "tinyllm.prob.categorical": STUBS / "tinyllm" / "prob" / "categorical.pyi",
    "tinyllm.prob.rejection": STUBS / "tinyllm" / "prob" / "rejection.pyi",
}
EXPECTED_NAMES = {
    "tinyllm.prob.pcg32": {"PCG32", "PCG32.__init__", "PCG32.next_u32", "PCG32.uniform"},
    "tinyllm.prob.categorical": {"UniformSource", "UniformSource.uniform", "sample_categorical"},
    "tinyllm.prob.rejection": {
        "rejection_accept",
        "acceptance_probability",
        "residual_distribution",
        "speculative_step",
        "rejection_sample",
    },
}
KINDS = {
    "posonly": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "vararg": inspect.Parameter.VAR_POSITIONAL,
    "kwonly": inspect.Parameter.KEYWORD_ONLY,
    "kwarg": inspect.Parameter.VAR_KEYWORD,
}
NO_DEFAULT = inspect.Parameter.empty


def stub_definitions(path: Path) -> dict[str, ast.AST]:
    """Top-level functions and classes of a stub, and the methods of its classes, by dotted name."""
    found: dict[str, ast.AST] = {}
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = node
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def stub_parameters(fn: ast.FunctionDef) -> list[tuple[str, object, object, str | None]]:
    """(name, kind, default, annotation text) for each parameter, in order."""
    a = fn.args
    positional = [(arg, KINDS["posonly"]) for arg in a.posonlyargs]
    positional += [(arg, KINDS["args"]) for arg in a.args]
    defaults = [NO_DEFAULT] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [(arg, kind, d) for (arg, kind), d in zip(positional, defaults, strict=True)]
    if a.vararg:
        params.append((a.vararg, KINDS["vararg"], NO_DEFAULT))
    params += [
        (arg, KINDS["kwonly"], NO_DEFAULT if d is None else d)
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    if a.kwarg:
        params.append((a.kwarg, KINDS["kwarg"], NO_DEFAULT))
    return [
        (
            arg.arg,
            kind,
            d if d is NO_DEFAULT else ast.literal_eval(d),
            ast.unparse(arg.annotation) if arg.annotation else None,
        )
        for arg, kind, d in params
    ]


def loose(annotation: object) -> str | None:
    """Annotation text without whitespace or module prefixes; None when not comparable."""
    if not isinstance(annotation, str):
        return None
    return re.sub(r"\b[A-Za-z_]\w*\.", "", re.sub(r"\s+", "", annotation))


def resolve(module_name: str, dotted: str) -> object:
    obj: object = importlib.import_module(module_name)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


CASES = [
    (module, dotted)
    for module, path in STUB_MODULES.items()
    for dotted, node in stub_definitions(path).items()
    if isinstance(node, ast.FunctionDef)
]


def test_tinyllm_is_the_reference():
    import tinyllm

    assert Path(tinyllm.__file__).resolve().is_relative_to(ROOT / "reference" / "python")


@pytest.mark.parametrize("module", list(STUB_MODULES))
def test_stub_declares_the_contract_names(module):
    assert set(stub_definitions(STUB_MODULES[module])) == EXPECTED_NAMES[module]


@pytest.mark.parametrize(("module", "dotted"), CASES, ids=[f"{m}:{d}" for m, d in CASES])
def test_parameter_names_kinds_and_defaults_match(module, dotted):
    node = stub_definitions(STUB_MODULES[module])[dotted]
    signature = inspect.signature(resolve(module, dotted))
    expected = [(name, kind, default) for name, kind, default, _ in stub_parameters(node)]
    actual = [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    assert actual == expected


@pytest.mark.parametrize(("module", "dotted"), CASES, ids=[f"{m}:{d}" for m, d in CASES])
def test_annotations_match_loosely(module, dotted):
    node = stub_definitions(STUB_MODULES[module])[dotted]
    signature = inspect.signature(resolve(module, dotted))
    for (name, _, _, stub_ann), param in zip(stub_parameters(node), signature.parameters.values(),
                                             strict=True):
        if stub_ann is not None and loose(param.annotation) is not None:
            assert loose(param.annotation) == loose(stub_ann), f"parameter {name}"
    if node.returns is not None and loose(signature.return_annotation) is not None:
        assert loose(signature.return_annotation) == loose(ast.unparse(node.returns))


@pytest.mark.parametrize("module", list(STUB_MODULES))
def test_stub_classes_match_module_classes(module):
    for name, node in stub_definitions(STUB_MODULES[module]).items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = resolve(module, name)
        assert inspect.isclass(cls), f"{module}.{name} is not a class"
        mro_names = {base.__name__ for base in cls.__mro__}
        for base in node.bases:
            assert ast.unparse(base).split(".")[-1] in mro_names, f"{name} lacks base {base}"


@pytest.mark.parametrize(("module", "dotted"), CASES, ids=[f"{m}:{d}" for m, d in CASES])
def test_every_stub_function_has_a_docstring(module, dotted):
    assert ast.get_docstring(stub_definitions(STUB_MODULES[module])[dotted])


@pytest.mark.parametrize(
    "dotted",
    ["rejection_accept", "acceptance_probability", "residual_distribution", "speculative_step",
     "rejection_sample"],
)
def test_rejection_stubs_document_their_value_errors(dotted):
    doc = ast.get_docstring(stub_definitions(STUB_MODULES["tinyllm.prob.rejection"])[dotted])
    assert "Raises:" in doc and "ValueError" in doc


def test_rejection_sample_stub_documents_runtime_error():
    stubs = stub_definitions(STUB_MODULES["tinyllm.prob.rejection"])
    assert "RuntimeError" in ast.get_docstring(stubs["rejection_sample"])


def test_rejection_contract_allows_type_error_for_non_numbers_only():
    text = (Path(__file__).resolve().parents[2] / "reference/contracts/py/tinyllm/prob/rejection.pyi"
            ).read_text(encoding="utf-8")
    assert "TypeError or ValueError" in text and "math.isfinite(None)" in text
    assert "not builtin ``sum()`` on Python 3.12+" in text
