"""The hand-written mutant library: ``mutants/<module>/<id>.toml``, loaded, validated and applied.

A mutant is one plausible student bug, written as small text edits to one top-level function of a
module's reference file (or a top-level class, ``PCG32``, or one of its methods, ``PCG32.next_u32``).
``apply`` edits only inside that definition and refuses anything it cannot
do exactly (a ``find`` text missing or ambiguous, a result that does not parse or does not differ):
a mutant that silently stopped changing the code would make every test look like it kills it.

Ids ``s01``, ``s02``, ... are the chapter's mutants (its pitfall table names them); ids ``x01``,
``x02``, ... are the harness's extended mutants.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError, MutantDoesNotApply

if TYPE_CHECKING:
    from harness.engine.course import Module
    from harness.engine.target import InProcessTarget

_ID = re.compile(r"[sx][0-9]{2,}")
_TEST_NAME = re.compile(r"test_[A-Za-z0-9_]+")
_MODULE_FILE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*\.py")
_FIELDS = ("id", "module", "file", "function", "pitfall", "description", "designated", "hint",
           "edit")


@dataclass(frozen=True)
class Edit:
    """Replace the one occurrence of ``find`` inside the mutant's function by ``replace``."""

    find: str
    replace: str


@dataclass(frozen=True)
class Mutant:
    """One hand-written bug: where it lives, what it breaks, which catalog tests must kill it."""

    id: str
    module: str
    file: str  # relative to the workspace's python/ dir, e.g. "tinyllm/prob/rejection.py"
    function: str
    pitfall: int
    description: str
    designated: tuple[str, ...]
    hint: str
    edits: tuple[Edit, ...]
    extended: bool  # not one of the chapter's own mutants (s01, s02, ...)


def mutants_dir() -> Path:
    """``<repo>/mutants``, the repo being the directory that holds the ``harness`` package."""
    from harness.paths import MUTANTS_DIR

    return MUTANTS_DIR


def load_mutants(module_id: str) -> list[Mutant]:
    """Every mutant of ``module_id``, sorted by id; a malformed file is a HarnessError naming it."""
    folder = mutants_dir() / module_id
    if not folder.is_dir():
        root = mutants_dir()
        known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise HarnessError(
            f"no mutant library for module '{module_id}' (no folder {folder})",
            f"modules with mutants: {', '.join(known) or 'none'}",
        )
    mutants = [_load_one(path, module_id) for path in sorted(folder.glob("*.toml"))]
    return sorted(mutants, key=lambda m: m.id)


def find_mutant(module_id: str, mutant_id: str) -> Mutant:
    """The mutant ``mutant_id`` of ``module_id``, or HarnessError listing the valid ids."""
    mutants = load_mutants(module_id)
    for mutant in mutants:
        if mutant.id == mutant_id:
            return mutant
    valid = ", ".join(m.id for m in mutants) or "none"
    raise HarnessError(f"unknown mutant id '{mutant_id}' for {module_id}", f"valid ids: {valid}")


def apply(mutant: Mutant, source: str) -> str:
    """``source`` (the module's text) with the mutant's edits made inside its function.

    Raises MutantDoesNotApply if the function is missing, a ``find`` text does not occur exactly
    once in the function's current text, or the result does not compile or equals ``source``.
    """
    return _applied(mutant, source)[0]


def mutant_code(mutant: Mutant, source: str) -> CodeType:
    """``apply``'s text compiled, under the name its frames show (``<mutant s01: FILE>``)."""
    return _applied(mutant, source)[1]


def mutant_source(mutant: Mutant, module: Module) -> str:
    """The reference file of ``module`` with ``mutant`` applied (MutantDoesNotApply if it cannot be)."""
    from harness.engine.own_code import reference_source

    return apply(mutant, reference_source(module))


def mutant_target(mutant: Mutant, module: Module) -> InProcessTarget:
    """``mutant`` loaded in-process: the reference of ``module`` with its edits, as a target."""
    from harness.engine.course import load_course
    from harness.engine.own_code import module_from_code, reference_source
    from harness.engine.target import InProcessTarget

    code = mutant_code(mutant, reference_source(module))
    mod = module_from_code(f"ol_mutant_{mutant.id}", code)
    return InProcessTarget(f"mutant {mutant.id}", mod, module.functions, load_course().returns)


@functools.lru_cache(maxsize=512)
def _applied(mutant: Mutant, source: str) -> tuple[str, CodeType]:
    """The edited text and its code, once per process (both arguments are immutable): the lab
    applies each mutant to see that all apply, runs it, and quotes it in its reports; the
    diagnosis replays every mutant. Compiling is the check that the text parses."""
    text = source
    for edit in mutant.edits:
        start, end = _function_span(mutant, text)
        body = text[start:end]
        count = body.count(edit.find)
        if count != 1:
            problem = "not found" if count == 0 else f"found {count} times (must be exactly once)"
            raise _not_applying(mutant, f"{_excerpt(edit.find)!r} {problem} in {mutant.function}")
        text = text[:start] + body.replace(edit.find, edit.replace, 1) + text[end:]
    if text == source:
        raise _not_applying(mutant, "its edits leave the source unchanged")
    try:
        code = compile(text, f"<mutant {mutant.id}: {mutant.file}>", "exec")
    except SyntaxError as exc:
        why = f"the edited source does not parse ({exc.msg}, line {exc.lineno})"
        raise _not_applying(mutant, why) from None
    return text, code


def _not_applying(mutant: Mutant, why: str) -> MutantDoesNotApply:
    return MutantDoesNotApply(
        f"mutant {mutant.id} no longer applies to {mutant.file}: {why}",
        f"update mutants/{mutant.module}/{mutant.id}.toml to the current reference",
    )


def _excerpt(find: str) -> str:
    """The first non-blank line of a ``find`` text, marked when the text goes on."""
    lines = [line.strip() for line in find.splitlines() if line.strip()]
    return lines[0] + (" ..." if len(lines) > 1 else "")


def _function_span(mutant: Mutant, source: str) -> tuple[int, int]:
    """Character offsets of the mutant's definition (decorators included) in ``source``.

    ``name`` is a top-level ``def`` or ``class``; ``Class.method`` is a ``def`` directly in the
    body of the top-level ``class Class``.
    """
    try:
        tree = _tree(source)
    except SyntaxError as exc:
        why = f"the source does not parse ({exc.msg}, line {exc.lineno})"
        raise _not_applying(mutant, why) from None
    cls, _, method = mutant.function.rpartition(".")
    body = tree.body
    if cls:
        owner = _definition(body, cls, ast.ClassDef)
        if owner is None:
            raise _not_applying(mutant, f"no top-level class '{cls}' (for {mutant.function})")
        body = owner.body
    node = _definition(body, method, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    if node is None:
        where = f"no method '{method}' in class '{cls}'" if cls else f"no top-level function '{method}'"
        raise _not_applying(mutant, where)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = source.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: first - 1])
    end = sum(len(line) for line in lines[: node.end_lineno])
    return start, end


@functools.lru_cache(maxsize=8)
def _tree(source: str) -> ast.Module:
    """``source`` parsed, once per text: every mutant's first edit is made in the reference's own
    text (the tree is only read)."""
    return ast.parse(source)


def _definition(body: list[ast.stmt], name: str, kinds: Any) -> Any:
    """The ``def`` or ``class`` statement called ``name`` directly in ``body`` (None if absent)."""
    for node in body:
        if isinstance(node, kinds) and node.name == name:
            return node
    return None


def _load_one(path: Path, module_id: str) -> Mutant:
    """One TOML file as a Mutant, every field checked."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _malformed(path, None, f"cannot be read as TOML: {exc}") from None
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise _malformed(path, unknown[0], f"unknown field (fields: {', '.join(_FIELDS)})")
    mutant_id = _text(path, data, "id")
    if not _ID.fullmatch(mutant_id) or mutant_id != path.stem:
        why = f"{mutant_id!r} must be s<NN> or x<NN> and match the file name"
        raise _malformed(path, "id", why)
    if _text(path, data, "module") != module_id:
        why = f"{data['module']!r} is not its folder's module {module_id!r}"
        raise _malformed(path, "module", why)
    file = _text(path, data, "file")
    if not _MODULE_FILE.fullmatch(file):
        raise _malformed(path, "file", f"{file!r} must be a relative path to a .py file "
                                       "(e.g. tinyllm/prob/rejection.py)")
    function = _text(path, data, "function")
    parts = function.split(".")
    if len(parts) > 2 or not all(part.isidentifier() for part in parts):
        raise _malformed(path, "function", f"{function!r} is not a function name "
                                           "(name, Class or Class.method)")
    return Mutant(
        id=mutant_id, module=module_id, file=file, function=function,
        pitfall=_pitfall(path, data), description=_text(path, data, "description"),
        designated=_designated(path, data), hint=_text(path, data, "hint"),
        edits=_edits(path, data), extended=not mutant_id.startswith("s"),
    )


def _malformed(path: Path, field: str | None, why: str) -> HarnessError:
    where = f"{path}" + (f", field '{field}'" if field else "")
    return HarnessError(f"malformed mutant {where}: {why}",
                        "see an existing mutant in the same folder for the format")


def _require(path: Path, data: dict[str, Any], field: str) -> Any:
    if field not in data:
        raise _malformed(path, field, "missing")
    return data[field]


def _text(path: Path, data: dict[str, Any], field: str) -> str:
    value = _require(path, data, field)
    if not isinstance(value, str) or not value.strip():
        raise _malformed(path, field, f"must be a non-empty string, got {value!r}")
    return value.strip()


def _pitfall(path: Path, data: dict[str, Any]) -> int:
    value = _require(path, data, "pitfall")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _malformed(path, "pitfall", f"must be a positive integer, got {value!r}")
    return value


def _designated(path: Path, data: dict[str, Any]) -> tuple[str, ...]:
    value = _require(path, data, "designated")
    if not isinstance(value, list) or not value:
        why = f"must be a non-empty list of test names, got {value!r}"
        raise _malformed(path, "designated", why)
    for name in value:
        if not isinstance(name, str) or not _TEST_NAME.fullmatch(name):
            raise _malformed(path, "designated", f"{name!r} is not a catalog test name (test_...)")
    if len(set(value)) != len(value):
        raise _malformed(path, "designated", "lists a test twice")
    return tuple(value)


def _edits(path: Path, data: dict[str, Any]) -> tuple[Edit, ...]:
    value = _require(path, data, "edit")
    if not isinstance(value, list) or not value:
        raise _malformed(path, "edit", "must be one or more [[edit]] tables")
    edits = []
    for i, table in enumerate(value, start=1):
        field = f"edit[{i}]"
        if not isinstance(table, dict) or set(table) != {"find", "replace"}:
            raise _malformed(path, field, "must be a table with exactly the keys find and replace")
        find, replace = table["find"], table["replace"]
        if not isinstance(find, str) or not isinstance(replace, str) or not find.strip():
            raise _malformed(path, field, "find must be a non-empty string and replace a string")
        if find == replace:
            raise _malformed(path, field, "find and replace are the same text")
        edits.append(Edit(find, replace))
    return tuple(edits)
