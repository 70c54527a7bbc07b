"""``harness.engine.outcome``'s shared pieces: the one accessor of what the code under test raised."""

from __future__ import annotations

from harness.catalogs.checks import fmt, raised_name
from harness.engine.outcome import error_name, error_words, remote_of
from harness.engine.target import TargetError, rebuild
from harness.sandbox.codec import RemoteError

CUSTOM = RemoteError("BadProbs", ("BadProbs", "ValueError", "Exception"), "p sums to 2")
NAME = RemoteError("NameError", ("NameError", "Exception"), "name 'x' is not defined")


def test_a_target_error_and_a_rebuilt_exception_carry_their_remote_under_one_name():
    rebuilt = rebuild(CUSTOM)
    assert type(rebuilt) is ValueError and remote_of(rebuilt) is CUSTOM
    wrapped = rebuild(NAME)
    assert type(wrapped) is TargetError and remote_of(wrapped) is NAME
    assert rebuilt.ol_remote is CUSTOM and wrapped.ol_remote is NAME  # one attribute name


def test_an_exception_of_ols_own_has_no_remote():
    assert remote_of(ValueError("ol's own")) is None
    odd = ValueError("not a remote")
    odd.ol_remote = "a string"  # only a RemoteError counts
    assert remote_of(odd) is None


def test_every_reader_names_the_class_the_code_under_test_raised():
    rebuilt, wrapped = rebuild(CUSTOM), rebuild(NAME)
    assert error_name(rebuilt) == "BadProbs" and error_name(wrapped) == "NameError"
    assert error_words(rebuilt) == "BadProbs: p sums to 2"
    assert raised_name(rebuilt) == "BadProbs" and raised_name(wrapped) == "NameError"
    assert raised_name(KeyError("k")) == "KeyError"
    assert fmt(rebuilt) == "raised BadProbs: p sums to 2"
    assert fmt(wrapped) == "raised NameError: name 'x' is not defined"


def test_an_outcome_and_the_cases_of_a_seed_in_words_have_names_of_their_own():
    from harness.engine.outcome import outcome_words
    from harness.engine.seeding import cases_words
    from harness.engine.target import Result

    assert outcome_words(Result((1,), value=(2, False))) == "returned (2, False)"
    assert outcome_words(Result((1,), error=rebuild(CUSTOM))) == "raised BadProbs: p sums to 2"
    assert outcome_words(Result((1,)), "mutated") == "modified an argument in place"
    # An object's default repr without its address: the same words on every run (#28).
    class Generator:
        pass

    said = outcome_words(Result((1,), value=Generator()))
    assert said == outcome_words(Result((1,), value=Generator())) and " at 0x" not in said, said
    assert said.startswith("returned <") and said.endswith(".Generator object>"), said
    assert cases_words(None) == "the public cases" and cases_words(7) == "hidden cases of seed 7"
