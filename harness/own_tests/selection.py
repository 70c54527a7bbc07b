"""Which of a student's tests run on each mutant under ``ol tests --mine`` (rung R1), and how a
mutant's run of some of them is read as a run of all of them.

A mutant edits one function of the module (``harness.engine.mutants``). A test that never calls
it on the reference runs the reference's code on the mutant too, so its outcome there is the
reference's: passed (a test that did not pass on the reference is run on every mutant). So, as
``ol lab`` does for the catalog (``harness.lab.reach``), each mutant runs only the tests that
reached its function on the reference, and the others take the reference's outcome and message:
every list of the verdict (outcomes, catches, messages, in pytest's order) is what running every
test gives, for a suite whose tests do not depend on one another. ``ol tests --mine
--exhaustive`` runs every test everywhere.

The order of a run (``harness.own_tests.engine.run_all``):

1. the reference alone, once, to learn what each test reaches (``Reach``; every run records it,
   so recording tells a run nothing). Its outcomes decide nothing: the verdict's reference is
   the one run below, among the others;
2. then, in one random order: the reference, the hidden correct implementations (always every
   test), each mutant (the tests its function's ``chosen``; none at all when no test reaches it:
   it is then the reference's run, caught by nothing), and per distinct choice of tests the
   reference once more with just those tests (a *check run*).

Trust. What a test reached is reported from inside the student's process, so it is a claim. It
only decides which tests *run* on a mutant; a test not run there takes the reference's outcome,
which for a test that can catch anything (passed on every correct implementation) is "passed":
it catches nothing. A forged reach can make the suite catch less, never more, and never hides a
test failing on correct code (every correct implementation runs every test). A suite can tell
that only some of its tests run, and so that it runs a mutant (or a check run): it could fail
then without testing anything. So a test counts on a mutant run with a choice of tests only if
it passed on the reference's check run of the same choice, which the suite cannot tell from the
mutant's except by testing the code; a suite whose reference check run differs from its whole
run on any chosen test (tests that depend on one another, or on being run apart) gets no verdict
on those mutants: ``PARTIAL``, caught by nothing, with the reason. So does a mutant run that ran
other tests than it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MAX_NAMES = 64  # functions and methods of the module a test reached, as a report may list them
PARTIAL = "partial run"
PARTIAL_PROBLEM = ("your tests gave other results on the reference when only the tests that "
                   "reach the changed code ran (does a test depend on another having run?); "
                   "`ol tests --mine --exhaustive` runs every test everywhere")
OTHER_TESTS = ("the run did not run the tests it was given (does a hook of your suite add, "
               "remove or rename tests?)")


@dataclass(frozen=True)
class Reach:
    """What each test called of the module in one run (``f`` or ``Class.method``), and what was
    called outside any one test (at collection, a shared fixture, a teardown): by every test."""

    tests: Mapping[str, frozenset[str]]
    everywhere: frozenset[str]

    def chosen(self, outcomes: Mapping[str, str], function: str) -> frozenset[str] | None:
        """The tests to run on a mutant of ``function`` (``outcomes``: this run's): those that
        reached it or did not pass; None for all of them."""
        if reaches(self.everywhere, function):
            return None
        chosen = frozenset(t for t, outcome in outcomes.items()
                           if outcome != "passed" or reaches(self.tests.get(t, frozenset()),
                                                              function))
        return None if len(chosen) == len(outcomes) else chosen


def reaches(names: Iterable[str], function: str) -> bool:
    """Whether calls of ``names`` can reach code of ``function`` (a function, a method or a
    class, whose methods are ``Class.name``)."""
    return any(n == function or n.startswith(function + ".") or n == "*" for n in names)


def decode_reach(data: dict) -> Reach | None:
    """A child's ``reached`` and ``everywhere``; None (no choice: every test runs) if either is
    missing or malformed."""
    tests, everywhere = data.get("reached"), data.get("everywhere")
    if not isinstance(tests, dict) or not isinstance(everywhere, str):
        return None
    out = {}
    for test, names in tests.items():
        if not isinstance(names, str):
            return None
        out[test] = frozenset(names.split()[:MAX_NAMES])
    return Reach(out, frozenset(everywhere.split()[:MAX_NAMES]))


def settle(reference: Mapping[str, str], messages: Mapping[str, str], chosen: frozenset[str],
           check: Mapping[str, str] | None,
           run: tuple[Mapping[str, str], Mapping[str, str]]) -> tuple[dict, dict] | str:
    """A mutant's run of ``chosen`` (its outcomes and messages) as a run of every test, or why
    it has no verdict.

    ``reference``, ``messages``: the reference's whole run; ``check``: the reference's outcomes
    with just ``chosen`` (None if that run did not run). The tests not chosen take the
    reference's outcome and message, in the reference's order.
    """
    if check is None or set(check) != chosen or any(check[t] != reference.get(t) for t in chosen):
        return PARTIAL_PROBLEM
    outcomes, failures = run
    if set(outcomes) != chosen:
        return OTHER_TESTS
    filled = {t: outcomes[t] if t in chosen else outcome for t, outcome in reference.items()}
    texts = {t: (failures if t in chosen else messages).get(t) for t in filled}
    return filled, {t: text for t, text in texts.items() if text is not None}
