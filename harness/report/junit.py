"""JUnit XML: one ``<testsuite>`` per run inside ``<testsuites>``, for CI test tabs.

The element and attribute names are those of the JUnit schema CI servers read (Jenkins' xunit
plugin, GitLab, GitHub test-report actions); ``tests/schemas/junit.xsd`` checks our output.
A suite's properties name its cases (``seed``: the run seed, or ``public``), the command that
runs them again (``replay``: every option that changes the cases or the code checked), and the
``python`` and ``platform`` that ran them; a partial run has ``partial`` and ``not_run``. A check
that could not start (a syntax error, a failed import, a missing dependency) is a suite of one
``<error>``, its one-line message. A failed test is a ``<failure>``; an error, a timeout or a crash
(the code under test never answered properly) is an ``<error>``, so CI counts them apart.

Every text and attribute goes through ``xml_text``: ``printable`` (a control character is shown as
``\x1b``, never sent to a CI log or a terminal), then whatever XML 1.0 still cannot carry (U+FFFE,
U+FFFF) as an escape too, so the document is always well-formed XML 1.0.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from harness.engine.results import Outcome, RunResult, TestResult
from harness.engine.seeding import seed_text
from harness.escape import printable
from harness.report.common import diagnosis_lines, failure_text, run_replay, summary_line

SUITES_NAME = "ol"
ERROR_OUTCOMES = (Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASHED)
# Characters XML 1.0 cannot carry at all, even escaped; a student's output may hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_ATTR_LIMIT = 200  # the attribute is a one-line headline; the element text has it all


def to_junit(results: Iterable[RunResult]) -> str:
    """A JUnit XML document (UTF-8 declaration, two-space indent, trailing newline)."""
    results = list(results)
    return document(ET.Element("testsuites", _counts(results, SUITES_NAME)),
                    [testsuite(result) for result in results])


def run_junit(result: RunResult) -> str:
    """One run's JUnit XML document (``ol check --junit``)."""
    return to_junit([result])


def document(root: ET.Element, suites: Iterable[ET.Element]) -> str:
    """``root`` (a ``<testsuites>``) holding ``suites``, as the text of a JUnit XML file."""
    root.extend(suites)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _counts(results: list[RunResult], name: str) -> dict[str, str]:
    tests = [t for r in results for t in r.tests]
    setup_errors = sum(bool(r.error) for r in results)  # each is one <error> test case
    return {
        "name": name,
        "tests": str(len(tests) + setup_errors),
        "failures": str(sum(t.outcome is Outcome.FAILED for t in tests)),
        "errors": str(sum(t.outcome in ERROR_OUTCOMES for t in tests) + setup_errors),
        "time": _seconds(sum(_run_time(r) for r in results)),
    }


def _run_time(result: RunResult) -> float:
    return result.duration_s or sum(t.duration_s for t in result.tests)


def testsuite(result: RunResult) -> ET.Element:
    """One run's ``<testsuite>``: its counts, properties, test cases and summary."""
    attrs = _counts([result], xml_text(result.module))
    attrs["skipped"] = "0"
    suite = ET.Element("testsuite", attrs)
    props = ET.SubElement(suite, "properties")
    partial = (("partial", "true"), ("not_run", str(result.not_run))) if result.partial else ()
    for key, value in (("target", result.target), ("workspace", result.workspace),
                       ("verdict", result.verdict), ("seed", seed_text(result.seed)),
                       ("replay", run_replay(result)), *partial,
                       ("python", result.python), ("platform", result.platform)):
        ET.SubElement(props, "property", {"name": key, "value": xml_text(value)})
    for test in result.tests:
        suite.append(_case(result, test))
    if result.error:
        case = ET.SubElement(suite, "testcase", {"name": "setup",
                                                 "classname": xml_text(f"{result.module}.setup"),
                                                 "time": _seconds(result.duration_s)})
        text = xml_text(result.error)
        ET.SubElement(case, "error", {"message": _headline(text), "type": "setup"}).text = text
    out = "\n".join([*([result.error] if result.error else []), *diagnosis_lines(result),
                     *(f"note: {n}" for n in result.notes), summary_line(result)])
    ET.SubElement(suite, "system-out").text = xml_text(out)
    return suite


def _case(result: RunResult, test: TestResult) -> ET.Element:
    case = ET.Element("testcase", {
        "name": xml_text(test.name),
        "classname": xml_text(f"{result.module}.{test.kind.value}"),
        "time": _seconds(test.duration_s),
    })
    if test.ok:
        return case
    tag = "error" if test.outcome in ERROR_OUTCOMES else "failure"
    text = xml_text(failure_text(test, result.module, result.diagnosis))
    ET.SubElement(case, tag, {"message": _headline(text), "type": test.outcome.value}).text = text
    return case


def _headline(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= MESSAGE_ATTR_LIMIT else first[: MESSAGE_ATTR_LIMIT - 3] + "..."


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def xml_text(text: str) -> str:
    """``text`` fit for an XML 1.0 attribute or text: printable, then what XML cannot carry escaped."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(text))
