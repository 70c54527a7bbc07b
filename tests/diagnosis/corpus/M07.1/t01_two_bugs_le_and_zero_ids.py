# expect: ol pitfalls 1, 2
# diagnosis-misses: with u <= c_i a leading zero id is landed on by the boundary rule itself, so pitfall 2's own calls are explained by pitfall 1
# style: plain loop, textbook version
# bug: u <= c instead of u < c, and no p_i > 0 rule (u = 0 lands on a leading zero id; the tail returns n - 1)
import math


def sample_categorical(probs, u):
    ps = [float(x) for x in probs]
    if not ps:
        raise ValueError("empty probs")
    s = 0.0
    for x in ps:
        if not math.isfinite(x) or x < 0:
            raise ValueError("bad probability")
        s += x
    if abs(s - 1) > 1e-9:
        raise ValueError("probs do not sum to 1")
    u = float(u)
    if not 0 <= u < 1:
        raise ValueError("u outside [0, 1)")
    c = 0.0
    for i, x in enumerate(ps):
        c += x
        if u <= c:
            return i
    return len(ps) - 1
