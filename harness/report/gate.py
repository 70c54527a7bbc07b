"""The gate's reports (formatting only): the terminal's failures, JSON, Markdown and JUnit."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from harness.gate.engine import GateResult, ModuleGate
from harness.report.quotes import Quotes


def format_failures(result: GateResult, width: int | None = None) -> str:
    """What follows the module lines: each failure, error and block, then the gate's line; every
    line within ``width`` columns (None: whole), a failure's long lists of numbers cut as
    ``ol check`` cuts them."""
    from harness.escape import printable
    from harness.report.text import failures_and_summary, fit

    lines: list[str] = []
    for m in result.modules:
        if m.status == "fail" and m.run is not None:
            lines += ["", f"== {m.module} {m.title}: fail"]
            lines += failures_and_summary(m.run, width, whole=width is None).rstrip("\n").splitlines()
        elif m.status == "error":
            lines += ["", f"== {m.module} {m.title}: error", f"    {printable(m.message)}"]
        elif m.status == "blocked":
            lines += ["", f"== {m.module} {m.title}: blocked {printable(m.message)}; not run"]
    lines += ["", result.summary_line()]
    return fit("\n".join(lines), width) + "\n"


def to_gate_json(result: GateResult) -> str:
    from harness.report.common import json_text

    return json_text(result.to_json(), allow_nan=False)


def to_gate_markdown(result: GateResult) -> str:
    """The gate's cases, a table of modules, then each failed module's own Markdown section (for
    a step summary)."""
    from harness.report.common import cases_line, md_cell
    from harness.report.markdown import to_markdown

    verdict = "PASS" if result.verdict == "pass" else "FAIL"
    lines = [f"## {result.milestone}: {verdict}", "", md_cell(result.title), "",
             f"workspace {md_cell(str(result.workspace))}" + (", reference dependencies" if result.ref_deps
                                                  else ""), "",
             md_cell(cases_line(result.seed, result.replay)), "",
             "| module | status | passed | failed | time | note |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for m in result.modules:
        passed, failed = (str(m.run.passed), str(m.run.failed)) if m.run else ("", "")
        lines.append(f"| {m.module} | {m.status.upper()} | {passed} | {failed} | "
                     f"{m.duration_s:.1f} s | {md_cell(m.message)} |")
    lines += ["", result.summary_line()]
    if result.unconfined():
        lines += ["", md_cell(f"Warning: the sandbox was partial (missing: "
                              f"{', '.join(result.unconfined())}); see docs/isolation.md.")]
    for m in result.modules:
        if m.status == "fail" and m.run is not None:
            lines += ["", to_markdown(m.run).rstrip("\n")]
    return "\n".join(lines) + "\n"


def to_gate_junit(result: GateResult, quotes: Quotes) -> str:
    """One ``<testsuite>`` per module, in gate order; blocked tests are ``<skipped>``, a module
    that could not run is one ``<error>``. Every suite names the gate's cases (``seed``) and the
    command that replays the gate (``gate_replay``); a suite that ran also has its check's own
    ``replay``. The suites are built as elements (``junit.testsuite``) and the totals summed
    from them: nothing is rendered and read back. A blocked module's suite lists its catalog's
    tests (``quotes.catalogs``) as skipped."""
    from harness.engine.seeding import seed_text
    from harness.report.junit import document, testsuite, xml_text

    suites = []
    for m in result.modules:
        if m.run is not None:  # its replay: the gate's --ref-deps is the check's
            suite = testsuite(dataclasses.replace(m.run, ref_deps=result.ref_deps))
            props = suite.find("properties")
        else:
            suite = _suite_without_run(m, quotes.catalogs.get(m.module))
            props = suite.find("properties")
            assert props is not None, "_suite_without_run writes its properties first"
            ET.SubElement(props, "property", {"name": "seed", "value": seed_text(result.seed)})
        assert props is not None, "every suite has its properties"
        ET.SubElement(props, "property", {"name": "gate_replay", "value": xml_text(result.replay)})
        suites.append(suite)

    def total(key: str) -> str:
        return str(sum(int(s.get(key, "0")) for s in suites))

    root = ET.Element("testsuites", {"name": f"ol gate {result.milestone}", "tests": total("tests"),
                                     "failures": total("failures"), "errors": total("errors"),
                                     "time": f"{result.duration_s:.3f}"})
    return document(root, suites)


def _suite_without_run(m: ModuleGate, catalog: tuple[str, ...] | None) -> ET.Element:
    from harness.report.junit import xml_text

    blocked = m.status == "blocked"
    names = list(catalog) if blocked and catalog is not None else ["check"]
    suite = ET.Element("testsuite", {
        "name": m.module, "tests": str(len(names)), "failures": "0",
        "errors": "0" if blocked else "1", "skipped": str(len(names)) if blocked else "0",
        "time": f"{m.duration_s:.3f}"})
    props = ET.SubElement(suite, "properties")
    for key, value in (("status", m.status), ("blocked_by", ", ".join(m.blocked_by))):
        ET.SubElement(props, "property", {"name": key, "value": xml_text(value)})
    text = xml_text(f"{m.status} {m.message}" if blocked else m.message)
    for name in names:
        case = ET.SubElement(suite, "testcase", {"name": name, "classname": f"{m.module}.gate",
                                                 "time": "0.000"})
        if blocked:
            ET.SubElement(case, "skipped", {"message": text})
        else:
            ET.SubElement(case, "error", {"message": text[:200], "type": "setup"}).text = text
    ET.SubElement(suite, "system-out").text = text
    return suite
