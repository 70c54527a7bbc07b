"""The incremental lab (#27 item 5): every cell cached under a key of what decides it.

A re-run with nothing changed runs no cell; editing one test runs its column again, adding a
mutant its row, changing a mutant's text its row; ``--fresh`` runs everything; a corrupt entry is
a miss; the folder stays under its bound; an unusable folder means no cache, not an error. Every
matrix is compared with a lab run without the cache, as ``bench/same_verdicts.py`` compares them.

The tests use a cache folder of their own (``OL_CACHE_DIR`` under ``tmp_path``; the session turns
the cache off everywhere else). ol's own code and the catalog files are read once per test (their
digests frozen): the key of a test is changed on purpose ("editing one test"), never by someone
editing the checkout while the test runs.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

import harness.engine.mutants as mutants_mod
import harness.lab.cache as cache_mod
import harness.lab.engine as engine_mod
from harness.cli import main
from harness.engine.requests import LabRequest
from harness.errors import HarnessError
from harness.lab.cache import cache_dir, source_digests
from harness.lab.engine import NOT_RUN, LabResult, run_lab

ROOT = Path(__file__).resolve().parent.parent.parent
MODULE = "M07.1"  # 29 mutants of cheap cells: a lab of seconds


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAME = _bench("same_verdicts")


def differences(before: LabResult, after: LabResult, tmp_path: Path) -> list[str]:
    """What ``bench/same_verdicts.py`` finds between the two labs' JSON (empty: the same)."""
    paths = []
    for name, lab in (("before", before), ("after", after)):
        path = tmp_path / f"{name}-{len(list(tmp_path.glob('*.json')))}.json"
        path.write_text(json.dumps(lab.to_json()), encoding="utf-8")
        paths.append(path)
    return SAME.differences(SAME.verdicts(paths[0]), SAME.verdicts(paths[1]))


class Digests:
    """The digests of ol and of each catalog test, read once for this file's tests (so the
    cache ``primed`` fills and a test's own runs have the same keys)."""

    def __init__(self) -> None:
        self.engine = cache_mod.engine_digest()
        self.tests: dict[str, dict[str, str]] = {}


class Keys:
    """The digests of ol and of each catalog test, computed once and then changed on purpose
    (a test's edits are its own: the file's ``Digests`` stay as read)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, digests: Digests) -> None:
        self.tests: dict[str, dict[str, str]] = {}
        self.digests = digests
        real = cache_mod.test_digests
        monkeypatch.setattr(cache_mod, "engine_digest", lambda: digests.engine)

        def frozen(module, names):
            if module.id not in self.tests:
                if module.id not in digests.tests:
                    digests.tests[module.id] = real(module, names)
                self.tests[module.id] = dict(digests.tests[module.id])
            return {n: self.tests[module.id][n] for n in names}

        monkeypatch.setattr(cache_mod, "test_digests", frozen)

    def edit(self, module_id: str, test: str) -> None:
        """As if ``test``'s source had been edited: its key changes, no other."""
        if module_id not in self.tests:  # no lab yet in this test (``filled``'s was)
            self.tests[module_id] = dict(self.digests.tests[module_id])
        self.tests[module_id][test] = "edited " + self.tests[module_id][test]


@pytest.fixture(scope="module")
def digests() -> Digests:
    return Digests()


@pytest.fixture
def keys(tmp_path, monkeypatch, digests) -> Keys:
    monkeypatch.delenv("OL_NO_CACHE", raising=False)
    monkeypatch.setenv("OL_CACHE_DIR", str(tmp_path / "cache"))
    return Keys(monkeypatch, digests)


@pytest.fixture(scope="module")
def priming(digests, tmp_path_factory) -> tuple[Path, LabResult]:
    """One ``lab()`` (public cases, the checkout's mutants) into an empty cache folder, once for
    the file: the folder as it leaves it, which the tests that start from a full cache copy
    (``filled``), and the lab it returned (what a first run says it took and ran)."""
    folder = tmp_path_factory.mktemp("primed") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OL_NO_CACHE", raising=False)
        mp.setenv("OL_CACHE_DIR", str(folder))
        Keys(mp, digests)
        first = lab()
    return folder, first


@pytest.fixture
def filled(keys, priming, tmp_path) -> None:
    """The test's cache folder (``keys``'s) holds what one ``lab()`` wrote, as if the test had
    run it first: a copy of ``priming``'s folder."""
    shutil.copytree(priming[0], tmp_path / "cache")


@pytest.fixture
def library(tmp_path, monkeypatch) -> Path:
    """A copy of the mutant library that a test may change."""
    shutil.copytree(mutants_mod.mutants_dir(), tmp_path / "mutants")
    monkeypatch.setattr(mutants_mod, "mutants_dir", lambda: tmp_path / "mutants")
    return tmp_path / "mutants" / MODULE


def keep_only(folder: Path, count: int) -> list[str]:
    """Leave the first ``count`` mutants (by id) of a library copy's module ``folder``."""
    mutants = sorted(folder.glob("*.toml"))
    for path in mutants[count:]:
        path.unlink()
    return [p.stem for p in mutants[:count]]


@pytest.fixture
def ran(monkeypatch) -> list[tuple[str, str]]:
    """(target, test) of every cell run in this process (``--jobs 1``), the reference's too."""
    import harness.lab.reach as reach_mod

    seen: list[tuple[str, str]] = []
    for module in (reach_mod, engine_mod):
        real = module.run_case

        def recording(module_, info, fn, target, *args, _real=real, **kwargs):
            seen.append((target.label, info.name))
            return _real(module_, info, fn, target, *args, **kwargs)

        monkeypatch.setattr(module, "run_case", recording)
    return seen


def lab(cache: str = "use", **kwargs) -> LabResult:
    return run_lab(LabRequest(MODULE, jobs=kwargs.pop("jobs", 1), cache=cache, **kwargs))


def reached(result: LabResult) -> int:
    """The cells the lab runs (those of tests that reach the mutated code)."""
    return sum(len(r.run.tests) for r in result.rows)


@pytest.fixture(scope="module")
def uncached(module_lab) -> LabResult:
    """The module's lab with every cell run, none read from a cache, for comparison: the
    session's ``run_lab(LabRequest(MODULE, jobs=2))`` (tests/conftest.py's ``module_lab``, which
    writes its cells to a folder of the session's own and reads none), shared with the tests of
    the lab's verdicts when they run in this process."""
    return module_lab(MODULE)


@pytest.fixture(scope="module")
def uncached_seed_7() -> LabResult:
    """The module's lab on the hidden cases of seed 7, without the cache, for comparison."""
    return run_lab(LabRequest(MODULE, jobs=2, seed=7))


# -- re-runs ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_rerun_with_nothing_changed_runs_no_cell_and_gives_the_same_matrix(
        keys, priming, filled, ran, uncached, tmp_path):
    first = priming[1]  # lab() into an empty folder: ``filled`` is what it wrote there
    assert first.reuse["cells_cached"] == 0 and first.reuse["cells_run"] == reached(first) > 0
    assert first.reuse["reference_run"] == len(first.tests)
    ran.clear()
    again = lab()
    assert ran == []
    assert again.reuse["cells_cached"] == reached(again) and again.reuse["cells_run"] == 0
    assert again.reuse["reference_cached"] == len(again.tests)
    assert differences(uncached, first, tmp_path) == []
    assert differences(uncached, again, tmp_path) == []


@pytest.mark.slow
def test_editing_one_test_runs_its_column_again_and_nothing_else(keys, filled, ran, uncached, tmp_path):
    test = "test_sample_matches_enumerated_intervals" if "test_sample_matches_enumerated_intervals" \
        in uncached.tests else uncached.tests[len(uncached.tests) // 2]
    keys.edit(MODULE, test)
    ran.clear()
    again = lab()
    column = [r for r in uncached.rows if r.outcome(test) != NOT_RUN]
    assert {name for _, name in ran} == {test}
    assert sorted(target for target, _ in ran) == sorted(
        ["reference", *(f"mutant {r.mutant.id}" for r in column)])
    assert again.reuse["cells_run"] == len(column) and again.reuse["reference_run"] == 1
    assert differences(uncached, again, tmp_path) == []


@pytest.mark.slow
def test_adding_a_mutant_runs_its_row_and_nothing_else(keys, library, ran, uncached, tmp_path):
    added = uncached.rows[len(uncached.rows) // 2].mutant.id
    text = (library / f"{added}.toml").read_text()
    (library / f"{added}.toml").unlink()
    lab()
    (library / f"{added}.toml").write_text(text)
    ran.clear()
    again = lab()
    row = next(r for r in uncached.rows if r.mutant.id == added)
    assert ran == [(f"mutant {added}", t.name) for t in row.run.tests]
    assert again.reuse["cells_run"] == len(row.run.tests) and again.reuse["reference_run"] == 0
    assert differences(uncached, again, tmp_path) == []


@pytest.mark.slow
def test_a_mutant_whose_text_changed_runs_again(keys, filled, library, ran, tmp_path):
    """The mutant's applied text is in its key: a mutant whose edit changed under the same id is
    not its old row (the test fails when the key leaves the text out)."""
    # ``filled``: the cache as a first lab() of these mutants (``library`` is their copy) leaves it.
    rows = {r.mutant.id: r for r in lab().rows}
    assert ran == []  # every row from the cache
    # x.toml takes the edits of another mutant of the same function that other tests kill.
    a, b = next((a, b) for a in rows.values() for b in rows.values()
                if a.mutant.function == b.mutant.function and a.killed_by != b.killed_by)
    source = (library / f"{b.mutant.id}.toml").read_text()
    edits = source[source.index("[[edit]]"):]
    target = library / f"{a.mutant.id}.toml"
    text = target.read_text()
    target.write_text(text[:text.index("[[edit]]")] + edits)
    ran.clear()
    again = lab()
    assert {label for label, _ in ran} == {f"mutant {a.mutant.id}"}
    fresh = lab(cache="off")
    assert differences(fresh, again, tmp_path) == []
    assert {r.mutant.id: r.killed_by for r in again.rows}[a.mutant.id] == b.killed_by


@pytest.mark.slow
def test_a_seed_has_cells_of_its_own(keys, filled, uncached_seed_7, tmp_path):
    hidden = lab(seed=7)
    assert hidden.reuse["cells_cached"] == 0 and hidden.reuse["reference_cached"] == 0
    again = lab(seed=7)
    assert again.reuse["cells_run"] == 0
    assert differences(uncached_seed_7, again, tmp_path) == []
    assert lab().reuse["cells_run"] == 0  # the public cells are still there


@pytest.mark.slow
def test_fresh_runs_every_cell_and_refreshes_the_cache(keys, filled, ran, uncached, tmp_path):
    ran.clear()
    fresh = lab(cache="fresh")
    assert fresh.reuse["cells_cached"] == 0 and fresh.reuse["cells_run"] == reached(fresh)
    assert len(ran) == reached(fresh) + len(fresh.tests)
    assert differences(uncached, fresh, tmp_path) == []
    assert lab().reuse["cells_run"] == 0


@pytest.mark.slow
def test_exhaustive_takes_the_cells_it_shares_and_runs_the_others(keys, filled, uncached, tmp_path):
    full = lab(exhaustive=True)
    cells = len(full.rows) * len(full.tests)
    assert full.reuse["cells_cached"] == reached(uncached)
    assert full.reuse["cells_run"] == cells - reached(uncached)
    assert lab(exhaustive=True).reuse["cells_run"] == 0
    assert differences(run_lab(LabRequest(MODULE, jobs=2, exhaustive=True)), full, tmp_path) == []


# -- the store -------------------------------------------------------------------------------

def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


@pytest.mark.slow
def test_a_corrupt_or_foreign_entry_is_a_miss(keys, filled, uncached, tmp_path, monkeypatch):
    folder = tmp_path / "cache" / "lab"
    rows = sorted((p for p in _entries(folder) if p.name.startswith("row-")),
                  key=lambda p: p.stat().st_size)

    def cells(p: Path, make) -> None:
        entry = json.loads(p.read_text())
        p.write_text(json.dumps({**entry, "cells": {k: make(v) for k, v in entry["cells"].items()}}))

    damage = [
        lambda p: p.write_bytes(b"\x00\xff not json"),
        lambda p: p.write_text(p.read_text()[: len(p.read_text()) // 2]),
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "key": "another"})),
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "format": 0})),
        lambda p: p.write_text("[]"),
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "cells": [1, 2]})),
        lambda p: p.write_text("[" * 100000),  # deeper than the parser goes
        lambda p: cells(p, lambda v: {"result": {**v["result"], "name": "test_other"}}),
        lambda p: cells(p, lambda v: {"result": {**v["result"], "outcome": "bogus"}}),
        lambda p: cells(p, lambda v: "passed"),
        lambda p: cells(p, lambda v: {"result": {"name": v["result"]["name"]}}),
    ]
    for path, spoil in zip(rows, damage, strict=False):
        spoil(path)
    big = rows[-1]  # the largest entry, beyond the size cap: not read
    big_cells = len(json.loads(big.read_text())["cells"])
    monkeypatch.setattr(cache_mod, "MAX_ENTRY_BYTES", big.stat().st_size - 1)
    next(p for p in _entries(folder) if p.name.startswith("ref-")).write_text("{")
    again = lab()
    assert again.reuse["reference_run"] == len(again.tests)
    assert big_cells <= again.reuse["cells_run"] < reached(again)
    assert again.reuse["cells_cached"] > 0
    assert differences(uncached, again, tmp_path) == []
    monkeypatch.setattr(cache_mod, "MAX_ENTRY_BYTES", 16 * 1024 * 1024)
    assert lab().reuse["cells_run"] == 0  # every entry written again, whole


@pytest.mark.slow
def test_an_entry_that_is_a_folder_leaves_the_lab_uncached_not_broken(keys, filled, uncached, tmp_path):
    folder = tmp_path / "cache" / "lab"
    entry = next(p for p in _entries(folder) if p.name.startswith("row-"))
    entry.unlink()
    entry.mkdir()
    again = lab()
    assert again.reuse["cells_run"] > 0
    assert differences(uncached, again, tmp_path) == []


@pytest.mark.slow
def test_the_cache_stays_under_its_bound_least_recently_used_first(keys, filled, tmp_path, monkeypatch):
    folder = tmp_path / "cache" / "lab"
    public = {p.name for p in _entries(folder)}
    lab(seed=7)
    hidden = {p.name for p in _entries(folder)} - public
    for name in hidden:  # used long ago
        os.utime(folder / name, (1_000_000, 1_000_000))
    size = sum((folder / n).stat().st_size for n in public)
    bound = size + 20_000  # the public entries, a little more for the edited keys, not all the rest
    monkeypatch.setattr(cache_mod, "BOUND_BYTES", bound)
    keys.edit(MODULE, lab().tests[0])
    lab()  # reads the public entries (they are used now), writes some, then applies the bound
    left = {p.name for p in _entries(folder)}
    assert sum(p.stat().st_size for p in _entries(folder)) <= bound
    assert public <= left and hidden - left
    store = cache_mod.LabCache(folder, "use", "", {}, wrote=True)
    newest = sorted(left)[0]
    os.utime(folder / newest, (3_000_000_000, 3_000_000_000))
    store.bound(limit=(folder / newest).stat().st_size)
    assert [p.name for p in _entries(folder)] == [newest]


@pytest.mark.slow
def test_an_unusable_cache_folder_means_no_cache_and_no_error(library, tmp_path, monkeypatch):
    # M06.3's first four mutants, not its 28: a lab that runs every cell it reaches, and writes
    # nothing, with any number of mutants.
    keep_only(library.parent / "M06.3", 4)
    monkeypatch.delenv("OL_NO_CACHE", raising=False)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("OL_CACHE_DIR", str(blocker))
    result = run_lab(LabRequest("M06.3", jobs=1, cache="use"))
    assert result.reuse["folder"] == "" and result.reuse["cells_run"] == reached(result)
    assert blocker.read_text() == "not a folder"


def test_a_folder_that_cannot_be_written_means_no_cache(tmp_path, monkeypatch):
    from harness.engine.results import Kind, Outcome, TestResult

    store = cache_mod.LabCache(tmp_path / "missing" / "lab", "use", "base", {"test_a": "k"})
    store.store_reference({"test_a": (TestResult("test_a", Kind.UNIT, Outcome.PASSED, 0.1), None)})
    assert store.folder is None and not store.wrote
    assert store.reference() == {}


def test_where_the_cache_lives(tmp_path, monkeypatch):
    for name in ("OL_NO_CACHE", "OL_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "ol" / "lab"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "ol" / "lab"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # not absolute: ignored, as the spec says
    assert cache_dir() == tmp_path / "home" / ".cache" / "ol" / "lab"
    monkeypatch.setenv("OL_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" / "lab"
    monkeypatch.setenv("OL_NO_CACHE", "1")
    assert cache_dir() is None
    monkeypatch.setenv("OL_NO_CACHE", "0")
    assert cache_dir() == tmp_path / "mine" / "lab"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OL_CACHE_DIR", "relative")
    assert cache_dir() == tmp_path / "relative" / "lab"


def test_a_reference_cell_that_does_not_say_what_its_test_reaches_is_a_miss(tmp_path):
    from harness.engine.results import Kind, Outcome, TestResult

    store = cache_mod.LabCache(tmp_path, "use", "base", {"test_a": "ka", "test_b": "kb"})
    passed = TestResult("test_a", Kind.UNIT, Outcome.PASSED, 0.1)
    store.store_reference({"test_a": (passed, frozenset({"f"})),
                           "test_b": (dataclasses.replace(passed, name="test_b"), frozenset())})
    assert set(store.reference()) == {"test_a", "test_b"}
    path = next(tmp_path.glob("ref-*.json"))
    entry = json.loads(path.read_text())
    del entry["cells"]["kb"]["covered"]
    path.write_text(json.dumps(entry))
    assert store.reference() == {"test_a": (passed, frozenset({"f"}))}


def test_the_request_checks_its_cache_and_executor():
    with pytest.raises(HarnessError, match="use, fresh or off"):
        LabRequest(MODULE, cache="sometimes")
    with pytest.raises(HarnessError, match="--executor must be local or dask"):
        LabRequest(MODULE, executor="threads")
    with pytest.raises(HarnessError, match="--scheduler goes with --executor dask"):
        LabRequest(MODULE, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(HarnessError, match="--jobs does not apply"):
        LabRequest(MODULE, executor="dask", scheduler="tcp://127.0.0.1:8786", jobs=2)


# -- a test's key ----------------------------------------------------------------------------

SOURCE = '''
import math

from harness.engine.catalog import case

LIMIT = 3
UNUSED = 4


def helper(x):
    return min(x, LIMIT)


def other_helper(x):
    return x


@case("unit", "a", "b")
def test_a(target):
    assert helper(target.f(1)) == 1


@case("unit", "c", "d")
def test_b(target):
    assert other_helper(target.f(2)) == 2
'''
NAMES = ("test_a", "test_b")


def _changed(old: str, new: str, source: str = SOURCE) -> set[str]:
    before = source_digests(source, NAMES)
    after = source_digests(source.replace(old, new, 1), NAMES)
    return {n for n in NAMES if before[n] != after[n]}


def test_a_tests_key_is_its_source_and_what_it_names_transitively():
    assert _changed("== 1", "== 2") == {"test_a"}  # its own body
    assert _changed('@case("unit", "a"', '@case("property", "a"') == {"test_a"}  # its decorator
    assert _changed("min(x, LIMIT)", "max(x, LIMIT)") == {"test_a"}  # a helper it calls
    assert _changed("LIMIT = 3", "LIMIT = 5") == {"test_a"}  # a constant its helper reads
    assert _changed("return x\n", "return -x\n") == {"test_b"}
    assert _changed("UNUSED = 4", "UNUSED = 5") == set()  # nobody names it
    assert _changed("import math", "import cmath") == {"test_a", "test_b"}  # any other statement
    assert _changed("\n\ndef helper", "\n\n\n\ndef helper") == set()  # lines moved, nothing else


def test_a_module_that_looks_names_up_dynamically_keys_every_test_on_all_of_it():
    dynamic = SOURCE + "\nHELPERS = globals()\n"
    assert _changed("UNUSED = 4", "UNUSED = 5", dynamic) == {"test_a", "test_b"}


def test_a_definition_that_writes_a_global_is_in_every_key():
    writer = SOURCE + "\n\ndef reset():\n    global LIMIT\n    LIMIT = 9\n"
    assert _changed("LIMIT = 9", "LIMIT = 8", writer) == {"test_a", "test_b"}


def test_the_common_part_is_in_every_key():
    assert source_digests(SOURCE, NAMES, ["a", b"1"]) != source_digests(SOURCE, NAMES, ["a", b"2"])


def test_the_real_catalogs_keys_are_stable_and_distinct():
    from harness.engine.catalog import collect
    from harness.engine.course import load_course

    module = load_course().module("M07.6")
    names = [info.name for info, _ in collect(module)]
    first = cache_mod.test_digests(module, names)
    assert len(set(first.values())) == len(names)
    assert cache_mod.engine_digest() == cache_mod.engine_digest()


# -- the command -----------------------------------------------------------------------------

@pytest.mark.slow
def test_ol_lab_says_how_many_cells_came_from_the_cache(keys, library, tmp_path, capsys):
    # Four mutants, not 29: the command's line about the cache (none, all, --fresh) is the same
    # whatever the number of cells it counts.
    keep_only(library, 4)
    out = tmp_path / "reports"
    assert main(["lab", MODULE, "--jobs", "2", "--out", str(out)]) == 0
    first = [line for line in capsys.readouterr().out.splitlines() if line.startswith("cache:")]
    assert len(first) == 1 and first[0].startswith("cache: 0 of ")
    assert main(["lab", MODULE, "--jobs", "2", "--out", str(out)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("cache:"))
    count = line.split()[1]
    assert line.startswith(f"cache: {count} of {count} cells from the cache, 0 run; the reference")
    assert str(tmp_path / "cache" / "lab") in line
    assert main(["lab", MODULE, "--jobs", "2", "--out", str(out), "--fresh"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("cache:"))
    assert line == f"cache: --fresh: every cell run ({count}) and stored in {tmp_path / 'cache' / 'lab'}"


# -- Dask ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_lab_on_a_dask_cluster_gives_the_local_matrix(keys, uncached, uncached_seed_7,
                                                          tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        on_dask = lab(jobs=None, executor="dask", scheduler=cluster.scheduler_address)
        assert on_dask.reuse["cells_run"] == reached(on_dask)
        assert differences(uncached, on_dask, tmp_path) == []
        hidden = lab(cache="off", jobs=None, executor="dask", scheduler=cluster.scheduler_address,
                     seed=7)
    assert differences(uncached_seed_7, hidden, tmp_path) == []
    assert lab().reuse["cells_run"] == 0  # what the cluster ran is in the cache


@pytest.mark.slow
def test_the_lab_starts_a_local_dask_cluster_without_a_scheduler(library, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    # M06.3's first four mutants: the cluster ol starts runs them all, as it would 28.
    keep_only(library.parent / "M06.3", 4)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    result = run_lab(LabRequest("M06.3", jobs=2, executor="dask"))
    assert result.verdict == "pass" and result.reuse["cells_run"] == reached(result)
    assert [p.name for p in scratch.iterdir() if not p.name.startswith("ol-")] == []
