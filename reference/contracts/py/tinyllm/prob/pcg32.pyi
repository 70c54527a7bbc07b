"""M06.3 contract: the PCG32 generator (XSH-RR 64/32) and its float64 uniforms.

All state arithmetic is modulo 2**64. The draw accounting is in ``spec/sampling.md``.
"""

class PCG32:
    """A PCG32 generator: a 64-bit LCG state with the XSH-RR output permutation.

    Multiplier 6364136223846793005; the increment ``inc`` is odd and fixed by the stream.
    """

    def __init__(self, seed: int, stream: int = 54) -> None:
        """Seed as PCG's ``pcg32_srandom_r(seed, stream)``.

        ``state = 0``, ``inc = (stream << 1) | 1``, one step, ``state += seed``, one step (all
        mod 2**64). The top bit of ``stream`` is shifted out, so streams ``s`` and ``s + 2**63``
        give the same generator.

        ``seed`` and ``stream`` are integers: Python ints and numpy integer scalars are accepted.

        Raises:
            ValueError: ``seed`` or ``stream`` is an integer outside [0, 2**64) (negative, or
                2**64 and above): it is never wrapped.
            TypeError or ValueError: ``seed`` or ``stream`` is not an integer at all (a float,
                even an integral one such as 42.0, NaN or inf; a string; None). Either is
                accepted, as ``operator.index`` raises TypeError for a float where Python wants an
                integer.
        """

    def next_u32(self) -> int:
        """The next 32-bit output, an int in [0, 2**32): XSH-RR of the old state, then one step.

        Consumes one word. ``PCG32(42, 54)`` gives 0xa15c02b7 0x7b47f409 0xba1d3330 0x83d2f293
        0xbfa4784b 0xcbed606e.
        """

    def uniform(self) -> float:
        """A float64 in [0, 1) that is a multiple of 2**-53; consumes exactly two words.

        ``a = next_u32() >> 5`` is drawn first (the high 27 bits), then ``b = next_u32() >> 6``
        (the low 26 bits); the result is ``(a * 2**26 + b) / 2**53``, exact. The smallest value is
        0.0, the largest ``1 - 2**-53``; 1.0 is never returned. This is numpy's two-word
        construction, not the one-word ``next_u64() >> 11`` variant.
        """
