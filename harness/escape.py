"""Text from a submission made harmless to show: ``printable`` is applied by every reporter.

A student's exception message, test name or output can hold terminal escape sequences
(``\\x1b[2K\\x1b[1A`` erases the failure lines above it and prints a fake "19 passed"), a
carriage return that overwrites a line, an OSC sequence that retitles the window, Unicode bidi
controls that reorder what a reader sees (Trojan Source), or a lone surrogate that no UTF-8
stream can encode (the print would crash). ``printable`` shows each of them as a visible
escape instead, in Python's own notation, so the reader sees exactly what the code produced.
Line feeds and tabs are kept; every other character is unchanged, backslashes included, so
``printable`` is idempotent and leaves ordinary text alone.
"""

from __future__ import annotations

import re

# C0 controls but tab and line feed, DEL and the C1 controls, the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069), the bidi marks (U+200E, U+200F, U+061C), and the
# surrogates (which only occur alone in a str: a valid pair is one code point).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                    "\ud800-\udfff]")
_NAMED = {"\r": "\\r"}


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


def has_unsafe(text: str) -> bool:
    """Whether ``printable`` would change ``text``."""
    return UNSAFE.search(text) is not None
