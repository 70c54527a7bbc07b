"""The report registry (``harness.report.formats``) and the one writer (``harness.commands.reports``):
every format names a renderer that exists, the CLI's report flags are the registry's, and the
writer renders every document before it writes one, then writes each atomically."""

from __future__ import annotations

import importlib
import json

import pytest

import harness.report.common as report_common
from harness import files
from harness.cli import build_parser
from harness.commands.reports import write_files, write_folder
from harness.errors import HarnessError
from harness.report.formats import FORMATS, Format, file_formats, folder_formats, format_named


def test_every_format_names_a_renderer_that_exists():
    for type_name, known in FORMATS.items():
        names = [f.name for f in known]
        assert len(names) == len(set(names)), type_name
        for fmt in known:
            module, _, function = fmt.renderer.partition(":")
            renderer = getattr(importlib.import_module(f"harness.report.{module}"), function)
            assert callable(renderer), (type_name, fmt.name)
            assert bool(fmt.file) != bool(fmt.help), (type_name, fmt.name)  # a flag or a file
            assert not fmt.needs or fmt.missing, (type_name, fmt.name)


def _file_options(command: str) -> dict[str, str | None]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return {action.option_strings[0]: action.help
            for action in sub.choices[command]._actions  # type: ignore[union-attr]
            if action.metavar == "FILE"}


@pytest.mark.parametrize(("command", "result_type"), [
    ("check", "RunResult"), ("gate", "GateResult"), ("tests", "MineResult")])
def test_the_cli_report_flags_are_the_registrys(command, result_type):
    assert _file_options(command) == {f.flag: f.help for f in file_formats(result_type)}


def test_the_check_help_names_the_registrys_flags():
    from harness.cli import CHECK_EXIT_CODES

    flags = ", ".join(f.flag for f in file_formats("RunResult"))
    assert f"every report asked for ({flags}) still says so" in CHECK_EXIT_CODES


def test_folder_formats_have_distinct_file_names():
    for type_name in FORMATS:
        names = [f.file for f in folder_formats(type_name)]
        assert len(names) == len(set(names)), type_name


@pytest.fixture
def plain(monkeypatch):
    """A result type of the test's own, ``Named``, with a file format and two folder formats."""
    monkeypatch.setitem(FORMATS, "Named", (
        Format("json", "common:json_text", help="also write json"),
        Format("data", "common:json_text", file="data-{module}.json"),
        Format("text", "common:md_cell", file="{module}.txt"),
    ))


class Named(dict):
    module = "M0"


def test_write_files_writes_what_was_asked_and_nothing_else(plain, tmp_path):
    paths = write_files(Named(a=1), {"json": tmp_path / "r.json"})
    assert paths == [tmp_path / "r.json"]
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) == {"a": 1}
    assert write_files(Named(a=1), {"json": None}) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_write_folder_writes_each_format_under_its_name_in_order(monkeypatch, tmp_path):
    monkeypatch.setitem(FORMATS, "Named", (
        Format("data", "common:json_text", file="data-{module}.json"),
        Format("more", "common:json_text", file="more-{module}.json"),
    ))
    written = write_folder(Named(a=1), tmp_path / "out")
    assert written.paths == [tmp_path / "out" / "data-M0.json", tmp_path / "out" / "more-M0.json"]
    assert written.notes == []
    assert all(json.loads(p.read_text(encoding="utf-8")) == {"a": 1} for p in written.paths)


def test_write_folder_defaults_to_the_reports_dir(monkeypatch, tmp_path):
    monkeypatch.setitem(FORMATS, "Named", (Format("data", "common:json_text", file="d.json"),))
    monkeypatch.setattr(files, "default_reports_dir", lambda: tmp_path / "reports")
    assert write_folder(Named(), None).paths == [tmp_path / "reports" / "d.json"]


def test_a_renderer_that_returns_several_files_writes_each_under_the_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(report_common, "several_for_test",
                        lambda result: {"sub/a.json": "1\n", "sub/b.json": "2\n"}, raising=False)
    monkeypatch.setitem(FORMATS, "Named", (Format("many", "common:several_for_test", file="sub/"),))
    written = write_folder(Named(), tmp_path)
    assert written.paths == [tmp_path / "sub" / "a.json", tmp_path / "sub" / "b.json"]


def test_a_failing_renderer_leaves_no_report_of_the_run(monkeypatch, tmp_path):
    def broken(result):
        raise RuntimeError("a reporter's bug")

    monkeypatch.setattr(report_common, "broken_for_test", broken, raising=False)
    monkeypatch.setitem(FORMATS, "Named", (
        Format("first", "common:json_text", file="first.json"),
        Format("second", "common:broken_for_test", file="second.json"),
    ))
    with pytest.raises(RuntimeError):
        write_folder(Named(), tmp_path / "out")
    assert not (tmp_path / "out").exists()  # the first was rendered, never written
    monkeypatch.setitem(FORMATS, "Named", (
        Format("json", "common:json_text", help="x"),
        Format("junit", "common:broken_for_test", help="y")))
    with pytest.raises(RuntimeError):
        write_files(Named(), {"json": tmp_path / "a.json", "junit": tmp_path / "b.xml"})
    assert not (tmp_path / "a.json").exists()


def test_a_format_whose_package_is_missing_is_left_out_with_its_note(monkeypatch, tmp_path):
    def no_plot(result):
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(report_common, "no_plot_for_test", no_plot, raising=False)
    monkeypatch.setitem(FORMATS, "Named", (
        Format("json", "common:json_text", file="a.json"),
        Format("png", "common:no_plot_for_test", file="a.png", needs="matplotlib",
               missing="no PNG: matplotlib is not installed"),
    ))
    written = write_folder(Named(), tmp_path)
    assert written.paths == [tmp_path / "a.json"]
    assert written.notes == ["no PNG: matplotlib is not installed"]
    # An ImportError of a format that needs nothing is a bug, not a note.
    monkeypatch.setitem(FORMATS, "Named", (Format("png", "common:no_plot_for_test", file="a.png"),))
    with pytest.raises(ImportError):
        write_folder(Named(), tmp_path)


def test_writing_into_a_file_is_one_line(plain, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(HarnessError) as info:
        write_folder(Named(), blocker)
    assert info.value.message.startswith(f"cannot write {blocker / 'data-M0.json'}: ")
    assert info.value.hint == "choose a writable path"


def test_a_file_format_renders_one_document(monkeypatch, tmp_path):
    monkeypatch.setattr(report_common, "several_for_test", lambda result: {"a": "1"}, raising=False)
    monkeypatch.setitem(FORMATS, "Named", (Format("json", "common:several_for_test", help="x"),))
    with pytest.raises(TypeError):
        write_files(Named(), {"json": tmp_path / "a.json"})


def test_format_named_and_an_unknown_format(plain):
    assert format_named("RunResult", "junit").renderer == "junit:run_junit"
    with pytest.raises(KeyError):
        format_named("RunResult", "html5")
    assert [f.name for f in file_formats("Named")] == ["json"]
    assert [f.name for f in folder_formats("Named")] == ["data", "text"]
