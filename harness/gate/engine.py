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

import importlib
import time
from dataclasses import dataclass
from typing import Any

from harness.engine.course import Course, Module, load_course
from harness.engine.events import QUIET, Listener, Step
from harness.engine.requests import GateRequest
from harness.engine.results import RunResult, points_value, score_text
from harness.engine.serial import reading, rerun_command, tagged, untag
from harness.engine.workspace import Workspace, module_state
from harness.errors import HarnessError

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
    catalog_points: float = 0.0  # the module's catalog's points: its max_score when it did not run

    @property
    def score(self) -> float:
        """The points of the module's tests that passed; 0 when it did not run."""
        return self.run.score if self.run is not None else 0.0

    @property
    def max_score(self) -> float:
        return self.run.max_score if self.run is not None else self.catalog_points

    def line(self, width: int = 6) -> str:
        """``  M07.6  blocked  by M07.1 (it did not pass)``: the module's summary line."""
        from harness.escape import printable

        head = f"  {self.module:<{width}}  {self.status:<7}"
        if self.run is not None:
            score = score_text(self.score, self.max_score)
            return (f"{head}  {self.run.passed:>3} passed, {self.run.failed:>3} failed"
                    f"  score {score:>5}  {self.duration_s:6.1f} s")
        return f"{head}  {printable(self.message)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "title": self.title,
            "status": self.status,
            "passed": self.run.passed if self.run else 0,
            "failed": self.run.failed if self.run else 0,
            "score": points_value(self.score),
            "max_score": points_value(self.max_score),
            "duration_s": self.duration_s,
            "blocked_by": list(self.blocked_by),
            "message": self.message,
            "run": self.run.to_json() if self.run else None,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str | None = None) -> ModuleGate:
        run = RunResult.from_json(d["run"], source) if d.get("run") is not None else None
        return cls(d["module"], d["title"], d["status"], run, d.get("message", ""),
                   tuple(d.get("blocked_by", ())), float(d.get("duration_s", 0.0)),
                   float(d.get("max_score", 0.0)) if run is None else 0.0)


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

    def count(self, status: str) -> int:
        return sum(m.status == status for m in self.modules)

    def unconfined(self) -> list[str]:
        """What of the sandbox any module's worker lacked (docs/isolation.md), in short words."""
        return sorted({word for m in self.modules if m.run is not None
                       for word in m.run.unconfined()})

    def summary_line(self) -> str:
        """``MS-P6: 2 pass, 1 fail, 0 error, 0 blocked, score 40/48 (verdict: fail)``."""
        counts = ", ".join(f"{self.count(s)} {s}" for s in STATUSES)
        score = sum(m.score for m in self.modules)
        top = sum(m.max_score for m in self.modules)
        return f"{self.milestone}: {counts}, score {score_text(score, top)} (verdict: {self.verdict})"

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
            "score": points_value(sum(m.score for m in self.modules)),
            "max_score": points_value(sum(m.max_score for m in self.modules)),
            "duration_s": self.duration_s,
            "modules": [m.to_json() for m in self.modules],
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None) -> GateResult:
        """The gate ``to_json`` wrote; ``source`` names where ``d`` came from, for the message."""
        rerun = rerun_command(d, "milestone", "ol gate {}", "ol gate MILESTONE")
        untag(d, "GateResult", (FORMAT_VERSION,), source, rerun)
        with reading("GateResult", source, rerun):
            return cls(d["milestone"], d["title"], d["workspace"], bool(d["ref_deps"]),
                       tuple(ModuleGate.from_json(m, source) for m in d["modules"]),
                       float(d.get("duration_s", 0.0)), d.get("seed"))


def gate_replay(milestone: str, workspace: str, ref_deps: bool, seed: int | None) -> str:
    """``ol gate MS-P6 --workspace WS [--ref-deps] --seed N``: the same gate on the same cases
    (``--seed public`` too: the gate's default is a fresh seed)."""
    from harness.engine.seeding import replay_command

    return replay_command("gate", milestone, seed, "--workspace", workspace,
                          *(("--ref-deps",) if ref_deps else ()))


@dataclass(frozen=True)
class GateStart:
    """What a gate resolved before any module runs: the request as it runs (its seed drawn:
    a run seed, or None for the public cases) and the workspace."""

    request: GateRequest
    workspace: Workspace

    @property
    def seed(self) -> int | None:
        """The run seed of every module's cases; None: the public cases."""
        assert not self.request.seed.fresh, "a gate starts on a drawn seed"
        return self.request.seed.number

    @property
    def replay(self) -> str:
        """The ``ol gate`` that runs the same gate on the same cases."""
        return gate_replay(self.request.milestone, str(self.workspace.root),
                           self.request.ref_deps, self.seed)


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


_WHY = {"fail": "failed its check", "error": "could not be checked", "blocked": "is blocked"}


def _blockers(module: Module, course: Course, ws: Workspace, done: dict[str, ModuleGate],
              ref_deps: bool) -> tuple[tuple[str, ...], str]:
    """The dependencies that block ``module`` and why (``by M07.1 (failed its check)``)."""
    if ref_deps:
        return (), ""
    blockers, reasons = [], []
    for dep_id in course.needs_of(module):
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


def catalog_total(module: Module) -> float:
    """The points of ``module``'s whole catalog (0 when it has none)."""
    from harness.engine.runner import catalog_points

    if catalog_problem(module) is not None:
        return 0.0
    return float(sum(catalog_points(module).values()))


def check_one(module: Module, ws: Workspace, ref_deps: bool, seed: int | None = None) -> ModuleGate:
    """One module's check, as ``ol check --seed`` runs it (the default limits); a setup error is
    the module's ``error``."""
    from harness.check.engine import CheckRequest, run_check

    start = time.perf_counter()
    problem = catalog_problem(module)
    if problem is not None:
        return ModuleGate(module.id, module.title, "error", message=problem)
    from harness.engine.seeding import Seed

    request = CheckRequest(module.id, str(ws.root), "student", ref_deps, None, None, seed=Seed(seed))
    try:
        run = run_check(request, ws)
    except HarnessError as exc:
        return ModuleGate(module.id, module.title, "error", message=exc.message,
                          duration_s=time.perf_counter() - start,
                          catalog_points=catalog_total(module))
    return ModuleGate(module.id, module.title, run.verdict, run,
                      duration_s=time.perf_counter() - start)


def gate(request: GateRequest, listener: Listener | None = None) -> GateResult:
    """The gate as ``ol gate`` runs it: the workspace resolved and the seed drawn once, told to
    ``listener.started`` as a ``GateStart`` (raising there stops the gate), then every module
    (``run_gate``), each a ``step`` with its ``ModuleGate``."""
    import dataclasses

    from harness.engine.seeding import Seed
    from harness.engine.workspace import resolve_workspace

    ws = resolve_workspace(request.workspace)
    request = dataclasses.replace(request, seed=Seed(request.seed.drawn()))  # once, for all
    listener = listener or QUIET
    listener.started(GateStart(request, ws))
    result = run_gate(request, ws, listener)
    listener.finished()
    return result


def run_gate(request: GateRequest, ws: Workspace,
             listener: Listener | None = None) -> GateResult:
    """Every module of the request's milestone in dependency order, each on the cases of its
    seed (drawn now if it is ``FRESH``; None: the public cases); blocked ones are not run."""
    milestone, ref_deps, seed = request.milestone, request.ref_deps, request.seed.drawn()
    course = load_course()
    start = time.perf_counter()
    done: dict[str, ModuleGate] = {}
    order = course.dependency_order(course.milestone(milestone))
    for module_id in order:
        module = course.module(module_id)
        blockers, reason = _blockers(module, course, ws, done, ref_deps)
        if blockers:
            outcome = ModuleGate(module.id, module.title, "blocked", message=reason,
                                 blocked_by=blockers, catalog_points=catalog_total(module))
        else:
            outcome = check_one(module, ws, ref_deps, seed)
        done[module_id] = outcome
        if listener is not None:
            listener.step(Step(len(done), len(order), module_id, outcome))
    title = course.milestone_titles.get(milestone, milestone)
    return GateResult(milestone, title, str(ws.root), ref_deps, tuple(done.values()),
                      time.perf_counter() - start, seed)
