"""The course description (``course.toml``) as typed objects (the project's fixed paths are in
``harness.paths``)."""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.paths import PACKAGE_DIR


@dataclass(frozen=True)
class Module:
    """One course module: the file a student writes, its functions and what it needs."""

    id: str
    title: str
    file: str  # relative to a workspace's python/ directory
    contract: str  # relative to reference/
    catalog: str  # package name under harness/catalogs/
    needs: tuple[str, ...]
    rung: str
    functions: tuple[str, ...]
    pitfalls: dict[int, str]
    chapter_pitfalls: int = 0  # pitfalls 1..N are the chapter's section 5 table; the rest are ol's
    violation_pitfalls: dict[str, int] = field(default_factory=dict)  # "mutated"/"aliased" -> N
    points: dict[str, float] = field(default_factory=dict)  # test -> points; a test not named: 1
    sections: dict[int, str] = field(default_factory=dict)  # pitfall -> the chapter's section

    @property
    def import_name(self) -> str:
        """The dotted module name, e.g. ``tinyllm.prob.rejection``."""
        return self.file.removesuffix(".py").replace("/", ".")

    @property
    def catalog_module(self) -> str:
        return f"harness.catalogs.{self.catalog}.test_catalog"

    def pitfall_text(self, number: int | None) -> str:
        if number is None:
            return ""
        return self.pitfalls.get(number, f"pitfall {number}")

    def section_of(self, number: int | None) -> str:
        """The chapter's section a pitfall belongs to (``[pitfall_sections]``; the chapter's
        own pitfalls are also in its section 5 table); empty when course.toml names none."""
        if number is None:
            return ""
        section = self.sections.get(number, "")
        if self.is_chapter_pitfall(number):
            return f"{section}; 5 Pitfalls" if section else "5 Pitfalls"
        return section

    def points_of(self, test: str) -> float:
        """What passing catalog test ``test`` is worth in a score (``[points.MODULE]`` of
        course.toml; a test it does not name is worth 1)."""
        return self.points.get(test, 1.0)

    def is_chapter_pitfall(self, number: int) -> bool:
        return 1 <= number <= self.chapter_pitfalls

    def pitfall_label(self, number: int | None) -> str:
        """``pitfall 3`` for the chapter's own table (section 5), ``ol pitfall 9`` for ol's."""
        if number is None:
            return ""
        return f"pitfall {number}" if self.is_chapter_pitfall(number) else f"ol pitfall {number}"


@dataclass(frozen=True)
class Course:
    modules: dict[str, Module]
    milestones: dict[str, tuple[str, ...]]
    milestone_titles: dict[str, str]
    returns: dict[str, str]

    def module(self, module_id: str) -> Module:
        try:
            return self.modules[module_id]
        except KeyError:
            known = ", ".join(sorted(self.modules))
            raise HarnessError(f"unknown module '{module_id}'", f"known modules: {known}") from None

    def milestone(self, name: str) -> tuple[str, ...]:
        try:
            return self.milestones[name]
        except KeyError:
            known = ", ".join(sorted(self.milestones))
            raise HarnessError(f"unknown milestone '{name}'", f"known milestones: {known}") from None

    def needs_of(self, module: Module) -> tuple[str, ...]:
        """Every module ``module`` needs, directly or not; direct needs first."""
        seen: list[str] = []
        queue = list(module.needs)
        while queue:
            dep = queue.pop(0)
            if dep not in seen:
                seen.append(dep)
                queue.extend(self.module(dep).needs)
        return tuple(seen)

    def dependency_order(self, module_ids: tuple[str, ...]) -> list[str]:
        """``module_ids`` with every module after the modules it needs."""
        order: list[str] = []

        def visit(mid: str) -> None:
            if mid in order:
                return
            for dep in self.module(mid).needs:
                visit(dep)
            order.append(mid)

        for mid in module_ids:
            visit(mid)
        return [m for m in order if m in module_ids]


@functools.cache
def load_course(path: Path = PACKAGE_DIR / "course.toml") -> Course:
    """Parse ``course.toml`` once per process."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    pitfalls = data.get("pitfalls", {})
    modules = {
        mid: Module(
            id=mid,
            title=m["title"],
            file=m["file"],
            contract=m["contract"],
            catalog=m["catalog"],
            needs=tuple(m.get("needs", ())),
            rung=m.get("rung", "R0"),
            functions=tuple(m["functions"]),
            pitfalls={int(k): v for k, v in pitfalls.get(mid, {}).items()},
            chapter_pitfalls=int(data.get("chapter_pitfalls", {}).get(mid, 0)),
            violation_pitfalls={k: int(v) for k, v in
                                data.get("violation_pitfalls", {}).get(mid, {}).items()},
            points=_points(mid, data.get("points", {}).get(mid, {})),
            sections={int(k): str(v) for k, v in
                      data.get("pitfall_sections", {}).get(mid, {}).items()},
        )
        for mid, m in data["modules"].items()
    }
    milestones = {k: tuple(v["modules"]) for k, v in data.get("milestones", {}).items()}
    titles = {k: v.get("title", k) for k, v in data.get("milestones", {}).items()}
    return Course(modules, milestones, titles, dict(data.get("returns", {})))


def _points(module_id: str, table: dict[str, Any]) -> dict[str, float]:
    """``[points.MODULE]``: points per catalog test, each a finite number >= 0."""
    points = {}
    for test, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value >= 0):
            raise HarnessError(f"course.toml: [points.\"{module_id}\"] {test} = {value!r} is not "
                               "a number of points", "give each test a number >= 0")
        points[test] = float(value)
    return points
