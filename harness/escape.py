"""Text a submission (or a tool) brings, made safe for where it goes: the one home of ol's sanitisers.

Three jobs, one function each (and none does another's):

- **Shown** on a terminal or in a report: ``printable``, applied by every reporter. A student's
  exception message, test name or output can hold terminal escape sequences (``\\x1b[2K\\x1b[1A``
  erases the failure lines above it and prints a fake "19 passed"), a carriage return that
  overwrites a line, an OSC sequence that retitles the window, Unicode bidi controls that reorder
  what a reader sees (Trojan Source), or a lone surrogate that no UTF-8 stream can encode (the
  print would crash). ``printable`` shows each of them as a visible escape instead, in Python's
  own notation, so the reader sees exactly what the code produced. Line feeds and tabs are kept;
  every other character is unchanged, backslashes included, so ``printable`` is idempotent and
  leaves ordinary text alone.
- **Written** to a file (JSON, CSV): ``valid_text``, and ``valid_data`` throughout plain data. Only
  what no UTF-8 writer accepts is escaped (a lone surrogate; a file name's byte that is not UTF-8
  as ``\\xff``); controls are the file format's business (JSON escapes them) and the reader's
  (every reporter still applies ``printable``).
- **Logged** from a terminal program ol runs on its own code (mutmut): ``plain_log`` removes its
  colours and spinner redraws. Never for a submission's text, which is shown, never removed.

(JSON's other gap, non-finite floats, is a number's matter: ``harness.engine.serial``.)
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls but tab and line feed, DEL and the C1 controls, the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069), the bidi marks (U+200E, U+200F, U+061C), and the
# surrogates (which only occur alone in a str: a valid pair is one code point).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                    "\ud800-\udfff]")
_NAMED = {"\r": "\\r"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# A CSI sequence: colours, cursor moves, erasing (what a terminal program's progress writes).
_CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character but ``\\n`` and ``\\t`` shown as an escape.

    ``printable("\\x1b[2Kok\\r")`` is ``"\\\\x1b[2Kok\\\\r"``; bidi controls become ``\\u202e``,
    a lone surrogate ``\\ud800``. Anything that is not a ``str`` is shown through ``str`` first.
    """
    if not isinstance(text, str):
        text = str(text)
    return UNSAFE.sub(_visible, text)


def one_line(text: str) -> str:
    """``printable`` on one line: a line feed is shown as ``\\n`` too (an error line, a row of a
    progress list or a table cell can quote a submission's text)."""
    return printable(text).replace("\n", "\\n")


def has_unsafe(text: str) -> bool:
    """Whether ``printable`` would change ``text``."""
    return UNSAFE.search(text) is not None


def _escaped_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    # os.fsdecode's stand-in for a byte that is not UTF-8 (U+DC80-U+DCFF): shown as that byte
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def valid_text(text: str) -> str:
    """``text`` as text any UTF-8 writer accepts, what is valid already returned as it is: a byte
    of a file name that is not UTF-8 (``os.fsdecode``'s ``\\udcff``) as ``\\xff``, any other lone
    surrogate as ``\\ud800``; nothing else changes. Idempotent."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escaped_surrogate, text)


def valid_data(value: Any) -> Any:
    """``value`` (plain data, as JSON holds it) with every string made ``valid_text``, keys too,
    throughout its dicts, lists and tuples (a tuple comes back a list, as JSON writes it);
    anything else as it is. Idempotent."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(k): valid_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_data(v) for v in value]
    return value


def plain_log(text: str) -> str:
    """A terminal program's output as a plain log: its colour and cursor sequences removed, each
    line a carriage return redrew (a spinner) as its last state, no trailing blanks, one final line
    feed. For a tool ol runs on its own code (mutmut); a submission's text goes through
    ``printable``."""
    lines = [_CSI.sub("", line).split("\r")[-1].rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip() + "\n"
