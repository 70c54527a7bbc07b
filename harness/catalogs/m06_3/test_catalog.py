"""The M06.3 catalog: ``PCG32``, its words and its uniforms, in 12 tests with their metadata.

Every test takes a ``target`` and calls the module only through it: ``target.PCG32(seed, stream)``
gives the generator (the object itself in-process, a handle when the target is an isolated worker)
and ``target.map_method(g, "next_u32", ...)`` draws a batch. Expectations come from the published
PCG vectors and from the harness's own generator (``HarnessPCG32``), never from the code under test.
A wrong answer is compared with the plausible wrong generators and wrong uniforms below
(``WORD_VARIANTS``, ``uniform_variants``), so that a failure names the pitfall it looks like.

The two sampled tests (stream independence, the chi-square of the uniforms) sample the target's own
generator, with a named ALPHA each.

Every seed a test draws the target's words from, and the seed of the random (seed, stream) pairs,
is ``case_seed(PUBLIC, "m06_3.<family>")``: the constant written in the test under the public cases
(``ol check``'s default, the lab), a hidden 64-bit seed derived from the run seed otherwise
(``harness.engine.seeding``). Published vectors, the ends of the ranges and the seeds solved for given
words are the same in every run.

Longer than 400 lines: one catalog, one file, so the table order and the file order agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from harness.catalogs.checks import CatalogFailure, expect, fmt
from harness.engine.catalog import case
from harness.engine.seeding import case_seed
from harness.uniforms import HarnessPCG32

MULTIPLIER = 6364136223846793005
MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1

# The PCG project's pcg32-demo (pcg32_srandom_r(&rng, 42u, 54u)): the six words it prints in each
# of its first two rounds. Between them the demo draws 65 coins, 33 dice and a 52-card shuffle
# (51 bounded draws), with no rejection in pcg32_boundedrand_r: round 2 starts at word 156.
ROUND_1 = (0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E)
ROUND_2 = (0x74AB93AD, 0x1C1DA000, 0x494FF896, 0x34462F2F, 0xD308A3E5, 0x0FA83BAB)
ROUND_2_AT = 6 + 65 + 33 + 51  # = 155 words before round 2
# spec/sampling.md's worked numbers: uniforms 1 and 2 of PCG32(42, 54).
FIRST_UNIFORMS_42_54 = (0.6303102186438938, 0.7270080560068604)

SEEDING_SEED = 6_303
STREAMS_SEED = 2_026
STREAMS_WORDS = 1_000
STREAMS_ALPHA = 1e-6
# Pairs real PCG keeps apart. Not pairs whose increments differ only in their top bits (7 and
# 2**62 + 7): PCG's own streams are strongly correlated there (23938 of 32000 bits agree).
STREAM_PAIRS = ((54, 55), (0, 1), (54, 54 + 2**32), (3, 0x9E3779B97F4A7C15 >> 1))
CHI_SQUARE_SEED = 20_260_603
CHI_SQUARE_DRAWS = 4_000
CHI_SQUARE_BINS = 33  # 32 degrees of freedom: even, so the p-value has a closed form (no scipy)
CHI_SQUARE_ALPHA = 1e-6


# -- the harness's own expectations -----------------------------------------------------------

def harness_words(seed: int, stream: int, count: int) -> list[int]:
    gen = HarnessPCG32(seed, stream)
    return [gen.next_u32() for _ in range(count)]


def contract_uniform(w1: int, w2: int) -> float:
    """``(a * 2**26 + b) / 2**53`` with ``a = w1 >> 5`` (drawn first) and ``b = w2 >> 6``."""
    return ((w1 >> 5) * 2**26 + (w2 >> 6)) / 2**53


def seed_for_state(state: int, stream: int) -> int:
    """The seed whose ``pcg32_srandom_r(seed, stream)`` leaves the generator at ``state``.

    Seeding ends at ``(inc + seed) * M + inc`` (mod 2**64), and the multiplier M is odd, hence
    invertible mod 2**64: every state is reached by exactly one seed of each stream.
    """
    inc = ((stream << 1) | 1) & MASK64
    return ((state - inc) * pow(MULTIPLIER, -1, 1 << 64) - inc) & MASK64


def stream_between(state: int, next_state: int) -> int:
    """The stream whose LCG step takes ``state`` to ``next_state`` (their difference must allow it)."""
    inc = (next_state - state * MULTIPLIER) & MASK64
    if inc % 2 == 0:
        raise AssertionError("no stream: the increment (stream << 1) | 1 is odd")
    return inc >> 1


# XSH-RR gives 0 from any state below 2**27 (the xorshifted bits 27..58 are all 0, rot = 0), and
# 0xffffffff from a state with exactly bits 41..58 set below bit 27 (xorshifted all ones, rot = 0).
ZERO_STATES = (0, 1)
TOP_STATES = ((1 << 59) - (1 << 41), ((1 << 59) - (1 << 41)) | 1)


def constructed(states: tuple[int, int]) -> tuple[int, int]:
    """``(seed, stream)`` whose first two words are XSH-RR of ``states``, checked on the harness's PCG32."""
    stream = stream_between(*states)
    seed = seed_for_state(states[0], stream)
    gen = HarnessPCG32(seed, stream)
    if gen._state != states[0]:
        raise AssertionError("harness: the seeding algebra does not reach the state")
    return seed, stream


ZERO_SEED = constructed(ZERO_STATES)  # words 0, 0: uniform 0.0
TOP_SEED = constructed(TOP_STATES)  # words 0xffffffff, 0xffffffff: uniform 1 - 2**-53


# -- the wrong generators a failure may match -------------------------------------------------

def variant_words(seed: int, stream: int, count: int, *, mult: int = MULTIPLIER,
                  inc: Callable[[int], int] = lambda s: (s << 1) | 1,
                  seeding: str = "pcg", rot_shift: int = 59, left: bool = False,
                  after_step: bool = False, wrap: bool = True, rot_mask: int = 31) -> list[int]:
    """Words of a PCG32 written with one of the classic mistakes (the defaults are the contract).

    ``wrap=False`` never reduces the state mod 2**64 (Python ints do not wrap); ``rot_mask`` is then
    what the rotation is masked with (the reference's ``old >> 59`` needs no mask, so none is 0).
    """
    c = inc(stream) & MASK64
    state_mask = MASK64 if wrap else -1

    def step(s: int) -> int:
        return (s * mult + c) & state_mask

    state = {"pcg": lambda: step(step(0) + seed), "none": lambda: seed & state_mask,
             "one": lambda: step(seed & state_mask), "no-last": lambda: (step(0) + seed) & state_mask,
             "seed32": lambda: step(step(0) + (seed & MASK32))}[seeding]()
    out = []
    for _ in range(count):
        if after_step:
            old = state = step(state)
        else:
            old, state = state, step(state)
        x = (((old >> 18) ^ old) >> 27) & MASK32
        rot = (old >> rot_shift) & rot_mask if rot_mask else old >> rot_shift
        turned = (x << rot) | (x >> ((-rot) & 31)) if left else (x >> rot) | (x << ((-rot) & 31))
        out.append(turned & MASK32)
    return out


WORD_VARIANTS: dict[str, tuple[int, dict]] = {
    "the multiplier 1442695040888963407 (PCG's default increment)": (1, {"mult": 1442695040888963407}),
    "inc = stream | 1 (no shift)": (2, {"inc": lambda s: s | 1}),
    "inc = stream << 1 (even, no | 1)": (2, {"inc": lambda s: s << 1}),
    "the stream ignored (always the default 54)": (2, {"inc": lambda s: 109}),
    "inc cut to 32 bits": (2, {"inc": lambda s: ((s << 1) | 1) & MASK32}),
    "the rotation to the left": (3, {"left": True}),
    "the rotation read from bits 60-63": (3, {"rot_shift": 60}),
    "the output taken from the state after the step": (3, {"after_step": True}),
    "state = seed, without the two seeding steps": (6, {"seeding": "none"}),
    "state = seed, then one step": (6, {"seeding": "one"}),
    "seeding without its last step": (6, {"seeding": "no-last"}),
    "the seed cut to 32 bits": (6, {"seeding": "seed32"}),
    "a state never reduced mod 2**64 (no & (2**64 - 1) in the step)": (7, {"wrap": False, "rot_mask": 0}),
    "a state never reduced mod 2**64, the rotation masked with & 31": (7, {"wrap": False}),
}


def diagnose_words(seed: int, stream: int, got: list[int], default: int | None) -> tuple[str, int | None]:
    """A sentence naming the wrong generator that produced ``got``, and its pitfall (``default``
    when none matches: None where the check cannot tell which mistake it is)."""
    big = next((i for i, w in enumerate(got) if not 0 <= w <= MASK32), None)
    if big is not None:
        return (f"; word {big + 1}, {got[big]:#x}, is not below 2**32: Python ints do not wrap, so "
                "the rotated word needs & 0xFFFFFFFF (and the state & (2**64 - 1))"), 7
    for name, (pitfall, options) in WORD_VARIANTS.items():
        if variant_words(seed, stream, len(got), **options) == got:
            return f"; these are the words of a PCG32 with {name}", pitfall
    return "", default


def uniform_variants(w1: int, w2: int) -> dict[str, tuple[int, float]]:
    """The uniforms the plausible wrong constructions make of the words ``w1`` then ``w2``."""
    return {
        "the words swapped (the second word as the high bits)": (5, ((w2 >> 5) * 2**26 + (w1 >> 6)) / 2**53),
        "numpy's one-word next_u64() >> 11 (first word high)": (4, (((w1 << 32) | w2) >> 11) / 2**53),
        "next_u64() >> 11 with the first word low": (4, (((w2 << 32) | w1) >> 11) / 2**53),
        "a = w1 >> 6 (26 high bits: [0, 1/2) only)": (4, ((w1 >> 6) * 2**26 + (w2 >> 6)) / 2**53),
        "one 32-bit word over 2**32": (8, w1 / 2**32),
        "a division by 2**53 - 1": (9, ((w1 >> 5) * 2**26 + (w2 >> 6)) / (2**53 - 1)),
        "+ 1 before the division": (9, ((w1 >> 5) * 2**26 + (w2 >> 6) + 1) / 2**53),
    }


# -- calling the target --------------------------------------------------------------------------

def show_pcg(seed, stream) -> str:
    return f"PCG32({seed!r}, {stream!r})"


def make(target, *args):
    """``target.PCG32(*args)`` for a valid seed and stream; a raise is a failure of pitfall 12."""
    r = target.map("PCG32", [args])[0]
    if r.error is not None:
        raise CatalogFailure(
            f"{show_pcg(*args) if len(args) == 2 else f'PCG32({args[0]!r})'} {fmt(r.error)}; expected a "
            "generator: every integer in [0, 2**64) is a valid seed and stream", 12)
    return r.value


def draw(target, gen, method: str, count: int, what: str) -> list:
    """``count`` calls of ``gen.<method>()`` in one batch; a raise is a failure naming the call."""
    values = []
    for i, r in enumerate(target.map_method(gen, method, [()] * count)):
        if r.error is not None:
            raise CatalogFailure(f"{what}.{method}() call {i + 1} {fmt(r.error)}; every call must "
                                 "return a value")
        values.append(r.value)
    return values


def new_words(target, seed, stream, count: int) -> list[int]:
    """``count`` words of a new ``PCG32(seed, stream)``; a constructor's raise propagates as itself
    (the sampled trials and ``ol audit --power`` count it as a kill)."""
    return [int(w) for w in draw(target, target.PCG32(seed, stream), "next_u32", count,
                                 show_pcg(seed, stream))]


def pcg_words(target, seed, stream, count: int) -> list[int]:
    """``new_words`` for the exact tests: a valid seed or stream refused is a failure of pitfall 12."""
    return [int(w) for w in draw(target, make(target, seed, stream), "next_u32", count,
                                 show_pcg(seed, stream))]


def first_difference(got: list, want: list) -> int:
    return next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)


def hexes(words) -> str:
    return " ".join(f"{int(w):#010x}" for w in words)


def check_words(seed, stream, got: list[int], want: list[int], default: int | None,
                context: str = "") -> None:
    """``got == want`` or a failure at the first differing word, naming the matching variant.

    ``default`` is the pitfall when no variant matches (None: the check cannot tell which);
    ``context`` (a sentence) says why these words matter to the test.
    """
    if got == want:
        return
    i = first_difference(got, want)
    sentence, pitfall = diagnose_words(int(seed), int(stream), got, default)
    raise CatalogFailure(
        f"{show_pcg(seed, stream)}.next_u32() word {i + 1} is {got[i]:#010x}, expected "
        f"{want[i]:#010x} (pcg32_srandom_r seeding, XSH-RR 64/32){context}\n  got:      "
        f"{hexes(got[:8])}\n  expected: {hexes(want[:8])}{sentence}", pitfall)


def seeding_cases() -> list[tuple[int, int]]:
    """Ends of both ranges, seeds and streams above 32 bits, and seeded random 64-bit pairs."""
    cases = [(0, 0), (1, 1), (42, 54), (MASK64, MASK64), (0xDEADBEEF, 2**63 + 7), (12345, 2**40),
             (2**32 + 5, 54), (2**63, 2**32 + 54), (MASK32, MASK32), (2**64 - 2**32, 2**63)]
    gen = HarnessPCG32(case_seed(SEEDING_SEED, "m06_3.seeding"), 63)
    while len(cases) < 24:
        cases.append(((gen.next_u32() << 32) | gen.next_u32(), (gen.next_u32() << 32) | gen.next_u32()))
    return cases


# -- the catalog -------------------------------------------------------------------------------

@case("unit", "PCG32(42, 54): the published words of pcg32-demo's rounds 1 and 2; PCG32(42) too",
      "every port (numpy's, the Rust one) starts from these numbers",
      pitfalls=(1, 2, 3, 6, 7, 12), kills=("s01", "s02", "s03", "s06", "x01", "x04", "x05", "x07",
                                       "x08", "x09", "x10", "x20"))
def test_published_vector(target):
    got = pcg_words(target, 42, 54, ROUND_2_AT + 6)
    check_words(42, 54, got[:6], list(ROUND_1), None)
    round_2 = got[ROUND_2_AT:]
    expect(round_2 == list(ROUND_2),
           f"PCG32(42, 54).next_u32() words {ROUND_2_AT + 1}-{ROUND_2_AT + 6} (pcg32-demo's round 2, "
           f"after its coins, dice and cards) are {hexes(round_2)}, expected {hexes(ROUND_2)}: the "
           "first six words agree, so the generator goes wrong as it runs on", 7)
    default = [int(w) for w in draw(target, make(target, 42), "next_u32", 6, "PCG32(42)")]
    expect(default == list(ROUND_1),
           f"PCG32(42).next_u32() gave {hexes(default)}, expected {hexes(ROUND_1)}: the default "
           "stream is 54", 2)


@case("property", "24 (seed, stream) pairs, 0 to 2**64 - 1, give pcg32_srandom_r's words; "
      "s and s + 2**63 agree",
      "a seed names one stream of numbers in every language",
      pitfalls=(6, 2, 1, 3, 7, 12), kills=("s01", "s06", "x01", "x02", "x03", "x04", "x05", "x06"))
def test_seeding_follows_pcg32_srandom_r(target):
    for seed, stream in seeding_cases():
        got = pcg_words(target, seed, stream, 8)
        check_words(seed, stream, got, harness_words(seed, stream, 8), 6)
    for stream in (5, 54, 2**40 + 3):
        low, high = pcg_words(target, 7, stream, 8), pcg_words(target, 7, stream + 2**63, 8)
        expect(low == high, f"PCG32(7, {stream}) and PCG32(7, {stream} + 2**63) gave {hexes(low[:4])} "
               f"and {hexes(high[:4])}: (stream << 1) | 1 loses the top bit mod 2**64, so they are "
               "the same generator", 2)


def common_runs(a: list[int], b: list[int]) -> int:
    """How many 2-word windows of ``a`` occur anywhere in ``b`` (shifted copies included).

    For independent streams each window is a uniform 64-bit value: one of the ``w - 1`` windows of
    ``a`` equals one of the ``w - 1`` of ``b`` with probability at most ``1 / 2**64``, so the
    expected count (and, by Markov, the chance of any) is at most ``(w - 1)**2 / 2**64``, about
    5.4e-14 for ``w = 1000``: a false alarm of ``runs == 0`` is negligible beside STREAMS_ALPHA.
    """
    windows = set(itertools.pairwise(b))
    return sum(pair in windows for pair in itertools.pairwise(a))


def bit_agreement(a: list[int], b: list[int]) -> tuple[int, int, float]:
    """(agreeing bits, bits compared, two-sided p-value of a fair-coin binomial)."""
    bits = 32 * len(a)
    agree = bits - sum((x ^ y).bit_count() for x, y in zip(a, b, strict=True))
    z = (agree - bits / 2) / math.sqrt(bits / 4)
    return agree, bits, math.erfc(abs(z) / math.sqrt(2))


@case("statistical", "streams 54/55, 0/1, 54/54 + 2**32, 3/a golden-ratio stream of one seed: no "
      "common run, bits agree half the time", "parallel workers get one stream each (L8.6)",
      pitfalls=(2, 6, 1, 3, 7, 12), kills=("s02", "x02", "x03"))
def test_stream_independence(target):
    seed = case_seed(STREAMS_SEED, "m06_3.streams")
    for s1, s2, a, b, runs, (agree, bits, pvalue) in streams_trial(target, seed):
        pair = f"PCG32({seed}, {s1}) and PCG32({seed}, {s2})"
        why, pitfall = stream_failure(a, b)
        if runs or pvalue < STREAMS_ALPHA:  # words not PCG's at all: name the generator's mistake
            for seed_stream, words in ((s1, a), (s2, b)):
                if words[:8] != harness_words(seed, seed_stream, 8):
                    sentence, pitfall = diagnose_words(seed, seed_stream, words[:8], pitfall)
                    why = (f"; PCG32({seed}, {seed_stream}) itself does not give "
                           f"pcg32_srandom_r's words{sentence}")
                    break
        expect(runs == 0, f"{pair}: {runs} of the first {STREAMS_WORDS} words' 2-word runs of the first "
               "stream occur in the second (at most 5.4e-14 expected): the streams are copies, or shifted "
               f"copies{why}\n  first words: {hexes(a[:4])} and {hexes(b[:4])}", pitfall)
        expect(pvalue >= STREAMS_ALPHA,
               f"{pair}: {agree} of {bits} bits of the first {STREAMS_WORDS} words agree (expected "
               f"{bits // 2} +- {math.sqrt(bits / 4):.0f}); two-sided p-value {pvalue:.3g} < alpha = "
               f"{STREAMS_ALPHA:g}: the streams are not independent{why}", pitfall)


def streams_trial(target, seed: int, words: int = STREAMS_WORDS) -> list[tuple]:
    """The seeded trial of ``test_stream_independence`` (``ol audit --power`` runs it over seeds)."""
    return stream_pairs(lambda stream: new_words(target, seed, stream, words))


def stream_pairs(words_of: Callable[[int], list[int]]) -> list[tuple]:
    """For each pair of ``STREAM_PAIRS``: ``(s1, s2, words1, words2, common runs, bit_agreement)``,
    the words of a stream being ``words_of(stream)`` (the target's, or the audit's fast copy)."""
    out = []
    for s1, s2 in STREAM_PAIRS:
        a, b = words_of(s1), words_of(s2)
        out.append((s1, s2, a, b, common_runs(a, b), bit_agreement(a, b)))
    return out


def stream_failure(a: list[int], b: list[int]) -> tuple[str, int]:
    """Why two streams of one seed look alike: the same words (the increment), or one start (seeding)."""
    if a == b:
        return "; they are one generator: inc = (stream << 1) | 1 must differ for every stream below 2**63", 2
    if a[0] == b[0]:
        return ("; their first words agree: seeding without pcg32_srandom_r's first step leaves the "
                "stream out of the starting state"), 6
    return "", 2


@case("property", "two generators of one seed agree word for word with a lone one, interleaved with a third",
      "a seed must replay whatever else the program draws", pitfalls=(10, 12), kills=("x15",))
def test_same_seed_same_sequence(target):
    seed, stream = min(case_seed(99, "m06_3.same-seed"), MASK64 - 1), 3  # seed + 1 is a seed too
    alone = pcg_words(target, seed, stream, 15)  # the target's own sequence: not compared with PCG's
    other_alone = pcg_words(target, seed + 1, stream + 1, 5)
    first = make(target, seed, stream)
    got_a = [int(w) for w in draw(target, first, "next_u32", 5, show_pcg(seed, stream))]
    other = pcg_words(target, seed + 1, stream + 1, 5)
    second = make(target, seed, stream)
    got_b = [int(w) for w in draw(target, second, "next_u32", 10, f"a second {show_pcg(seed, stream)}")]
    got_a += [int(w) for w in draw(target, first, "next_u32", 10, show_pcg(seed, stream))]
    expect(other == other_alone,
           f"{show_pcg(seed + 1, stream + 1)} created after another generator drew 5 words gave "
           f"{hexes(other)}, but {hexes(other_alone)} when it was the only one", 10)
    expect(got_b == alone[:10],
           f"a second {show_pcg(seed, stream)}, created while the first was in use, gave "
           f"{hexes(got_b[:5])} ..., but a lone one gives {hexes(alone[:5])} ...: a generator's words "
           "may depend on its seed and stream only", 10)
    i = next((k for k, (g, w) in enumerate(zip(got_a, alone, strict=True)) if g != w), None)
    expect(i is None, f"{show_pcg(seed, stream)} drew 5 words, then two other generators were "
           f"created and drawn from; its word {(i or 0) + 1} is then {got_a[i or 0]:#010x}, but "
           f"{alone[i or 0]:#010x} for a lone generator: each generator must keep its own state (an "
           "instance attribute, not a class or module one)", 10)


@case("property", "3000 words are ints in [0, 2**32), and every bit position takes both values",
      "a word is what the Rust port's u32 holds", pitfalls=(7, 12), kills=("x10",))
def test_next_u32_is_a_32_bit_int(target):
    for seed, stream in [(case_seed(3, "m06_3.words-1"), 54), (2**64 - 1, 1),
                         (case_seed(2024, "m06_3.words-2"), 2**63 + 1)]:
        words = draw(target, make(target, seed, stream), "next_u32", 1000, show_pcg(seed, stream))
        bad = next((i for i, w in enumerate(words) if not 0 <= w <= MASK32), None)
        expect(bad is None, f"{show_pcg(seed, stream)}.next_u32() call {(bad or 0) + 1} returned "
               f"{fmt(words[bad or 0])}, outside [0, 2**32): Python ints do not wrap, mask with "
               "& 0xFFFFFFFF", 7)
        ones, zeros = 0, MASK32
        for w in words:
            ones, zeros = ones | int(w), zeros & int(w)
        expect(ones == MASK32 and zeros == 0,
               f"1000 words of {show_pcg(seed, stream)}: bits always 0 {ones ^ MASK32:#010x}, "
               f"bits always 1 {zeros:#010x}; every bit of a word must vary", 7)


@case("unit", "uniform() = ((w1 >> 5) * 2**26 + (w2 >> 6)) / 2**53 of its own words, w1 drawn "
      "first, 900 draws; spec's PCG32(42, 54) values", "numpy and the Rust port make the same double "
      "of the same two words", pitfalls=(4, 5, 8, 9, 1, 2, 3, 6, 7, 12), kills=("s04", "s05", "x14"))
def test_uniform_is_two_words_first_word_high(target):
    for seed, stream in [(42, 54), (case_seed(2024, "m06_3.uniforms-1"), 1),
                         (case_seed(7, "m06_3.uniforms-2"), 2**40)]:
        # A twin generator gives the words: the construction is judged apart from the generator.
        got = draw(target, make(target, seed, stream), "uniform", 300, show_pcg(seed, stream))
        words = [int(w) for w in draw(target, make(target, seed, stream), "next_u32", 600,
                                      f"a twin {show_pcg(seed, stream)}")]
        want = [contract_uniform(words[2 * i], words[2 * i + 1]) for i in range(300)]
        if got != want:
            i = first_difference(got, want)
            w1, w2 = words[2 * i], words[2 * i + 1]
            sentence, pitfall = name_uniform(got[i], w1, w2)
            raise CatalogFailure(
                f"{show_pcg(seed, stream)}.uniform() call {i + 1} returned {fmt(got[i])}, expected "
                f"{want[i]!r} = ((w1 >> 5) * 2**26 + (w2 >> 6)) / 2**53 of its words {2 * i + 1} and "
                f"{2 * i + 2} (w1 = {w1:#010x} drawn first, w2 = {w2:#010x}, from a twin generator)"
                f"{sentence}", pitfall)
    first = draw(target, make(target, 42, 54), "uniform", 2, "PCG32(42, 54)")
    if tuple(first) != FIRST_UNIFORMS_42_54:
        words = pcg_words(target, 42, 54, 4)
        check_words(42, 54, words, list(ROUND_1[:4]), None,
                    f"; so uniform() returned {fmt(first[0])}, {fmt(first[1])}, not spec/sampling.md's "
                    f"{FIRST_UNIFORMS_42_54[0]!r}, {FIRST_UNIFORMS_42_54[1]!r}")


def name_uniform(value, w1: int, w2: int, default: int = 4) -> tuple[str, int]:
    """A sentence naming the wrong construction that makes ``value`` of ``w1, w2``, and its pitfall."""
    for name, (pitfall, alt) in uniform_variants(w1, w2).items():
        if value == alt:
            return f"; that is {name}", pitfall
    return "", default


@case("unit", "each uniform() consumes exactly two words: next_u32() after k uniforms is word 2k + 1",
      "uniform i is words 2i - 1 and 2i in every port", pitfalls=(8, 12), kills=("x11",))
def test_uniform_consumes_exactly_two_words(target):
    seed, stream = case_seed(9, "m06_3.consumption"), 54
    script = ["uniform", "next_u32", "uniform", "uniform", "next_u32", "next_u32", "uniform", "next_u32"] * 2
    want = pcg_words(target, seed, stream, sum(2 if m == "uniform" else 1 for m in script))  # its own
    gen = make(target, seed, stream)
    used = 0
    for step, method in enumerate(script):
        value = target.method(gen, method)
        if method == "uniform":
            used += 2
            continue
        expect(value == want[used],
               f"{show_pcg(seed, stream)}: after the calls {', '.join(m + '()' for m in script[:step])}, "
               f"next_u32() returned {fmt(value)}, expected its word {used + 1} = {want[used]:#010x} (as a "
               "twin generator drawing words only gives it): each uniform() uses exactly two words, "
               "each next_u32() one", 8)
        used += 1


@case("property", "2100 uniforms are integers k / 2**53, and the last of the 53 bits is used",
      "every uniform of M07.1's exact enumeration is such a k", pitfalls=(8, 9, 12), kills=("x11", "x12"))
def test_uniform_granularity_is_2_to_minus_53(target):
    ks = []
    for seed, stream in [(case_seed(2024, "m06_3.granularity-1"), 1),
                         (case_seed(5, "m06_3.granularity-2"), 54),
                         (case_seed(2**63 + 11, "m06_3.granularity-3") | 2**63, 2**50)]:  # a top-half seed
        us = draw(target, make(target, seed, stream), "uniform", 700, show_pcg(seed, stream))
        for i, u in enumerate(us):
            k = u * 2**53  # exact: a power-of-two scaling of a float64 (inf past 2**971, or NaN)
            if not (0 <= k < 2**53 and k == math.floor(k)):  # the range first: floor(NaN) raises
                shown = f"{fmt(u)} = {k!r} / 2**53" if math.isfinite(k) else fmt(u)
                raise CatalogFailure(
                    f"{show_pcg(seed, stream)}.uniform() call {i + 1} returned {shown}: "
                    "not an integer k in [0, 2**53); uniform() is (a * 2**26 + b) / 2**53, exact"
                    f"{granularity_cause(u)[0]}", granularity_cause(u)[1])
            ks.append(int(k))
    trailing = min((k & -k).bit_length() - 1 for k in ks if k) if any(ks) else 53
    expect(trailing == 0, f"all {len(ks)} uniforms are multiples of 2**-{53 - trailing}: the low "
           f"{trailing} of the 53 bits are never set (one 32-bit word gives steps of 2**-32)", 8)


def granularity_cause(u) -> tuple[str, int | None]:
    """Why a uniform is not k / 2**53 in [0, 1): outside the range (9), a division by 2**53 - 1
    (9), a 32-bit word's steps (8), or none that the check can name (None)."""
    if not math.isfinite(u):
        return "; it is not a finite number at all", 9
    if not 0.0 <= u < 1.0:
        return "; it is outside [0, 1)", 9
    if (u * (2**53 - 1)).is_integer() and u * (2**53 - 1) < 2**53:
        return "; it is an integer over 2**53 - 1: a division by 2**53 - 1, not by 2**53", 9
    return "", None


@case("boundary", "0.0 and 1 - 2**-53 returned exactly, 1.0 never: at seeds solved for words 0, 0 "
      "and 0xffffffff, 0xffffffff", "-log(u) and u < p need the exact ends of [0, 1)",
      pitfalls=(9, 4, 5, 8, 6, 1, 2, 3, 7, 12), kills=("x12", "x13"))
def test_uniform_range_includes_0_excludes_1(target):
    cases = [(ZERO_SEED, (0, 0), 0.0, "0.0, the smallest uniform"),
             (TOP_SEED, (MASK32, MASK32), 1.0 - 2**-53, "1 - 2**-53, the largest uniform (never 1.0)")]
    for (seed, stream), words, want, what in cases:
        got = pcg_words(target, seed, stream, 2)
        check_words(seed, stream, got, list(words), 6,
                    f"; this seed and stream are solved from the seeding to give words {hexes(words)}")
        u = target.method(make(target, seed, stream), "uniform")
        if not (u == want and 0.0 <= u < 1.0):
            sentence, pitfall = name_uniform(u, *words, default=9)
            raise CatalogFailure(
                f"{show_pcg(seed, stream)}.uniform() returned {fmt(u)}, expected {want!r}: its two "
                f"words are {hexes(words)}, so (a * 2**26 + b) / 2**53 is {what}{sentence}", pitfall)


def chi_square(counts: list[int]) -> tuple[float, float]:
    """Pearson's statistic against equal bins, and its p-value for an even number of degrees of freedom.

    For ``df = 2m`` the chi-square survival function is ``exp(-x/2) * sum_{i<m} (x/2)**i / i!``.
    """
    expected = sum(counts) / len(counts)
    stat = sum((c - expected) ** 2 for c in counts) / expected
    df = len(counts) - 1
    if df % 2:
        raise AssertionError("the closed form needs an even number of degrees of freedom")
    half, term, total = stat / 2, 1.0, 1.0
    for i in range(1, df // 2):
        term *= half / i
        total += term
    return stat, min(1.0, math.exp(-half) * total)


@case("statistical", "4000 seeded uniforms fill 33 equal bins of [0, 1) (chi-square)",
      "every sampler of the course assumes uniform draws", pitfalls=(4, 1, 2, 3, 6, 7, 12),
      kills=("x14",))
def test_uniform_chi_square(target):
    seed = case_seed(CHI_SQUARE_SEED, "m06_3.chi-square")
    counts, stat, pvalue = uniform_chi_square_trial(target, seed)
    if pvalue >= CHI_SQUARE_ALPHA:
        return
    why, pitfall = "", 4
    words = pcg_words(target, seed, 54, 8)
    if words != harness_words(seed, 54, 8):  # the words are wrong, not only uniform()
        sentence, pitfall = diagnose_words(seed, 54, words, None)
        why = f"; its words are not pcg32_srandom_r's either ({hexes(words[:4])} ...){sentence}"
    raise CatalogFailure(
        f"{CHI_SQUARE_DRAWS} uniforms of PCG32({seed}, 54) in {CHI_SQUARE_BINS} bins: "
        f"chi-square = {stat:.1f}, p-value = {pvalue:.3g} < alpha = {CHI_SQUARE_ALPHA:g}; expected "
        f"{CHI_SQUARE_DRAWS / CHI_SQUARE_BINS:g} per bin, observed {counts}{why}", pitfall)


def uniform_chi_square_trial(target, seed: int, draws: int = CHI_SQUARE_DRAWS) -> tuple:
    """The seeded trial of ``test_uniform_chi_square`` (``ol audit --power`` runs it over seeds):
    ``(counts per bin, statistic, p-value)`` of ``draws`` uniforms of ``PCG32(seed, 54)``."""
    counts = uniform_counts(target, seed, draws)
    return (counts, *chi_square(counts))


def uniform_counts(target, seed: int, draws: int) -> list[int]:
    """How many of ``draws`` uniforms of the target's ``PCG32(seed, 54)`` fall in each equal bin."""
    return bin_counts(draw(target, make(target, seed, 54), "uniform", draws, show_pcg(seed, 54)))


def bin_counts(uniforms) -> list[int]:
    """How many of ``uniforms`` fall in each of ``CHI_SQUARE_BINS`` equal bins (NaN in the first,
    out of range in the nearest)."""
    us = np.asarray(uniforms, dtype=float)
    bins = np.clip(np.nan_to_num(us * CHI_SQUARE_BINS, nan=0.0), 0, CHI_SQUARE_BINS - 1).astype(int)
    return np.bincount(bins, minlength=CHI_SQUARE_BINS).tolist()


# Integers outside [0, 2**64): ValueError. Not integers at all (a float, even 42.0, NaN, a str,
# None): TypeError or ValueError, as operator.index, range() and math.comb treat them. numpy's
# float32 is a float too, but not a Python one (np.float64 subclasses float, np.float32 does not).
OUT_OF_RANGE = [-1, -(2**63), 2**64, 2**64 + 5, 2**70, np.int64(-1)]
NOT_INTEGERS = [42.0, 42.5, math.nan, math.inf, np.float64(54.0), np.float32(42.0), "42", None]


@case("boundary", "an integer seed or stream < 0 or >= 2**64 raises ValueError; a float, NaN, str "
      "or None raises TypeError or ValueError",
      "a wrapped or truncated seed silently replays another stream", pitfalls=(11,),
      kills=("x16", "x17", "x21"))
def test_bad_seed_or_stream_raises(target):
    calls = [((bad, 54), "seed") for bad in OUT_OF_RANGE + NOT_INTEGERS]
    calls += [((42, bad), "stream") for bad in OUT_OF_RANGE + NOT_INTEGERS]
    for r, (args, which) in zip(target.map("PCG32", [c for c, _ in calls]), calls, strict=True):
        bad = args[0] if which == "seed" else args[1]
        got = fmt(r.error) if r.error else "returned a generator"
        if any(bad is b for b in OUT_OF_RANGE):
            expect(isinstance(r.error, ValueError) and not isinstance(r.error, TypeError),
                   f"{show_pcg(*args)} {got}; expected ValueError: the {which} {bad!r} is an "
                   "integer outside [0, 2**64) (a wrapped value would replay another generator)", 11)
        else:
            expect(isinstance(r.error, (TypeError, ValueError)),
                   f"{show_pcg(*args)} {got}; expected TypeError or ValueError: the {which} "
                   f"{bad!r} is not an integer ({type(bad).__name__}), and a seed and stream are "
                   "integers in [0, 2**64)", 11)


@case("boundary", "0 and 2**64 - 1, numpy uint64, int64, uint32 seeds and streams accepted; a numpy "
      "scalar gives the int's words; seed= and stream= by name", "seeds come from numpy arrays and "
      "from 64-bit hashes", pitfalls=(12,), kills=("x18", "x19", "x22"))
def test_valid_seeds_and_streams_accepted(target):
    calls = [(0, 0), (MASK64, 54), (42, MASK64), (MASK64, MASK64), (np.uint64(MASK64), np.uint64(MASK64)),
             (np.int64(42), np.int64(54)), (np.uint32(42), np.uint32(54)), (np.uint64(42), 54)]
    for args in calls:  # one at a time: each generator draws before the next one exists
        r = target.map("PCG32", [args])[0]
        expect(r.error is None, f"{show_pcg(*args)} {fmt(r.error)}; expected a generator: "
               "every integer in [0, 2**64), numpy integer scalars included, is a valid seed and stream", 12)
        got = [int(w) for w in draw(target, r.value, "next_u32", 4, show_pcg(*args))]
        if all(type(a) is int for a in args):
            continue
        seed, stream = (int(a) for a in args)
        want = pcg_words(target, seed, stream, 4)  # the target's own words for the Python ints
        expect(got == want, f"{show_pcg(*args)}.next_u32() gave {hexes(got)}, but PCG32({seed}, "
               f"{stream}) gives {hexes(want)}: a numpy scalar means the same integer", 12)
    for named in ({"seed": 42, "stream": 54}, {"seed": 42}):  # pcg32.pyi's names, as callers write them
        shown = f"PCG32({', '.join(f'{k}={v!r}' for k, v in named.items())})"
        r = target.map("PCG32", [()], **named)[0]
        expect(r.error is None, f"{shown} {fmt(r.error)}; expected a generator: the parameters are "
               "named seed and stream (pcg32.pyi), and callers pass them by name", 12)
        got = [int(w) for w in draw(target, r.value, "next_u32", 6, shown)]
        want = pcg_words(target, 42, 54, 6)  # the target's own words for the arguments by position
        expect(got == want, f"{shown}.next_u32() gave {hexes(got)}, but PCG32(42, 54) gives "
               f"{hexes(want)}: by name or by position, the arguments mean the same", 12)
