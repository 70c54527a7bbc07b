"""``harness.files``' one naming of a file's kind (``file_kind``), which every refusal uses."""

from __future__ import annotations

import os
import socket
import stat

import pytest

from harness.check.stubs import start
from harness.engine.course import load_course
from harness.errors import HarnessError
from harness.files import file_kind, special_kind


def test_file_kind_names_each_kind_of_file(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(tmp_path)  # a relative name: a socket's path is capped at 108 bytes
    try:
        sock.bind("sock")
    finally:
        os.chdir(here)
        sock.close()
    kinds = {p.name: file_kind(os.lstat(p).st_mode) for p in tmp_path.iterdir()}
    assert kinds == {"file": "a regular file", "dir": "a directory", "fifo": "a FIFO",
                     "link": "a symbolic link", "sock": "a socket"}
    assert file_kind(stat.S_IFCHR) == "a character device"
    assert file_kind(stat.S_IFBLK) == "a block device"
    assert file_kind(0) == "not a regular file"


def test_special_kind_names_what_a_link_points_to(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "to-dir").symlink_to(tmp_path / "dir")
    (tmp_path / "file").write_text("x")
    assert special_kind(tmp_path / "to-dir") == "a symbolic link to a directory"
    assert special_kind(tmp_path / "dir") == "a directory"
    assert special_kind(tmp_path / "file") is None


def test_ol_start_names_a_regular_file_where_a_folder_belongs(tmp_path):
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "tinyllm").write_text("not a folder")
    with pytest.raises(HarnessError, match=r"tinyllm is a regular file where a folder belongs"):
        start(load_course().module("M07.6"), tmp_path)
