"""The mutant library (``mutants/M07.6``) and its loader (``harness.engine.mutants``).

Every mutant must load, apply to the current reference, change only its own function, and really
misbehave: each has a probe, one call on a specific input whose answer the reference gets right and
the mutant gets wrong. The probes run the mutated source in this process as a module of its own
(``ol_mutant_<id>``) that imports the reference ``tinyllm`` for everything else.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
import types
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from harness.catalogs.m07_6 import test_catalog as catalog
from harness.engine import mutants as mutants_module
from harness.engine.course import load_course
from harness.engine.mutants import Edit, Mutant, apply, find_mutant, load_mutants, mutants_dir
from harness.errors import HarnessError, MutantDoesNotApply
from harness.paths import REPO_ROOT

REPO = REPO_ROOT
REFERENCE_PYTHON = REPO / "reference" / "python"
if str(REFERENCE_PYTHON) not in sys.path:  # tests/conftest.py normally does this
    sys.path.insert(0, str(REFERENCE_PYTHON))

from tinyllm.prob import rejection as reference  # noqa: E402 - importable only from here on

MODULE = "M07.6"
FILE = "tinyllm/prob/rejection.py"
REFERENCE_SOURCE = (REFERENCE_PYTHON / FILE).read_text(encoding="utf-8")
MUTANTS = load_mutants(MODULE)
IDS = [m.id for m in MUTANTS]

# The chapter's section 4 table, and ol's own tests.
CATALOG = {
    "test_hand_example", "test_hand_example_output_is_p", "test_accept_is_strict",
    "test_accept_always_when_target_dominates", "test_accept_rejects_bad_arguments",
    "test_acceptance_rate_matches_acceptance_probability", "test_residual_is_a_distribution",
    "test_residual_when_p_equals_q", "test_residual_disjoint_supports_is_p",
    "test_residual_sum_is_ascending", "test_shapes_and_distributions_are_checked",
    "test_speculative_output_is_exactly_p", "test_speculative_chi_square",
    "test_speculative_accepts_without_resampling", "test_speculative_rejects_bad_drafts",
    "test_rejection_sample_first_try_enumerated", "test_rejection_sample_tries_are_geometric",
    "test_rejection_sample_draw_order", "test_rejection_sample_checks_the_envelope",
    "test_arguments_are_never_modified",  # ol's own (issue #14): numpy and read-only arguments
}
SPECULATIVE = ("test_speculative_output_is_exactly_p", "test_speculative_chi_square",
               "test_hand_example_output_is_p")
# The chapter's mutants: (pitfall, designated tests).
CHAPTER = {
    "s01": (1, ("test_accept_is_strict",)),
    "s02": (2, ("test_accept_always_when_target_dominates",)),
    "s03": (3, ("test_residual_is_a_distribution",)),
    "s04": (4, ("test_residual_is_a_distribution",)),
    "s05": (3, ("test_residual_is_a_distribution",)),
    "s06": (5, SPECULATIVE),
    "s07": (5, SPECULATIVE),
    "s08": (6, ("test_residual_when_p_equals_q",)),
    "s09": (8, ("test_residual_sum_is_ascending",)),
    "s10": (9, ("test_acceptance_rate_matches_acceptance_probability",)),
    "s11": (10, ("test_speculative_accepts_without_resampling",)),
    "s12": (2, ("test_accept_always_when_target_dominates",)),
    "s13": (5, SPECULATIVE),
    "s14": (6, ("test_residual_when_p_equals_q",)),
    "s15": (7, ("test_rejection_sample_first_try_enumerated",)),
    "s16": (10, ("test_rejection_sample_draw_order",)),
    "s17": (11, ("test_accept_rejects_bad_arguments",)),
    "s18": (12, ("test_rejection_sample_tries_are_geometric",)),
    "s19": (7, ("test_rejection_sample_checks_the_envelope",)),
}

# ---- loading a mutated module, and describing what a call did ----------------------------------


def mutated_module(mutant: Mutant) -> types.ModuleType:
    """The mutant's source as a fresh module ``ol_mutant_<id>`` (imports: the reference)."""
    name = f"ol_mutant_{mutant.id}"
    module = types.ModuleType(name)
    module.__file__ = f"<{name}: {mutant.file}>"
    code = compile(apply(mutant, REFERENCE_SOURCE), module.__file__, "exec")
    exec(code, module.__dict__)  # noqa: S102 - our own mutant of our own reference
    return module


def show(value: object) -> str:
    """A value as text that tells bools from ints and keeps every float bit (repr round-trips)."""
    if isinstance(value, np.ndarray):
        return "array" + repr([show(v) for v in value.tolist()]).replace("'", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def outcome(call: Callable[[], object]) -> str:
    """What ``call()`` did: ``returns <value>`` or ``raises <ExceptionType>``."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return "returns " + show(call())
        except Exception as exc:  # noqa: BLE001 - any failure is the probe's outcome
            return "raises " + type(exc).__name__


class Exhausted(Exception):
    """A scripted source ran out of uniforms."""


class Scripted:
    """A UniformSource that returns the given uniforms in order and counts the draws."""

    def __init__(self, *uniforms: float, repeat_last: bool = False) -> None:
        self.uniforms = list(uniforms)
        self.repeat_last = repeat_last
        self.draws = 0

    def uniform(self) -> float:
        if self.draws >= len(self.uniforms) and not self.repeat_last:
            raise Exhausted(f"script of {len(self.uniforms)} uniforms exhausted")
        value = self.uniforms[min(self.draws, len(self.uniforms) - 1)]
        self.draws += 1
        return value


def sample(mod: types.ModuleType, p: list, q: list, m: float, source: Scripted, **kw: int) -> str:
    """A ``rejection_sample`` call's outcome, with the number of uniforms it drew."""
    result = outcome(lambda: mod.rejection_sample(p, q, m, source, **kw))
    return f"{result} after {source.draws} draws"


def speculative_law(mod: types.ModuleType, p: list, q: list, grid: int = 8) -> str:
    """The exact output distribution of ``speculative_step`` with ``x ~ q``, uniforms on k / grid.

    For the hand example every acceptance threshold and residual CDF boundary is a multiple of
    1/4, so on a grid of eighths the reference's law is exactly p.
    """
    law = [Fraction(0)] * len(p)
    for x, q_x in enumerate(q):
        if q_x == 0:
            continue
        for i in range(grid):
            for j in range(grid):
                t, _ = mod.speculative_step(p, q, x, i / grid, j / grid)
                law[int(t)] += Fraction(q_x) / grid**2
    return "law " + ", ".join(str(f) for f in law)


HAND_P = [0.5, 0.25, 0.25, 0.0]  # the chapter's worked example (section 3)
HAND_Q = [0.25, 0.5, 0.0, 0.25]
HALVES = [0.5, 0.5]
DISJOINT_P = [0.5, 0.5, 0.0, 0.0]
DISJOINT_Q = [0.0, 0.0, 0.5, 0.5]
TENTHS_P = [0.1] * 10 + [0.0]  # the left-to-right sum is 0.9999999999999999, np.sum's is 1.0
TENTHS_Q = [0.0] * 10 + [1.0]


def _tenths_residual() -> str:
    z = 0.0
    for v in TENTHS_P:
        z += v
    return "returns " + show(np.array(TENTHS_P) / z)


def _same_object(mod: types.ModuleType) -> str:
    p = np.array(HALVES)
    try:
        result = mod.residual_distribution(p, p.copy())
    except Exception as exc:  # noqa: BLE001 - a mutant that raises misbehaves too
        return "raises " + type(exc).__name__
    return "caller's p" if result is p or np.shares_memory(result, p) else "a new array"


Probe = Callable[[types.ModuleType], str]


def call(fn: str, *args: object) -> Probe:
    """A probe: the outcome of ``fn(*args)`` on the module."""
    return lambda mod: outcome(lambda: getattr(mod, fn)(*args))


def draw(p: list, q: list, m: float, *script: float, repeat: bool = False, **kw: int) -> Probe:
    """A probe: ``rejection_sample`` with a fresh scripted source for each module."""
    return lambda mod: sample(mod, p, q, m, Scripted(*script, repeat_last=repeat), **kw)


ACCEPT_DOMINATES = call("rejection_accept", 0.5, 0.25, 0.75)
HAND_RESIDUAL = call("residual_distribution", HAND_P, HAND_Q)
HAND_ALPHA = call("acceptance_probability", HAND_P, HAND_Q)
DISJOINT = call("residual_distribution", DISJOINT_P, DISJOINT_Q)
FIRST_TRY = draw(HALVES, HALVES, 1.0, 0.1, 0.9)  # proposal 0.1 -> id 0, ratio 1 accepts 0.9
RISING, FALLING = [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]  # residual entries not float32 numbers
_Z = (0.3 - 0.2) + (0.4 - 0.1)
RISING_RESIDUAL = "returns " + show(np.array([0.0, 0.0, (0.3 - 0.2) / _Z, (0.4 - 0.1) / _Z]))
SUM_P, SUM_Q = catalog.discriminating_pair()  # a left-to-right Z no compensated sum gives
SUM_RESIDUAL = "returns " + show(np.array(catalog.expected_residual(SUM_P, SUM_Q)))
ALPHA_P, ALPHA_Q = catalog.discriminating_alpha_pair()
ALPHA_LTR = "returns " + show(catalog.ltr_sum(min(a, b) for a, b in zip(ALPHA_P, ALPHA_Q, strict=True)))


def hand_law(mod: types.ModuleType) -> str:
    try:
        return speculative_law(mod, HAND_P, HAND_Q)
    except Exception as exc:  # noqa: BLE001 - a mutant that raises misbehaves too
        return "raises " + type(exc).__name__


def read_only(values: list) -> np.ndarray:
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def unchanged(mod: types.ModuleType, fn: str, which: int, *args: object) -> str:
    """Whether ``fn`` leaves its argument ``which`` (a float64 array) as it was, raising or not."""
    arrays = [np.array(a, dtype=np.float64) if isinstance(a, list) else a for a in args]
    before = arrays[which].copy()
    outcome(lambda: getattr(mod, fn)(*arrays))
    return f"{'pq'[which]} {'unchanged' if np.array_equal(arrays[which], before) else 'changed'}"


def _threshold_case(other: Callable[[float, float, float, float], bool]) -> tuple:
    """(p, q, m, proposal uniform, acceptance uniform): one try the contract rejects by one ULP
    where ``other`` accepts, from the catalog's own discriminating cases."""
    from harness.engine.exact import categorical_intervals, split_at

    for p, q, m in catalog.threshold_cases():
        for x, proposal in categorical_intervals(q):
            threshold = p[x] / (m * q[x])
            for piece in split_at([threshold]):
                for u in piece.ends:
                    if other(u, p[x], q[x], m) != (u < threshold):
                        want = f"returns ({x}, 1)" if u < threshold else "raises RuntimeError"
                        return (p, q, m, proposal.ends[0], u), f"{want} after 2 draws"
    raise AssertionError("no discriminating threshold")


THRESHOLD_PRODUCT = _threshold_case(lambda u, a, b, m: u * m * b < a)
THRESHOLD_TWICE = _threshold_case(lambda u, a, b, m: u < a / b / m)
THRESHOLD_ENVELOPE = _threshold_case(lambda u, a, b, m: u * (m * b) < a)
EDGE_INSIDE = list(catalog.pairwise_edge_cases()[0])  # valid left to right, outside the tolerance pairwise


def _float32_accept() -> tuple:
    """A speculative_step call the contract rejects and a float32 p_x, q_x would accept."""
    for p, q in catalog.float_cases():
        for x, q_x in enumerate(q):
            if q_x == 0:
                continue
            r = p[x] / q_x
            r32 = float(np.float32(p[x])) / float(np.float32(q_x))
            if r32 > r and r < 1:
                return (p, q, x, r, 0.0)
    raise AssertionError("no float case where float32 moves the ratio up")


FLOAT32_ACCEPT = _float32_accept()
FLOAT32_ACCEPT_IS = tuple(catalog.contract_step(*FLOAT32_ACCEPT))
HAND_RESIDUAL_IS = "returns array[0.5, 0.0, 0.5, 0.0]"
HAND_LAW_IS = "law 1/2, 1/4, 1/4, 0"
FIRST_TRY_IS = "returns (0, 1) after 2 draws"

# id -> (probe, the reference's answer). The mutant must answer anything else.
PROBES: dict[str, tuple[Probe, str]] = {
    "s01": (call("rejection_accept", 0.0, 0.25, 0.0), "returns False"),
    "s02": (ACCEPT_DOMINATES, "returns True"),
    "s03": (HAND_RESIDUAL, HAND_RESIDUAL_IS),
    "s04": (HAND_RESIDUAL, HAND_RESIDUAL_IS),
    "s05": (HAND_RESIDUAL, HAND_RESIDUAL_IS),
    "s06": (hand_law, HAND_LAW_IS),
    "s07": (hand_law, HAND_LAW_IS),
    "s08": (call("residual_distribution", HALVES, HALVES), "returns array[0.5, 0.5]"),
    "s09": (call("residual_distribution", TENTHS_P, TENTHS_Q), _tenths_residual()),
    "s10": (HAND_ALPHA, "returns 0.5"),
    "s11": (call("speculative_step", HAND_P, HAND_Q, 1, 0.25, 0.75), "returns (1, True)"),
    "s12": (ACCEPT_DOMINATES, "returns True"),
    "s13": (hand_law, HAND_LAW_IS),
    "s14": (_same_object, "a new array"),
    "s15": (draw(HALVES, HALVES, 2.0, 0.1, 0.75, 0.1, 0.25), "returns (0, 2) after 4 draws"),
    "s16": (FIRST_TRY, FIRST_TRY_IS),
    "s17": (call("rejection_accept", 0.5, 0.0, 0.5), "raises ValueError"),
    "s18": (FIRST_TRY, FIRST_TRY_IS),
    "s19": (draw(HALVES, [0.75, 0.25], 1.0, 0.1, 0.1), "raises ValueError after 0 draws"),
    "x01": (HAND_ALPHA, "returns 0.5"),
    "x02": (DISJOINT, "returns array[0.5, 0.5, 0.0, 0.0]"),
    "x03": (DISJOINT, "returns array[0.5, 0.5, 0.0, 0.0]"),
    "x04": (call("acceptance_probability", HALVES, [0.25, 0.25, 0.5]), "raises ValueError"),
    "x05": (call("acceptance_probability", HALVES, [0.5, 0.6]), "raises ValueError"),
    "x06": (call("speculative_step", HAND_P, HAND_Q, -1, 0.5, 0.5), "raises ValueError"),
    "x07": (call("speculative_step", HAND_P, HAND_Q, 2, 0.5, 0.5), "raises ValueError"),
    "x08": (call("rejection_accept", 0.5, 0.25, 1.0), "raises ValueError"),
    "x09": (call("rejection_accept", -0.25, 0.5, 0.0), "raises ValueError"),
    "x10": (draw([1.0, 0.0], HALVES, 2.0, 0.75, repeat=True, max_tries=3),
            "raises RuntimeError after 6 draws"),
    "x11": (FIRST_TRY, FIRST_TRY_IS),
    "x12": (draw([0.0, 1.0], HALVES, 2.0, 0.0, 0.0, 0.75, 0.0), "returns (1, 2) after 4 draws"),
    "x13": (FIRST_TRY, FIRST_TRY_IS),
    "x14": (call("speculative_step", HAND_P, HAND_Q, 1, 0.25, 1.0), "returns (1, True)"),
    "x15": (call("speculative_step", HAND_P, HAND_Q, 1.0, 0.25, 0.5), "raises ValueError"),
    "x16": (draw(HALVES, HALVES, 1.0, 0.1, 0.9, max_tries=0), "raises ValueError after 0 draws"),
    "x17": (draw(HALVES, HALVES, float("nan"), 0.5, repeat=True, max_tries=2),
            "raises ValueError after 0 draws"),
    "x18": (call("residual_distribution", TENTHS_P, TENTHS_P), "returns " + show(np.array(TENTHS_P))),
    # Ten ids of 0.1: left to right 0.9999999999999999, pairwise (and 1 - TV) 1.0.
    "x19": (call("acceptance_probability", [0.1] * 10, [0.1] * 10), "returns 0.9999999999999999"),
    "x20": (call("acceptance_probability", [0.1] * 10, [0.1] * 10), "returns 0.9999999999999999"),
    "x21": (call("residual_distribution", RISING, FALLING), RISING_RESIDUAL),
    # The largest uniform below 1 rounds to 1.0 in float32, and r = 1 must accept it.
    "x22": (call("rejection_accept", 0.25, 0.25, 1 - 2**-53), "returns True"),
    "x23": (call("residual_distribution", RISING, FALLING), RISING_RESIDUAL),
    "x24": (call("speculative_step", HAND_P, HAND_Q, 1, 0.75, 0.25), "returns (0, False)"),
    # The largest uniform below fl(0.6 / 0.7): u * 0.7 rounds up to 0.6.
    "x25": (call("rejection_accept", 0.6, 0.7, 0.8571428571428571), "returns True"),
    # Residual [0, 2/7, 5/7]: u_resample = 0 is id 1 over ascending ids, id 2 in descending order.
    "x26": (call("speculative_step", [0.0, 0.375, 0.625], [0.875, 0.125, 0.0], 0, 0.0, 0.0),
            "returns (1, False)"),
    "x27": (call("residual_distribution", SUM_P, SUM_Q), SUM_RESIDUAL),
    "x28": (call("residual_distribution", SUM_P, SUM_Q), SUM_RESIDUAL),
    "x29": (call("acceptance_probability", ALPHA_P, ALPHA_Q), ALPHA_LTR),
    # 3 * 0.1 is 0.30000000000000004: a tight envelope, though 0.30000000000000004 / 0.1 > 3.
    "x30": (draw([0.30000000000000004, 0.7], [0.1, 0.9], 3.0, 0.05, 0.5), "returns (0, 1) after 2 draws"),
    "x31": (draw(*THRESHOLD_PRODUCT[0], max_tries=1), THRESHOLD_PRODUCT[1]),
    "x32": (draw(*THRESHOLD_TWICE[0], max_tries=1), THRESHOLD_TWICE[1]),
    "x33": (call("acceptance_probability", [0.5, 0.500001], HALVES), "raises ValueError"),
    "x35": (call("acceptance_probability", EDGE_INSIDE, EDGE_INSIDE),
            "returns " + show(catalog.ltr_sum(EDGE_INSIDE))),
    "x36": (draw(HALVES, [0.9, 0.1], 2.0, 0.5, 0.5), "raises ValueError after 0 draws"),
    "x37": (call("speculative_step", HAND_P, HAND_Q, 0, 1.5, 0.5), "raises ValueError"),
    "x38": (call("speculative_step", HAND_P, HAND_Q, 1, 0.75, 1.0), "raises ValueError"),
    "x39": (draw([1.0, 0.0], HALVES, 2.0, 0.75, repeat=True, max_tries=2.5),
            "raises ValueError after 0 draws"),
    "x40": (lambda mod: unchanged(mod, "rejection_sample", 1, HAND_P, HAND_Q, 2.0, Scripted(0.5)),
            "q unchanged"),
    "x41": (lambda mod: unchanged(mod, "acceptance_probability", 0, HAND_P, HAND_Q), "p unchanged"),
    "x42": (lambda mod: outcome(lambda: mod.residual_distribution(read_only(HAND_P), HAND_Q)),
            HAND_RESIDUAL_IS),
    "x43": (call("speculative_step", *FLOAT32_ACCEPT), "returns " + show(FLOAT32_ACCEPT_IS)),
    "x44": (call("speculative_step", HAND_P, HAND_Q, 1, 0.75, 0.25), "returns (0, False)"),
    "x45": (call("rejection_accept", np.float32(0.25), np.float32(0.5), np.float32(0.25)), "returns True"),
    "x46": (call("residual_distribution", np.array([0.375, 0.25, 0.375], dtype=np.float32),
                 np.array([0.125, 0.625, 0.25], dtype=np.float32)),
            "returns " + show(np.array([0.25, 0.0, 0.125]) / 0.375)),
    "x48": (draw(*THRESHOLD_ENVELOPE[0], max_tries=1), THRESHOLD_ENVELOPE[1]),
    # Nine ids of 1/9: left to right 1.0000000000000002, returned as it is (not clipped to 1).
    "x49": (call("acceptance_probability", [1 / 9] * 9, [1 / 9] * 9), "returns 1.0000000000000002"),
    # Z = 2**-53 > 0: divided out, not taken for 0 (p one ULP from q on ids 0 and 1).
    "x50": (call("residual_distribution", [0.25 + 2**-54, 0.25 + 2**-54, 0.5 - 2**-53], [0.25, 0.25, 0.5]),
            "returns array[0.5, 0.5, 0.0]"),
    # -0.0 is zero: a p_x the target never produces, not a negative one.
    "x51": (call("rejection_accept", -0.0, 0.5, 0.25), "returns False"),
}

# ---- the library as a whole ----------------------------------------------------------------------


def test_library_holds_the_chapter_mutants_and_the_extended_ones() -> None:
    files = sorted(p.stem for p in (mutants_dir() / MODULE).glob("*.toml"))
    assert files == IDS
    assert [i for i in IDS if i.startswith("s")] == [f"s{n:02d}" for n in range(1, 20)]
    assert all(m.extended == m.id.startswith("x") for m in MUTANTS)
    assert any(m.extended for m in MUTANTS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=IDS)
def test_every_field_is_well_formed(mutant: Mutant) -> None:
    assert (mutant.module, mutant.file) == (MODULE, FILE)
    assert mutant.pitfall in load_course().module(MODULE).pitfalls
    assert set(mutant.designated) <= CATALOG, "designated tests must be the chapter's catalog tests"
    assert mutant.description.endswith(".") and "\n" not in mutant.description
    for leak in ("test_", "np.", "_arr", "def ", "`"):
        assert leak not in mutant.hint, f"the hint shows code or a catalog test: {leak!r}"


@pytest.mark.parametrize("mutant_id", sorted(CHAPTER))
def test_chapter_mutants_have_the_chapters_pitfall_and_designated_tests(mutant_id: str) -> None:
    mutant = find_mutant(MODULE, mutant_id)
    assert not mutant.extended
    assert (mutant.pitfall, mutant.designated) == CHAPTER[mutant_id]


def test_every_catalog_test_is_the_designated_killer_of_some_mutant() -> None:
    designated = {name for m in MUTANTS for name in m.designated}
    assert designated == CATALOG


def test_extended_mutants_cover_the_tests_no_chapter_mutant_names() -> None:
    extended = {name for m in MUTANTS if m.extended for name in m.designated}
    for name in ("test_hand_example", "test_residual_disjoint_supports_is_p",
                 "test_shapes_and_distributions_are_checked",
                 "test_speculative_rejects_bad_drafts"):
        assert name in extended


# ---- applying ----------------------------------------------------------------------------------


def _top_level(source: str) -> dict[str, str]:
    body = ast.parse(source).body
    return {getattr(node, "name", f"#{i}"): ast.dump(node) for i, node in enumerate(body)}


@pytest.mark.parametrize("mutant", MUTANTS, ids=IDS)
def test_applies_to_the_reference_and_changes_only_its_function(mutant: Mutant) -> None:
    mutated = apply(mutant, REFERENCE_SOURCE)
    assert mutated != REFERENCE_SOURCE
    before, after = _top_level(REFERENCE_SOURCE), _top_level(mutated)
    assert before.keys() == after.keys()
    assert before[mutant.function] != after[mutant.function], "must change code, not only text"
    assert {k: v for k, v in before.items() if k != mutant.function} == {
        k: v for k, v in after.items() if k != mutant.function
    }


@pytest.mark.parametrize("mutant_id", IDS)
def test_mutant_really_misbehaves(mutant_id: str) -> None:
    probe, expected = PROBES[mutant_id]
    assert probe(reference) == expected, "the probe's expected answer is the reference's"
    got = probe(mutated_module(find_mutant(MODULE, mutant_id)))
    assert got != expected, f"mutant {mutant_id} answers the probe like the reference: {got}"


def test_every_mutant_has_a_probe() -> None:
    assert sorted(PROBES) == IDS


def with_edit(mutant_id: str, find: str, replace: str) -> Mutant:
    """The library's mutant with its edits replaced by one (bypassing the loader's checks)."""
    return dataclasses.replace(find_mutant(MODULE, mutant_id), edits=(Edit(find, replace),))


def test_a_missing_find_text_does_not_apply() -> None:
    stale = REFERENCE_SOURCE.replace("return u < p_x / q_x", "return u < (p_x / q_x)")
    with pytest.raises(MutantDoesNotApply) as info:
        apply(find_mutant(MODULE, "s01"), stale)
    assert info.value.message == (
        "mutant s01 no longer applies to tinyllm/prob/rejection.py: "
        "'return u < p_x / q_x' not found in rejection_accept"
    )
    assert info.value.hint == "update mutants/M07.6/s01.toml to the current reference"


def test_a_find_text_elsewhere_in_the_file_does_not_count() -> None:
    # "return x, True" is in speculative_step, not in the mutant's function.
    mutant = with_edit("s01", "return x, True", "return x, False")
    with pytest.raises(MutantDoesNotApply, match="s01 .* not found in rejection_accept"):
        apply(mutant, REFERENCE_SOURCE)


def test_an_ambiguous_find_text_does_not_apply() -> None:
    mutant = with_edit("s03", "p_arr", "q_arr")
    with pytest.raises(MutantDoesNotApply, match="s03 .*'p_arr' found 3 times"):
        apply(mutant, REFERENCE_SOURCE)


def test_a_missing_function_does_not_apply() -> None:
    mutant = dataclasses.replace(find_mutant(MODULE, "s01"), function="rejection_accept_v2")
    with pytest.raises(MutantDoesNotApply, match="s01 .*no top-level function 'rejection_acc"):
        apply(mutant, REFERENCE_SOURCE)


def test_an_edit_that_breaks_the_syntax_does_not_apply() -> None:
    mutant = with_edit("s01", "return u < p_x / q_x", "return u <")
    with pytest.raises(MutantDoesNotApply, match="s01 .*does not parse"):
        apply(mutant, REFERENCE_SOURCE)


def test_an_edit_that_changes_nothing_does_not_apply() -> None:
    same = "return u < p_x / q_x"
    mutant = with_edit("s01", same, same)
    with pytest.raises(MutantDoesNotApply, match="s01 .*unchanged"):
        apply(mutant, REFERENCE_SOURCE)


def test_edits_apply_in_order_inside_the_function() -> None:
    mutated = apply(find_mutant(MODULE, "s11"), REFERENCE_SOURCE)
    assert "rejection_accept(p_arr[x], q_arr[x], u_resample)" in mutated
    assert "residual_distribution(p_arr, q_arr), u_accept), False" in mutated


# ---- looking mutants up --------------------------------------------------------------------------


def test_an_unknown_mutant_id_lists_the_valid_ones() -> None:
    with pytest.raises(HarnessError) as info:
        find_mutant(MODULE, "s99")
    assert not isinstance(info.value, MutantDoesNotApply)
    assert info.value.message == "unknown mutant id 's99' for M07.6"
    assert "s01" in info.value.hint and "x01" in info.value.hint


def test_an_unknown_module_has_no_library() -> None:
    with pytest.raises(HarnessError, match="no mutant library for module 'M99.9'") as info:
        load_mutants("M99.9")
    assert "M07.6" in info.value.hint


def test_mutants_dir_is_the_repos_mutants_folder() -> None:
    assert mutants_dir() == REPO / "mutants"


# ---- validation of malformed files ------------------------------------------------------------

GOOD = """\
id = "s01"
module = "M07.6"
file = "tinyllm/prob/rejection.py"
function = "rejection_accept"
pitfall = 1
description = "Accepts on u <= r."
designated = ["test_accept_is_strict"]
hint = "Try u = 0 with p_x = 0."

[[edit]]
find = 'return u < p_x / q_x'
replace = 'return u <= p_x / q_x'
"""

MALFORMED = [
    ("missing", GOOD.replace('hint = "Try u = 0 with p_x = 0."\n', ""), "hint"),
    ("pitfall-text", GOOD.replace("pitfall = 1", 'pitfall = "1"'), "pitfall"),
    ("pitfall-zero", GOOD.replace("pitfall = 1", "pitfall = 0"), "pitfall"),
    ("pitfall-bool", GOOD.replace("pitfall = 1", "pitfall = true"), "pitfall"),
    ("id-not-file-name", GOOD.replace('id = "s01"', 'id = "s02"'), "id"),
    ("module", GOOD.replace('module = "M07.6"', 'module = "M07.1"'), "module"),
    ("file", GOOD.replace("tinyllm/prob/rejection.py", "/abs/rejection.py"), "file"),
    ("function", GOOD.replace('"rejection_accept"', '"rejection accept"'), "function"),
    ("designated-empty", GOOD.replace('["test_accept_is_strict"]', "[]"), "designated"),
    ("designated-name", GOOD.replace('"test_accept_is_', '"accept_is_'), "designated"),
    ("description-empty", GOOD.replace('"Accepts on u <= r."', '""'), "description"),
    ("no-edit", GOOD.split("[[edit]]")[0], "edit"),
    ("edit-same", GOOD.replace("'return u <= p_x / q_x'", "'return u < p_x / q_x'"), "edit[1]"),
    ("edit-key", GOOD.replace("replace =", "replacement ="), "edit[1]"),
    ("unknown-field", GOOD.replace("pitfall = 1", "pitfall = 1\nseverity = 2"), "severity"),
]


@pytest.mark.parametrize(("text", "field"), [(t, f) for _, t, f in MALFORMED],
                         ids=[n for n, _, _ in MALFORMED])
def test_a_malformed_field_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, field: str
) -> None:
    (tmp_path / MODULE).mkdir()
    (tmp_path / MODULE / "s01.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(mutants_module, "mutants_dir", lambda: tmp_path)
    with pytest.raises(HarnessError) as info:
        load_mutants(MODULE)
    assert "s01.toml" in info.value.message
    assert f"field '{field}'" in info.value.message


def test_a_file_that_is_not_toml_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / MODULE).mkdir()
    (tmp_path / MODULE / "s01.toml").write_text("id = \n", encoding="utf-8")
    monkeypatch.setattr(mutants_module, "mutants_dir", lambda: tmp_path)
    with pytest.raises(HarnessError, match=r"s01\.toml.*cannot be read as TOML"):
        load_mutants(MODULE)


def test_the_well_formed_example_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / MODULE).mkdir()
    (tmp_path / MODULE / "s01.toml").write_text(GOOD, encoding="utf-8")
    monkeypatch.setattr(mutants_module, "mutants_dir", lambda: tmp_path)
    (mutant,) = load_mutants(MODULE)
    assert mutant == Mutant(
        id="s01", module=MODULE, file=FILE, function="rejection_accept", pitfall=1,
        description="Accepts on u <= r.", designated=("test_accept_is_strict",),
        hint="Try u = 0 with p_x = 0.",
        edits=(Edit("return u < p_x / q_x", "return u <= p_x / q_x"),),
        extended=False,
    )
