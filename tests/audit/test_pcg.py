"""The vectorised PCG32 stream is the harness's PCG32, value for value."""

from __future__ import annotations

import pytest

from harness.audit.pcg import u32_stream, uniform_ks
from harness.uniforms import HarnessPCG32


@pytest.mark.parametrize("seed,stream", [(0, 54), (20_260_706, 54), (7_606, 76), (2**63 + 5, 1)])
def test_uniforms_match_the_harness_generator(seed, stream):
    gen = HarnessPCG32(seed, stream)
    expected = [gen.uniform() for _ in range(500)]
    assert [k / 2**53 for k in uniform_ks(seed, stream, 500).tolist()] == expected


def test_words_match_next_u32():
    gen = HarnessPCG32(42, 54)
    assert u32_stream(42, 54, 64).tolist() == [gen.next_u32() for _ in range(64)]


def test_a_longer_stream_extends_a_shorter_one():
    assert uniform_ks(3, 54, 100).tolist() == uniform_ks(3, 54, 400)[:100].tolist()
