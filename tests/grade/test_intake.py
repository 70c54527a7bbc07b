"""``harness.grade.intake``: every submission of a folder in every shape, everything else named.

Each test builds its own submissions folder under ``tmp_path`` (archives with zipfile/tarfile, or
crafted byte by byte where the library would not write the hostile thing). A hostile archive is
a problem of its own submission, one line, and leaves the tree outside ``staging`` unchanged.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.grade import intake as intake_module
from harness.grade.intake import MAX_RATIO, MAX_UNPACKED, Skipped, Submission, intake
from harness.sandbox.staging import stage

MODULE_FILE = "tinyllm/prob/rejection.py"
STAGED = "python/tinyllm/prob/rejection.py"
CODE = b"def sample_rejection(rng, p, q, m):\n    return 0\n"


# -- building submissions ---------------------------------------------------------------------------

def workspace_files(prefix: str = "", code: bytes = CODE) -> dict[str, bytes]:
    """A workspace's files (as the reference has them), below ``prefix``."""
    return {f"{prefix}python/tinyllm/__init__.py": b"", f"{prefix}python/tinyllm/prob/__init__.py": b"",
            f"{prefix}python/tinyllm/prob/pcg32.py": b"X = 1\n", f"{prefix}{STAGED}": code}


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    root.mkdir(parents=True, exist_ok=True)
    return root


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_gz_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]], **kwargs: object) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", **kwargs) as tf:  # type: ignore[call-overload]
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def tar_of(files: dict[str, bytes]) -> bytes:
    return tar_gz_bytes([(tarfile.TarInfo(name), data) for name, data in files.items()])


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def zip_member(name: str, data: bytes, mode: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("rejection.py", CODE)
        info = zipfile.ZipInfo(name)
        info.create_system = 3
        info.external_attr = mode << 16
        zf.writestr(info, data)
    return buf.getvalue()


def encrypted_zip() -> bytes:
    """A zip whose member says it is encrypted (zipfile writes none: the flag is set after)."""
    data = bytearray(zip_bytes({"rejection.py": CODE}))
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 6] |= 0x1
    data[central + 8] |= 0x1
    return bytes(data)


def zero_deflate(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros, made without compressing them all: after a
    full flush the compressor starts afresh, so every MiB compresses to the same bytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * mib + c.flush(), mib << 20


def bomb_zip(mib: int) -> bytes:
    """A zip with one member: ``mib`` MiB of zeros, deflated (its CRC is not computed: reading
    must stop long before it is checked)."""
    stream, size = zero_deflate(mib)
    name = b"rejection.py"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, 0, len(stream), size, len(name), 0)
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, 0, len(stream), size,
                          len(name), 0, 0, 0, 0, 0, 0)
    body = local + name + stream
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), len(body), 0)
    return body + central + name + end


def bomb_tar_gz(mib: int, declared: int) -> bytes:
    """A tar.gz whose gzip stream holds a tar header (its member declaring ``declared`` bytes)
    and ``mib`` MiB of zeros, made as cheaply (wrong CRC, never reached)."""
    info = tarfile.TarInfo("rejection.py")
    info.size = declared
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(info.tobuf()) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    stream = head + block * mib + c.flush()
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + stream + struct.pack("<2L", 0, 0)


# -- what a run looks like -------------------------------------------------------------------------

@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    folder, staging = tmp_path / "subs", tmp_path / "staging"
    folder.mkdir()
    staging.mkdir()
    return folder, staging


def run(folder: Path, staging: Path, own: Path | None = None) -> tuple[list[Submission], list[Skipped]]:
    return intake(folder, MODULE_FILE, staging, own)


def one(folder: Path, staging: Path) -> Submission:
    subs, skipped = run(folder, staging)
    assert skipped == []
    assert len(subs) == 1
    return subs[0]


def checked(sub: Submission, staging: Path, code: bytes = CODE) -> dict[str, bytes]:
    """The submission's staged tree; it was built inside ``staging`` and holds ``code``."""
    assert sub.problem is None
    assert sub.path is not None
    assert sub.path.resolve().is_relative_to(staging.resolve())
    files = stage(sub.path).files
    assert files[STAGED] == code
    return files


def snapshot(root: Path, staging: Path) -> dict[str, object]:
    """Everything below ``root`` outside ``staging``: files with their bytes, folders, links."""
    seen: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != staging]
        for name in dirnames + filenames:
            path = here / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[rel] = "dir"
            else:
                seen[rel] = path.read_bytes()
    return seen


# -- the shapes ------------------------------------------------------------------------------------

def test_a_workspace_is_graded_in_place_and_not_copied(place):
    folder, staging = place
    write_tree(folder / "kate", workspace_files())
    sub = one(folder, staging)
    assert sub == Submission("kate", "workspace", folder / "kate", folder / "kate", None)
    assert list(staging.iterdir()) == []


def test_a_folder_whose_only_python_file_is_the_module_s_file_is_built_into_a_workspace(place):
    folder, staging = place
    write_tree(folder / "kate", {"Downloads/hw/rejection.py": CODE, "Downloads/hw/notes.txt": b"hi",
                                 "Downloads/__pycache__/other.py": b"", ".git/hooks/hook.py": b"",
                                 "Downloads/hw/._rejection.py": b"mac"})
    sub = one(folder, staging)
    assert (sub.name, sub.shape, sub.origin) == ("kate", "folder", folder / "kate")
    assert checked(sub, staging) == {STAGED: CODE}
    assert not (folder / "kate" / "python").exists()  # nothing written into the submission


@pytest.mark.parametrize(("files", "said"), [
    ({"hw/rejection.py": CODE, "hw/helper.py": b""}, "2 Python files (hw/helper.py, hw/rejection.py)"),
    ({"hw/notes.txt": b""}, "0 Python files:"),
    ({"hw/reject.py": CODE}, "1 Python file (hw/reject.py)"),
])
def test_a_folder_with_other_python_files_or_none_is_a_problem(place, files, said):
    folder, staging = place
    write_tree(folder / "kate", files)
    sub = one(folder, staging)
    assert (sub.name, sub.shape, sub.path) == ("kate", "folder", None)
    assert sub.problem is not None
    assert sub.problem.startswith(f"kate holds no python/tinyllm and {said}")
    assert "its only Python file is rejection.py" in sub.problem
    assert list(staging.iterdir()) == []


def test_a_folder_with_a_link_or_too_deep_is_a_problem_and_the_link_is_not_followed(place, tmp_path):
    folder, staging = place
    outside = write_tree(tmp_path / "elsewhere", {"rejection.py": CODE})
    write_tree(folder / "kate", {})
    (folder / "kate" / "hw").symlink_to(outside)
    deep = "/".join(["d"] * 17)
    write_tree(folder / "leo", {f"{deep}/rejection.py": CODE})
    subs, _ = run(folder, staging)
    kate, leo = subs
    assert kate.problem == "kate/hw is a symbolic link: ol never follows links"
    assert leo.problem is not None and "more than 16 folders deep" in leo.problem
    assert kate.path is None and leo.path is None


def test_a_folder_with_python_but_no_tinyllm_is_taken_by_its_python_file(place):
    folder, staging = place
    write_tree(folder / "kate", {"python/rejection.py": CODE})
    sub = one(folder, staging)
    assert sub.shape == "folder"
    assert checked(sub, staging) == {STAGED: CODE}


@pytest.mark.parametrize("file_name", ["leo_rejection.py", "leo_12345_rejection.py", "LEO.PY"])
def test_a_loose_python_file_is_a_submission_named_by_its_whole_stem(place, file_name):
    folder, staging = place
    (folder / file_name).write_bytes(CODE)
    sub = one(folder, staging)
    assert (sub.name, sub.shape, sub.origin) == (file_name[:-3], "file", folder / file_name)
    assert checked(sub, staging) == {STAGED: CODE}


def test_a_loose_python_file_over_1_mib_is_a_problem(place):
    folder, staging = place
    (folder / "leo.py").write_bytes(b"#" * ((1 << 20) + 1))
    sub = one(folder, staging)
    assert sub.path is None
    assert sub.problem == "leo.py is over 1 MiB: a module file of a submission is far smaller"


MAC = {"__MACOSX/kate/python/tinyllm/prob/._rejection.py": b"mac", "__MACOSX/kate/._python": b"mac"}
ARCHIVE_TREES = {  # what the archive holds; the folder the workspace is in (None: built)
    "at its root": (workspace_files(), ""),
    "under one top folder": ({**workspace_files("kate/"), **MAC,
                              "kate/python/tinyllm/__pycache__/x.cpython-311.pyc": b"pyc"}, "kate"),
    "as its only Python file": ({"kate/hw/rejection.py": CODE, "kate/hw/readme.md": b"#",
                                 "__MACOSX/kate/hw/._rejection.py": b"mac", "kate/.idea/x.py": b"",
                                 "kate/hw/__pycache__/x.py": b""}, None),
}


@pytest.mark.parametrize("how", sorted(ARCHIVE_TREES))
@pytest.mark.parametrize(("file_name", "shape"), [("kate.zip", "zip"), ("kate.tar.gz", "tar.gz"),
                                                  ("kate.tgz", "tar.gz"), ("kate.ZIP", "zip")])
def test_an_archive_is_unpacked_and_its_workspace_found(place, how, file_name, shape):
    folder, staging = place
    files, top = ARCHIVE_TREES[how]
    (folder / file_name).write_bytes(zip_bytes(files) if shape == "zip" else tar_of(files))
    sub = one(folder, staging)
    assert (sub.name, sub.shape, sub.origin) == ("kate", shape, folder / file_name)
    staged = checked(sub, staging)
    assert sub.path is not None
    if top is None:
        assert staged == {STAGED: CODE}  # built from the one file; the Mac's ._ copy left out
    else:
        assert staged == workspace_files()
        assert sub.path.name == (top or "unpacked")
    # __MACOSX/, __pycache__ and dot entries are not unpacked at all
    assert not [p for p in staging.rglob("*") if p.name in ("__MACOSX", "__pycache__") or p.name[0] == "."]


def test_an_archive_with_two_python_files_is_a_problem(place):
    folder, staging = place
    (folder / "kate.zip").write_bytes(zip_bytes({"a/rejection.py": CODE, "b/rejection.py": CODE}))
    sub = one(folder, staging)
    assert sub.path is None
    assert sub.problem == ("kate.zip holds no python/tinyllm and 2 Python files (a/rejection.py, "
                           "b/rejection.py): ol takes an archive as a submission when it is a workspace or "
                           "its only Python file is rejection.py")
    assert list(staging.iterdir()) == []  # its partial tree removed


def test_a_zip_with_windows_separators_is_read(place):
    folder, staging = place
    (folder / "kate.zip").write_bytes(zip_bytes({"kate\\python\\tinyllm\\prob\\rejection.py": CODE}))
    assert checked(one(folder, staging), staging) == {STAGED: CODE}


# -- hostile archives ------------------------------------------------------------------------------

def _zip_slip(tmp_path: Path) -> bytes:
    return zip_bytes({"rejection.py": CODE, "../../../evil.py": b"x", "../../../../evil.py": b"x"})


def _tar_members(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    return tar_gz_bytes([(tarfile.TarInfo("rejection.py"), CODE), *members])


def _many(n: int) -> dict[str, bytes]:
    return {f"f{i}.txt": b"" for i in range(n)}


def _big_total() -> dict[str, bytes]:
    """17 members of 1 MiB each: each far below the ratio's floor, over 16 MiB together."""
    return {f"f{i}.bin": bytes(1 << 20) for i in range(17)}


DEEP = "/".join(["d"] * 17) + "/rejection.py"

HOSTILE = {
    "zip-slip": ("zip", _zip_slip, "has a .. in its path"),
    "zip absolute": ("zip", lambda t: zip_bytes({str(t / "abs_evil.py"): b"x"}), "has an absolute path"),
    "zip drive": ("zip", lambda t: zip_bytes({"C:\\evil.py": b"x"}), "has an absolute path"),
    "zip backslash slip": ("zip", lambda t: zip_bytes({"..\\..\\..\\evil.py": b"x"}), "has a .. in its path"),
    "zip symlink": ("zip", lambda t: zip_member("python", b"/", stat.S_IFLNK | 0o777),
                    "member python is a symbolic link"),
    "zip fifo": ("zip", lambda t: zip_member("pipe", b"", stat.S_IFIFO | 0o644),
                 "is a device, FIFO or socket"),
    "zip encrypted": ("zip", lambda t: encrypted_zip(), "member rejection.py is encrypted"),
    "zip too many": ("zip", lambda t: zip_bytes(_many(1001)), "holds more than 1000 members"),
    "zip too big in all": ("zip", lambda t: zip_bytes(_big_total()), "unpacks to more than 16 MiB"),
    "zip twice": ("zip", lambda t: _twice(), "holds a/x.py twice"),
    "zip file and folder": ("zip", lambda t: zip_bytes({"a": b"", "a/rejection.py": CODE}),
                            "kate.zip: a is both a file and a folder in it"),
    "zip too deep": ("zip", lambda t: zip_bytes({DEEP: CODE}), f"member {DEEP} is more than 16 folders deep"),
    "zip corrupt": ("zip", lambda t: b"PK\x03\x04 this is no zip" * 10, "is not a readable zip archive"),
    "zip truncated": ("zip", lambda t: zip_bytes(workspace_files())[:200], "is not a readable zip archive"),
    "tar slip": ("tar.gz", lambda t: _tar_members((tarfile.TarInfo("../../../evil.py"), b"x")),
                 "has a .. in its path"),
    "tar absolute": ("tar.gz", lambda t: _tar_members((tarfile.TarInfo(str(t / "abs_evil.py")), b"x")),
                     "has an absolute path"),
    "tar symlink": ("tar.gz", lambda t: _tar_members(special("python", tarfile.SYMTYPE, "/")),
                    "member python is a symbolic link"),
    "tar hardlink": ("tar.gz", lambda t: _tar_members(special("copy.py", tarfile.LNKTYPE, "/etc/passwd")),
                     "member copy.py is a hard link"),
    "tar fifo": ("tar.gz", lambda t: _tar_members(special("pipe", tarfile.FIFOTYPE)), "is a device or FIFO"),
    "tar device": ("tar.gz", lambda t: _tar_members(special("null", tarfile.CHRTYPE)), "is a device or FIFO"),
    "tar not utf-8": ("tar.gz", lambda t: tar_gz_bytes([(tarfile.TarInfo("bad\udcff.py"), CODE)],
                                                       format=tarfile.GNU_FORMAT, encoding="utf-8",
                                                       errors="surrogateescape"),
                      "member bad\\xff.py has a name that is not valid UTF-8"),
    "tar too many": ("tar.gz", lambda t: tar_of(_many(1001)), "holds more than 1000 members"),
    "tar too big in all": ("tar.gz", lambda t: tar_of(_big_total()), "unpacks to more than 16 MiB"),
    "tar too deep": ("tar.gz", lambda t: tar_of({DEEP: CODE}), f"member {DEEP} is more than 16 folders deep"),
    "tar cut after its end": ("tar.gz", lambda t: _cut_after_end(), "is not a readable tar.gz archive"),
    "zip count lies": ("zip", lambda t: _count_lies(), "holds more than 1000 members"),
    "tar not gzip": ("tar.gz", lambda t: b"plain text, not gzip" * 10, "is not a readable tar.gz archive"),
    "tar truncated": ("tar.gz", lambda t: tar_of(workspace_files())[:-30],
                      "is not a readable tar.gz archive"),
}


def _cut_after_end() -> bytes:
    """A tar.gz cut inside the data its gzip stream holds after the tar's end: only reading the
    stream to its end finds it."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        info = tarfile.TarInfo("rejection.py")
        info.size = len(CODE)
        tf.addfile(info, io.BytesIO(CODE))
    return gzip.compress(raw.getvalue() + os.urandom(1 << 16))[:-(1 << 15)]


def _count_lies() -> bytes:
    """1001 members, and an end record that says 1."""
    data = bytearray(zip_bytes(_many(1001)))
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<2H", data, end + 8, 1, 1)
    return bytes(data)


def _twice() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("a/x.py", CODE)
        zf.writestr("a/x.py", CODE)
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_its_submission_s_problem_and_writes_nothing_outside_staging(
        place, tmp_path, case):
    folder, staging = place
    shape, build, said = HOSTILE[case]
    (folder / f"kate.{shape}").write_bytes(build(tmp_path))
    write_tree(folder / "leo", workspace_files())  # the next submission is still taken
    before = snapshot(tmp_path, staging)
    subs, skipped = run(folder, staging)
    assert skipped == []
    kate, leo = subs
    assert (kate.name, kate.shape, kate.path) == ("kate", shape, None)
    assert kate.problem is not None
    assert said in kate.problem
    assert kate.problem.startswith(f"kate.{shape}")
    assert "\n" not in kate.problem and kate.problem.isprintable()
    assert (leo.shape, leo.problem) == ("workspace", None)
    assert snapshot(tmp_path, staging) == before
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "abs_evil.py").exists()
    assert list(staging.iterdir()) == []  # the partial tree is removed


def test_an_archive_file_over_16_mib_is_not_read(place):
    folder, staging = place
    with open(folder / "kate.zip", "wb") as fh:
        fh.truncate((16 << 20) + 1)
    sub = one(folder, staging)
    assert sub.problem == "kate.zip is over 16 MiB: an archive of a submission is far smaller"


def _count_reads(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[int]:
    read = cls.read
    got: list[int] = []

    def counted(self, *args):
        data = read(self, *args)
        got.append(len(data))
        return data

    monkeypatch.setattr(cls, "read", counted)
    return got


def test_a_zip_bomb_stops_at_the_cap_without_unpacking_its_gigabyte(place, monkeypatch):
    folder, staging = place
    (folder / "kate.zip").write_bytes(bomb_zip(1024))  # 1 GiB of zeros in about 1 MB
    reads = _count_reads(monkeypatch, zipfile.ZipExtFile)
    sub = one(folder, staging)
    assert sub.problem == "kate.zip unpacks to more than 16 MiB: a submission is a few small files"
    assert 0 < sum(reads) <= MAX_UNPACKED + intake_module.CHUNK


def test_a_zip_member_compressed_over_100_times_stops_at_its_ratio(place, monkeypatch):
    folder, staging = place
    data = bomb_zip(64)  # 64 MiB in about 66 KB: 100 times that is below the 16 MiB cap
    compressed = len(zero_deflate(64)[0])
    (folder / "kate.zip").write_bytes(data)
    reads = _count_reads(monkeypatch, zipfile.ZipExtFile)
    sub = one(folder, staging)
    assert sub.problem == (f"kate.zip: member rejection.py unpacks to more than {MAX_RATIO} times its "
                           "compressed size (a zip bomb?)")
    assert MAX_RATIO * compressed < sum(reads) <= MAX_RATIO * compressed + intake_module.CHUNK


def test_a_tar_gz_member_declaring_more_than_the_cap_is_refused_before_it_is_read(place, monkeypatch):
    folder, staging = place
    (folder / "kate.tar.gz").write_bytes(bomb_tar_gz(1024, 1 << 30))
    reads = _count_reads(monkeypatch, gzip.GzipFile)
    sub = one(folder, staging)
    assert sub.problem == "kate.tar.gz unpacks to more than 16 MiB: a submission is a few small files"
    assert 0 < sum(reads) < 1 << 20


@pytest.mark.parametrize("declared", [16 << 20, 0])  # under the cap (it lies) or ending the tar
def test_a_tar_gz_bomb_stops_at_the_cap(place, monkeypatch, declared):
    folder, staging = place
    (folder / "kate.tar.gz").write_bytes(bomb_tar_gz(1024, declared))
    reads = _count_reads(monkeypatch, gzip.GzipFile)
    sub = one(folder, staging)
    assert sub.problem == "kate.tar.gz unpacks to more than 16 MiB: a submission is a few small files"
    assert MAX_UNPACKED < sum(reads) <= MAX_UNPACKED + intake_module.TAR_HEADROOM + 1


def test_a_zip_declaring_more_than_1000_members_is_refused_before_its_directory_is_read(
        place, monkeypatch):
    folder, staging = place
    data = bytearray(zip_bytes({"rejection.py": CODE}))
    struct.pack_into("<2H", data, data.rfind(b"PK\x05\x06") + 8, 5000, 5000)
    (folder / "kate.zip").write_bytes(bytes(data))

    def not_parsed(*args, **kwargs):
        raise AssertionError("the zip's directory was parsed")

    monkeypatch.setattr(zipfile, "ZipFile", not_parsed)
    assert one(folder, staging).problem == "kate.zip holds more than 1000 members"


# -- what is skipped, and the order ----------------------------------------------------------------

def test_every_other_entry_is_skipped_with_why(place, tmp_path):
    folder, staging = place
    write_tree(folder / "kate", workspace_files())
    (folder / "kate.zip").write_bytes(zip_bytes(workspace_files()))
    (folder / "notes.txt").write_text("hi")
    (folder / "README").write_text("hi")
    (folder / "leo.rar").write_bytes(b"Rar!")
    (folder / "link").symlink_to(folder / "kate")
    (folder / "link.py").symlink_to(folder / "kate" / STAGED)
    write_tree(folder / ".hidden", workspace_files())
    (folder / ".DS_Store").write_bytes(b"")
    os.mkfifo(folder / "pipe.zip")
    subs, skipped = run(folder, staging)
    assert [(s.name, s.shape) for s in subs] == [("kate", "workspace")]
    takes = "(ol takes workspace folders, .zip, .tar.gz and .tgz archives and .py files)"
    assert skipped == [
        Skipped(".DS_Store", "hidden"), Skipped(".hidden", "hidden"),
        Skipped("README", f"not a submission: a file with no extension {takes}"),
        Skipped("kate.zip", "another submission is named kate"),
        Skipped("leo.rar", f"not a submission: a .rar file {takes}"),
        Skipped("link", "a symbolic link: never followed"),
        Skipped("link.py", "a symbolic link: never followed"),
        Skipped("notes.txt", f"not a submission: a .txt file {takes}"),
        Skipped("pipe.zip", "a FIFO, socket or device: not a submission"),
    ]
    assert list(staging.iterdir()) == []  # the clashing zip was not unpacked


def test_of_two_entries_named_alike_the_first_in_byte_order_is_taken(place):
    folder, staging = place
    (folder / "kate.zip").write_bytes(zip_bytes(workspace_files()))
    (folder / "kate.tar.gz").write_bytes(tar_of(workspace_files()))
    (folder / "kate.py").write_bytes(CODE)
    subs, skipped = run(folder, staging)
    assert [(s.name, s.shape) for s in subs] == [("kate", "file")]
    assert skipped == [Skipped("kate.tar.gz", "another submission is named kate"),
                       Skipped("kate.zip", "another submission is named kate")]


def test_the_gradebook_s_own_folder_is_neither_a_submission_nor_skipped(place):
    folder, staging = place
    write_tree(folder / "grades", {"gradebook.json": b"{}", "runs/x.py": b""})
    write_tree(folder / "kate", workspace_files())
    assert [s.name for s in run(folder, staging)[0]] == ["grades", "kate"]  # without own: a folder
    subs, skipped = run(folder, staging, own=folder / "grades")
    assert [s.name for s in subs] == ["kate"]
    assert skipped == []


def test_submissions_are_sorted_by_name_each_in_a_place_of_its_own(place):
    folder, staging = place
    (folder / "zoe.py").write_bytes(CODE)
    (folder / "amy.zip").write_bytes(zip_bytes({"rejection.py": b"amy = 1\n"}))
    write_tree(folder / "kate", workspace_files())
    write_tree(folder / "bob", {"rejection.py": b"bob = 1\n"})
    (folder / "cid.tgz").write_bytes(tar_of({"rejection.py": b"cid = 1\n"}))
    write_tree(folder / "amy-2", workspace_files())  # before amy.zip in byte order, after amy by name
    subs, _ = run(folder, staging)
    assert [(s.name, s.shape) for s in subs] == [("amy", "zip"), ("amy-2", "workspace"), ("bob", "folder"),
                                                  ("cid", "tar.gz"), ("kate", "workspace"), ("zoe", "file")]
    del subs[1]
    paths = [s.path for s in subs]
    assert len(set(paths)) == 5
    assert stage(subs[0].path).files == {STAGED: b"amy = 1\n"}  # type: ignore[arg-type]
    assert stage(subs[1].path).files == {STAGED: b"bob = 1\n"}  # type: ignore[arg-type]
    assert stage(subs[2].path).files == {STAGED: b"cid = 1\n"}  # type: ignore[arg-type]


def test_names_are_valid_text(place):
    folder, staging = place
    bad = os.fsencode(folder) + b"/k\xffte"
    os.mkdir(bad)
    write_tree(Path(os.fsdecode(bad)), workspace_files())
    (folder / "a\nb.txt").write_text("x")
    subs, skipped = run(folder, staging)
    assert [s.name for s in subs] == ["k\\xffte"]
    assert skipped[0].name == "a\\nb.txt"
    assert all(s.name.encode("utf-8") and s.name.isprintable() for s in subs)


def test_nothing_is_printed(place, capsys):
    folder, staging = place
    (folder / "notes.txt").write_text("hi")
    (folder / "kate.zip").write_bytes(b"no zip")
    run(folder, staging)
    assert capsys.readouterr() == ("", "")


def test_a_folder_that_cannot_be_listed_is_a_harness_error(tmp_path):
    with pytest.raises(HarnessError) as raised:
        intake(tmp_path / "missing", MODULE_FILE, tmp_path)
    assert raised.value.message.startswith("cannot list ")
    assert raised.value.hint == "give the folder that holds the submissions"
