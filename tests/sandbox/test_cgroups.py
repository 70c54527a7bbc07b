"""#24: the task cap where the host has only cgroup v2 (today's Debian, Ubuntu and Fedora).

The machine these tests run on has the v1 ``pids`` hierarchy, and a controller bound to v1 is not
available in v2, so the v2 path is simulated: a folder laid out as the kernel lays out a cgroup v2
hierarchy, named by a ``mountinfo`` and a ``cgroup`` file of the test's. What a real fork bomb
meets where no cgroup can be made is tested for real in ``test_view.py`` (``RLIMIT_NPROC`` of
``nobody``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.sandbox import proctree, rundirs
from harness.sandbox.harden import join_cgroup


def _hierarchy(tmp_path: Path, controllers: str, mount_root: str = "/",
               ours: str = "/system.slice/ol.service") -> tuple[Path, Path, Path]:
    """A fake cgroup v2 mount at ``tmp_path/cg`` and this process's place in it."""
    mount = tmp_path / "cg"
    inside = ours if mount_root == "/" else ours[len(mount_root):]
    folder = mount / inside.lstrip("/")
    folder.mkdir(parents=True)
    (folder / "cgroup.controllers").write_text(controllers + "\n")
    (folder / "cgroup.subtree_control").write_text("\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
        f"35 22 0:30 {mount_root} {mount} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 "
        "cgroup2 rw,nsdelegate,memory_recursiveprot\n")
    cgroup = tmp_path / "cgroup"
    cgroup.write_text(f"0::{ours}\n")
    return folder, mountinfo, cgroup


def test_our_cgroup_in_a_v2_hierarchy_with_pids_is_found(tmp_path):
    folder, mountinfo, cgroup = _hierarchy(tmp_path, "cpuset cpu io memory pids")
    assert rundirs.pids_parent_v2(str(mountinfo), str(cgroup)) == str(folder)


def test_a_mount_of_a_subtree_is_followed(tmp_path):
    folder, mountinfo, cgroup = _hierarchy(tmp_path, "pids", mount_root="/system.slice")
    assert rundirs.pids_parent_v2(str(mountinfo), str(cgroup)) == str(folder)


@pytest.mark.parametrize("controllers", ["cpu memory", ""])
def test_without_the_pids_controller_there_is_no_v2_parent(tmp_path, controllers):
    _, mountinfo, cgroup = _hierarchy(tmp_path, controllers)
    assert rundirs.pids_parent_v2(str(mountinfo), str(cgroup)) is None


def test_a_v1_only_host_has_no_v2_parent(tmp_path):
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("30 22 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n")
    cgroup = tmp_path / "cgroup"
    cgroup.write_text("8:pids:/\n0::/\n")
    assert rundirs.pids_parent_v2(str(mountinfo), str(cgroup)) is None


def test_a_worker_cgroup_is_made_under_v2_with_its_cap(tmp_path, monkeypatch):
    """No v1 pids hierarchy: the worker's cgroup is made below ours in v2, with pids enabled for
    our children and the cap written; the worker joining it says cgroup v2."""
    folder, mountinfo, cgroup = _hierarchy(tmp_path, "memory pids")
    monkeypatch.setattr(proctree, "pids_parent", lambda: None)
    monkeypatch.setattr(proctree, "pids_parent_v2",
                        lambda: rundirs.pids_parent_v2(str(mountinfo), str(cgroup)))
    path = proctree.pids_cgroup(24)
    assert path is not None and Path(path).parent == folder
    assert Path(path).name.startswith("ol-worker-")
    assert (folder / "cgroup.subtree_control").read_text() == "+pids"
    assert (Path(path) / "pids.max").read_text() == "24"
    (Path(path) / "cgroup.controllers").write_text("pids\n")  # as the kernel makes it
    assert join_cgroup(path) == "cgroup v2"
    assert (Path(path) / "cgroup.procs").read_text() == str(os.getpid())
    for name in ("pids.max", "cgroup.procs", "cgroup.controllers"):
        (Path(path) / name).unlink()
    assert rundirs.remove_cgroup(path, 0.0)


def test_where_pids_cannot_be_enabled_no_cgroup_is_made(tmp_path, monkeypatch):
    folder, mountinfo, cgroup = _hierarchy(tmp_path, "pids")
    (folder / "cgroup.subtree_control").unlink()
    (folder / "cgroup.subtree_control").mkdir()  # cannot be written: as EBUSY or EACCES would
    monkeypatch.setattr(proctree, "pids_parent", lambda: None)
    monkeypatch.setattr(proctree, "pids_parent_v2",
                        lambda: rundirs.pids_parent_v2(str(mountinfo), str(cgroup)))
    assert proctree.pids_cgroup(24) is None
    assert [p.name for p in folder.iterdir()] == ["cgroup.controllers", "cgroup.subtree_control"]


def test_no_cgroup_joined_is_said():
    assert join_cgroup(None) == "none"
