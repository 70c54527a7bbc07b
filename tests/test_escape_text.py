"""``harness.escape``: the sanitisers, one per job (shown: ``printable``; written: ``valid_text``,
``valid_data``; logged: ``plain_log``), each leaving what it does not concern alone."""

from __future__ import annotations

import os

from harness.escape import one_line, plain_log, printable, valid_data, valid_text
from harness.sandbox.codec import clean_text
from harness.sandbox.staging import text_of_name

SAMPLES = ["plain", "", "caf\u00e9 \u2713", "a\ud800b", "x\udcffy", os.fsdecode(b"sub\xff\xfe"),
           "\udc80\udfff\ud800", "tab\tand\nline \x1b[31mred\x1b[0m \u202e", "\\ud800 already"]


def test_valid_text_escapes_only_what_utf8_cannot_write():
    assert valid_text("a\ud800b") == "a\\ud800b"
    assert valid_text(os.fsdecode(b"sub\xff")) == "sub\\xff"  # a file name's byte, as that byte
    text = "tab\tand\nline \x1b[31mred \u202e"
    assert valid_text(text) is text  # controls are the format's and the reader's business
    for sample in SAMPLES:
        once = valid_text(sample)
        once.encode("utf-8")
        assert valid_text(once) == once


def test_the_sandbox_makes_text_valid_as_valid_text_does():
    """The sandbox's staging (file names) and codec (a worker's strings) use ``valid_text``: a
    file name's byte that is not UTF-8 is ``\\xff`` in both, whatever the worker sent."""
    printable_samples = [s for s in SAMPLES if s.isprintable()]
    assert [text_of_name(s) for s in printable_samples] == [valid_text(s) for s in printable_samples]
    assert [clean_text(s) for s in SAMPLES] == [valid_text(s) for s in SAMPLES]
    assert clean_text("x\udcffy") == text_of_name(b"x\xffy") == "x\\xffy"


def test_valid_data_makes_every_string_valid_keys_too_and_leaves_the_rest():
    data = {"a\ud800": ["x\udcff", ("t\ud801", 1.5), None], "n": 3, "ok": True, "f": float("nan")}
    out = valid_data(data)
    assert list(out) == ["a\\ud800", "n", "ok", "f"]
    assert out["a\\ud800"] == ["x\\xff", ["t\\ud801", 1.5], None]
    assert out["n"] == 3 and out["ok"] is True and out["f"] != out["f"]
    del out["f"]
    assert valid_data(out) == out  # idempotent
    assert valid_data("x\ud800") == "x\\ud800" and valid_data(7) == 7


def test_printable_shows_what_valid_text_keeps():
    text = "ok\x1b[2K\r\u202e"
    assert valid_text(text) == text
    assert printable(text) == "ok\\x1b[2K\\r\\u202e"


def test_one_line_shows_a_line_feed_as_its_escape_too():
    assert one_line("x\n  [2/2] zed pass\x1b[2J\t\u202e") == "x\\n  [2/2] zed pass\\x1b[2J\t\\u202e"


def test_plain_log_removes_colours_and_keeps_a_spinners_last_state():
    raw = ("\x1b[32mrunning\x1b[0m  \n"
           "1/3 \u280b\r2/3 \u2819\r3/3 done   \n"
           "\n"
           "\x1b[1;31mkilled\x1b[0m: 12\n\n")
    assert plain_log(raw) == "running\n3/3 done\n\nkilled: 12\n"
    assert plain_log("") == "\n"
    assert plain_log(plain_log(raw)) == plain_log(raw)
