"""The throw-away project mutmut runs in, and the fixture that refuses to test the wrong code."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from harness.audit.workdir import make_workdir, mutmut_target
from harness.engine.catalog import collect
from harness.engine.course import load_course
from harness.paths import REPO_ROOT
from harness.sandbox.rundirs import owner_tag, sweep_folders

MODULE = load_course().module("M07.6")


@pytest.fixture()
def workdir(tmp_path):
    root = make_workdir(MODULE, tmp_path)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_copy_has_the_package_the_catalog_and_mutmuts_config(workdir):
    assert (workdir / MODULE.file).is_file() and not (workdir / "mutants").exists()
    config = tomllib.loads((workdir / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert config["source_paths"] == ["tinyllm"] and config["only_mutate"] == [MODULE.file]
    assert config["pytest_add_cli_args_test_selection"] == ["tests"]
    tests = (workdir / "tests" / "test_catalog.py").read_text()
    assert all(f"    {info.name}," in tests for info, _ in collect(MODULE))


def test_a_killed_audits_project_is_swept_by_the_next_run(workdir, tmp_path):
    """The folder is a run folder of this process: once its owner is gone, any later ol run's
    sweep removes it (as one left in /tmp by a killed audit: ``ol-mutmut-M07.6-...`` was not)."""
    assert workdir.name.startswith(f"ol-mutmut-{owner_tag()}-")
    dead = tmp_path / workdir.name.replace(f"-{owner_tag()}-", "-4194304.1-")  # no such pid
    workdir.rename(dead)
    assert sweep_folders(tmp_path) == [dead.name] and not dead.exists()


def test_the_conftest_imports_this_checkout_of_ol(workdir):
    assert f"sys.path.append({str(REPO_ROOT)!r})" in (workdir / "tests" / "conftest.py").read_text()


def test_the_target_refuses_a_module_imported_from_elsewhere(tmp_path):
    with pytest.raises(RuntimeError, match="not from the mutated copy"):
        mutmut_target("M07.6", tmp_path)  # tinyllm here is the reference, not a copy in tmp_path
