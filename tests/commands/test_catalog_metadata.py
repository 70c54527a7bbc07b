"""Every catalog's metadata is one truth: names and kinds of its table, kills = designations.

Checked for every module of the course (``harness/course.toml``). What only one module's catalog
has (its own inputs, its mutants' edits) is tested beside it, in ``tests/<module>/``.
"""

from __future__ import annotations

import pytest

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants

MODULES = list(load_course().modules)

# Each catalog's table: name -> kind, in file order.
TABLES = {
    "M06.3": {
        "test_published_vector": "unit",
        "test_seeding_follows_pcg32_srandom_r": "property",
        "test_stream_independence": "statistical",
        "test_same_seed_same_sequence": "property",
        "test_next_u32_is_a_32_bit_int": "property",
        "test_uniform_is_two_words_first_word_high": "unit",
        "test_uniform_consumes_exactly_two_words": "unit",
        "test_uniform_granularity_is_2_to_minus_53": "property",
        "test_uniform_range_includes_0_excludes_1": "boundary",
        "test_uniform_chi_square": "statistical",
        "test_bad_seed_or_stream_raises": "boundary",
        "test_valid_seeds_and_streams_accepted": "boundary",
    },
    "M07.1": {
        "test_hand_example": "unit",
        "test_boundary_goes_to_next_positive_id": "boundary",
        "test_zero_probability_ids_never_returned": "property",
        "test_rounding_tail_returns_last_positive_id": "boundary",
        "test_running_sums_are_left_to_right": "unit",
        "test_output_law_enumerated_exactly": "statistical",
        "test_chi_square": "statistical",
        "test_invalid_distributions_raise": "boundary",
        "test_invalid_u_raises": "boundary",
        "test_sum_tolerance_edge": "boundary",
        "test_inputs_accepted_and_not_modified": "property",
    },
    # M07.6: the chapter's section 4 table, then ol's own.
    "M07.6": {
        "test_hand_example": "unit",
        "test_hand_example_output_is_p": "statistical",
        "test_accept_is_strict": "boundary",
        "test_accept_always_when_target_dominates": "boundary",
        "test_accept_rejects_bad_arguments": "boundary",
        "test_acceptance_rate_matches_acceptance_probability": "statistical",
        "test_residual_is_a_distribution": "property",
        "test_residual_when_p_equals_q": "boundary",
        "test_residual_disjoint_supports_is_p": "boundary",
        "test_residual_sum_is_ascending": "unit",
        "test_shapes_and_distributions_are_checked": "boundary",
        "test_speculative_output_is_exactly_p": "statistical",
        "test_speculative_chi_square": "statistical",
        "test_speculative_accepts_without_resampling": "unit",
        "test_speculative_rejects_bad_drafts": "boundary",
        "test_rejection_sample_first_try_enumerated": "statistical",
        "test_rejection_sample_tries_are_geometric": "statistical",
        "test_rejection_sample_draw_order": "unit",
        "test_rejection_sample_checks_the_envelope": "boundary",
        "test_arguments_are_never_modified": "property",  # ol's own (issue #14)
    },
}

# The plain (s) mutants: the classic mistakes each module's issue names, id -> (pitfall, function).
PLAIN_MUTANTS = {
    # Wrong multiplier, wrong increment, rotation the wrong way, >> 11, words swapped, no steps.
    "M06.3": {
        "s01": (1, "PCG32._step"), "s02": (2, "PCG32.__init__"), "s03": (3, "PCG32.next_u32"),
        "s04": (4, "PCG32.uniform"), "s05": (5, "PCG32.uniform"), "s06": (6, "PCG32.__init__"),
    },
    "M07.1": {
        "s01": (1, "sample_categorical"), "s02": (2, "sample_categorical"),
        "s03": (3, "sample_categorical"), "s04": (4, "sample_categorical"),
        "s05": (5, "sample_categorical"), "s06": (6, "as_distribution"),
    },
    # The chapter's bugs.
    "M07.6": {
        "s01": (1, "rejection_accept"), "s02": (2, "rejection_accept"),
        "s03": (3, "residual_distribution"), "s04": (4, "residual_distribution"),
        "s05": (3, "residual_distribution"), "s06": (5, "speculative_step"),
        "s07": (5, "speculative_step"), "s08": (6, "residual_distribution"),
        "s09": (8, "residual_distribution"), "s10": (9, "acceptance_probability"),
        "s11": (10, "speculative_step"), "s12": (2, "rejection_accept"),
        "s13": (5, "speculative_step"), "s14": (6, "residual_distribution"),
        "s15": (7, "rejection_sample"), "s16": (10, "rejection_sample"),
        "s17": (11, "rejection_accept"), "s18": (12, "rejection_sample"),
        "s19": (7, "rejection_sample"),
    },
}


def test_the_tables_are_the_courses_modules():
    assert set(TABLES) == set(PLAIN_MUTANTS) == set(MODULES)


@pytest.mark.parametrize("module_id", MODULES)
def test_the_catalog_is_the_table_in_its_order(module_id):
    cases = collect(load_course().module(module_id))
    assert [(c.name, c.kind.value) for c, _ in cases] == list(TABLES[module_id].items())


@pytest.mark.parametrize("module_id", MODULES)
def test_every_test_names_what_it_checks_why_and_a_known_pitfall(module_id):
    module = load_course().module(module_id)
    for info, _ in collect(module):
        assert info.checks and info.why and info.pitfalls, info.name
        assert all(p in module.pitfalls for p in info.pitfalls), info.name


@pytest.mark.parametrize("module_id", MODULES)
def test_kills_on_each_test_are_exactly_the_mutants_designating_it(module_id):
    mutants = load_mutants(module_id)
    for info, _ in collect(load_course().module(module_id)):
        designating = sorted(m.id for m in mutants if info.name in m.designated)
        assert list(info.kills) == designating, info.name


@pytest.mark.parametrize("module_id", MODULES)
def test_pitfalls_are_numbered_from_1_and_every_one_has_a_mutant(module_id):
    module = load_course().module(module_id)
    assert sorted(module.pitfalls) == list(range(1, len(module.pitfalls) + 1))
    assert {m.pitfall for m in load_mutants(module_id)} == set(module.pitfalls)


@pytest.mark.parametrize("module_id", MODULES)
def test_the_plain_mutants_are_the_issues_classic_mistakes(module_id):
    plain = {m.id: (m.pitfall, m.function) for m in load_mutants(module_id) if not m.extended}
    assert plain == PLAIN_MUTANTS[module_id]
