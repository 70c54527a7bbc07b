"""Integrity flags of a gradebook: submissions identical to the reference or to each other.

Two kinds of identity of the module's file (``python/tinyllm/prob/rejection.py`` for M07.6):

- **bytes**: the same file, byte for byte (sha256 of its bytes);
- **syntax tree**: the same program once comments, docstrings and layout are removed: the same
  ``ast`` tree (``ast.dump`` without line numbers, after dropping every docstring), so renamed
  comments, re-wrapped lines, other quotes or blank lines do not hide a copy; renamed variables
  do (that is a different tree, and a similarity measure is not a fact an instructor can check).

A submission whose file is the untouched stub ``ol start`` writes is never flagged: everyone
starts from it (and it fails every test anyway). A flag is information for the instructor,
never a verdict: it does not change a row's verdict or score. Students of one course may well
write the same short function; the reference itself is published. Only the module's file is
compared (the other files of a workspace are the course's own, the same for everyone).
"""

from __future__ import annotations

import ast
import hashlib
import warnings
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

BYTES, TREE = "bytes", "syntax tree"
REFERENCE = "reference"
MAX_SOURCE = 1 << 20  # bytes of a module file whose syntax tree is compared (a few KiB in practice)


def identity(source: bytes | None) -> dict[str, str] | None:
    """``{"bytes": sha256, "tree": sha256 or ""}`` of a module file (``tree`` empty when it does
    not parse, or is over ``MAX_SOURCE``); None when there is no such file."""
    if source is None:
        return None
    return {"bytes": hashlib.sha256(source).hexdigest(), "tree": _tree_digest(source)}


def _tree_digest(source: bytes) -> str:
    if len(source) > MAX_SOURCE:
        return ""
    try:
        # a student's "\d" warns (SyntaxWarning on 3.12+): silenced, so that nothing reaches ol's
        # stderr and the tree does not depend on the warning filters (-W error made it "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    try:
        text = ast.dump(tree, annotate_fields=False, include_attributes=False)
    except RecursionError:
        return ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def flags_of(identities: Mapping[str, Mapping[str, str] | None],
             reference: Mapping[str, str] | None,
             stub: Mapping[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Per submission with an identity, its flags: ``{"kind": "identical", "to": "reference" or
    another submission's name, "how": "bytes" or "syntax tree"}``: the reference first, then the
    submissions of the same bytes by name, then those of the same tree only, by name (a pair
    identical in bytes is not flagged again for its tree). The digests must be of one Python
    (``ast.dump`` changes between versions): ``ol grade`` computes every row's on each run."""
    by: dict[str, dict[str, list[str]]] = {BYTES: defaultdict(list), TREE: defaultdict(list)}
    if stub:  # the course's own starting file (``ol start``), the same for everyone by design
        identities = {n: i for n, i in identities.items() if not _same(i, stub)}
    for name in sorted(identities):
        ident = identities[name]
        if ident:
            by[BYTES][ident["bytes"]].append(name)
            if ident.get("tree"):
                by[TREE][ident["tree"]].append(name)
    flags: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(identities):
        ident = identities[name]
        if not ident:
            continue
        found: list[dict[str, Any]] = []
        if reference and ident["bytes"] == reference.get("bytes"):
            found.append(_flag(REFERENCE, BYTES))
        elif reference and ident.get("tree") and ident["tree"] == reference.get("tree"):
            found.append(_flag(REFERENCE, TREE))
        same_bytes = [n for n in by[BYTES][ident["bytes"]] if n != name]
        found += [_flag(n, BYTES) for n in same_bytes]
        if ident.get("tree"):
            found += [_flag(n, TREE) for n in by[TREE][ident["tree"]]
                      if n != name and n not in same_bytes]
        flags[name] = found
    return flags


def _same(ident: Mapping[str, str] | None, other: Mapping[str, str]) -> bool:
    """Whether ``ident`` is ``other`` in bytes or in syntax tree."""
    if not ident:
        return False
    tree = ident.get("tree")
    return ident["bytes"] == other.get("bytes") or bool(tree) and tree == other.get("tree")


def _flag(to: str, how: str) -> dict[str, Any]:
    return {"kind": "identical", "to": to, "how": how}


def groups(flags: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The submissions flagged identical to each other, as groups: ``{"how", "submissions"}``
    (``how`` "bytes" when every pair of the group is, else "syntax tree"), largest first."""
    seen: set[str] = set()
    out = []
    for name in sorted(flags):
        if name in seen:
            continue
        peers = [f["to"] for f in flags[name] if f["to"] != REFERENCE]
        if not peers:
            continue
        members = sorted({name, *peers})
        seen.update(members)
        how = BYTES if all(f["how"] == BYTES for f in flags[name] if f["to"] != REFERENCE) else TREE
        out.append({"how": how, "submissions": members})
    return sorted(out, key=lambda g: (-len(g["submissions"]), g["submissions"]))
