"""Hidden cases for every module (issue #14): the verdicts that must not depend on the run seed.

Every randomised family of a catalog takes its seed from the run seed (``harness.engine.seeding``):

- the reference passes the whole catalog on the hidden cases of 20 run seeds (0 is a run seed like
  any other: only ``None`` is the public cases);
- every mutant fails each of its designated tests on the hidden cases of 3 run seeds, so no kill
  hangs on a lucky public input.

What each catalog's families are and that they change with the seed is tested beside the catalog
(``tests/catalogs/m06_3``, ``tests/catalogs/m07_1``, ``tests/catalogs/m07_6``).
"""

from __future__ import annotations

import pytest

from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.engine.mutants import load_mutants, mutant_target
from harness.engine.own_code import reference_target
from harness.engine.runner import run_case, run_catalog
from harness.engine.seeding import cases_from

COURSE = load_course()
MODULES = ("M06.3", "M07.1", "M07.6")
RUN_SEEDS = tuple(range(20))
MUTANT_SEEDS = (1, 20_261_201, 2**63 - 1)
# M07.6's 68 take most of the time: the fast tier (-m "not slow", #28) keeps the others.
MUTANTS = [pytest.param(module_id, m, id=f"{module_id}-{m.id}",
                        marks=[pytest.mark.slow] if module_id == "M07.6" else [])
           for module_id in MODULES for m in load_mutants(module_id)]


@pytest.mark.parametrize("module_id", MODULES)
@pytest.mark.parametrize("seed", RUN_SEEDS)
@pytest.mark.slow
def test_the_reference_passes_on_the_hidden_cases_of_every_run_seed(module_id, seed):
    module = COURSE.module(module_id)
    run = run_catalog(module, reference_target(module), "reference", seed=seed)
    assert run.verdict == "pass" and run.seed == seed, \
        [(t.name, t.message.splitlines()[0]) for t in run.failures()]


@pytest.mark.parametrize(("module_id", "mutant"), MUTANTS)
def test_every_mutant_fails_its_designated_tests_on_hidden_cases(module_id, mutant):
    module = COURSE.module(module_id)
    cases = {info.name: (info, fn) for info, fn in collect(module)}
    target = mutant_target(mutant, module)
    for seed in MUTANT_SEEDS:
        for name in mutant.designated:
            with cases_from(seed):
                result = run_case(module, *cases[name], target, 30)
            assert not result.ok, f"{mutant.id} passes {name} on the cases of seed {seed}"
