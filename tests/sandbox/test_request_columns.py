"""A request's calls by column (``codec.piece_of_rows``, ``codec.calls_of``): exactly what rows carry.

A piece of many calls with one number of arguments travels by column: floats as their float64
bytes, one repeated argument object once, anything else as a JSON list. The worker must rebuild
every call's arguments exactly (-0.0, NaN, the largest and the smallest floats, ints beyond 64
bits, bools that are not ints), and every call must still see the one shared tuple; a tuple of
numbers is encoded once across requests, a list every time.
"""

from __future__ import annotations

import math
import struct

import pytest

from harness.sandbox import codec, protocol
from harness.sandbox.codec import COLUMNS_FROM, calls_of
from harness.sandbox.codec import piece_of_rows as _piece
from harness.sandbox.codec import request_frames as _frames

FLOATS = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, 5e-324, 1.7976931348623157e308,
          0.1, 1 / 3, 2.0 ** -1074, -1e-300]
SOURCE = '''
def echo(*args):
    return [repr(a) + ":" + type(a).__name__ for a in args]


def bits(x):
    import struct
    return struct.pack("<d", x).hex()


def shared(p, q, i):
    return (p is q, p[i], type(p).__name__)


def total(values):
    return sum(values)
'''
FUNCTIONS = ("echo", "bits", "shared", "total")


def _wire(message: dict) -> dict:
    """``message`` as the worker reads it: framed and parsed again."""
    buf = bytearray(protocol.frame(message))
    parsed = protocol.next_message(buf, 1 << 30)
    assert parsed is not None
    return parsed


def _rows_again(rows: list[list]) -> list:
    return [list(call) for call in calls_of(_wire(_piece(rows)))]


def _exact(values: list) -> list:
    """Values compared by class and bits (so -0.0 is not 0.0, and NaN equals NaN)."""
    return [(type(v).__name__, struct.pack("<d", v) if type(v) is float else v) for v in values]


def test_many_calls_of_one_width_go_by_column():
    ref = [0]  # a value reference: one object for every call that passes that value
    rows = [[ref, float(i) / 7, i, i % 2 == 0, [0]] for i in range(COLUMNS_FROM)]
    kinds = [next(iter(c)) for c in _piece(rows)["columns"]]
    assert kinds == ["same", "f64", "json", "json", "json"]  # equal lists are not one object
    assert "calls" in _piece(rows[:COLUMNS_FROM - 1])  # a few calls: rows
    assert "calls" in _piece([*rows, [1.0]])  # ragged: rows


def test_columns_carry_every_float_to_the_bit():
    nan_with_payload = struct.unpack("<d", bytes.fromhex("010000000000f87f"))[0]
    values = [*FLOATS, math.nan, nan_with_payload, -math.nan] * 3
    rows = [[v] for v in values]
    assert next(iter(_piece(rows)["columns"][0])) == "f64"
    again = _rows_again(rows)
    assert [struct.pack("<d", r[0]) for r in again] == [struct.pack("<d", v) for v in values]


@pytest.mark.parametrize("column", [
    [2 ** 70, -(2 ** 65), 0, 1, -1] * 4,  # ints beyond 64 bits
    [True, False, 1, 0, 1.0, 0.0] * 3,  # bools, ints and floats, told apart
    [1.0, 2, 3.5] * 6,  # floats mixed with an int: a JSON column, not f64
    [{"t": "object", "cls": "X"}] * 20,  # encoded objects, each call its own
])
def test_columns_keep_every_class(column):
    rows = [[v, float(i)] for i, v in enumerate(column)]
    assert [_exact(r) for r in _rows_again(rows)] == [_exact(r) for r in rows]


def test_a_call_without_arguments_keeps_its_count():
    piece = _wire(_piece([[] for _ in range(COLUMNS_FROM + 3)]))
    assert piece["columns"] == [] and piece["n"] == COLUMNS_FROM + 3
    assert calls_of(piece) == [()] * (COLUMNS_FROM + 3)


def test_columns_of_unequal_lengths_end_the_worker():
    piece = _wire(_piece([[float(i), i] for i in range(COLUMNS_FROM)]))
    piece["columns"][1]["json"].pop()
    with pytest.raises(SystemExit):
        calls_of(piece)


def test_a_repeated_argument_travels_once_and_every_call_refers_to_it():
    ref = [0]
    piece = _wire(_piece([[ref, float(i)] for i in range(COLUMNS_FROM)]))
    assert piece["columns"][0] == {"same": [0]}
    calls = calls_of(piece)
    assert [c[0] for c in calls] == [[0]] * COLUMNS_FROM and [c[1] for c in calls] == [
        float(i) for i in range(COLUMNS_FROM)]


@pytest.fixture(scope="module")
def target(isolated_module):
    return isolated_module(SOURCE, FUNCTIONS)


def test_an_isolated_batch_by_column_answers_as_calls_one_by_one(target):
    calls = [(v, i, 2 ** 80 + i, i % 3 == 0, None) for i, v in enumerate(FLOATS * 3)]
    batch = [r.value for r in target.map("echo", calls)]
    single = [target.call("echo", *args) for args in calls[:6]]
    assert batch[:6] == single
    assert batch[1] == ["-0.0:float", "1:int", f"{2 ** 80 + 1}:int", "False:bool", "None:NoneType"]
    assert [r.value for r in target.map("bits", [(v,) for v in FLOATS * 2])] == [
        struct.pack("<d", v).hex() for v in FLOATS * 2]


def test_a_shared_tuple_is_one_object_for_every_call_and_a_list_a_copy_each(target):
    p = (0.25, 0.75)
    answers = [r.value for r in target.map("shared", [(p, p, i % 2) for i in range(40)])]
    assert answers == [(True, 0.25 if i % 2 == 0 else 0.75, "tuple") for i in range(40)]
    values = [1.0, 2.0]
    answers = [r.value for r in target.map("shared", [(values, values, 0)] * 40)]
    assert answers == [(False, 1.0, "list")] * 40  # each call its own copy, as in-process


def test_a_tuple_of_numbers_is_encoded_once_and_a_list_each_time(target, monkeypatch):
    encoded: list = []
    real = codec.encode

    def counting(value, *depth):  # encode's own recursion (the items) comes here too
        encoded.append(value)
        return real(value, *depth)

    monkeypatch.setattr(codec, "encode", counting)
    p = (0.125, 0.875)
    for _ in range(3):
        target.map("total", [(p,)] * 20)
    assert encoded.count(p) == 1
    values = [1.0, 2.0]
    first = target.map("total", [(values,)] * 20)[0].value
    values[1] = 5.0  # changed between requests: the next request sends what it is now
    second = target.map("total", [(values,)] * 20)[0].value
    assert (first, second) == (3.0, 6.0)
    assert sum(1 for v in encoded if v is values) == 2


def test_the_tuple_cache_is_bounded_and_keeps_what_it_names(monkeypatch):
    monkeypatch.setattr(codec, "_FROZEN", {})
    monkeypatch.setattr(codec, "FROZEN_KEPT", 4)
    tuples = [(float(i), 1.0) for i in range(10)]
    for t in tuples:
        b"".join(_frames(1, "total", [(t,)], {}))
    assert len(codec._FROZEN) <= 4
    assert codec._FROZEN  # the last tuples are kept, each under its own id
    assert all(id(kept) == key for key, (kept, _) in codec._FROZEN.items())
    nested = ((1.0,), 2.0)  # a tuple holding a tuple: not cached (only flat tuples of numbers)
    long = tuple(float(i) for i in range(codec.FROZEN_ITEMS + 1))  # nor a long one
    for value in (nested, long):
        b"".join(_frames(1, "total", [(value,)], {}))
        assert id(value) not in codec._FROZEN
