"""The M06.3 catalog's own inputs do what the catalog says, and its mutants edit one method each.

The metadata every catalog shares (its table, kills, pitfalls, plain mutants) is checked for all
modules in tests/commands/test_catalog_metadata.py.

File names carry the module: ``tests/catalogs/m06_3`` has no ``__init__.py``, and pytest's default import
mode needs every test file's basename to be unique across the suite.
"""

from __future__ import annotations

import ast
import time

import pytest

from harness.catalogs.m06_3 import test_catalog as catalog
from harness.engine.course import load_course
from harness.engine.mutants import apply, load_mutants
from harness.engine.own_code import reference_target
from harness.engine.runner import run_catalog
from harness.paths import REFERENCE_PYTHON
from harness.uniforms import HarnessPCG32

MODULE = load_course().module("M06.3")
MUTANTS = load_mutants("M06.3")
REFERENCE_SOURCE = (REFERENCE_PYTHON / MODULE.file).read_text(encoding="utf-8")


def test_the_catalog_runs_in_well_under_a_second_in_process():
    target = reference_target(MODULE)
    run_catalog(MODULE, target, "reference")  # warm: imports, caches
    start = time.process_time()  # CPU time: a busy machine does not make the catalog slower
    result = run_catalog(MODULE, target, "reference")
    assert result.verdict == "pass"
    assert time.process_time() - start < 1.0


# -- the mutants edit inside their method (or class) only ----------------------------------------

def _definitions(source: str) -> dict[str, str]:
    """Every top-level statement, and every method of a class as ``Class.method``, as an AST dump."""
    out = {}
    for i, node in enumerate(ast.parse(source).body):
        name = getattr(node, "name", f"#{i}")
        if isinstance(node, ast.ClassDef):
            for j, item in enumerate(node.body):
                out[f"{name}.{getattr(item, 'name', f'#{j}')}"] = ast.dump(item)
        else:
            out[name] = ast.dump(node)
    return out


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.id for m in MUTANTS])
def test_each_mutant_changes_only_its_function(mutant):
    before, after = _definitions(REFERENCE_SOURCE), _definitions(apply(mutant, REFERENCE_SOURCE))
    assert before.keys() == after.keys()
    changed = {k for k in before if before[k] != after[k]}
    if mutant.function == "PCG32":  # the whole class: the shared-state mutant edits three methods
        assert changed and all(k.startswith("PCG32.") for k in changed)
    else:
        assert changed == {mutant.function}


def test_a_method_outside_its_class_is_not_found():
    import dataclasses

    from harness.errors import MutantDoesNotApply

    s03 = next(m for m in MUTANTS if m.id == "s03")
    with pytest.raises(MutantDoesNotApply, match="no method 'next_u64' in class 'PCG32'"):
        apply(dataclasses.replace(s03, function="PCG32.next_u64"), REFERENCE_SOURCE)
    with pytest.raises(MutantDoesNotApply, match="no top-level class 'PCG64'"):
        apply(dataclasses.replace(s03, function="PCG64.next_u32"), REFERENCE_SOURCE)
    # The rotation line is in next_u32, not in uniform.
    with pytest.raises(MutantDoesNotApply, match="not found in PCG32.uniform"):
        apply(dataclasses.replace(s03, function="PCG32.uniform"), REFERENCE_SOURCE)


@pytest.mark.parametrize("name", ["PCG32.next_u32.x", "PCG32.", ".next_u32", "PCG32 next"])
def test_a_function_name_with_more_than_class_and_method_is_malformed(tmp_path, monkeypatch, name):
    import harness.engine.mutants as mutants_module
    from harness.errors import HarnessError

    text = (mutants_module.mutants_dir() / "M06.3" / "s03.toml").read_text(encoding="utf-8")
    (tmp_path / "M06.3").mkdir()
    (tmp_path / "M06.3" / "s03.toml").write_text(
        text.replace('function = "PCG32.next_u32"', f'function = "{name}"'), encoding="utf-8")
    monkeypatch.setattr(mutants_module, "mutants_dir", lambda: tmp_path)
    with pytest.raises(HarnessError, match="field 'function'"):
        load_mutants("M06.3")


# -- the catalog's own inputs --------------------------------------------------------------------

def _bounded(gen: HarnessPCG32, bound: int) -> int:
    """pcg32_boundedrand_r: rejection below (2**32 - bound) % bound."""
    threshold = (2**32 - bound) % bound
    while True:
        word = gen.next_u32()
        if word >= threshold:
            return word % bound


def test_round_2_starts_where_pcg32_demo_prints_it():
    """pcg32-demo's round 1: six words, 65 coins, 33 dice, a 52-card shuffle; then round 2's words."""
    gen = HarnessPCG32(42, 54)
    assert tuple(gen.next_u32() for _ in range(6)) == catalog.ROUND_1
    coins = "".join("H" if _bounded(gen, 2) else "T" for _ in range(65))
    assert coins == "HHTTTHTHHHTHTTTHHHHHTTTHHHTHTHTHTTHTTTHHHHHHTTTTHHTTTTTHTTTTTTTHT"
    for _ in range(33):
        _bounded(gen, 6)
    for i in range(52, 1, -1):
        _bounded(gen, i)
    assert tuple(gen.next_u32() for _ in range(6)) == catalog.ROUND_2
    assert catalog.harness_words(42, 54, catalog.ROUND_2_AT + 6)[catalog.ROUND_2_AT:] == list(catalog.ROUND_2)


def test_the_spec_uniforms_are_the_contract_of_the_published_words():
    w = catalog.ROUND_1
    assert (catalog.contract_uniform(w[0], w[1]), catalog.contract_uniform(w[2], w[3])) == \
        catalog.FIRST_UNIFORMS_42_54


def test_seeds_solved_from_the_seeding_reach_the_ends_of_the_range():
    for (seed, stream), words, u in [(catalog.ZERO_SEED, (0, 0), 0.0),
                                     (catalog.TOP_SEED, (2**32 - 1, 2**32 - 1), 1 - 2**-53)]:
        assert 0 <= seed < 2**64 and 0 <= stream < 2**63
        assert tuple(catalog.harness_words(seed, stream, 2)) == words
        assert HarnessPCG32(seed, stream).uniform() == u


def test_seed_for_state_inverts_the_seeding():
    gen = HarnessPCG32(1, 2)
    for _ in range(20):
        state, stream = (gen.next_u32() << 32) | gen.next_u32(), gen.next_u32()
        assert HarnessPCG32(catalog.seed_for_state(state, stream), stream)._state == state


def test_the_variants_default_to_the_contract_and_each_differs_from_it():
    seed, stream = 2**33 + 42, 2**40 + 3  # above 32 bits, and not the default stream
    want = catalog.harness_words(seed, stream, 12)
    assert catalog.variant_words(seed, stream, 12) == want
    for name, (pitfall, options) in catalog.WORD_VARIANTS.items():
        assert catalog.variant_words(seed, stream, 12, **options) != want, name
        assert pitfall in MODULE.pitfalls
    w1, w2 = catalog.ROUND_1[:2]
    for name, (_, value) in catalog.uniform_variants(w1, w2).items():
        assert value != catalog.contract_uniform(w1, w2), name


def test_every_seeding_variant_is_caught_by_some_seeding_case():
    cases = catalog.seeding_cases()
    for name, (_, options) in catalog.WORD_VARIANTS.items():
        assert any(catalog.variant_words(s, t, 8, **options) != catalog.harness_words(s, t, 8)
                   for s, t in cases), name


def test_the_stream_pairs_are_independent_for_pcg_and_correlated_high_bit_streams_are_left_out():
    seed = catalog.STREAMS_SEED
    for s1, s2 in catalog.STREAM_PAIRS:
        a, b = (catalog.harness_words(seed, s, catalog.STREAMS_WORDS) for s in (s1, s2))
        assert catalog.common_runs(a, b) == 0
        assert catalog.bit_agreement(a, b)[2] >= catalog.STREAMS_ALPHA
    # Increments that differ only in the top bit: PCG's own streams are correlated there.
    a, b = (catalog.harness_words(seed, s, catalog.STREAMS_WORDS) for s in (7, 2**62 + 7))
    assert catalog.bit_agreement(a, b)[2] < catalog.STREAMS_ALPHA


def test_the_closed_form_chi_square_is_scipys():
    from scipy.stats import chisquare

    for counts in ([121] * 33, [100 + i for i in range(33)], [0] * 16 + [250] * 17):
        stat, pvalue = catalog.chi_square(counts)
        want = chisquare(counts)
        assert stat == pytest.approx(float(want.statistic)) and pvalue == pytest.approx(float(want.pvalue))
    assert catalog.CHI_SQUARE_BINS % 2 == 1  # an even number of degrees of freedom
