# expect: pitfall 2
# bug: ratio above 1 'capped' by inverting it (r -> 1/r)
"""M07.6 rejection sampling, with errors of my own (all ValueError / RuntimeError subclasses)."""

from __future__ import annotations

import math

import numpy as np

from tinyllm.prob.categorical import sample_categorical


class NotADistribution(ValueError):
    pass


class BadDraft(ValueError):
    pass


class BadUniform(ValueError):
    pass


class EnvelopeError(ValueError):
    pass


class GaveUp(RuntimeError):
    pass


class Dist:
    """A validated distribution (a private float64 copy)."""

    def __init__(self, values, name):
        try:
            self.v = np.array(values, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise NotADistribution(f"{name}: {e}") from None
        if self.v.ndim != 1 or self.v.shape[0] < 1:
            raise NotADistribution(f"{name}: shape {self.v.shape}")
        s = 0.0
        for i in range(self.v.shape[0]):
            e = float(self.v[i])
            if math.isnan(e) or math.isinf(e) or e < 0:
                raise NotADistribution(f"{name}[{i}] = {e}")
            s = s + e
        if abs(s - 1.0) > 1e-9:
            raise NotADistribution(f"{name} sums to {s}")
        self.n = self.v.shape[0]

    def __getitem__(self, i):
        return float(self.v[i])

    @staticmethod
    def pair(p, q):
        dp, dq = Dist(p, "p"), Dist(q, "q")
        if dp.n != dq.n:
            raise NotADistribution(f"p has {dp.n} ids and q has {dq.n}")
        return dp, dq


def _finite(x, name):
    if type(x) is bool or isinstance(x, np.bool_):
        raise BadUniform(f"{name} is a bool")
    x = float(x) if not isinstance(x, str) else math.nan * len(x.__class__.__name__)
    if not math.isfinite(x):
        raise BadUniform(f"{name} must be a finite number")
    return x


def _uniform(u, name="u"):
    u = _finite(u, name)
    if not (u >= 0.0 and u < 1.0):
        raise BadUniform(f"{name}={u} not in [0, 1)")
    return u


def rejection_accept(p_x, q_x, u):
    p_x, q_x = _finite(p_x, "p_x"), _finite(q_x, "q_x")
    u = _uniform(u)
    if q_x <= 0:
        raise BadDraft("q_x must be > 0")
    if p_x < 0:
        raise BadDraft("p_x must be >= 0")
    r = p_x / q_x
    if r > 1:
        r = 1 / r
    return u < r


def acceptance_probability(p, q):
    dp, dq = Dist.pair(p, q)
    a = 0.0
    for i in range(dp.n):
        a = a + (dp[i] if dp[i] < dq[i] else dq[i])
    return a


def residual_distribution(p, q):
    dp, dq = Dist.pair(p, q)
    out = np.empty(dp.n)
    z = 0.0
    for i in range(dp.n):
        out[i] = max(0.0, dp[i] - dq[i])
        z = z + out[i]
    if z == 0.0:
        return dp.v.copy()
    for i in range(dp.n):
        out[i] = out[i] / z
    return out


def speculative_step(p, q, x, u_accept, u_resample):
    dp, dq = Dist.pair(p, q)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise BadDraft(f"x must be an integer id, got {x!r}")
    if x < 0 or x >= dp.n:
        raise BadDraft(f"x = {x} is not an id")
    if dq[x] == 0:
        raise BadDraft(f"q[{x}] == 0")
    if rejection_accept(dp[x], dq[x], u_accept):
        return int(x), True
    return sample_categorical(residual_distribution(dp.v, dq.v), _uniform(u_resample, "u_resample")), False


def rejection_sample(p, q, m, rng, max_tries=10000):
    dp, dq = Dist.pair(p, q)
    m = _finite(m, "m")
    if m < 1:
        raise EnvelopeError(f"m = {m} < 1")
    for i in range(dp.n):
        if dp[i] > m * dq[i]:
            raise EnvelopeError(f"p[{i}] > m q[{i}]")
    if isinstance(max_tries, bool) or not isinstance(max_tries, (int, np.integer)):
        raise ValueError("max_tries must be an int")
    if max_tries < 1:
        raise ValueError("max_tries must be >= 1")
    tries = 0
    while tries < max_tries:
        tries += 1
        x = sample_categorical(dq.v, rng.uniform())
        u = rng.uniform()
        if u < dp[x] / (m * dq[x]):
            return x, tries
    raise GaveUp(f"nothing accepted in {max_tries} tries")
