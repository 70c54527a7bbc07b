"""mutmut's mutated file read back: functions, changed text, reference lines, occurrences."""

from __future__ import annotations

from harness.audit.mutations import extract, parse_name

REFERENCE = '''"""A module."""


def double(x):
    y = x + x
    return y + 0


class Box:
    def size(self, n):
        return n * 2
'''

# What mutmut 3 writes: trampolines, the original's copy and one function per mutant.
MUTATED = '''"""A module."""
from mutmut.mutation.trampoline import wrap_in_trampoline as _mutmut_mutated, MutantDict


def double(x):
    y = x + x
    return y + 0


def x_double__mutmut_orig(x):
    y = x + x
    return y + 0


def x_double__mutmut_1(x):
    y = x - x
    return y + 0


def x_double__mutmut_2(x):
    y = x + x
    return y - 0


def x_double__mutmut_3(x):
    y = x + x
    return y + 1


class Box:
    def size(self, n):
        return n * 2

    def xǁBoxǁsize__mutmut_orig(self, n):
        return n * 2

    def xǁBoxǁsize__mutmut_1(self, n):
        return n / 2
'''

KEYS = ["pkg.mod.x_double__mutmut_1", "pkg.mod.x_double__mutmut_2", "pkg.mod.x_double__mutmut_3",
        "pkg.mod.xǁBoxǁsize__mutmut_1"]


def test_names_parse_for_functions_and_methods():
    assert parse_name("x_double__mutmut_12") == ("x_double", "double", "12")
    assert parse_name("x__pair__mutmut_3") == ("x__pair", "_pair", "3")
    assert parse_name("xǁBoxǁsize__mutmut_1") == ("xǁBoxǁsize", "Box.size", "1")
    assert parse_name("double") is None


def test_each_mutant_is_its_changed_text_at_its_reference_line():
    got = {m.key: m for m in extract(MUTATED, REFERENCE, KEYS)}
    first = got["pkg.mod.x_double__mutmut_1"]
    assert (first.function, first.original, first.mutated, first.line) == (
        "double", "y = x + x", "y = x - x", 5)
    assert got["pkg.mod.x_double__mutmut_3"].original == "return y + 0"
    method = got["pkg.mod.xǁBoxǁsize__mutmut_1"]
    assert (method.function, method.mutated, method.line) == ("Box.size", "return n / 2", 11)
    assert "-    y = x + x" in first.diff and "+    y = x - x" in first.diff


def test_the_key_does_not_contain_mutmuts_number():
    renumbered = (MUTATED.replace("x_double__mutmut_1(", "x_double__mutmut_7(")
                  .replace("x_double__mutmut_3(", "x_double__mutmut_1("))
    before = {m.stable_key for m in extract(MUTATED, REFERENCE, KEYS)}
    keys = [k.replace("double__mutmut_1", "double__mutmut_7").replace("double__mutmut_3", "double__mutmut_1")
            for k in KEYS]
    assert {m.stable_key for m in extract(renumbered, REFERENCE, keys)} == before


def test_the_same_edit_twice_in_a_function_is_numbered_by_position():
    reference = "def f(a):\n    a = a + 1\n    a = a + 1\n    return a\n"
    mutated = ("def x_f__mutmut_orig(a):\n    a = a + 1\n    a = a + 1\n    return a\n\n\n"
               "def x_f__mutmut_1(a):\n    a = a + 1\n    a = a - 1\n    return a\n\n\n"
               "def x_f__mutmut_2(a):\n    a = a - 1\n    a = a + 1\n    return a\n")
    got = extract(mutated, reference, ["m.x_f__mutmut_1", "m.x_f__mutmut_2"])
    assert [(m.line, m.occurrence) for m in got] == [(3, 2), (2, 1)]
