"""``harness.grade.integrity``: a module file identical to the reference or to another submission.

The variants are what a student copying the reference would produce from
``reference/python/tinyllm/prob/rejection.py``: other comments, docstrings, layout, quotes,
parentheses, line endings or a BOM are the same syntax tree (flagged); a renamed variable, another
constant, swapped statements, an extra function are another program (not flagged); a file that does
not parse has no tree and is only ever flagged for its bytes. Every flag list is checked whole.
"""

from __future__ import annotations

import ast
import hashlib
import re
import warnings
from pathlib import Path

import pytest

from harness.grade.integrity import BYTES, MAX_SOURCE, REFERENCE, TREE, flags_of, groups, identity

REFERENCE_FILE = Path(__file__).resolve().parents[2] / "reference/python/tinyllm/prob/rejection.py"
REF = REFERENCE_FILE.read_bytes()
TEXT = REF.decode("utf-8")


def sub(old: str, new: str, text: str = TEXT, count: int = 1) -> bytes:
    """``text`` with ``old`` replaced, asserting it was there (a variant is never the reference by
    accident of a typo in the test)."""
    assert old in text, old
    out = text.replace(old, new, count)
    assert out != text
    return out.encode("utf-8")


def flag(to: str, how: str) -> dict[str, str]:
    return {"kind": "identical", "to": to, "how": how}


def without_docstrings(text: str) -> str:
    """``text`` with every docstring's lines deleted (module's and functions')."""
    tree = ast.parse(text)
    drop: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            doc = node.body[0]
            drop.update(range(doc.lineno, doc.end_lineno + 1))
    assert len(drop) > 10
    return "".join(line for i, line in enumerate(text.splitlines(True), 1) if i not in drop)


def rewrapped(text: str) -> str:
    """Long lines joined and short ones split, as an editor's formatter would."""
    text = text.replace("def speculative_step(\n    p: ArrayLike, q: ArrayLike, x: int, u_accept: float, "
                        "u_resample: float\n) -> tuple[int, bool]:",
                        "def speculative_step(p: ArrayLike, q: ArrayLike, x: int, u_accept: float, "
                        "u_resample: float) -> tuple[int, bool]:")
    text = text.replace("from tinyllm.prob.categorical import (\n    UniformSource,\n    as_distribution,\n"
                        "    check_unit_interval,\n    left_to_right_sum,\n    sample_categorical,\n)",
                        "from tinyllm.prob.categorical import UniformSource, as_distribution, "
                        "check_unit_interval, \\\n    left_to_right_sum, sample_categorical")
    text = text.replace('        raise ValueError(f"p and q must have the same shape, got {p_arr.shape} '
                        'and {q_arr.shape}")',
                        '        raise ValueError(\n            f"p and q must have the same shape, "\n'
                        '            f"got {p_arr.shape} and {q_arr.shape}"\n        )')
    return text


# -- variants that are the same syntax tree as the reference -------------------------------------

SAME_TREE = {
    "comment changed": sub("# the common case, without ABC checks", "# fast path for floats"),
    "comment added": ("# my own solution, honest\n" + TEXT.replace(
        "    total = 0.0\n", "    total = 0.0  # running sum\n    # loop over ids\n")).encode(),
    "comment removed": sub("  # the common case, without ABC checks", ""),
    "docstrings removed": without_docstrings(TEXT).encode(),
    "docstring reworded": sub("Von Neumann's sampler: propose", "The classic sampler: draw"),
    "docstring added": sub("def _finite(name: str, value: object) -> float:\n",
                           'def _finite(name: str, value: object) -> float:\n    """A finite float."""\n'),
    "docstring as a comment": sub('    """``sum_i min(p_i, q_i)`` as a left-to-right float64 loop: '
                                  '``1 - TV(p, q)``."""\n', "    # sum of the minima\n"),
    "blank lines added": sub("\n\n\n", "\n\n\n\n\n", count=-1),
    "blank lines removed": sub("\n\n\ndef ", "\ndef ", count=-1),
    "blank lines in a body": sub("    total = 0.0\n", "\n    total = 0.0\n\n"),
    "re-wrapped lines": rewrapped(TEXT).encode(),
    "quotes changed": sub('"p_x", p_x', "'p_x', p_x", TEXT.replace('"q"', "'q'")),
    "f-string quotes changed": sub('f"{name} must be finite, got {value!r}"',
                                   "f'{name} must be finite, got {value!r}'", count=-1),
    "parenthesized return": sub("return u < p_x / q_x", "return (u < p_x / q_x)",
                                TEXT.replace("return x, True", "return (x, True)")),
    "parenthesized expression": sub("total += min(p_i, q_i)", "total += (min(p_i, q_i))"),
    "trailing whitespace": "".join(line.rstrip("\n") + "   \n" for line in TEXT.splitlines(True)).encode(),
    "tabs for indentation": sub("    ", "\t", count=-1),
    "CRLF line endings": TEXT.replace("\n", "\r\n").encode(),
    "no final newline": REF.rstrip(b"\n"),
    "BOM": b"\xef\xbb\xbf" + REF,
}
SAME_TREE["all of them"] = b"\xef\xbb\xbf" + without_docstrings(rewrapped(
    SAME_TREE["quotes changed"].decode())).replace("  # the common case, without ABC checks", "").replace(
    "\n", "\r\n").encode()

# -- variants that are another program -----------------------------------------------------------

OTHER_TREE = {
    "variable renamed": sub("total", "acc", count=-1),
    "argument renamed": sub("u_resample", "u_res", count=-1),
    "constant changed": sub("max_tries: int = 10000", "max_tries: int = 1000"),
    "float constant changed": sub("if m < 1.0:", "if m < 1:"),
    "message changed": sub("no proposal accepted", "nothing accepted"),
    "statements swapped": sub('    p_x = _finite("p_x", p_x)\n    q_x = _finite("q_x", q_x)\n',
                              '    q_x = _finite("q_x", q_x)\n    p_x = _finite("p_x", p_x)\n'),
    "imports swapped": sub("import math\nimport numbers\n", "import numbers\nimport math\n"),
    "operands swapped": sub("total += min(p_i, q_i)", "total += min(q_i, p_i)"),
    "extra function": (TEXT + "\n\ndef helper() -> int:\n    return 1\n").encode(),
    "function removed": sub(TEXT[TEXT.index("def acceptance_probability"):
                                 TEXT.index("def residual_distribution")], ""),
    "does not parse": sub("def rejection_accept(", "def rejection_accept(:"),
}


def test_the_variants_are_what_they_say() -> None:
    """Each variant differs from the reference in bytes, parses (but the broken one), and the
    parenthesized return is indeed the same tree for ast (the assumption of that variant)."""
    for variant in (*SAME_TREE.values(), *OTHER_TREE.values()):
        assert variant != REF
    for name, variant in {**SAME_TREE, **OTHER_TREE}.items():
        if name != "does not parse":
            ast.parse(variant)
    with pytest.raises(SyntaxError):
        ast.parse(OTHER_TREE["does not parse"])
    assert (ast.dump(ast.parse("def f(x):\n    return (x)\n"))
            == ast.dump(ast.parse("def f(x):\n    return x\n")))
    assert (ast.dump(ast.parse("def f(x):\n    return (x, True)\n"))
            == ast.dump(ast.parse("def f(x):\n    return x, True\n")))


# -- identity ------------------------------------------------------------------------------------


def test_identity_of_no_file_is_none() -> None:
    assert identity(None) is None


def test_identity_is_sha256_of_the_bytes_and_a_tree_digest() -> None:
    ident = identity(REF)
    assert ident is not None and set(ident) == {"bytes", "tree"}
    assert ident["bytes"] == hashlib.sha256(REF).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", ident["tree"])
    assert ident["tree"] != ident["bytes"]
    assert identity(REF) == ident  # the same every time


@pytest.mark.parametrize("name", sorted(SAME_TREE))
def test_a_copy_in_other_clothes_is_the_same_tree(name: str) -> None:
    ident, ref = identity(SAME_TREE[name]), identity(REF)
    assert ident is not None and ref is not None
    assert ident["bytes"] != ref["bytes"]
    assert ident["tree"] == ref["tree"]


@pytest.mark.parametrize("name", sorted(set(OTHER_TREE) - {"does not parse"}))
def test_another_program_is_another_tree(name: str) -> None:
    ident, ref = identity(OTHER_TREE[name]), identity(REF)
    assert ident is not None and ref is not None
    assert ident["tree"] and ident["tree"] != ref["tree"]


def test_a_file_that_does_not_parse_has_no_tree() -> None:
    ident = identity(OTHER_TREE["does not parse"])
    assert ident == {"bytes": hashlib.sha256(OTHER_TREE["does not parse"]).hexdigest(), "tree": ""}
    for broken in (b"def (:\n", b"x = 1\0\n", b"\xff\xfe not utf-8\n", b"(" * 500 + b")" * 500,
                   b"x = " + b"-" * 100_000 + b"1\n"):
        assert identity(broken)["tree"] == "", broken[:20]


def test_a_source_over_max_source_has_no_tree() -> None:
    at_limit = b"x = 1\n#" + b"#" * (MAX_SOURCE - 8) + b"\n"
    assert len(at_limit) == MAX_SOURCE
    assert identity(at_limit)["tree"] == identity(b"x = 1\n")["tree"] != ""
    over = at_limit + b"\n"
    assert identity(over) == {"bytes": hashlib.sha256(over).hexdigest(), "tree": ""}
    huge = REF + b"\n" * (MAX_SOURCE + 1 - len(REF))
    assert identity(huge)["tree"] == ""


def test_the_tree_does_not_depend_on_warning_filters() -> None:
    """An invalid escape (``"\\d"``) warns at parse time (DeprecationWarning on 3.11, SyntaxWarning
    from 3.12): under ``-W error`` the file used to get no tree, and on 3.12+ the student's warning
    reached ol's stderr. The tree is the same whatever the filters, and nothing is warned."""
    source = b'import re\nPATTERN = re.compile("\\d+")\n'
    plain = identity(source)
    assert plain is not None and plain["tree"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert identity(source) == plain
    assert caught == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert identity(source) == plain


def test_only_the_first_string_of_a_body_is_a_docstring() -> None:
    """A docstring-only body is ``pass``; a second string statement is code, and so is a string
    assigned to a name."""
    assert identity(b'def f():\n    """Doc."""\n')["tree"] == identity(b"def f():\n    pass\n")["tree"]
    assert (identity(b'def f():\n    """Doc."""\n    "more"\n    return 1\n')["tree"]
            != identity(b"def f():\n    return 1\n")["tree"])
    assert identity(b'X = "a"\n')["tree"] != identity(b'X = "b"\n')["tree"]
    assert (identity(b"def f():\n    ...\n    return 1\n")["tree"]
            != identity(b"def f():\n    return 1\n")["tree"])
    assert (identity(b'async def f():\n    """Doc."""\n    return 1\n')["tree"]
            == identity(b"async def f():\n    return 1\n")["tree"])
    documented = b'class C:\n    """Doc."""\n    def m(self):\n        """Doc."""\n        return 1\n'
    assert identity(documented)["tree"] == identity(b"class C:\n    def m(self):\n        return 1\n")["tree"]


# -- flags_of ------------------------------------------------------------------------------------


def idents(**sources: bytes | None) -> dict[str, dict[str, str] | None]:
    return {name: identity(source) for name, source in sources.items()}


def test_flags_of_a_class() -> None:
    """Exact flags of every row: the reference first; a pair identical in bytes flagged once
    (bytes), not again for its tree; a renamed copy, a missing file and a broken one not at all."""
    broken = OTHER_TREE["does not parse"]
    found = flags_of(idents(alice=REF, bob=REF, carol=SAME_TREE["comment changed"],
                            dave=OTHER_TREE["variable renamed"], erin=None, frank=broken, gus=broken,
                            hank=OTHER_TREE["constant changed"]),
                     identity(REF))
    assert found == {
        "alice": [flag(REFERENCE, BYTES), flag("bob", BYTES), flag("carol", TREE)],
        "bob": [flag(REFERENCE, BYTES), flag("alice", BYTES), flag("carol", TREE)],
        "carol": [flag(REFERENCE, TREE), flag("alice", TREE), flag("bob", TREE)],
        "dave": [],
        "frank": [flag("gus", BYTES)],
        "gus": [flag("frank", BYTES)],
        "hank": [],
    }
    assert "erin" not in found  # no module file: no identity, no flags (the gradebook shows [])


def test_each_same_tree_variant_is_flagged_against_the_reference_only_for_its_tree() -> None:
    found = flags_of(idents(**{name.replace(" ", "_"): v for name, v in SAME_TREE.items()}), identity(REF))
    assert len(found) == len(SAME_TREE)
    for name, flags in found.items():
        others = sorted(n for n in found if n != name)
        assert flags == [flag(REFERENCE, TREE)] + [flag(n, TREE) for n in others], name


def test_no_other_tree_variant_is_flagged() -> None:
    found = flags_of(idents(**{name.replace(" ", "_"): v for name, v in OTHER_TREE.items()}), identity(REF))
    assert found == {name.replace(" ", "_"): [] for name in OTHER_TREE}


def test_a_broken_file_is_flagged_only_for_its_bytes() -> None:
    """Two broken files that differ only in a comment have no tree to share: not flagged; a broken
    file is never a tree copy of a broken reference either."""
    broken = OTHER_TREE["does not parse"]
    other_comment = broken.replace(b"# the common case", b"# fast path")
    assert other_comment != broken
    assert flags_of(idents(a=broken, b=other_comment), identity(REF)) == {"a": [], "b": []}
    assert flags_of(idents(a=broken, b=other_comment), identity(broken)) == {
        "a": [flag(REFERENCE, BYTES)], "b": []}


def test_empty_files() -> None:
    """Two empty files are byte-identical, so they are flagged: right, as a fact (the same bytes),
    though it says only that neither student wrote anything; the same for an untouched starter
    file. An empty file and one of only blank lines or comments are the same (empty) tree."""
    assert flags_of(idents(a=b"", b=b""), identity(REF)) == {"a": [flag("b", BYTES)], "b": [flag("a", BYTES)]}
    assert flags_of(idents(a=b"", b=b"\n\n# todo\n"), identity(REF)) == {
        "a": [flag("b", TREE)], "b": [flag("a", TREE)]}
    assert flags_of(idents(a=b""), identity(b"")) == {"a": [flag(REFERENCE, BYTES)]}


def test_flags_are_symmetric() -> None:
    """Over every variant (and byte-identical copies of some): ``a`` is flagged with ``b`` exactly
    when ``b`` is with ``a``, and the same way."""
    sources: dict[str, bytes | None] = {
        name.replace(" ", "_"): v for name, v in {**SAME_TREE, **OTHER_TREE}.items()}
    sources.update(copy1=REF, copy2=SAME_TREE["BOM"], copy3=OTHER_TREE["does not parse"],
                   copy4=OTHER_TREE["extra function"], none=None)
    found = flags_of(idents(**sources), identity(REF))
    pairs = {(name, f["to"], f["how"])
             for name, flags in found.items() for f in flags if f["to"] != REFERENCE}
    assert pairs == {(b, a, how) for a, b, how in pairs}
    assert len(pairs) == sum(len(flags) for flags in found.values()) - sum(
        f["to"] == REFERENCE for flags in found.values() for f in flags)  # no flag twice
    assert {("copy3", "does_not_parse", BYTES), ("copy4", "extra_function", BYTES), ("copy1", "BOM", TREE),
            ("copy2", "BOM", BYTES)} <= pairs  # the pairs are there to be checked


def test_the_reference_comes_first_and_once() -> None:
    found = flags_of(idents(a=SAME_TREE["BOM"], b=REF, c=REF), identity(REF))
    assert found["a"] == [flag(REFERENCE, TREE), flag("b", TREE), flag("c", TREE)]
    assert found["c"] == [flag(REFERENCE, BYTES), flag("b", BYTES), flag("a", TREE)]
    assert [f["to"] for flags in found.values() for f in flags].count(REFERENCE) == 3


def test_bytes_peers_come_before_tree_peers() -> None:
    """The others are by name within each kind, byte-identical ones first: ``a``'s byte copy ``c``
    comes before its tree copy ``b`` (the docstring's "then the others by name" is per kind)."""
    found = flags_of(idents(a=REF, b=SAME_TREE["BOM"], c=REF), None)
    assert found == {"a": [flag("c", BYTES), flag("b", TREE)],
                     "b": [flag("a", TREE), flag("c", TREE)],
                     "c": [flag("a", BYTES), flag("b", TREE)]}


def test_without_a_reference_only_submissions_are_compared() -> None:
    found = flags_of(idents(a=REF, b=SAME_TREE["CRLF line endings"]), None)
    assert found == {"a": [flag("b", TREE)], "b": [flag("a", TREE)]}
    assert flags_of({}, identity(REF)) == {}
    assert flags_of({"a": None, "b": None}, identity(REF)) == {}


# -- groups --------------------------------------------------------------------------------------


def test_a_three_way_copy_is_one_group() -> None:
    found = flags_of(idents(x=OTHER_TREE["variable renamed"], a=SAME_TREE["comment changed"],
                            b=SAME_TREE["CRLF line endings"], c=SAME_TREE["quotes changed"]), None)
    assert groups(found) == [{"how": TREE, "submissions": ["a", "b", "c"]}]


def test_a_group_is_bytes_only_when_every_pair_is() -> None:
    assert groups(flags_of(idents(a=REF, b=REF, c=REF), identity(REF))) == [
        {"how": BYTES, "submissions": ["a", "b", "c"]}]
    assert groups(flags_of(idents(a=REF, b=REF, c=SAME_TREE["BOM"]), identity(REF))) == [
        {"how": TREE, "submissions": ["a", "b", "c"]}]
    # the first by name's flags are all bytes, yet another pair is not
    assert groups(flags_of(idents(a=REF, b=SAME_TREE["BOM"], c=SAME_TREE["BOM"]), None)) == [
        {"how": TREE, "submissions": ["a", "b", "c"]}]
    assert groups(flags_of(idents(a=SAME_TREE["BOM"], b=SAME_TREE["BOM"], c=REF), None)) == [
        {"how": TREE, "submissions": ["a", "b", "c"]}]


def test_groups_are_largest_first_then_by_name() -> None:
    extra = OTHER_TREE["extra function"]
    broken = OTHER_TREE["does not parse"]
    found = flags_of(idents(z1=broken, z2=broken, m=extra, n=SAME_TREE["BOM"], k=extra.replace(
        b"\n", b"\r\n"), p=REF, q=SAME_TREE["tabs for indentation"], r=SAME_TREE["comment added"],
        lone=OTHER_TREE["constant changed"], none=None), identity(REF))
    assert groups(found) == [
        {"how": TREE, "submissions": ["n", "p", "q", "r"]},
        {"how": TREE, "submissions": ["k", "m"]},
        {"how": BYTES, "submissions": ["z1", "z2"]},
    ]


def test_flags_against_the_reference_alone_are_no_group() -> None:
    found = flags_of(idents(a=REF, b=OTHER_TREE["variable renamed"]),
                     identity(REF))
    assert found == {"a": [flag(REFERENCE, BYTES)], "b": []}
    assert groups(found) == []
    assert groups({}) == []


def test_the_untouched_stub_is_never_flagged():
    """Everyone starts from the stub ``ol start`` writes: handing it in twice is no copy."""
    from harness.check.stubs import stub_source
    from harness.engine.course import load_course

    stub = stub_source(load_course().module("M07.6")).encode()
    ids = {"a": identity(stub), "b": identity(stub), "c": identity(stub + b"\n# mine\n"),
           "d": identity(b"x = 1\n"), "e": identity(b"x = 1\n")}
    found = flags_of(ids, None, identity(stub))
    assert found == {"d": [{"kind": "identical", "to": "e", "how": "bytes"}],
                     "e": [{"kind": "identical", "to": "d", "how": "bytes"}]}
    assert flags_of(ids, None)["a"] == [{"kind": "identical", "to": "b", "how": "bytes"},
                                        {"kind": "identical", "to": "c", "how": "syntax tree"}]
