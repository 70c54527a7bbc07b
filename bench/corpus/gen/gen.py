"""Writes the corpus: each file a base (a correct module of its own style) with edits."""
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
OUT = HERE.parent / "M07.6"
BASES = {k: (HERE / f"{k}.py").read_text() for k in
         ("base_a", "base_b", "base_c", "c04", "c05", "c06", "c07", "c08")}

FILES = []


def f(name, base, expect, bug, *edits):
    FILES.append((name, base, expect, bug, edits))


# correct
f("c01_loops_math", "base_a", "correct", "none: plain loops, math, TypeError for non-numbers")
f("c02_numpy_reduce", "base_b", "correct", "none: numpy vectorised, functools.reduce for the sums")
f("c03_own_exceptions", "base_c", "correct", "none: own ValueError/RuntimeError subclasses, a Dist class")
f("c04_min_one_ratio", "c04", "correct", "none: min(1, p_x/q_x) > u, u checked first, np.where")
f("c05_plain_lists", "c05", "correct", "none: Python lists, not (u >= r), ValueError for everything")
f("c06_decorator", "c06", "correct", "none: a validating decorator, np.clip, operator.index")
f("c07_numpy_scalars", "c07", "correct",
  "none: returns numpy scalars (np.float64 alpha, np.bool_, the caller's integer x as given)")
f("c08_dataclass_pair", "c08", "correct", "none: a frozen dataclass of tuples, itertools.count")

# single bugs: chapter pitfalls
f("s01_accept_le", "base_a", "pitfall 1", "rejection_accept uses u <= p_x/q_x",
  ("    return u < ratio\n", "    return u <= ratio\n"))
f("s02_min_ratio_ge", "base_b", "pitfall 1", "rejection_accept: min(1, r) >= u (accepts u == r, p_x = 0 at u = 0)",
  ("    return bool(u < p_x / q_x)\n", "    return bool(min(1.0, p_x / q_x) >= u)\n"))
f("s03_ratio_upside_down", "base_a", "pitfall 2", "acceptance ratio q_x/p_x instead of p_x/q_x",
  ("    ratio = p_x / q_x\n", "    ratio = q_x / p_x if p_x > 0 else 0.0\n"))
f("s04_ratio_capped_by_inverting", "base_c", "pitfall 2", "ratio above 1 'capped' by inverting it (r -> 1/r)",
  ("    return u < p_x / q_x\n",
   "    r = p_x / q_x\n    if r > 1:\n        r = 1 / r\n    return u < r\n"))
f("s05_residual_q_minus_p", "base_a", "pitfall 3", "residual numerators max(0, q - p)",
  ("        d = p_arr[i] - q_arr[i]\n", "        d = q_arr[i] - p_arr[i]\n"))
f("s06_residual_abs", "base_b", "pitfall 3", "residual numerators |p - q|",
  ("    r = np.maximum(p - q, 0.0)\n", "    r = np.abs(p - q)\n"))
f("s07_residual_unnormalised", "base_c", "pitfall 4", "residual returns max(0, p - q) without dividing by Z",
  ("    for i in range(dp.n):\n        out[i] = out[i] / z\n", ""))
f("s08_resample_from_p", "base_a", "pitfall 5", "on rejection samples from p instead of the residual",
  ("    return sample_categorical(residual, u_resample), False\n",
   "    return sample_categorical(p_arr, u_resample), False\n"))
f("s09_resample_from_q", "c05", "pitfall 5", "on rejection samples from q instead of the residual",
  ("    token = sample_categorical(residual_distribution(ps, qs), _number(u_resample, \"u_resample\"))\n",
   "    token = sample_categorical(np.array(qs), _number(u_resample, \"u_resample\"))\n"))
f("s10_return_draft_on_reject", "c06", "pitfall 5", "on rejection returns the draft x itself (x, False)",
  ("    u_resample = _real(u_resample, \"u_resample\", lo=0.0, hi=1.0, hi_open=True)\n"
   "    return sample_categorical(residual_distribution(p, q), u_resample), False\n",
   "    return x, False\n"))
f("s11_p_eq_q_nan", "base_b", "pitfall 6", "no Z == 0 branch: p == q gives 0/0 = NaN",
  ("    if z == 0:\n        return np.array(p, dtype=np.float64, copy=True)\n", ""),
  ("    return r / z\n", "    with np.errstate(divide=\"ignore\", invalid=\"ignore\"):\n        return r / z\n"))
f("s12_p_eq_q_callers_array", "c06", "pitfall 6",
  "Z == 0 returns the caller's array (np.asarray, no copy) instead of a new one",
  ("    arr = np.array(v, dtype=np.float64, copy=True)\n", "    arr = np.asarray(v, dtype=np.float64)\n"))
f("s13_inplace_subtract", "base_b", "pitfall 6", "residual subtracts q from the caller's p in place",
  ("    r = np.maximum(p - q, 0.0)\n", "    p -= q\n    r = np.maximum(p, 0.0)\n    p += q\n"))
f("s14_von_neumann_without_m", "base_a", "pitfall 7", "rejection_sample accepts on u < p_x/q_x (m left out)",
  ("        if u < p_arr[x] / (m * q_arr[x]):\n", "        if u < p_arr[x] / q_arr[x]:\n"))
f("s15_envelope_unchecked", "c04", "pitfall 7", "rejection_sample never checks p <= m q",
  ("    if bad:\n        raise ValueError(f\"envelope p <= m q fails at ids {bad}\")\n", "    del bad\n"))
f("s16_np_sum_residual", "base_a", "pitfall 8", "residual normaliser Z summed with np.sum",
  ("    z = 0.0\n    for v in numer.tolist():\n        z += v\n", "    z = float(np.sum(numer))\n"))
f("s17_np_sum_alpha", "base_b", "pitfall 8", "acceptance_probability with np.sum(np.minimum(p, q))",
  ("    return ltr_sum(np.minimum(p, q))\n", "    return float(np.sum(np.minimum(p, q)))\n"))
# single bugs: ol's own pitfalls
f("s18_tv_half_forgotten", "c05", "ol pitfall 9", "acceptance probability 1 - sum|p - q| (TV without the 1/2)",
  ("    s = 0.0\n    for i in range(len(ps)):\n        s += ps[i] if ps[i] <= qs[i] else qs[i]\n    return s\n",
   "    s = 0.0\n    for i in range(len(ps)):\n        s += abs(ps[i] - qs[i])\n    return 1.0 - s\n"))
f("s19_draw_order_swapped", "base_a", "ol pitfall 10", "rejection_sample draws the acceptance uniform first",
  ("        x = sample_categorical(q_arr, rng.uniform())\n        u = rng.uniform()\n",
   "        u = rng.uniform()\n        x = sample_categorical(q_arr, rng.uniform())\n"))
f("s20_draws_before_envelope_check", "c06", "ol pitfall 10",
  "rejection_sample draws the first proposal before checking the envelope",
  ("    if np.any(p > m * q):\n        raise ValueError(\"p > m q somewhere: m is not an envelope\")\n"
   "    for tries in range(1, max_tries + 1):\n        x = sample_categorical(q, rng.uniform())\n",
   "    for tries in range(1, max_tries + 1):\n        x = sample_categorical(q, rng.uniform())\n"
   "        if tries == 1 and np.any(p > m * q):\n"
   "            raise ValueError(\"p > m q somewhere: m is not an envelope\")\n"))
f("s21_accept_no_u_check", "base_a", "ol pitfall 11", "rejection_accept never checks u in [0, 1)",
  ("    if not 0.0 <= u < 1.0:\n        raise ValueError(\"u must be in [0, 1)\")\n", ""))
f("s22_gives_up_silently", "c08", "ol pitfall 11", "rejection_sample returns (-1, max_tries) instead of RuntimeError",
  ("    raise RuntimeError(f\"no draft accepted in {max_tries} tries\")\n", "    return -1, max_tries\n"))
f("s23_tries_from_zero", "c04", "ol pitfall 12", "rejection_sample reports tries counted from 0",
  ("            return x, t + 1\n", "            return x, t\n"))
f("s24_isclose_sum", "base_b", "ol pitfall 13", "distribution check np.isclose(sum, 1) (loose default tolerance)",
  ("    if abs(ltr_sum(a) - 1.0) > TOL:\n", "    if not np.isclose(ltr_sum(a), 1.0):\n"))
f("s25_shapes_unchecked_zip", "c08", "ol pitfall 13", "p and q of different lengths are not refused (zip truncates)",
  ("        if len(ps) != len(qs):\n            raise ValueError(f\"p has {len(ps)} entries, q has {len(qs)}\")\n",
   ""))
f("s26_rounded_tolerance", "base_c", "ol pitfall 13",
  "sum tolerance as 1 - 1e-9 <= s <= 1 + 1e-9 (rounded bounds admit one float past 1 + 1e-9)",
  ("        if abs(s - 1.0) > 1e-9:\n", "        if not (1.0 - 1e-9 <= s <= 1.0 + 1e-9):\n"))
f("s27_negative_draft_wraps", "base_b", "ol pitfall 14", "speculative_step accepts a negative x (indexes from the end)",
  ("    if x < 0 or x >= len(p):\n", "    if x >= len(p):\n"))
f("s28_px_zero_refused", "base_c", "ol pitfall 15", "rejection_accept raises on p_x == 0 instead of rejecting",
  ("    if p_x < 0:\n        raise BadDraft(\"p_x must be >= 0\")\n",
   "    if p_x <= 0:\n        raise BadDraft(\"p_x must be > 0\")\n"))
f("s29_negative_zero", "base_b", "ol pitfall 22", "-0.0 entries treated as negative (np.signbit)",
  ("    if not np.isfinite(a).all() or (a < 0).any():\n",
   "    if not np.isfinite(a).all() or np.signbit(a).any():\n"))
f("s30_float32_residual", "base_a", "ol pitfall 16", "residual computed in float32",
  ("    numer = np.zeros(n, dtype=np.float64)\n", "    numer = np.zeros(n, dtype=np.float32)\n"))
f("s31_float32_ratio", "c05", "ol pitfall 16", "acceptance ratio computed in float32",
  ("    return not (u >= p_x / q_x)\n", "    return not (u >= float(np.float32(p_x) / np.float32(q_x)))\n"))
f("s32_np_random_choice", "base_a", "ol pitfall 17", "on rejection: unseeded np.random.choice(len(p), p=residual)",
  ("    return sample_categorical(residual, u_resample), False\n",
   "    return int(np.random.choice(len(residual), p=residual)), False\n"))
f("s33_random_random", "c04", "ol pitfall 17", "on rejection: random.random() instead of u_resample",
  ("    u2 = _unit(u_resample, \"u_resample\")\n", "    u2 = random.random()\n"),
  ("import math\n", "import math\nimport random\n"))
f("s34_product_test", "c08", "ol pitfall 18", "rejection_accept compares u * q_x < p_x (no rounded quotient)",
  ("    return u < p_x / q_x\n", "    return u * q_x < p_x\n"))
f("s35_fsum_residual", "c06", "ol pitfall 19", "residual normaliser with math.fsum",
  ("    z = 0.0\n    for e in numer.tolist():\n        z += e\n    return p if", "    z = math.fsum(numer.tolist())\n    return p if"))
# single bugs outside both lists
f("s36_tuple_order", "c05", "other", "speculative_step returns (accepted, token) instead of (token, accepted)",
  ("        return (x, True)\n", "        return (True, x)\n"),
  ("    return (token, False)\n", "    return (False, token)\n"))
f("s37_alpha_clipped", "base_a", "ol pitfall 20", "acceptance_probability clipped to 1 (min(1.0, alpha))",
  ("    return alpha\n", "    return min(1.0, alpha)\n"))
f("s38_tiny_z_tolerance", "base_b", "ol pitfall 21", "residual returns p when Z < 1e-12 (a tolerance, not Z == 0)",
  ("    if z == 0:\n", "    if z < 1e-12:\n"))

# two bugs
f("d01_le_and_np_sum", "base_a", "pitfalls 1, 8", "accept on u <= r; residual Z with np.sum",
  ("    return u < ratio\n", "    return u <= ratio\n"),
  ("    z = 0.0\n    for v in numer.tolist():\n        z += v\n", "    z = float(np.sum(numer))\n"))
f("d02_q_minus_p_and_tries0", "c04", "pitfalls 3, ol 12", "residual max(0, q - p); tries counted from 0",
  ("    r = np.where(a > b, a - b, 0.0)\n", "    r = np.where(b > a, b - a, 0.0)\n"),
  ("            return x, t + 1\n", "            return x, t\n"))
f("d03_resample_p_and_no_envelope", "base_c", "pitfalls 5, 7", "on rejection samples p; no envelope check",
  ("    return sample_categorical(residual_distribution(dp.v, dq.v), _uniform(u_resample, \"u_resample\")), False\n",
   "    return sample_categorical(dp.v, _uniform(u_resample, \"u_resample\")), False\n"),
  ("    for i in range(dp.n):\n        if dp[i] > m * dq[i]:\n            raise EnvelopeError(f\"p[{i}] > m q[{i}]\")\n", ""))
f("d04_tv_and_draw_order", "base_b", "pitfalls ol 9, ol 10", "alpha = 1 - sum|p - q|; acceptance uniform drawn first",
  ("    return ltr_sum(np.minimum(p, q))\n", "    return 1.0 - ltr_sum(np.abs(p - q))\n"),
  ("        x = sample_categorical(q, rng.uniform())\n        if rng.uniform() < p[x] / (m * q[x]):\n",
   "        u = rng.uniform()\n        x = sample_categorical(q, rng.uniform())\n        if u < p[x] / (m * q[x]):\n"))
f("d05_alias_and_draft_unchecked", "c06", "pitfalls 6, ol 14",
  "residual for p == q is the caller's array; x not range-checked",
  ("    arr = np.array(v, dtype=np.float64, copy=True)\n", "    arr = np.asarray(v, dtype=np.float64)\n"),
  ("    if not 0 <= x < p.shape[0]:\n        raise ValueError(f\"x={x} is outside [0, {p.shape[0]})\")\n", ""))
f("d06_upside_down_and_fsum", "base_a", "pitfalls 2, ol 19", "ratio q_x/p_x; residual Z with math.fsum",
  ("    ratio = p_x / q_x\n", "    ratio = q_x / p_x if p_x > 0 else 0.0\n"),
  ("    z = 0.0\n    for v in numer.tolist():\n        z += v\n", "    z = math.fsum(numer.tolist())\n"))
f("d07_unnormalised_and_no_u_check", "c05", "pitfalls 4, ol 11",
  "residual not normalised; rejection_accept does not check u",
  ("    return np.array([v / z for v in nums], dtype=np.float64)\n", "    return np.array(nums, dtype=np.float64)\n"),
  ("    if u < 0 or not u < 1:\n        raise ValueError(\"u not in [0,1)\")\n", ""))
f("d08_np_random_and_no_m", "c08", "pitfalls ol 17, 7", "on rejection np.random.choice; von Neumann without m",
  ("    return sample_categorical(pair.residual(), _uniform(u_resample, \"u_resample\")), False\n",
   "    res = pair.residual()\n    return int(np.random.choice(len(res), p=res)), False\n"),
  ("        if u < pair.p[x] / (m * pair.q[x]):\n", "        if u < pair.p[x] / pair.q[x]:\n"))

# crashes, hangs, exits
f("x01_hang_rejection_sample", "base_a", "timeout", "rejection_sample loops forever (while True: pass)",
  ("    p_arr, q_arr = _pair(p, q)\n    m = _real(\"m\", m)\n",
   "    while True:\n        pass\n    p_arr, q_arr = _pair(p, q)\n    m = _real(\"m\", m)\n"))
f("x02_print_then_hang", "c05", "timeout", "speculative_step prints a debug line, then loops forever",
  ("    ps, qs = _lists(p, q)\n    if isinstance(x, (bool",
   "    print(\"debug: speculative_step\", x, u_accept)\n    while True:\n        pass\n"
   "    ps, qs = _lists(p, q)\n    if isinstance(x, (bool"))
f("x03_name_error", "base_b", "raised", "acceptance_probability uses an undefined name (NameError)",
  ("    return ltr_sum(np.minimum(p, q))\n", "    return ltr_sum(np.minimum(p, qq))\n"))
f("x04_os_exit", "c06", "exited", "rejection_accept calls os._exit(3) (left-over debugging)",
  ("    p_x = _real(p_x, \"p_x\", lo=0.0)\n", "    os._exit(3)\n    p_x = _real(p_x, \"p_x\", lo=0.0)\n"),
  ("import math\n", "import math\nimport os\n"))
f("x05_segfault", "base_c", "crashed", "residual_distribution reads address 0 through ctypes (a segfault)",
  ("    dp, dq = Dist.pair(p, q)\n    out = np.empty(dp.n)\n",
   "    ctypes.string_at(0)\n    dp, dq = Dist.pair(p, q)\n    out = np.empty(dp.n)\n"),
  ("import math\n", "import ctypes\nimport math\n"))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.py"):
        old.unlink()
    for name, base, expect, bug, edits in FILES:
        text = BASES[base]
        for old, new in edits:
            if text.count(old) != 1:
                sys.exit(f"{name}: edit {old!r} matches {text.count(old)} times")
            text = text.replace(old, new)
        (OUT / f"{name}.py").write_text(f"# expect: {expect}\n# bug: {bug}\n{text}")
    print(len(FILES), "files")


main()
