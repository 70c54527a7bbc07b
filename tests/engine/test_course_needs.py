"""``Course.needs_of``: every module a module needs, direct needs first, each once (the one
home of what ``ol start`` and ``ol gate`` both ask)."""

from __future__ import annotations

import dataclasses

from harness.engine.course import Course, load_course


def course_of(needs: dict[str, tuple[str, ...]]) -> Course:
    template = load_course().module("M06.3")
    modules = {mid: dataclasses.replace(template, id=mid, needs=deps) for mid, deps in needs.items()}
    return Course(modules, {}, {}, {})


def test_needs_are_transitive_direct_first_and_each_once():
    course = course_of({"A": ("B", "C"), "B": ("D",), "C": ("D", "E"), "D": (), "E": ("D",)})
    assert course.needs_of(course.module("A")) == ("B", "C", "D", "E")
    assert course.needs_of(course.module("E")) == ("D",)
    assert course.needs_of(course.module("D")) == ()


def test_the_course_s_own_needs():
    course = load_course()
    assert course.needs_of(course.module("M07.6")) == ("M07.1", "M06.3")
    assert course.needs_of(course.module("M06.3")) == ()
