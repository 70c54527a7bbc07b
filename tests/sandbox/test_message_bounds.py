"""Issue #24, item 5: what a worker sends back costs the parent a bounded amount to read.

``protocol.measure`` counts a frame's values and its nesting before ``json`` sees it, with
``bytes`` methods only; ``bounded_loads`` refuses a frame over ``MAX_VALUES`` or ``MAX_NESTING``
(``BadMessage``: a crash of that call, fail closed). The count must be exact for JSON (or the caps
would refuse real replies, or let a bomb through): it is compared with the parsed value on random
JSON whose strings hold brackets, commas, quotes and backslashes. The codec, in its turn, refuses
what its encoder never sends (a list or an array over ``MAX_ITEMS``, a dtype name that describes
a million fields).
"""

from __future__ import annotations

import base64
import json
import random
import time
import tracemalloc

import numpy as np
import pytest

from harness.sandbox import protocol
from harness.sandbox.codec import CHUNK_BYTES, MAX_ITEMS, MalformedReply, Reply, decode, encode, encode_reply
from harness.sandbox.protocol import (
    MAX_NESTING,
    MAX_VALUES,
    BadMessage,
    bounded_loads,
    measure,
    next_message,
)

_PIECES = ["[", "]", "{", "}", ",", '"', "\\", "a", " ", ":", "é", "\ud800", "\n", "😀", '\\"', '""']


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randrange(6)))


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 6 or roll < 0.4:
        return rng.choice([None, True, 1, -2.5e-3, _text(rng), 10**30])
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _truth(value: object) -> tuple[int, int, int]:
    """Values (containers included, keys not), depth, empty containers."""
    if isinstance(value, (list, dict)):
        inner = [_truth(v) for v in (value.values() if isinstance(value, dict) else value)]
        return (1 + sum(i[0] for i in inner), 1 + max((i[1] for i in inner), default=0),
                (not value) + sum(i[2] for i in inner))
    return 1, 0, 0


def _frame(body: bytes) -> bytearray:
    return bytearray(protocol.HEADER.pack(len(body)) + body)


def test_the_count_is_exact_on_json():
    """Values and depth as ``json`` builds them, whatever the strings hold (one more value per
    empty container: ``[]`` and ``[1]`` have the same brackets)."""
    rng = random.Random(2024)
    for _ in range(3000):
        value = _value(rng)
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5,
                          separators=rng.choice([(",", ":"), (", ", ": ")]),
                          indent=rng.choice([None, 1]))
        data = text.encode("utf-8", "surrogatepass")
        values, depth, empty = _truth(json.loads(text))
        assert measure(data, 10**9, 64) == (values + empty, depth), text


def test_escapes_cannot_hide_structure():
    """An escaped quote does not end a string, an escaped backslash does not escape the quote
    after it: the lists after them are counted; brackets inside a string are not."""
    inner = b"[" + b"[]," * 200 + b"[]]"
    for body in (b'["\\"", ' + inner + b', ""]', b'["\\\\", ' + inner + b"]",
                 b'["\\\\\\"", ' + inner + b', ""]'):
        assert measure(body)[0] > 400, body
    assert measure(b'["' + b"[]," * 200 + b'"]') == (2, 1)
    assert measure(b'{"a": "\\\\"}') == (2, 1)


def test_unpaired_or_too_deep_is_refused():
    assert measure(b"[[]")[1] == -1
    assert measure(b"[" * 40 + b"]" * 40) == (41, MAX_NESTING + 1)
    assert measure(b"[" * MAX_NESTING + b"]" * MAX_NESTING) == (MAX_NESTING + 1, MAX_NESTING)
    with pytest.raises(BadMessage, match=f"nested more than {MAX_NESTING} deep"):
        bounded_loads(b'{"a":' + b"[" * MAX_NESTING + b"]" * MAX_NESTING + b"}")
    with pytest.raises(BadMessage, match="not a message"):
        bounded_loads(b'{"a": [}')


def test_a_frame_of_empty_lists_is_refused_before_it_is_parsed():
    """8 MiB of ``[[],[],...]``: before, ``json`` built 2.8 million lists (about 250 MB and
    seconds) and only then said 'not an object'; now it is refused within a fraction of a second,
    without ever building one."""
    body = b"[" + b"[]," * ((8 << 20) // 3) + b"[]]"
    buf = _frame(body)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(BadMessage, match=f"more than {MAX_VALUES} values"):
            next_message(buf, 32 << 20)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not buf, "the frame is consumed"
    assert peak < 3 * len(body), f"{peak >> 20} MiB to read {len(body) >> 20} MiB"
    assert elapsed < 2.0, elapsed


@pytest.mark.parametrize("body", [
    b'["' + b"[]," * 100_000 + b'"]',  # commas and brackets in one string: one value
    b'[' + b'"[",' * 60_000 + b'"["]',  # 60000 strings holding a bracket
    b'{"out":"' + b"\\\\" * 100_000 + b'"}',
], ids=["brackets in a string", "many strings", "backslashes"])
def test_text_costs_its_length_only(body):
    assert isinstance(bounded_loads(body), (list, dict))


def test_many_strings_are_refused_without_a_regular_expression_over_them():
    """Strings holding a bracket make ``measure`` strip strings with a regular expression; more
    strings than ``4 * MAX_VALUES`` quotes allow are refused before it runs."""
    body = b"[" + b'"[",' * (2 * MAX_VALUES + 1) + b'"["]'
    start = time.perf_counter()
    with pytest.raises(BadMessage, match="more than"):
        bounded_loads(body)
    assert time.perf_counter() - start < 1.0


def _chunk_message(values: list) -> bytes:
    """A worker's chunk of replies (as ``codec.chunk_texts`` writes it) returning ``values``."""
    table = [encode_reply(Reply("returned", v)) for v in values]
    return json.dumps({"op": "replies", "id": 1 << 60, "start": 0,
                       "index": list(range(len(table))), "table": table},
                      separators=(",", ":")).encode()


def test_real_replies_are_below_the_caps():
    """The densest chunk a worker forms (more than one reply: at most 1 MiB of them; tuples of
    None pack the most values into it), the largest the catalogs get (256 replies of four
    floats), an array of MAX_ITEMS floats (one value: its base64 text), and a value nested as deep
    as the codec encodes it (the message nests 22 deep then)."""
    densest = _chunk_message([tuple([None] * 40_000)] * 2)
    assert CHUNK_BYTES - (64 << 10) < len(densest) < CHUNK_BYTES
    assert 150_000 < measure(densest)[0] < MAX_VALUES * 2 // 3
    rng = random.Random(5)
    assert measure(_chunk_message([tuple(rng.random() for _ in range(4)) for _ in range(256)]))[
        0] < MAX_VALUES // 20
    assert measure(_chunk_message([np.linspace(0, 1, MAX_ITEMS)])) == (21, 5)
    nested: object = 1.0
    for _ in range(20):
        nested = [nested]
    deep = _chunk_message([nested])
    assert measure(deep)[1] == 22
    assert bounded_loads(deep)["table"][0]["value"]["t"] == "list"


def _array(n: int) -> dict:
    return {"t": "ndarray", "dtype": "<f8", "shape": [n],
            "data": base64.b64encode(np.zeros(n).tobytes()).decode()}


def test_the_codec_refuses_what_its_encoder_never_sends():
    with pytest.raises(MalformedReply, match="at most"):
        decode({"t": "list", "items": [{"t": "none"}] * (MAX_ITEMS + 1)})
    with pytest.raises(MalformedReply, match="array of more than"):
        decode(_array(MAX_ITEMS + 1))
    with pytest.raises(MalformedReply, match="malformed array"):
        decode(_array(3 * MAX_ITEMS))
    assert decode(_array(MAX_ITEMS)).shape == (MAX_ITEMS,)
    assert decode(encode(np.arange(6, dtype=np.int32).reshape(2, 3))).tolist() == [[0, 1, 2],
                                                                                 [3, 4, 5]]


def test_a_dtype_of_a_million_fields_is_refused_at_once():
    """``numpy.dtype("f8,f8,...")`` builds a field per name: seconds for a million, from one
    string of a reply. Only a dtype name as ``encode`` writes it is read."""
    data = {"t": "ndarray", "dtype": ",".join(["f8"] * 1_000_000), "shape": [0], "data": ""}
    start = time.perf_counter()
    with pytest.raises(MalformedReply, match="malformed array"):
        decode(data)
    assert time.perf_counter() - start < 0.2
