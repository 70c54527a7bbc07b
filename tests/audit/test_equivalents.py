"""Recorded mutmut survivors: matched by function and text, never by mutmut's run number."""

from __future__ import annotations

import tomllib

import pytest

from harness.audit.equivalents import Record, load_records, match, skeleton
from harness.audit.mutations import MutmutMutant
from harness.errors import HarnessError


def _mutant(number, function="_finite", original='raise ValueError(f"{name} bad")',
            mutated="raise ValueError(None)", occurrence=1, line=10):
    return MutmutMutant(f"tinyllm.prob.rejection.x_{function}__mutmut_{number}", number, function,
                        original, mutated, occurrence, line, line, "", mutated)


def _record(number=1, **fields):
    values = {"function": "_finite", "original": 'raise ValueError(f"{name} bad")',
              "mutated": "raise ValueError(None)", "kind": "out-of-contract", "reason": "message only"}
    values.update(fields)
    return Record(number=number, **values)


def test_a_record_matches_the_same_edit_under_any_run_number():
    record = _record()
    for number in (3, 17, 101):
        assert match([record], [_mutant(number)]).by_key == {_mutant(number).key: record}


def test_a_record_does_not_match_another_edit_or_function():
    m = match([_record()], [_mutant(1, mutated="raise ValueError('XX')"), _mutant(2, function="_pair")])
    assert m.by_key == {} and [r.number for r in m.stale] == [1]


def test_occurrence_tells_two_equal_edits_apart():
    first, second = _mutant(4, occurrence=1, line=10), _mutant(9, occurrence=2, line=20)
    m = match([_record(occurrence=2)], [first, second])
    assert list(m.by_key) == [second.key]
    assert set(match([_record()], [first, second]).by_key) == {first.key, second.key}


def test_a_record_matching_nothing_is_stale():
    assert [r.number for r in match([_record(1), _record(2, function="gone")], [_mutant(1)]).stale] == [2]


def test_two_records_for_one_mutant_is_an_error():
    with pytest.raises(HarnessError, match="matches record 1"):
        match([_record(1), _record(2, reason="another reason")], [_mutant(1)])


def _write(tmp_path, text):
    path = tmp_path / "equivalents.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '[[mutant]]\nfunction = "f"\noriginal = "a"\nmutated = "b"\nkind = "equivalent"\nreason = "r"\n'


@pytest.mark.parametrize("text,why", [
    ('[[mutant]]\nfunction = "f"\noriginal = "a"\nmutated = "b"\nkind = "equivalent"\nreason = "TODO"\n',
     "TODO"),
    ('[[mutant]]\nfunction = "f"\noriginal = "a"\nmutated = "b"\nkind = "maybe"\nreason = "r"\n', "kind"),
    ('[[mutant]]\nfunction = "f"\noriginal = "a"\nkind = "equivalent"\nreason = "r"\n', "mutated"),
    (GOOD + 'occurrence = 0\n', "occurrence"),
    (GOOD + 'why = "x"\n', "unknown field"),
])
def test_a_malformed_record_is_named(tmp_path, text, why):
    with pytest.raises(HarnessError, match=why) as info:
        load_records(_write(tmp_path, text))
    assert "record 1" in info.value.message


def test_no_file_means_no_records(tmp_path):
    assert load_records(tmp_path / "missing.toml") == []


def test_the_skeleton_loads_once_its_reasons_are_written(tmp_path):
    mutants = [_mutant(1), _mutant(2, original='if "\\\\" in x:', mutated="if 'XX\\\\XX' in x:")]
    text = skeleton(mutants, mutants).replace('reason = "TODO"', 'reason = "checked by hand"')
    tomllib.loads(text)
    records = load_records(_write(tmp_path, text))
    assert set(match(records, mutants).by_key) == {m.key for m in mutants}
