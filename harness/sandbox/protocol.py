"""The one framing of messages between ol and the processes it supervises.

A message is a JSON object, sent as a 4-byte big-endian length and that many bytes of UTF-8.
Every pair of processes ol runs speaks it: the parent and its isolated worker, the parent and the
``--mine`` fork server (and its runs' reports), the grading parent and its slots. The parent side
(``Connection``) never blocks: it waits with ``poll`` until a deadline, watches the peer's pidfd,
caps the size of a message and treats anything that is not one as ``BadMessage``. The peer side
(``Channel``) is a plain blocking reader and writer.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from collections.abc import Iterator

HEADER = struct.Struct(">I")
_DUMPS = json.JSONEncoder(separators=(",", ":")).encode


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


def next_message(buf: bytearray, limit: int) -> dict | None:
    """The next length-prefixed JSON object of ``buf``, removed from it; None until one is whole.

    ``BadMessage``, saying what came instead: a frame over ``limit`` bytes, or data that is not a
    JSON object. Untrusted input.
    """
    if len(buf) < 4:
        return None
    size = HEADER.unpack_from(buf)[0]
    if size > limit:
        raise BadMessage(f"a message of {size} bytes (the limit is {limit})")
    if len(buf) < 4 + size:
        return None
    body = bytes(buf[4:4 + size])
    del buf[:4 + size]
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"data that is not a message ({type(exc).__name__})") from None
    if not isinstance(message, dict):
        raise BadMessage("a message that is not an object")
    return message


class Connection:
    """The parent's end: messages from ``read_fd``, frames to ``write_fd`` (made non-blocking),
    each wait bounded by a deadline, the peer's death seen through ``pidfd``."""

    def __init__(self, read_fd: int, write_fd: int | None, pidfd: int | None, limit: int) -> None:
        self.read_fd, self.write_fd, self.pidfd, self.limit = read_fd, write_fd, pidfd, limit
        self.buf = bytearray()
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
                data = os.read(self.read_fd, 1 << 20)
                if not data:
                    raise Died()
                self.buf += data
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
