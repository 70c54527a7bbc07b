"""``ol audit`` end to end: argument errors at once, and small real runs (slow)."""

from __future__ import annotations

import sys

import pytest

from harness.audit.mutmut_run import run_mutmut_audit
from harness.audit.power import run_power_audit
from harness.cli import main


@pytest.mark.parametrize("argv,message", [
    (["audit", "M07.6", "--mutmut", "--seeds", "5"], "--seeds goes with --power"),
    (["audit", "M07.6", "--power", "--seeds", "0"], "--seeds must be a positive number"),
    (["audit", "M99.9", "--power"], "unknown module"),
])
def test_usage_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("extra,lab_too", [([], False), (["--compare-lab"], True)])
def test_the_mutmut_audit_runs_the_lab_only_with_compare_lab(extra, lab_too, tmp_path, monkeypatch,
                                                              capsys):
    """``ol audit --mutmut`` runs a whole ``ol lab`` only to compare costs: only when asked."""
    from harness.audit import mutmut_run
    from harness.audit.mutmut_result import MutmutAudit

    asked = {}

    def fake(module_id, **kwargs):
        asked.update(kwargs)
        lab = {"mutants": 68, "duration_s": 20.0, "cpu_s": 15.0, "jobs": 2} if kwargs["run_lab_too"] else {}
        return MutmutAudit(module_id, "tinyllm/prob/rejection.py", (), (), ("test_a",), (), "3.8.1", 2,
                           {"mutmut_s": 8.0, "matrix_s": 6.0, "mutmut_cpu_s": 9.0}, 2.0, lab)

    monkeypatch.setattr(mutmut_run, "run_mutmut_audit", fake)
    assert main(["audit", "M07.6", "--mutmut", *extra, "--out", str(tmp_path)]) == 0
    assert asked["run_lab_too"] is lab_too
    out = capsys.readouterr().out
    assert ("ol lab M07.6 in the same run: 68 hand-written mutants" in out) is lab_too
    assert ("ol lab M07.6 not run beside it for the cost per mutant (--compare-lab runs it)" in out) \
        is not lab_too


def test_compare_lab_goes_with_mutmut(capsys):
    assert main(["audit", "M07.6", "--power", "--compare-lab"]) == 2
    assert capsys.readouterr().err == ("ol: --compare-lab goes with --mutmut "
                                       "(e.g. --mutmut --compare-lab)\n")


def test_an_unwritable_report_folder_fails_before_the_run(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["audit", "M07.6", "--power", "--out", str(blocker / "sub")]) == 2
    assert "cannot write reports" in capsys.readouterr().err


@pytest.mark.slow
def test_a_small_power_audit_passes_and_measures_the_designated_mutants():
    audit = run_power_audit("M07.6", seeds=3, jobs=2)
    assert audit.verdict == "pass" and audit.false_alarm_seeds == 30
    chi = audit.tests[0]
    designated = {m.mutant: m for t in audit.tests for m in t.mutants if m.designated}
    assert set(designated) == {"s06", "s07", "s13", "s18"}
    assert all(m.power.k == 3 and m.fixed_seed_killed for m in designated.values())
    assert chi.detectable["df"] == 6 and 0.02 < chi.detectable["min_tv"] < 0.05
    assert {m.mutant for m in chi.mutants if m.method == "none"} >= {"s09", "s11", "x18"}
    # the false alarms include the interim looks (none stopped the reference), and the rows say
    # where a mutant stopped: s06 at the first qualifying look on every seed
    assert chi.detectable["interim_looks"] == [2500, 5000, 10000] and chi.detectable["interim_stops"] == 0
    assert chi.detectable["spent"] == pytest.approx(chi.alpha, rel=1e-12)
    s06 = next(m for m in chi.mutants if m.mutant == "s06")
    assert s06.law["interim_stops"] == 3 and s06.law["mean_draws_of_interim_stops"] == 2500
    assert "stopped at an interim look at 3 of 3 seeds (after 2500 of 20000 draws" in s06.note


@pytest.mark.slow
def test_mutmut_over_one_function_with_the_full_matrix_and_the_records(tmp_path):
    audit = run_mutmut_audit("M07.6", jobs=2, log_dir=tmp_path, run_lab_too=False,
                             functions=("_finite",))
    assert {r.mutant.function for r in audit.rows} == {"_finite"} and len(audit.rows) >= 5
    assert audit.clean_failures == () and audit.stale == ()
    assert audit.count("unexplained") == 0 and audit.count("equivalent") >= 1
    killed = [r for r in audit.rows if r.detected]
    assert killed and all(r.killed_by and set(r.killed_by) <= set(r.covered_by) for r in killed)
    assert not any(r.disagreement for r in audit.rows)
    assert "mutations/second" in (tmp_path / "mutmut-M07.6.log").read_text()


def test_the_mutmut_audit_without_mutmut_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    # Students install ol without mutmut (the `audit` extra): `import mutmut` fails.
    monkeypatch.setitem(sys.modules, "mutmut", None)
    assert main(["audit", "M07.6", "--mutmut", "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("ol: `ol audit --mutmut` needs mutmut, which is not installed "
                            "(get it with: pip install -e '.[audit]')\n")
    assert captured.out == ""
