"""``ol gate MILESTONE``: every module of a milestone checked, in dependency order, for CI.

Each module is checked as ``ol check`` checks it (the student's code in an isolated worker with
the default limits). A module runs only when every module it needs has passed in this gate, or is
outside the milestone and written in the workspace: a module whose dependency failed, errored,
was blocked itself, or is still a stub is *blocked* by it, neither run nor passed. Under
``--ref-deps`` the reference stands in for every dependency, so each module is checked on its own
and nothing is blocked.

Statuses: ``pass``, ``fail`` (the catalog ran and something failed), ``error`` (the check could
not run: a syntax error, a missing file, a failed import, no catalog), ``blocked``. The gate passes
(exit 0) only if every module passes; otherwise exit 1, with the reports written either way.

Every module of one gate runs on the cases of one seed: by default a fresh run seed (hidden cases,
so code right only on the public inputs does not pass), ``--seed N`` to replay a gate, ``--seed
public`` for the public cases. Every report records the seed and the command that replays it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import stat
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.engine.course import Course, Module, load_course
from harness.errors import HarnessError
from harness.engine.results import RunResult
from harness.engine.serial import reading, tagged, untag
from harness.engine.workspace import Workspace, module_state

EXIT_PASS, EXIT_FAIL = 0, 1
STATUSES = ("pass", "fail", "error", "blocked")
FORMAT_VERSION = 1  # GateResult's; the tag was added without a change to the body


@dataclass(frozen=True)
class ModuleGate:
    """What the gate concluded for one module; ``run`` is None unless its catalog ran."""

    module: str
    title: str
    status: str
    run: RunResult | None = None
    message: str = ""
    blocked_by: tuple[str, ...] = ()
    duration_s: float = 0.0

    def line(self, width: int = 6) -> str:
        """``  M07.6  blocked  by M07.1 (it did not pass)``: the module's summary line."""
        from harness.report.escape import printable

        head = f"  {self.module:<{width}}  {self.status:<7}"
        if self.run is not None:
            return (f"{head}  {self.run.passed:>3} passed, {self.run.failed:>3} failed"
                    f"  {self.duration_s:6.1f} s")
        return f"{head}  {printable(self.message)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "title": self.title,
            "status": self.status,
            "passed": self.run.passed if self.run else 0,
            "failed": self.run.failed if self.run else 0,
            "duration_s": self.duration_s,
            "blocked_by": list(self.blocked_by),
            "message": self.message,
            "run": self.run.to_json() if self.run else None,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str | None = None) -> ModuleGate:
        run = RunResult.from_json(d["run"], source) if d.get("run") is not None else None
        return cls(d["module"], d["title"], d["status"], run, d.get("message", ""),
                   tuple(d.get("blocked_by", ())), float(d.get("duration_s", 0.0)))


@dataclass(frozen=True)
class GateResult:
    milestone: str
    title: str
    workspace: str
    ref_deps: bool
    modules: tuple[ModuleGate, ...]
    duration_s: float = 0.0
    seed: int | None = None  # the run seed of every module's cases; None: the public cases

    @property
    def verdict(self) -> str:
        return "pass" if self.modules and all(m.status == "pass" for m in self.modules) else "fail"

    @property
    def replay(self) -> str:
        return gate_replay(self.milestone, self.workspace, self.ref_deps, self.seed)

    def cases_line(self) -> str:
        """``cases: hidden, seed 1234 (replay: ol gate MS-P6 --workspace WS --seed 1234)``."""
        from harness.report.common import cases_line

        return cases_line(self.seed, self.replay)

    def count(self, status: str) -> int:
        return sum(m.status == status for m in self.modules)

    def summary_line(self) -> str:
        """``MS-P6: 2 pass, 1 fail, 0 error, 0 blocked (verdict: fail)``."""
        counts = ", ".join(f"{self.count(s)} {s}" for s in STATUSES)
        return f"{self.milestone}: {counts} (verdict: {self.verdict})"

    def to_json(self) -> dict[str, Any]:
        return tagged("GateResult", FORMAT_VERSION, {
            "kind": "ol-gate",
            "milestone": self.milestone,
            "title": self.title,
            "workspace": self.workspace,
            "ref_deps": self.ref_deps,
            "seed": self.seed,
            "replay": self.replay,
            "verdict": self.verdict,
            "counts": {s: self.count(s) for s in STATUSES},
            "duration_s": self.duration_s,
            "modules": [m.to_json() for m in self.modules],
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> GateResult:
        """The gate ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        milestone = d.get("milestone") if isinstance(d, dict) else None
        rerun = f"ol gate {milestone}" if isinstance(milestone, str) else "ol gate MILESTONE"
        untag(d, "GateResult", (FORMAT_VERSION,), source, rerun)
        with reading("GateResult", source, rerun):
            return cls(d["milestone"], d["title"], d["workspace"], bool(d["ref_deps"]),
                       tuple(ModuleGate.from_json(m, source) for m in d["modules"]),
                       float(d.get("duration_s", 0.0)), d.get("seed"))


def gate_replay(milestone: str, workspace: str, ref_deps: bool, seed: int | None) -> str:
    """``ol gate MS-P6 --workspace WS [--ref-deps] --seed N``: the same gate on the same cases
    (``--seed public`` too: the gate's default is a fresh seed)."""
    from harness.report.common import replay_command

    return replay_command("gate", milestone, seed, "--workspace", workspace,
                          *(("--ref-deps",) if ref_deps else ()))


# -- the engine ------------------------------------------------------------------------------------

def catalog_problem(module: Module) -> str | None:
    """None if the module's catalog imports; else why not, in one line."""
    try:
        importlib.import_module(module.catalog_module)
    except ModuleNotFoundError as exc:
        if exc.name and module.catalog_module.startswith(exc.name):
            return f"{module.id} has no catalog yet ({module.catalog_module} does not exist)"
        return f"the catalog of {module.id} does not import: {exc}"
    except Exception as exc:  # noqa: BLE001 - a broken catalog must not hide the others
        return f"the catalog of {module.id} does not import: {type(exc).__name__}: {exc}"
    return None


def needs_of(module: Module, course: Course) -> tuple[str, ...]:
    """Every module ``module`` needs, directly or not; direct needs first."""
    seen: list[str] = []
    queue = list(module.needs)
    while queue:
        dep = queue.pop(0)
        if dep not in seen:
            seen.append(dep)
            queue.extend(course.module(dep).needs)
    return tuple(seen)


_WHY = {"fail": "failed its check", "error": "could not be checked", "blocked": "is blocked"}


def _blockers(module: Module, course: Course, ws: Workspace, done: dict[str, ModuleGate],
              ref_deps: bool) -> tuple[tuple[str, ...], str]:
    """The dependencies that block ``module`` and why (``by M07.1 (failed its check)``)."""
    if ref_deps:
        return (), ""
    blockers, reasons = [], []
    for dep_id in needs_of(module, course):
        if dep_id in done:  # gated before this module: it must have passed
            if done[dep_id].status != "pass":
                blockers.append(dep_id)
                reasons.append(f"{dep_id} ({_WHY[done[dep_id].status]})")
            continue
        dep = course.module(dep_id)
        state = module_state(ws, dep)  # outside the milestone: it must at least be written
        if state != "written":
            blockers.append(dep_id)
            what = "missing" if state == "missing" else "still a stub"
            reasons.append(f"{dep_id} ({ws.relative(dep)} is {what})")
    return tuple(blockers), f"by {', '.join(reasons)}" if blockers else ""


def check_one(module: Module, ws: Workspace, ref_deps: bool, limits: object | None,
              seed: int | None = None) -> ModuleGate:
    """One module's check, as ``ol check --seed`` runs it; a setup error is the module's
    ``error``."""
    from harness.engine.check import CheckRequest, run_check

    start = time.perf_counter()
    problem = catalog_problem(module)
    if problem is not None:
        return ModuleGate(module.id, module.title, "error", message=problem)
    request = CheckRequest(module.id, str(ws.root), "student", ref_deps, None, limits, seed=seed)
    try:
        run = run_check(request, ws)
    except HarnessError as exc:
        return ModuleGate(module.id, module.title, "error", message=exc.message,
                          duration_s=time.perf_counter() - start)
    return ModuleGate(module.id, module.title, run.verdict, run,
                      duration_s=time.perf_counter() - start)


def run_gate(milestone: str, ws: Workspace, ref_deps: bool = False, limits: object | None = None,
             on_module: Callable[[ModuleGate], None] | None = None,
             seed: int | None = None) -> GateResult:
    """Every module of ``milestone`` in dependency order, each on the cases of ``seed`` (None:
    the public cases); blocked ones are not run."""
    from harness.engine.check import check_seed

    check_seed(seed)
    course = load_course()
    start = time.perf_counter()
    done: dict[str, ModuleGate] = {}
    for module_id in course.dependency_order(course.milestone(milestone)):
        module = course.module(module_id)
        blockers, reason = _blockers(module, course, ws, done, ref_deps)
        if blockers:
            outcome = ModuleGate(module.id, module.title, "blocked", message=reason,
                                 blocked_by=blockers)
        else:
            outcome = check_one(module, ws, ref_deps, limits, seed)
        done[module_id] = outcome
        if on_module is not None:
            on_module(outcome)
    title = course.milestone_titles.get(milestone, milestone)
    return GateResult(milestone, title, str(ws.root), ref_deps, tuple(done.values()),
                      time.perf_counter() - start, seed)


# -- reports (formatting only) ---------------------------------------------------------------------

def format_failures(result: GateResult) -> str:
    """What follows the module lines: each failure, error and block, then the gate's line."""
    from harness.report.escape import printable
    from harness.report.text import failures_and_summary

    lines: list[str] = []
    for m in result.modules:
        if m.status == "fail" and m.run is not None:
            lines += ["", f"== {m.module} {m.title}: fail"]
            lines += failures_and_summary(m.run).rstrip("\n").splitlines()
        elif m.status == "error":
            lines += ["", f"== {m.module} {m.title}: error", f"    {printable(m.message)}"]
        elif m.status == "blocked":
            lines += ["", f"== {m.module} {m.title}: blocked {printable(m.message)}; not run"]
    lines += ["", result.summary_line()]
    return "\n".join(lines) + "\n"


def to_gate_json(result: GateResult) -> str:
    from harness.report.common import json_text

    return json_text(result.to_json(), allow_nan=False)


def to_gate_markdown(result: GateResult) -> str:
    """The gate's cases, a table of modules, then each failed module's own Markdown section (for
    a step summary)."""
    from harness.report.common import md_cell
    from harness.report.markdown import to_markdown

    verdict = "PASS" if result.verdict == "pass" else "FAIL"
    lines = [f"## {result.milestone}: {verdict}", "", md_cell(result.title), "",
             f"workspace {md_cell(str(result.workspace))}" + (", reference dependencies" if result.ref_deps
                                                  else ""), "",
             md_cell(result.cases_line()), "",
             "| module | status | passed | failed | time | note |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for m in result.modules:
        passed, failed = (str(m.run.passed), str(m.run.failed)) if m.run else ("", "")
        lines.append(f"| {m.module} | {m.status.upper()} | {passed} | {failed} | "
                     f"{m.duration_s:.1f} s | {md_cell(m.message)} |")
    lines += ["", result.summary_line()]
    for m in result.modules:
        if m.status == "fail" and m.run is not None:
            lines += ["", to_markdown(m.run).rstrip("\n")]
    return "\n".join(lines) + "\n"


def to_gate_junit(result: GateResult) -> str:
    """One ``<testsuite>`` per module, in gate order; blocked tests are ``<skipped>``, a module
    that could not run is one ``<error>``. Every suite names the gate's cases (``seed``) and the
    command that replays the gate (``gate_replay``); a suite that ran also has its check's own
    ``replay``."""
    from harness.report.common import seed_text
    from harness.report.junit import to_junit, xml_text

    suites = []
    for m in result.modules:
        if m.run is not None:
            suite = ET.fromstring(to_junit([m.run]).split("\n", 1)[1])[0]
            props = suite.find("properties")
        else:
            suite = _suite_without_run(m)
            props = suite.find("properties")
            ET.SubElement(props, "property", {"name": "seed", "value": seed_text(result.seed)})
        ET.SubElement(props, "property", {"name": "gate_replay", "value": xml_text(result.replay)})
        suites.append(suite)
    root = ET.Element("testsuites", {
        "name": f"ol gate {result.milestone}",
        "tests": str(sum(int(s.get("tests")) for s in suites)),
        "failures": str(sum(int(s.get("failures")) for s in suites)),
        "errors": str(sum(int(s.get("errors")) for s in suites)),
        "time": f"{result.duration_s:.3f}",
    })
    root.extend(suites)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite_without_run(m: ModuleGate) -> ET.Element:
    from harness.catalogs.metadata import collect
    from harness.report.junit import xml_text

    blocked = m.status == "blocked"
    names = ["check"]
    if blocked and catalog_problem(load_course().module(m.module)) is None:
        names = [info.name for info, _ in collect(load_course().module(m.module))]
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


# -- the command -----------------------------------------------------------------------------------

def _out(text: str = "") -> None:
    print(text, flush=True)


def cmd_gate(args: argparse.Namespace) -> int:
    from harness.commands import _check_report_paths, run_seed
    from harness.report.common import cases_line
    from harness.report.escape import printable
    from harness.report.io import default_reports_dir, write_atomic
    from harness.engine.workspace import resolve_workspace

    course = load_course()
    course.milestone(args.milestone)  # an unknown milestone is a usage error, before anything runs
    markdown = getattr(args, "markdown", None) or str(default_reports_dir() / f"gate-{args.milestone}.md")
    ws = resolve_workspace(args.workspace)
    _check_report_paths([("--json", args.json), ("--junit", args.junit), ("--markdown", markdown)],
                        ws.root)
    seed = run_seed(args, fresh=True)  # one seed for every module of this gate
    _out(f"ol gate {args.milestone}: workspace {ws.root}"
         + (" with the reference dependencies" if args.ref_deps else ""))
    _out(printable(cases_line(seed, gate_replay(args.milestone, str(ws.root), bool(args.ref_deps),
                                                seed))))
    width = max(len(m) for m in course.milestone(args.milestone))
    result = run_gate(args.milestone, ws, args.ref_deps, None, lambda m: _out(m.line(width)),
                      seed=seed)
    sys.stdout.write(format_failures(result))
    for path, render in ((args.json, to_gate_json), (args.junit, to_gate_junit),
                         (markdown, to_gate_markdown)):
        if path:
            write_atomic(Path(path), render(result))
            _out(f"wrote {path}")
    _append_step_summary(to_gate_markdown(result))
    return EXIT_PASS if result.verdict == "pass" else EXIT_FAIL


def _append_step_summary(text: str) -> None:
    """GitHub Actions shows ``$GITHUB_STEP_SUMMARY`` on the run's page; it is appended to."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:  # never blocks on a FIFO, never writes through a link or into a device
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
        with open(fd, "a", encoding="utf-8", errors="backslashreplace") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "not a regular file")
            fh.write(text)
    except OSError as exc:
        print(f"ol: could not append to $GITHUB_STEP_SUMMARY ({path}): {exc.strerror}",
              file=sys.stderr)
