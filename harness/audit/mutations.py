"""mutmut's mutants of one file, read from its mutated copy, each with a run-independent key.

mutmut writes every mutant of a function ``f`` as a sibling ``x_f__mutmut_<n>`` of the original's
copy ``x_f__mutmut_orig`` (methods: ``xǁClassǁm__mutmut_<n>``). ``<n>`` is an ordinal of that run,
so nothing of ours keys on it: a mutant is known by its function and the text it changes
(``original`` -> ``mutated``, the changed lines with their indentation stripped), plus an
``occurrence`` number only when the same edit appears twice in one function.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass

_NAME = re.compile(r"^(?P<mangled>x_(?P<fn>\w+?)|xǁ(?P<cls>\w+)ǁ(?P<meth>\w+?))__mutmut_(?P<n>\d+|orig)$")


@dataclass(frozen=True)
class MutmutMutant:
    """One mutmut mutant: where it is, what it changes, and its run-independent key."""

    key: str  # mutmut's name of this run, e.g. tinyllm.prob.rejection.x__finite__mutmut_3
    number: int
    function: str  # "_finite", or "Class.method"
    original: str  # the changed lines of the reference, stripped, joined by newlines
    mutated: str  # what mutmut wrote instead
    occurrence: int  # 1, 2, ... among mutants with the same (function, original, mutated)
    line: int | None  # first and last changed line in the reference file (None: not located)
    end_line: int | None
    diff: str  # unified diff of the function, reference against mutant
    replacement: str  # the mutated lines as written (first line without its indentation)

    @property
    def stable_key(self) -> tuple[str, str, str, int]:
        return (self.function, self.original, self.mutated, self.occurrence)

    def to_json(self) -> dict:
        return {"key": self.key, "function": self.function, "original": self.original,
                "mutated": self.mutated, "occurrence": self.occurrence, "line": self.line,
                "end_line": self.end_line, "diff": self.diff, "number": self.number,
                "replacement": self.replacement}

    @classmethod
    def from_json(cls, d: dict) -> MutmutMutant:
        return cls(d["key"], int(d["number"]), d["function"], d["original"], d["mutated"],
                   int(d["occurrence"]), d["line"], d["end_line"], d["diff"], d["replacement"])


def parse_name(name: str) -> tuple[str, str, str] | None:
    """``x_f__mutmut_3`` -> (mangled ``x_f``, display ``f``, ``3``); None for other names."""
    match = _NAME.match(name)
    if not match:
        return None
    display = match["fn"] if match["fn"] is not None else f"{match['cls']}.{match['meth']}"
    return match["mangled"], display, match["n"]


def _function_lines(source: str) -> dict[str, tuple[str, list[str]]]:
    """Every function and method of ``source``: name -> (short name, dedented lines)."""
    lines = source.splitlines()
    out = {}
    for node in ast.parse(source).body:
        members = [(node, "")] if isinstance(node, ast.FunctionDef) else []
        if isinstance(node, ast.ClassDef):
            members = [(n, node.name + ".") for n in node.body if isinstance(n, ast.FunctionDef)]
        for fn, prefix in members:
            text = textwrap.dedent("\n".join(lines[fn.lineno - 1:fn.end_lineno]))
            out[prefix + fn.name] = (fn.name, text.splitlines())
    return out


def _reference_lines(source: str) -> dict[str, int]:
    """Function (or ``Class.method``) -> line of its ``def`` in the reference file."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node.lineno
        elif isinstance(node, ast.ClassDef):
            out.update({f"{node.name}.{n.name}": n.lineno for n in node.body
                        if isinstance(n, ast.FunctionDef)})
    return out


def _renamed(lines: list[str], mangled_name: str, short: str) -> list[str]:
    return [lines[0].replace(mangled_name, short, 1), *lines[1:]] if lines else lines


def extract(mutated_source: str, reference_source: str, keys: list[str]) -> list[MutmutMutant]:
    """The mutants ``keys`` (mutmut's names) of one file, in key order, occurrences numbered."""
    functions = _function_lines(mutated_source)
    reference = _function_lines(reference_source)
    def_lines = _reference_lines(reference_source)
    found = []
    for key in keys:
        local = key.rpartition(".")[2]
        parsed = parse_name(local)
        if parsed is None:
            raise ValueError(f"not a mutmut mutant name: {key}")
        mangled, display, number = parsed
        scope, _, short = display.rpartition(".")
        prefix = f"{scope}." if scope else ""
        orig_name = f"{mangled}__mutmut_orig"
        orig = _renamed(functions[prefix + orig_name][1], orig_name, short)
        mutant = _renamed(functions[prefix + local][1], local, short)
        ref = reference.get(display, (short, []))[1]
        found.append(_one(key, int(number), display, orig, mutant,
                          def_lines.get(display) if ref == orig else None))
    return _numbered(found)


def _one(key: str, number: int, function: str, orig: list[str], mutant: list[str],
         def_line: int | None) -> MutmutMutant:
    ops = [op for op in difflib.SequenceMatcher(None, orig, mutant, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    i1, i2 = (ops[0][1], ops[-1][2]) if ops else (0, 0)
    j1, j2 = (ops[0][3], ops[-1][4]) if ops else (0, 0)
    original = "\n".join(line.strip() for line in orig[i1:i2])
    mutated = "\n".join(line.strip() for line in mutant[j1:j2])
    diff = "\n".join(difflib.unified_diff(orig, mutant, "reference", "mutant", n=1, lineterm=""))
    line = def_line + i1 if def_line is not None else None
    end = def_line + max(i1, i2 - 1) if def_line is not None else None
    replacement = "\n".join(mutant[j1:j2]).lstrip()
    return MutmutMutant(key, number, function, original, mutated, 0, line, end, diff, replacement)


def _numbered(mutants: list[MutmutMutant]) -> list[MutmutMutant]:
    """Number equal edits of one function by position (line, then mutmut's ordinal)."""
    groups: dict[tuple[str, str, str], list[MutmutMutant]] = {}
    for m in mutants:
        groups.setdefault((m.function, m.original, m.mutated), []).append(m)
    index = {}
    for group in groups.values():
        for n, m in enumerate(sorted(group, key=lambda m: (m.line or 0, m.number)), start=1):
            index[m.key] = n
    return [MutmutMutant(**{**m.__dict__, "occurrence": index[m.key]}) for m in mutants]
