"""The lab reports: JSON fields, the Stryker report against its published schema, Markdown, HTML
(rendered in headless Chromium), and the terminal summary.

Most tests use a small LabResult built by hand from real mutants of M07.6 and fake runs, so they
take milliseconds; one slow test runs the real lab once and checks every report it writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft7Validator

from harness import files as report_io
from harness.commands.quotes import quotes_of
from harness.commands.reports import write_folder
from harness.engine.mutants import apply, load_mutants
from harness.engine.results import Kind, Outcome, RunResult, TestResult
from harness.lab.engine import LabResult, MutantRow
from harness.paths import REFERENCE_PYTHON
from harness.report.lab import (
    DESIGNATED,
    KILLED,
    MISSED,
    NOT_RUN,
    SURVIVED,
    cell_state,
    lab_summary,
    to_lab_markdown,
    to_stryker,
)
from harness.report.lab_html import COLORS, to_lab_html

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "mutation-testing-report-schema.json"
MODULE = "M07.6"
SOURCE_KEY = "reference/python/tinyllm/prob/rejection.py"

HAND = "test_hand_example"
STRICT = "test_accept_is_strict"
RATE = "test_acceptance_rate_matches_acceptance_probability"
NO_RESAMPLE = "test_speculative_accepts_without_resampling"
BAD_DRAFTS = "test_speculative_rejects_bad_drafts"
TESTS = (HAND, STRICT, RATE, NO_RESAMPLE, BAD_DRAFTS)

# Which tests fail on which mutant in the hand-built lab: s01 is killed by its designated test,
# s10 only by another one, x07 by its designated test, x14 by nothing. s10 and x07 have two edits.
KILLS = {"s01": {STRICT, HAND}, "s10": {HAND}, "x07": {BAD_DRAFTS}, "x14": set()}
HAND_NOTE = "the chapter's worked example: a smoke test, every mutant it kills has a sharper test"


def _run(target: str, failing: set[str]) -> RunResult:
    tests = tuple(
        TestResult(name, Kind.UNIT, Outcome.FAILED if name in failing else Outcome.PASSED, 0.01,
                   f"{name} failed on {target}: got 1 < 2 | expected <b>&amp;</b>"
                   if name in failing else "")
        for name in TESTS)
    return RunResult(MODULE, "/work/main/reference", target, tests, 0.05)


def make_lab(kills: dict[str, set[str]] = KILLS, notes: dict[str, str] | None = None) -> LabResult:
    """A LabResult over real M07.6 mutants, with the given tests failing on each."""
    mutants = {m.id: m for m in load_mutants(MODULE)}
    rows = tuple(MutantRow(mutants[mid], _run(f"mutant {mid}", failing))
                 for mid, failing in kills.items())
    return LabResult(MODULE, _run("reference", set()), rows, TESTS, 12.345, 2,
                     {HAND: HAND_NOTE} if notes is None else notes)


@pytest.fixture
def lab() -> LabResult:
    return make_lab()


@pytest.fixture
def written(lab: LabResult, tmp_path: Path) -> dict[str, Path]:
    return {p.name: p for p in write_folder(lab, tmp_path).paths}


def validate_stryker(report: dict) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(report)]


# -- files ------------------------------------------------------------------------------------

def test_write_folder_of_a_lab_writes_the_four_files_and_returns_their_paths(lab, tmp_path):
    paths = write_folder(lab, tmp_path / "out").paths
    assert [p.name for p in paths] == [
        "lab-M07.6.json", "mutation-report-M07.6.json", "lab-M07.6.md", "lab-M07.6.html"]
    assert all(p.parent == tmp_path / "out" and p.stat().st_size > 0 for p in paths)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths)


def test_write_folder_of_a_lab_defaults_to_the_reports_dir(lab, tmp_path, monkeypatch):
    monkeypatch.setattr(report_io, "default_reports_dir", lambda: tmp_path / "reports")
    paths = write_folder(lab, None).paths
    assert {p.parent for p in paths} == {tmp_path / "reports"}


def test_lab_json_keeps_the_documented_fields(written):
    data = json.loads(written["lab-M07.6.json"].read_text(encoding="utf-8"))
    assert data["module"] == MODULE and data["reference_passed"] is True
    by_id = {m["id"]: m for m in data["mutants"]}
    assert set(by_id) == set(KILLS)
    for mid, failing in KILLS.items():
        m = by_id[mid]
        assert {"pitfall", "description", "designated"} <= set(m)
        assert m["killed"] is bool(failing) and set(m["killed_by"]) == failing
    assert {t["name"]: set(t["kills"]) for t in data["tests"]} == {
        HAND: {"s01", "s10"}, STRICT: {"s01"}, RATE: set(), NO_RESAMPLE: set(), BAD_DRAFTS: {"x07"}}


# -- Stryker ------------------------------------------------------------------------------------

def test_stryker_report_is_valid_against_the_published_schema(written):
    report = json.loads(written["mutation-report-M07.6.json"].read_text(encoding="utf-8"))
    assert validate_stryker(report) == []
    assert report["schemaVersion"] == "2" and report["framework"]["name"] == "ol"


def test_the_schema_check_rejects_a_broken_report(lab):
    """The validation above can fail: a status outside the schema's enum is reported."""
    report = to_stryker(lab, quotes_of(lab))
    report["files"][SOURCE_KEY]["mutants"][0]["status"] = "Dead"
    assert any("Dead" in e for e in validate_stryker(report))


def test_stryker_file_entry_holds_the_reference_source(lab):
    entry = to_stryker(lab, quotes_of(lab))["files"][SOURCE_KEY]
    assert entry["language"] == "python"
    assert entry["source"] == (REFERENCE_PYTHON / "tinyllm/prob/rejection.py").read_text("utf-8")


def _offset(source: str, pos: dict) -> int:
    lines = source.splitlines(keepends=True)
    return sum(map(len, lines[:pos["line"] - 1])) + pos["column"] - 1


def test_stryker_locations_and_replacements_rebuild_each_mutant(lab):
    entry = to_stryker(lab, quotes_of(lab))["files"][SOURCE_KEY]
    source = entry["source"]
    mutants = {row.mutant.id: row.mutant for row in lab.rows}
    for m in entry["mutants"]:
        start, end = _offset(source, m["location"]["start"]), _offset(source, m["location"]["end"])
        rebuilt = source[:start] + m["replacement"] + source[end:]
        assert rebuilt == apply(mutants[m["id"]], source), m["id"]
        mutant = mutants[m["id"]]
        if len(mutant.edits) == 1:  # one edit: the location is exactly its find text
            assert source[start:end] == mutant.edits[0].find
            assert m["replacement"] == mutant.edits[0].replace
        else:
            assert all(e.find in source[start:end] for e in mutant.edits), m["id"]


def test_s01_location_is_the_strict_comparison():
    """Columns and lines are 1-based, the end exclusive, as the schema says."""
    lab = make_lab({"s01": {STRICT}})
    m = to_stryker(lab, quotes_of(lab))["files"][SOURCE_KEY]["mutants"][0]
    source = (REFERENCE_PYTHON / "tinyllm/prob/rejection.py").read_text("utf-8")
    line = source.splitlines()[m["location"]["start"]["line"] - 1]
    col = m["location"]["start"]["column"]
    assert line[col - 1:].startswith("return u < p_x / q_x")
    assert m["location"]["end"] == {"line": m["location"]["start"]["line"],
                                    "column": col + len("return u < p_x / q_x")}


def test_stryker_statuses_and_killed_by_resolve_to_catalog_tests(lab):
    report = to_stryker(lab, quotes_of(lab))
    by_id = {m["id"]: m for m in report["files"][SOURCE_KEY]["mutants"]}
    assert {mid: m["status"] for mid, m in by_id.items()} == {
        "s01": "Killed", "s10": "Killed", "x07": "Killed", "x14": "Survived"}
    assert by_id["s01"]["killedBy"] == [STRICT, HAND]  # the designated test first
    assert by_id["x14"]["killedBy"] == [] and by_id["x14"]["coveredBy"] == list(TESTS)
    assert all(m["static"] is False and m["mutatorName"].startswith("pitfall ")
               for m in by_id.values())
    test_ids = {t["id"] for f in report["testFiles"].values() for t in f["tests"]}
    assert test_ids == set(TESTS)
    assert {t for m in by_id.values() for t in m["killedBy"] + m["coveredBy"]} <= test_ids
    catalog = report["testFiles"]["harness/catalogs/m07_6/test_catalog.py"]
    strict = next(t for t in catalog["tests"] if t["id"] == STRICT)
    line = catalog["source"].splitlines()[strict["location"]["start"]["line"] - 1:][:4]
    assert any(f"def {STRICT}(" in text for text in line)


# -- Markdown -----------------------------------------------------------------------------------

def _md_matrix(text: str) -> dict[str, list[str]]:
    """The kill matrix's rows: mutant id -> the cells under the numbered test columns."""
    rows = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\| `([sx]\d+)` \| \d+ \| (.*) \| [^|]* \|", line)
        if match:
            rows[match.group(1)] = [c.strip() for c in match.group(2).split(" | ")]
    return rows


def test_markdown_matrix_marks_designated_cells(lab):
    rows = _md_matrix(to_lab_markdown(lab))
    #             HAND     STRICT   RATE     NO_RESAMPLE BAD_DRAFTS
    assert rows == {
        "s01": ["x", "**X**", "", "", ""],
        "s10": ["x", "", "**!**", "", ""],
        "x07": ["", "", "", "", "**X**"],
        "x14": ["", "", "", "**!**", ""],
    }


def test_markdown_gives_verdict_counts_problems_strength_subset_and_notes(lab):
    text = to_lab_markdown(lab)
    assert text.startswith("### Lab M07.6: FAIL\n")
    assert "4 mutants, 3 killed, 2 by their designated tests" in text
    assert f"- `x14` not killed (designated: {NO_RESAMPLE})" in text
    assert f"- `s10` not killed by its designated {RATE} (killed by {HAND})" in text
    assert f"| 1 | `{HAND}` | 2 | 1 |  | yes |" in text  # kills s01, s10; unique s10
    assert f"| 2 | `{STRICT}` | 1 | 0 | s01 |  |" in text
    assert f"2 of 5 tests kill every mutant the catalog kills: `{HAND}`, `{BAD_DRAFTS}`." in text
    assert f"- `{HAND}` is nobody's designated killer: {HAND_NOTE}" in text


def test_markdown_note_asks_for_a_reason_when_none_is_recorded():
    text = to_lab_markdown(make_lab(notes={}))
    assert f"- `{HAND}` is nobody's designated killer: no reason recorded " \
           "(add one to mutants/M07.6/notes.json)" in text


# -- HTML ---------------------------------------------------------------------------------------

class _Page(HTMLParser):
    """The matrix cells, the row headers' titles and every tag name of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: dict[tuple[str, str], set[str]] = {}
        self.row_titles: dict[str, str] = {}
        self.test_headers: list[str] = []
        self._mutant = ""
        self._in_test_header = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        classes = set((a.get("class") or "").split())
        if tag == "tr" and "data-mutant" in a:
            self._mutant = a["data-mutant"]
        elif tag == "th" and "mutant" in classes:
            self.row_titles[self._mutant] = a.get("title", "")
        elif tag == "td" and "cell" in classes and self._mutant:
            self.cells[(self._mutant, a["data-test"])] = classes - {"cell"}
        self._in_test_header = tag in ("th", "div") and ("test" in classes or self._in_test_header)

    def handle_data(self, data):
        if self._in_test_header and data.strip():
            self.test_headers.append(data.strip())
            self._in_test_header = False


def test_html_is_one_self_contained_page(lab):
    text = to_lab_html(lab, quotes_of(lab))
    assert text.startswith("<!DOCTYPE html>")
    page = _Page()
    page.feed(text)
    assert not {"script", "link", "img", "iframe", "object"} & set(page.tags)
    assert not re.search(r"\b(src|href)\s*=|url\(|@import|https?://", text)


def test_html_matrix_has_a_cell_per_mutant_and_test_with_its_state(lab):
    page = _Page()
    page.feed(to_lab_html(lab, quotes_of(lab)))
    assert page.test_headers[:len(TESTS)] == list(TESTS)
    expected = {(row.mutant.id, t): {cell_state(row, t)} for row in lab.rows for t in TESTS}
    assert page.cells == expected
    assert page.cells[("s10", RATE)] == {MISSED} and page.cells[("x14", NO_RESAMPLE)] == {MISSED}
    assert page.cells[("s01", STRICT)] == {DESIGNATED} and page.cells[("s01", HAND)] == {KILLED}


def test_html_row_titles_carry_description_and_pitfall(lab):
    page = _Page()
    page.feed(to_lab_html(lab, quotes_of(lab)))
    for row in lab.rows:
        title = page.row_titles[row.mutant.id]
        assert row.mutant.description in title
        assert f"pitfall {row.mutant.pitfall}: " in title


def test_html_escapes_what_it_shows():
    lab = make_lab({"s01": {STRICT}}, notes={HAND: "an <em>odd</em> & risky note"})
    text = to_lab_html(lab, quotes_of(lab))
    assert "an &lt;em&gt;odd&lt;/em&gt; &amp; risky note" in text and "<em>" not in text
    assert "got 1 &lt; 2" in text  # a failure message, in a cell's title


# -- HTML in headless Chromium --------------------------------------------------------------------

def chromium() -> str:
    """The Chromium binary; skipped outside CI when it is missing, a failure in CI."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed, and CI must render the lab HTML "
                    "(apt-get install -y chromium)")
    pytest.skip("chromium is not installed (apt-get install -y chromium); "
                "the HTML was not rendered (CI runs this check)")


def run_chromium(html_path: Path, tmp_path: Path, *mode: str, height: int = 1000) -> str:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}",
               f"--window-size=1400,{height}", *mode, html_path.resolve().as_uri()]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def png_pixels(path: Path) -> np.ndarray:
    """An 8-bit RGB or RGBA, non-interlaced PNG as an (height, width, channels) uint8 array.

    The header is read here; the pixels are decoded by Pillow (which matplotlib, a test
    dependency, requires): the same array as a decoder written out in Python (checked on these
    screenshots), in milliseconds instead of a second per screenshot."""
    from PIL import Image

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR", f"{path} does not start with its header"  # the first chunk
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unsupported PNG {(depth, color, interlace)}"
    with Image.open(path) as image:
        pixels = np.asarray(image)
    assert pixels.dtype == np.uint8 and pixels.shape == (height, width, 3 if color == 2 else 4)
    return pixels


def color_counts(pixels: np.ndarray) -> dict[tuple[int, int, int], int]:
    rgb = pixels[:, :, :3].reshape(-1, 3).astype(np.uint32)
    keys, counts = np.unique((rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2], return_counts=True)
    return {((k >> 16) & 255, (k >> 8) & 255, k & 255): int(n) for k, n in zip(keys, counts, strict=True)}


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def check_rendering(html_path: Path, tmp_path: Path, lab: LabResult, height: int) -> None:
    """Screenshot: a real, coloured picture; DOM: the matrix table with every cell."""
    shot = tmp_path / "lab.png"
    run_chromium(html_path, tmp_path, f"--screenshot={shot}", height=height)
    assert shot.is_file() and shot.stat().st_size > 20_000, "the screenshot is missing or blank"
    pixels = png_pixels(shot)
    assert pixels.shape[:2] == (height, 1400)
    colors = color_counts(pixels)
    assert len(colors) > 50, f"only {len(colors)} colours: the page looks blank"
    states = {cell_state(r, t) for r in lab.rows for t in lab.tests}
    for state in (KILLED, DESIGNATED, MISSED, SURVIVED, NOT_RUN):
        if state in states:  # a cell is 22 px square, less its outline
            assert colors.get(_rgb(COLORS[state]), 0) >= 150, f"no {state} cell is visible"
    dom = run_chromium(html_path, tmp_path, "--dump-dom", height=height)
    assert '<table class="matrix">' in dom
    assert len(re.findall(r'<td class="cell ', dom)) == len(lab.rows) * len(lab.tests)
    assert len(re.findall(r'<th class="test[^"]*" scope="col"', dom)) == len(lab.tests)


@pytest.mark.slow
def test_html_renders_in_headless_chromium(written, lab, tmp_path):
    check_rendering(written["lab-M07.6.html"], tmp_path, lab, height=1000)


# -- terminal summary -----------------------------------------------------------------------------

def test_lab_summary_names_what_went_wrong(lab):
    text = lab_summary(lab)
    lines = text.splitlines()
    assert lines[0] == "ol lab M07.6: FAIL (the reference passes its catalog)"
    assert lines[1] == "4 mutants, 3 killed, 2 by their designated tests"
    flat = " ".join(text.split())
    x14, s10 = (next(r.mutant for r in lab.rows if r.mutant.id == i) for i in ("x14", "s10"))
    assert f"x14 not killed (designated: {NO_RESAMPLE}): {x14.description}" in flat
    assert f"s10 not killed by its designated {RATE} (killed by {HAND}): {s10.description}" in flat
    assert f"minimal subset (2 of 5 tests): {HAND}, {BAD_DRAFTS}" in flat
    assert f"nobody's designated killer: {HAND}" in flat
    assert lines[-1] == "time 12.3 s with 2 jobs" and text.endswith("\n")
    assert max(map(len, lines)) <= 100


def test_lab_summary_of_a_clean_lab_has_no_problem_lines():
    lab = make_lab({"s01": {STRICT}, "x07": {BAD_DRAFTS, HAND}})
    lines = lab_summary(lab).splitlines()
    assert lines[0] == "ol lab M07.6: PASS (the reference passes its catalog)"
    assert lines[1] == "2 mutants, 2 killed, 2 by their designated tests"
    assert not any("not killed" in line for line in lines)


def test_lab_summary_stays_one_screen_when_everything_survives():
    lab = make_lab({m.id: set() for m in load_mutants(MODULE)})
    lines = lab_summary(lab).splitlines()
    assert len(lines) <= 40
    assert any(line.strip().startswith("... and ") and "lab-M07.6.md" in line for line in lines)


# -- the real lab, once ---------------------------------------------------------------------------

# ``real_lab`` is the session fixture of tests/conftest.py: one lab run for the whole suite.


@pytest.mark.slow
def test_real_lab_reports_validate_and_render(real_lab, tmp_path):
    paths = {p.name: p for p in write_folder(real_lab, tmp_path).paths}
    report = json.loads(paths["mutation-report-M07.6.json"].read_text(encoding="utf-8"))
    assert validate_stryker(report) == []
    assert len(report["files"][SOURCE_KEY]["mutants"]) == len(real_lab.rows)
    assert set(_md_matrix(paths["lab-M07.6.md"].read_text("utf-8"))) == {
        r.mutant.id for r in real_lab.rows}
    # Tall enough for every row of the matrix, so every kind of cell is on the screenshot.
    height = 700 + 24 * len(real_lab.rows)
    check_rendering(paths["lab-M07.6.html"], tmp_path, real_lab, height=height)


# -- not-run cells ----------------------------------------------------------------------------------
# Without --exhaustive the lab does not run a test that never reaches the mutated code: such a
# cell is ``not_run`` (its outcome is the reference's), shown as such, and never a kill.

def make_sparse_lab() -> LabResult:
    """s01 reached by every test but RATE and NO_RESAMPLE, x14 by none; kills as in KILLS."""
    mutants = {m.id: m for m in load_mutants(MODULE)}
    reached = {"s01": (HAND, STRICT, BAD_DRAFTS), "x14": ()}
    rows = []
    for mid, tests in reached.items():
        run = _run(f"mutant {mid}", KILLS[mid])
        run = RunResult(run.module, run.workspace, run.target,
                        tuple(t for t in run.tests if t.name in tests), run.duration_s)
        rows.append(MutantRow(mutants[mid], run, tuple(t for t in TESTS if t not in tests)))
    return LabResult(MODULE, _run("reference", set()), tuple(rows), TESTS, 1.5, 1)


def test_not_run_cells_are_their_own_state_and_no_kill():
    lab = make_sparse_lab()
    s01, x14 = lab.rows
    assert s01.killed_by == [HAND, STRICT] and not x14.killed
    assert [cell_state(s01, t) for t in TESTS] == [KILLED, DESIGNATED, NOT_RUN, NOT_RUN, SURVIVED]
    # A designated test that was not run did not kill its mutant: that is still a miss.
    assert cell_state(x14, NO_RESAMPLE) == MISSED and cell_state(x14, HAND) == NOT_RUN
    data = lab.to_json()
    assert data["mutants"][0]["outcomes"] == {HAND: "failed", STRICT: "failed", RATE: "not_run",
                                              NO_RESAMPLE: "not_run", BAD_DRAFTS: "passed"}
    assert data["mutants"][0]["not_run"] == [RATE, NO_RESAMPLE]
    assert LabResult.from_json(json.loads(json.dumps(data))) == lab


def test_markdown_marks_not_run_cells_and_says_what_the_mark_means():
    text = to_lab_markdown(make_sparse_lab())
    rows = _md_matrix(text)
    assert rows["s01"] == ["x", "**X**", "\u00b7", "\u00b7", ""]
    assert rows["x14"] == ["\u00b7", "\u00b7", "\u00b7", "**!**", "\u00b7"]
    assert "\u00b7 not run (the test never reaches the mutated code" in text
    assert "7 of 10 cells not run" in text


def test_html_shows_not_run_cells_with_a_legend_and_a_title():
    lab = make_sparse_lab()
    text = to_lab_html(lab, quotes_of(lab))
    page = _Page()
    page.feed(text)
    assert page.cells[("s01", RATE)] == {NOT_RUN} and page.cells[("x14", NO_RESAMPLE)] == {MISSED}
    assert "not run: the test never reaches the mutated code</span>" in text  # the legend
    assert re.search(r'class="cell not_run" data-test="test_acceptance_rate[^"]*" title="s01 '
                     r'\u00d7 [^"]*: not run: the test never reaches the mutated code', text)


@pytest.mark.slow
def test_html_not_run_cells_render_in_their_own_colour(tmp_path):
    lab = make_sparse_lab()
    paths = {p.name: p for p in write_folder(lab, tmp_path).paths}
    check_rendering(paths["lab-M07.6.html"], tmp_path, lab, height=700)


def test_stryker_covered_by_leaves_out_the_tests_that_do_not_reach_the_mutant():
    sparse = make_sparse_lab()
    report = to_stryker(sparse, quotes_of(sparse))
    assert validate_stryker(report) == []
    s01, x14 = report["files"][SOURCE_KEY]["mutants"]
    assert s01["coveredBy"] == [HAND, STRICT, BAD_DRAFTS] and s01["testsCompleted"] == 3
    assert s01["status"] == "Killed"
    # Stryker's word for a mutant no test reaches: not a survivor the tests saw.
    assert (x14["status"], x14["coveredBy"], x14["testsCompleted"]) == ("NoCoverage", [], 0)
    assert x14["statusReason"].startswith("no catalog test reaches the mutated code")


def _luma(pixels: np.ndarray) -> np.ndarray:
    """What a reader who sees no hue sees: the brightness of each pixel (ITU-R BT.601)."""
    rgb = pixels[:, :, :3].astype(float)
    return 0.299 * rgb[:, :, 0] + 0.587 * rgb[:, :, 1] + 0.114 * rgb[:, :, 2]


def test_html_not_run_and_passed_cells_differ_without_colour(tmp_path):
    """A passed cell and a not-run cell, drawn by Chromium with the page's own CSS and markup, differ
    in brightness over a good part of the cell (a hatch and a mark), not in a shade of grey alone:
    told apart in greyscale, so by a colour-blind reader too. The legend has both."""
    from harness.report.lab_html import _CSS, _html_cell

    lab = make_sparse_lab()
    s01 = next(r for r in lab.rows if r.mutant.id == "s01")
    assert (cell_state(s01, RATE), cell_state(s01, BAD_DRAFTS)) == (NOT_RUN, SURVIVED)
    page = tmp_path / "cells.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>{_CSS} body {{ margin: 0; }}"
                    " table.matrix { border-spacing: 0; }</style></head><body><table class=\"matrix\">"
                    f"<tr>{_html_cell(s01, RATE)}{_html_cell(s01, BAD_DRAFTS)}</tr></table></body></html>",
                    encoding="utf-8")
    shot = tmp_path / "cells.png"
    run_chromium(page, tmp_path, f"--screenshot={shot}", height=200)
    luma = _luma(png_pixels(shot))
    not_run, passed = luma[3:19, 3:19], luma[3:19, 25:41]  # inside each 22 px cell, off its edges
    assert abs(float(np.median(passed)) - _luma(np.array([[_rgb(COLORS[SURVIVED])]]))[0, 0]) < 2
    assert passed.std() < 2, "a passed cell is plain"
    differing = float((np.abs(not_run - passed) > 32).mean())
    assert differing > 0.2, f"a not-run cell looks like a passed one in greyscale ({differing:.0%} differ)"
    page = to_lab_html(lab, quotes_of(lab))
    assert "test passed (the mutant survived it)</span>" in page
    assert "not run: the test never reaches the mutated code</span>" in page
