"""The catalog's metadata is one truth: names and kinds of the chapter, kills = designations."""

from __future__ import annotations

from harness.catalog import collect
from harness.course import load_course
from harness.mutants import load_mutants

# The chapter's section 4 table: name -> kind.
CHAPTER = {
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
}


def test_the_catalog_is_the_chapters_table_in_its_order():
    cases = collect(load_course().module("M07.6"))
    assert [(c.name, c.kind.value) for c, _ in cases] == list(CHAPTER.items())


def test_every_test_names_what_it_checks_why_and_a_known_pitfall():
    module = load_course().module("M07.6")
    for info, _ in collect(module):
        assert info.checks and info.why and info.pitfalls
        assert all(p in module.pitfalls for p in info.pitfalls), info.name


def test_kills_on_each_test_are_exactly_the_mutants_designating_it():
    mutants = load_mutants("M07.6")
    for info, _ in collect(load_course().module("M07.6")):
        designating = sorted(m.id for m in mutants if info.name in m.designated)
        assert list(info.kills) == designating, info.name
