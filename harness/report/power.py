"""``ol audit --power`` reports: JSON, a Markdown table per sampled test, and a PNG plot.

The plot (matplotlib, the ``plot`` extra) has three panels: the measured power against every
mutant that changes a law (with its 95 % interval and the 0.999 line; a mutant's id under its bar,
each test named once under its bars), the false-alarm rate on the
reference against each test's alpha (log scale; a rate of 0 is drawn as its upper bound), and the
reference's p-values against the uniform law they should follow. Without matplotlib the other
reports are still written and the summary says how to get the plot. The Markdown and the
terminal summary go through ``printable`` (a problem's text can quote what a run raised).
"""

from __future__ import annotations

import io
import textwrap

from harness.audit.analytic import TARGET_POWER
from harness.audit.power_result import MutantPower, PowerAudit, TestPower
from harness.escape import printable
from harness.report.common import json_text, md_cell


def power_json(audit: PowerAudit) -> str:
    """``audit-power-<m>.json``: the result as the API returns it."""
    return json_text(audit.to_json())


def _g(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def _rate(r) -> str:
    return f"{r.k}/{r.n} = {_g(r.value)} (95 % CI {_g(r.low)} to {_g(r.high)})"


def to_markdown(audit: PowerAudit) -> str:
    word = "PASS" if audit.verdict == "pass" else "FAIL"
    lines = [f"### Power audit {audit.module}: {word}", "",
             (f"{audit.seeds} seeds per mutant, {audit.false_alarm_seeds} seeds for the false-alarm "
              f"rate, {audit.jobs} jobs, {audit.duration_s:.1f} s (tables and real runs "
              f"{audit.timings.get('tables_s', 0):.1f} s, seeded trials "
              f"{audit.timings.get('trials_s', 0):.1f} s). A designated mutant must be killed with "
              f"power at least {TARGET_POWER} and at the catalog's fixed seed."), ""]
    for test in audit.tests:
        lines += _test_section(test)
    return printable("\n".join(lines) + "\n")


def _test_section(t: TestPower) -> list[str]:
    lines = [f"#### `{t.test}` ({t.kind}, size {t.size}, {t.alpha_name}, fixed seed {t.fixed_seed})", ""]
    lines += [(f"- **false alarms** on the reference: {_rate(t.false_alarm)}, against alpha = "
               f"{_g(t.alpha)}; p-value at the fixed seed {_g(t.fixed_seed_pvalue)}"),
              "- calibration of the reference's p-values: " + "; ".join(
                  f"p < {lvl}: {_rate(r)}" for lvl, r in t.calibration.items())
              + f"; Kolmogorov-Smirnov against U(0, 1): p = {_g(t.uniformity_pvalue)}",
              f"- **smallest detectable change** at power {TARGET_POWER}: {_detectable(t)}"]
    if t.problems:
        lines += [f"- **problem**: {md_cell(p)}" for p in t.problems]
    lines += ["", *_mutant_table(t), ""]
    same: dict[str, list[str]] = {}
    for m in t.mutants:
        if m.method == "none":
            same.setdefault(m.note or "its law is the reference's", []).append(m.mutant)
    for note, ids in same.items():
        lines += [f"Nothing to detect ({note}): {', '.join(ids)}.", ""]
    if t.unreachable:
        lines += [f"Edit code this trial never runs: {', '.join(t.unreachable)}.", ""]
    return lines


def _detectable(t: TestPower) -> str:
    d = t.detectable
    if t.kind == "chi-square":
        return (f"df = {d['df']}, critical value {_g(d['critical_value'], 4)}; noncentrality "
                f"lambda >= {_g(d['min_noncentrality'], 4)}, i.e. chi-square divergence >= "
                f"{_g(d['min_divergence'])}: every law with TV >= {_g(d['min_tv'])} from p is "
                f"caught at {t.size} draws")
    if t.kind == "streams":
        return (f"{d['pairs']} pairs of {d['bits_per_pair']} bits each: a bias of "
                f"{_g(d['min_bias'])} in the share of agreeing bits (at {_g(d['pair_alpha'])} per "
                f"pair), and {d['copies']} with certainty; the family's alpha is "
                f"{_g(d['nominal_alpha'])} (Sidak)")
    return (f"mean tries below {_g(d['mean_below'], 4)} or above {_g(d['mean_above'], 4)} (m = "
            f"{_g(d['m'])}, se = {_g(d['se'])}; a pure shift of {_g(d['normal_shift'])} tries); "
            f"alpha: {_g(d['exact_alpha'])} exactly (NegBin), {_g(d['nominal_alpha'])} in the "
            f"normal approximation")


def _mutant_table(t: TestPower) -> list[str]:
    measured = [m for m in t.mutants if m.method != "none"]
    if not measured:
        return ["No mutant changes this test's law."]
    effect = {"chi-square": "TV, lambda = N D",
              "streams": "agreeing bits (bias), seeds with common runs"}.get(t.kind, "mean tries (shift)")
    lines = [(f"| mutant | designated | method | {effect} | analytic power | measured power | "
              "fixed seed | note |"), "| --- | :---: | --- | --- | ---: | --- | :---: | --- |"]
    for m in measured:
        lines.append(f"| `{m.mutant}` | {'yes' if m.designated else ''} | {m.method} | "
                     f"{_effect(t, m)} | {_g(m.law.get('analytic_power'), 4)} | "
                     f"{_rate(m.power) if m.power else 'n/a'} | "
                     f"{'killed' if m.fixed_seed_killed else 'passes'} | {md_cell(m.note)} |")
    return lines


def _effect(t: TestPower, m: MutantPower) -> str:
    law = m.law
    est = " (estimated)" if law.get("estimated") else ""
    if t.kind == "chi-square":
        raise_part = f", raises on {_g(law['p_raise'])} of draws" if law.get("p_raise") else ""
        lam = f", {_g(law['noncentrality'], 4)}" if "noncentrality" in law else ""
        return f"{_g(law.get('tv'))}{lam}{raise_part}{est}"
    if t.kind == "streams":
        if "agreement" not in law:
            return "n/a"
        return f"{_g(law['agreement'], 5)} ({law['bias']:+.2g}), {_g(law['runs_share'])}{est}"
    if "mean_tries" not in law:
        return "n/a"
    return f"{_g(law['mean_tries'], 4)} ({law['shift']:+.3f}){est}"


# -- the plot ---------------------------------------------------------------------------------------

def to_png(audit: PowerAudit) -> bytes:
    import matplotlib.pyplot as plt

    fig = figure(audit)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def figure(audit: PowerAudit):
    """The plot's matplotlib figure, laid out (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 8.5), dpi=110)
    grid = fig.add_gridspec(2, 2, height_ratios=(1.15, 1))
    _power_panel(fig.add_subplot(grid[0, :]), audit)
    _alarm_panel(fig.add_subplot(grid[1, 0]), audit)
    _uniformity_panel(fig.add_subplot(grid[1, 1]), audit)
    fig.suptitle(f"ol audit {audit.module} --power: {audit.seeds} seeds per mutant, "
                 f"{audit.false_alarm_seeds} for false alarms ({audit.verdict})")
    fig.tight_layout()
    return fig


# The power panel's x axis: a mutant id under each bar (upright while they fit, turned beyond
# ROTATE_ABOVE bars), and under the bars of each test one label naming it once, the tests
# separated by a dotted line.
ROTATE_ABOVE = 40
GROUP_GID = "test-group"  # the gid of a test's label under its bars (the tests find them by it)


def _power_panel(ax, audit: PowerAudit) -> None:
    labels: list[str] = []
    values: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    colors: list[str] = []
    analytic: list[float | None] = []
    groups: list[tuple[int, int, TestPower]] = []
    for t in audit.tests:
        first = len(values)
        for m in t.mutants:
            power = m.power
            if power is None:
                continue
            labels.append(m.mutant)
            values.append(power.value)
            lows.append(power.value - power.low)
            highs.append(power.high - power.value)
            colors.append("#1b5e20" if m.designated else "#90a4ae")
            analytic.append(m.law.get("analytic_power"))
        if len(values) > first:
            groups.append((first, len(values) - 1, t))
    x = list(range(len(values)))
    ax.bar(x, values, color=colors, yerr=[lows, highs], capsize=3, label="measured over seeds")
    shown = [(i, a) for i, a in zip(x, analytic, strict=True) if isinstance(a, float)]
    if shown:
        ax.scatter([i for i, _ in shown], [a for _, a in shown], marker="D", s=22, color="#000",
                   zorder=3, label="analytic (exact law)")
    ax.axhline(TARGET_POWER, color="#b71c1c", linestyle="--", linewidth=1,
               label=f"required for designated mutants ({TARGET_POWER})")
    turned = len(x) > ROTATE_ABOVE
    ax.set_xticks(x, labels, fontsize=8, rotation=90 if turned else 0)
    ax.set_xlim(-0.6, len(x) - 0.4)
    _test_labels(ax, groups, len(x), max((len(label) for label in labels), default=0) if turned else 1)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("power (fraction of seeds that kill)")
    ax.set_title("power against every mutant that changes the test's law "
                 "(dark: designated for the test; bars: 95 % interval)", fontsize=10)
    ax.legend(loc="lower left", fontsize=8)  # the 0.999 line always has a label


def _test_labels(ax, groups: list[tuple[int, int, TestPower]], bars: int, tick_chars: int) -> None:
    """One label per test, centred under its bars and below the mutant ids (``tick_chars``: the
    longest id when they are turned, else 1 for one upright line), wrapped to the width of its
    bars; a dotted line between two tests."""
    below = 8 + 5.5 * tick_chars + 4  # points: tick, the ids, a gap
    axes_px = ax.get_position().width * ax.figure.get_figwidth() * 72  # in points
    for i, (first, last, t) in enumerate(groups):
        if i:
            ax.axvline(first - 0.5, color="#555", linewidth=0.8, linestyle=":")
        chars = max(12, int((last - first + 1) * axes_px / max(bars, 1) / 5.2))
        ax.annotate(textwrap.fill(f"{t.test.removeprefix('test_').replace('_', ' ')} ({t.kind})",
                                  chars),
                    xy=((first + last) / 2, 0), xycoords=ax.get_xaxis_transform(),
                    xytext=(0, -below), textcoords="offset points", ha="center", va="top",
                    fontsize=8, fontweight="bold", gid=GROUP_GID)


def _short(test: str) -> str:
    return textwrap.fill(test.removeprefix("test_").replace("_", " "), 24)


def _alarm_panel(ax, audit: PowerAudit) -> None:
    floor = min([t.alpha for t in audit.tests] + [1e-3]) / 5
    for i, t in enumerate(audit.tests):
        fa = t.false_alarm
        if fa.k:
            ax.errorbar([i], [fa.value], yerr=[[fa.value - max(fa.low, floor)], [fa.high - fa.value]],
                        fmt="o", color="#0d47a1", capsize=4,
                        label="measured, 95 % interval" if i == 0 else None)
        else:
            ax.vlines(i, floor, fa.high, color="#0d47a1", linewidth=2)
            ax.scatter([i], [fa.high], marker="v", color="#0d47a1", zorder=3,
                       label="0 seen: 95 % interval from 0 to the triangle" if i == 0 else None)
        ax.hlines(t.alpha, i - 0.25, i + 0.25, color="#b71c1c", linewidth=2,
                  label="alpha of the test" if i == 0 else None)
    ax.set_yscale("log")
    ax.set_ylim(floor, 1)
    ax.set_xticks(range(len(audit.tests)), [_short(t.test) for t in audit.tests], fontsize=8)
    ax.set_xlim(-0.6, len(audit.tests) - 0.4)
    ax.set_ylabel("false-alarm rate on the reference")
    ax.set_title("false alarms against alpha", fontsize=10)
    if audit.tests:
        ax.legend(fontsize=7, loc="upper right")


def _uniformity_panel(ax, audit: PowerAudit) -> None:
    for t in audit.tests:
        ps = sorted(t.pvalues)
        if ps:
            ax.plot(ps, [(i + 1) / len(ps) for i in range(len(ps))], drawstyle="steps-post",
                    label=f"{t.test.removeprefix('test_')} (KS p = {_g(t.uniformity_pvalue, 2)})")
    ax.plot([0, 1], [0, 1], color="#777", linestyle=":", label="U(0, 1)")
    ax.set_xlabel("p-value on the reference")
    ax.set_ylabel("fraction of seeds")
    ax.set_title("reference p-values: should be uniform", fontsize=10)
    ax.legend(fontsize=7)


def summary(audit: PowerAudit) -> str:
    """A few lines for the terminal: what the verdict rests on, then per test its false alarms,
    the lowest power among the mutants designated for it (which must reach ``TARGET_POWER``) and,
    apart, the lowest among the others (measured, never required)."""
    lines = [f"ol audit {audit.module} --power: {audit.verdict.upper()} ({audit.duration_s:.1f} s)",
             (f"  {audit.verdict.upper()} rests on each test's false alarms and its designated mutants "
              f"(power >= {TARGET_POWER} required)")]
    for t in audit.tests:
        lines.append(f"  {t.test}: false alarms {_rate(t.false_alarm)}")
        lines += [f"    {line}" for line in _power_lines(t)]
        lines += [f"    problem: {p}" for p in t.problems]
    return printable("\n".join(lines) + "\n")


def _lowest(mutants: list[MutantPower]) -> MutantPower | None:
    measured = [m for m in mutants if m.power is not None]
    return min(measured, key=lambda m: m.power.value if m.power else 0.0) if measured else None


def _power_lines(t: TestPower) -> list[str]:
    designated = [m for m in t.mutants if m.designated]
    others = [m for m in t.mutants if not m.designated and m.power is not None]
    worst = _lowest(designated)
    if worst is not None:
        ids = (", the only one" if len(designated) == 1
               else " of " + ", ".join(m.mutant for m in designated))
        lines = [f"lowest power among designated mutants {_power(worst)} ({worst.mutant}{ids})"]
    elif designated:
        lines = [f"designated mutants {', '.join(m.mutant for m in designated)}: no power measured"]
    else:
        lines = ["no mutant is designated for this test"]
    weakest = _lowest(others)
    if weakest is not None:
        other = f"{len(others)} other mutant" + ("s" if len(others) > 1 else "")
        lines.append(f"lowest power among the {other} {_power(weakest)} "
                     f"({weakest.mutant}, not designated: measured, not required)")
    return lines


def _power(m: MutantPower) -> str:
    return "n/a" if m.power is None else f"{m.power.value:.3f}"
