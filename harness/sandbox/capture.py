"""What the code under test prints, kept per request in the isolated worker (pytest's "sys" capture).

A student whose test failed needs to see what their code printed during it. The worker replaces
``sys.stdout`` and ``sys.stderr`` with two ``Stream``s over one ``Capture`` (so both keep their
order, as on a terminal) for every request; ``Server._send`` takes what was written with each
chunk of replies, and the parent adds it to ``target.output``. The text crosses as a JSON string
inside the worker's own reply message: nothing the code prints reaches the reply pipe raw, so a
print can neither break the framing nor forge a reply (writes to the descriptors themselves,
``os.write(1, ...)``, still go to the drained pipe, capped and never shown).

Bounded: a request keeps its first ``cap`` characters and only counts the rest, so a student
printing a gigabyte costs the worker ``cap`` characters of memory and one comparison per write.
Nothing printed costs nothing but a test of ``Capture.dropped`` and ``Capture.parts`` per chunk.
Lock-free: a thread of the student's that prints while the server takes the text may put at most
one more ``cap`` in the next chunk, which the parent cuts (it keeps ``cap`` per test whatever
arrives).

A call that never returns sends no chunk, nor does a worker that dies: so what was printed since
the last chunk is also written to a shared page (``Mirror``, the worker's progress page after its
first ``PAGE_HEAD`` bytes), which the parent reads when it gives up on a call or sees the worker
die (``read_mirror``), and shows like any other output. The page is the worker's to write: the
parent reads it as untrusted bytes (at most ``MIRROR_BYTES``, decoded with replacement).
"""

from __future__ import annotations

import io

KEPT = 2000  # characters kept per request here, and per test by the parent (``target.output``)
# The progress page shared with the parent: four int64 (the request in progress, its call, the
# bytes mirrored, the characters dropped), then the mirror of what the current chunk printed:
# KEPT characters, each at most 6 bytes as UTF-8 with a lone surrogate backslash-escaped.
PAGE_HEAD, MIRROR_BYTES = 32, 6 * KEPT
PAGE_BYTES = PAGE_HEAD + MIRROR_BYTES
_str, _len, _isinstance, _type = str, len, isinstance, type
_as_str = str.__str__  # the plain str of a str subclass, whatever its own __str__ or __len__ say


class Capture:
    """The text one request's code wrote: ``parts`` (at most ``cap`` characters in all) and the
    number of characters written beyond them (``dropped``)."""

    def __init__(self, cap: int, mirror: Mirror | None = None) -> None:
        self.cap = cap
        self.room = cap
        self.parts: list[str] = []
        self.dropped = 0
        self.mirror = mirror

    def begin(self) -> None:
        """A new request: a fresh budget of ``cap`` characters."""
        self.room = self.cap

    def add(self, text: str) -> None:
        size = _len(text)
        room = self.room
        if size <= room:
            self.parts.append(text)
            self.room = room - size
            if self.mirror is not None:
                self.mirror.add(text, 0)
        else:
            if room:
                self.parts.append(text[:room])
                self.room = 0
            self.dropped += size - room
            if self.mirror is not None:
                self.mirror.add(text[:room], size - room)

    def take(self) -> tuple[str, int] | None:
        """What was written since the last ``take`` (text, characters dropped), or None."""
        if not self.parts and not self.dropped:
            return None
        parts, self.parts = self.parts, []
        dropped, self.dropped = self.dropped, 0
        if self.mirror is not None:
            self.mirror.clear()
        return "".join(parts), dropped


class Mirror:
    """What was printed since the last chunk, as the parent can read it without a message: the
    UTF-8 bytes after ``PAGE_HEAD`` in ``page`` (``MIRROR_BYTES`` at most), their count and the
    characters dropped in the page's third and fourth int64."""

    def __init__(self, page: memoryview) -> None:
        self.counts = page[16:PAGE_HEAD].cast("q")
        self.data = page[PAGE_HEAD:PAGE_BYTES]

    def add(self, text: str, dropped: int) -> None:
        counts = self.counts
        if text:
            data = text.encode("utf-8", "backslashreplace")
            used = min(max(counts[0], 0), MIRROR_BYTES)
            size = min(_len(data), MIRROR_BYTES - used)
            self.data[used:used + size] = data[:size]
            counts[0] = used + size
            if size < _len(data):  # only a thread printing while a chunk is taken gets here
                dropped += _len(data) - size
        if dropped:
            counts[1] += dropped

    def clear(self) -> None:
        self.counts[0] = self.counts[1] = 0


def read_mirror(page: memoryview) -> tuple[str, int]:
    """The parent's reading of a worker's ``Mirror``: (text printed, characters dropped), decoded
    as untrusted data (every count bounded, invalid bytes replaced)."""
    counts = page[16:PAGE_HEAD].cast("q")
    used, dropped = min(max(counts[0], 0), MIRROR_BYTES), min(max(counts[1], 0), 1 << 50)
    return bytes(page[PAGE_HEAD:PAGE_HEAD + used]).decode("utf-8", "replace"), dropped


class Stream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` in the worker: a text stream that writes into a
    ``Capture``. It cannot be closed (the next request would lose its output), has no descriptor
    (``fileno`` raises ``io.UnsupportedOperation``, as pytest's capture does), and takes any str,
    lone surrogates included (the parent shows them escaped)."""

    encoding = "utf-8"
    errors = "backslashreplace"
    newlines = None

    def __init__(self, capture: Capture, name: str) -> None:
        super().__init__()
        self._add = capture.add
        self.name = name
        self.buffer = _Bytes(self)

    def write(self, text: str) -> int:
        if _type(text) is not _str:
            if not _isinstance(text, _str):
                raise TypeError(f"write() argument must be str, not {_type(text).__name__}")
            text = _as_str(text)
        self._add(text)
        return _len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        """Never closed: see the class docstring."""

    @property
    def closed(self) -> bool:
        return False


class _Bytes:
    """``sys.stdout.buffer``: bytes written there are decoded (UTF-8, invalid bytes escaped)."""

    def __init__(self, stream: Stream) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        data = bytes(memoryview(data))  # never bytes(n): n zero bytes
        self._stream.write(data.decode("utf-8", "backslashreplace"))
        return _len(data)

    def flush(self) -> None:
        """Nothing is buffered."""

    def writable(self) -> bool:
        return True
