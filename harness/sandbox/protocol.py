"""The one framing of messages between ol and the processes it supervises.

A message is a JSON object, sent as a 4-byte big-endian length and that many bytes of UTF-8.
Every pair of processes ol runs speaks it: the parent and its isolated worker, the parent and the
``--mine`` fork server (and its runs' reports), the grading parent and its slots. The parent side
(``Connection``) never blocks: it waits with ``poll`` until a deadline, watches the peer's pidfd,
caps the size of a message and treats anything that is not one as ``BadMessage``. The peer side
(``Channel``) is a plain blocking reader and writer.

What the parent reads is untrusted (a worker runs the student's code), so its cost is bounded
before it is parsed: ``measure`` counts a message's values and its nesting in a few passes of
``bytes`` methods over the raw frame (C speed, linear), and a frame over ``MAX_VALUES`` values or
``MAX_NESTING`` levels is ``BadMessage`` without ever being handed to ``json``. Without this a 32 MiB
frame of empty lists (``[[],[],...]``) cost the parent a gigabyte and a minute before any check.
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import time
from collections.abc import Iterator

HEADER = struct.Struct(">I")
_DUMPS = json.JSONEncoder(separators=(",", ":")).encode
# What one message may hold. A worker's chunk of replies holds at most 1 MiB of them unless it is
# a single reply (``worker._send`` halves it): at most 160 000 values however the answers are made
# (the densest: tuples of None, 13 bytes a value), 3100 for the largest the catalogs get (M06.3's
# tables of floats; an array is one value, its base64 text). A single reply larger than that is
# no answer the contracts allow (a scalar, a short tuple, an array): refused, fail closed. A
# grading slot's row holds a few hundred, a ``--mine`` message a few (the report is a string,
# read in its turn with caps of its own). A reply nests at most 22 deep: the codec's 9 levels of
# values, each an object and its list of items, under the message, its table and the reply.
MAX_VALUES = 1 << 18
MAX_NESTING = 32

# ``measure``'s passes: the bytes that shape a JSON text ({ and } read as [ and ]), and a string.
_SHAPE = bytes.maketrans(b"{}", b"[]")
_NOT_SHAPE = bytes(b for b in range(256) if b not in b'[]{},"')
_STRING = re.compile(rb'"[^"]*"')


class Hung(Exception):
    """No whole message before the deadline."""


class Died(Exception):
    """The peer's channel closed or the peer exited."""


class BadMessage(Exception):
    """What arrived where a length-prefixed JSON object was due; the text says what it was."""


def frame(message: dict | str) -> bytes:
    """A message (or its JSON text) as the bytes that carry it."""
    data = (message if isinstance(message, str) else _DUMPS(message)).encode("utf-8")
    return HEADER.pack(len(data)) + data


def measure(data: bytes, max_items: int = MAX_VALUES, stop: int = MAX_NESTING) -> tuple[int, int]:
    """How many values ``json.loads`` builds from the UTF-8 JSON text ``data`` (containers
    included; an object's key goes with its value) and how deep they nest. Over ``max_items``
    values the count stops early (more than ``max_items``; the depth then 0); over ``stop``
    levels the depth is ``stop + 1``; -1 when the brackets do not pair (not JSON).

    For a JSON text the count is exact but for one more per empty container or repeated key, the
    depth exact. For anything else both are exact up to where ``json`` stops, over after it:
    whatever ``json`` builds lies in the longest prefix that can begin a JSON text, where
    backslashes occur only in strings and every quote not escaped opens or closes one.

    Linear and at C speed: a handful of passes of ``bytes`` methods over ``data``, a regular
    expression over at most ``4 * max_items`` quotes (only when a string holds a bracket or a
    comma), and at most ``stop + 1`` passes over the brackets of at most ``max_items``
    containers. Untrusted input.
    """
    if b"\\" in data:  # escapes, in strings only: pairs of backslashes, then escaped quotes
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    shape = data.translate(_SHAPE, _NOT_SHAPE)  # [ ] , and the quotes
    quotes = shape.count(b'"')
    if quotes > 4 * max_items:  # a string is a value or the key of one: over max_items values
        return max_items + 1, 0
    if quotes != 2 * shape.count(b'""'):  # a string holds [ ] { } or a comma: strings out
        shape = _STRING.sub(b"", shape)
    commas = shape.count(b",")
    brackets = shape.translate(None, b',"')
    del shape
    items = commas + brackets.count(b"[") + 1
    if items > max_items:
        return items, 0
    depth = 0
    while brackets and depth <= stop:
        inner = brackets.replace(b"[]", b"")  # the innermost level: one per pass
        if len(inner) == len(brackets):
            return items, -1
        brackets, depth = inner, depth + 1
    return items, depth


def bounded_loads(data: bytes, max_items: int = MAX_VALUES, max_nesting: int = MAX_NESTING,
                  ) -> object:
    """``json.loads(data)`` (UTF-8) once ``measure`` has found it within ``max_items`` values and
    ``max_nesting`` levels; ``BadMessage``, saying what it is, for anything else."""
    items, depth = measure(data, max_items, max_nesting)
    if items > max_items:
        raise BadMessage(f"a message of more than {max_items} values")
    if depth > max_nesting:
        raise BadMessage(f"a message nested more than {max_nesting} deep")
    try:
        if depth < 0:
            raise ValueError("unpaired brackets")
        return json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise BadMessage(f"data that is not a message ({type(exc).__name__})") from None


def next_message(buf: bytearray, limit: int) -> dict | None:
    """The next length-prefixed JSON object of ``buf``, removed from it; None until one is whole.

    ``BadMessage``, saying what came instead: a frame over ``limit`` bytes, over ``MAX_VALUES``
    values or ``MAX_NESTING`` levels (``bounded_loads``: found before it is parsed), or data that is
    not a JSON object. Untrusted input.
    """
    if len(buf) < 4:
        return None
    size = HEADER.unpack_from(buf)[0]
    if size > limit:
        raise BadMessage(f"a message of {size} bytes (the limit is {limit})")
    if len(buf) < 4 + size:
        return None
    with memoryview(buf) as view:
        body = bytes(view[4:4 + size])  # one copy (a slice of ``buf`` and its bytes would be two)
    del buf[:4 + size]
    message = bounded_loads(body)
    if not isinstance(message, dict):
        raise BadMessage("a message that is not an object")
    return message


class Connection:
    """The parent's end: messages from ``read_fd``, frames to ``write_fd`` (made non-blocking),
    each wait bounded by a deadline, the peer's death seen through ``pidfd``."""

    def __init__(self, read_fd: int, write_fd: int | None, pidfd: int | None, limit: int) -> None:
        self.read_fd, self.write_fd, self.pidfd, self.limit = read_fd, write_fd, pidfd, limit
        self.buf = bytearray()
        # What one read takes, read into the same buffer each time: ``os.read`` of 1 MiB maps,
        # shrinks and unmaps a fresh 1 MiB for every message (17 us; ``readv`` into this: 1 us).
        self.room = memoryview(bytearray(1 << 20))
        self.frames: Iterator[bytes] | None = None
        self.out = memoryview(b"")
        self.poller, self.write_poller = select.poll(), select.poll()
        for poller in (self.poller, self.write_poller):
            poller.register(read_fd, select.POLLIN)
            if pidfd is not None:
                poller.register(pidfd, select.POLLIN)
        if write_fd is not None:
            os.set_blocking(write_fd, False)
            self.write_poller.register(write_fd, select.POLLOUT)

    @property
    def idle(self) -> bool:
        """Nothing unread and nothing left to write."""
        return not self.buf and self.frames is None and not self.out

    def send_eof(self) -> None:
        """No more messages: the peer reads the end of its stream (our write end is closed; the
        descriptor number stays reserved, on /dev/null, until ``close``)."""
        if self.write_fd is not None:
            null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
            os.dup2(null, self.write_fd)
            os.close(null)

    def feed(self, frames: Iterator[bytes]) -> None:
        """Frames to write while waiting for messages (made lazily, in the parent's idle time)."""
        self.frames, self.out = frames, memoryview(b"")

    def send(self, message: dict | str, deadline: float) -> None:
        """One message, written before ``deadline`` (``Hung`` if the peer stops reading)."""
        self.feed(iter((frame(message),)))
        while self._write_some():
            if not self.write_poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
                raise Hung()
            if self._peer_gone():
                raise Died()

    def _peer_gone(self) -> bool:
        return self.pidfd is not None and bool(_ready(self.pidfd))

    def _write_some(self) -> bool:
        """Write what the pipe takes now; whether anything is left to write."""
        while True:
            if not self.out:
                item = next(self.frames, None) if self.frames is not None else None
                if item is None:
                    self.frames = None
                    return False
                self.out = memoryview(item)
            assert self.write_fd is not None, "frames are fed only to a connection that writes"
            try:
                self.out = self.out[os.write(self.write_fd, self.out):]
            except BlockingIOError:
                return True
            except BrokenPipeError:
                raise Died() from None

    def _parse(self) -> dict | None:
        return next_message(self.buf, self.limit)

    def recv(self, deadline: float) -> dict:
        """The next message; ``Hung`` at the deadline, ``Died`` when the peer is gone,
        ``BadMessage`` for anything that is not a message."""
        while True:
            message = self._parse()
            if message is not None:
                return message
            writing = self.frames is not None or bool(self.out)
            if writing:
                writing = self._write_some()
            wait = deadline - time.monotonic()
            if self.pidfd is None:
                wait = min(wait, 0.1)
            poller = self.write_poller if writing else self.poller
            events = dict(poller.poll(max(0, int(wait * 1000 + 1))))  # 0: past the deadline
            if events.get(self.read_fd):
                size = os.readv(self.read_fd, [self.room])
                if not size:
                    raise Died()
                self.buf += self.room[:size]
            elif self.pidfd is not None and events.get(self.pidfd):
                raise Died()
            if time.monotonic() >= deadline:  # even while bytes trickle in: a message is due
                message = self._parse()
                if message is None:
                    raise Hung()
                return message


def _ready(fd: int) -> list:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return poller.poll(0)


class Channel:
    """The supervised process's end: blocking reads of messages, blocking writes of frames."""

    def __init__(self, request_fd: int, reply_fd: int) -> None:
        self.request_fd, self.reply_fd = request_fd, reply_fd
        self._read, self._write, self._loads = os.read, os.write, json.loads

    def _exactly(self, n: int) -> bytes | None:
        parts, left = [], n
        while left:
            data = self._read(self.request_fd, min(left, 1 << 20))
            if not data:
                return None
            parts.append(data)
            left -= len(data)
        return b"".join(parts)

    def recv(self) -> dict | None:
        """The next message, or None when the other end closed the pipe."""
        header = self._exactly(4)
        if header is None:
            return None
        body = self._exactly(HEADER.unpack(header)[0])
        return None if body is None else self._loads(body)

    def send_text(self, text: str) -> None:
        """A message given as its JSON text."""
        view = memoryview(frame(text))
        while view:
            view = view[self._write(self.reply_fd, view):]

    def send(self, message: dict) -> None:
        self.send_text(_DUMPS(message))
