"""The send path: a bounded buffer of framed messages and one writer task that drains it.

Messages queued while a write is in progress go out together in the next `send_all`, so a
burst of notifications costs one system call, not one each. The buffer is bounded: a
sender waits while `max_buffered_bytes` are queued or being written, so a slow reader slows
the writer instead of growing memory. A sender also yields every `YIELD_BYTES`, so the writer
runs while a burst is produced, and a lone message is written at once (latency).
"""

from __future__ import annotations

import typing
from collections.abc import Callable

from .._loop import Event, current_loop, stream_errors
from ..errors import ConnectionClosed
from ..streams.byte_stream import ByteStream
from .options import ConnectionOptions

DEFAULT_MAX_BUFFERED_BYTES = ConnectionOptions.max_buffered_bytes
"""Default bound of the buffer: the connection's."""
_LF = b"\n"
YIELD_BYTES = 64 * 1024
"""A sender yields to the scheduler after queueing this much, so the writer keeps writing."""


@typing.runtime_checkable
class DirectWrite(typing.Protocol):
    """A stream that can write without waiting (acpwire.streams.pipes.PipeStream)."""

    def try_send(self, parts: list[bytes]) -> int:
        """Write what fits now; how many bytes were written (0 on any error: the writer
        task's `send_all` then reports it)."""
        ...


class Outbox:
    __slots__ = (
        "_direct",
        "_has_data",
        "_has_room",
        "_idle",
        "_queue",
        "_queued",
        "_stream_errors",
        "_unyielded",
        "_writing",
        "_wrote_directly",
        "error",
        "loop",
        "max_buffered_bytes",
        "on_failure",
        "stream",
    )

    def __init__(
        self,
        stream: ByteStream,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        on_failure: Callable[[ConnectionClosed], None] | None = None,
    ):
        self.stream = stream
        self.on_failure = on_failure
        self.max_buffered_bytes = max_buffered_bytes
        self._queue: list[bytes] = []  # the messages, in order, each without its newline
        self._queued = 0
        self._unyielded = 0  # bytes queued since the last sender yielded to the scheduler
        self._writing = False  # a batch is being written
        self._direct = stream.try_send if isinstance(stream, DirectWrite) else None
        self._wrote_directly = False  # since the writer last ran
        self.loop = current_loop()
        self._stream_errors = stream_errors(self.loop)
        self._has_data = self.loop.Event()
        self._has_room: Event | None = None  # made when a sender has to wait for room
        self._idle: Event | None = None  # made by flush() when it has to wait
        self.error: ConnectionClosed | None = None

    @property
    def full(self) -> bool:
        """True when a sender must `await room()` before queueing: the buffer is full, or
        it is time to let the writer run."""
        return self._queued >= self.max_buffered_bytes or self._unyielded >= YIELD_BYTES

    async def room(self) -> None:
        """Wait until the buffer has room (or writing failed)."""
        if self._unyielded >= YIELD_BYTES:
            # A sender that never waits would starve the writer (and all I/O) until the
            # buffer filled up, and the peer would sit idle meanwhile.
            self._unyielded = 0
            await self.loop.checkpoint()
        while self._queued >= self.max_buffered_bytes and self.error is None:
            if self._has_room is None or self._has_room.is_set():
                self._has_room = self.loop.Event()
            await self._has_room.wait()

    def offer(self, message: bytes, bounded: bool = True) -> bool:
        """Queue a message when no sender has to wait (`full` is False): True; else False,
        and nothing is queued (the sender then does `await room()` and `put_nowait`). One
        call for the common case of a send (latency); raises once writing failed.
        `bounded=False` is `put_nowait`.

        `message` is one JSON text without raw newlines (JsonRpcCore's encoding checks that).
        On a stream that can write without waiting (`DirectWrite`), a message sent while the
        writer is idle goes out at once: a lone request or answer then costs no trip through
        the writer task (latency). Only the first one until the writer has run again, so a
        burst is still written in one piece (`input_arrived` also allows it again)."""
        if bounded and (self._queued >= self.max_buffered_bytes or self._unyielded >= YIELD_BYTES):
            return False
        if self.error is not None:
            raise self.error
        size = len(message) + 1
        self._unyielded += size
        queue = self._queue
        if self._direct is not None and not (queue or self._writing or self._wrote_directly):
            # cleared when the writer next runs, or when input arrives (`input_arrived`)
            self._wrote_directly = True
            sent = self._direct([message, _LF])
            if sent == size:
                return True
            message = message[sent:] if sent < size - 1 else b""  # what the pipe did not take
            size -= sent
        # No `message + b"\n"`: the one copy is the writer's join, which adds the newlines
        # (b"" when the newline is all that is left of it).
        queue.append(message)
        self._queued += size
        if len(queue) == 1:  # the first of a batch: the writer is told once per batch
            self._has_data.set()
        return True

    def put_nowait(self, message: bytes) -> None:
        """Queue a message at once, past the bound (never waits); raises once writing failed
        (`offer` says how it is sent)."""
        self.offer(message, bounded=False)

    def input_arrived(self) -> None:
        """The peer wrote to us: what we send next answers it, so the next lone message may
        be written directly again (a request/response exchange then never wakes the writer
        task; a burst still wakes it from its second message on)."""
        self._wrote_directly = False

    async def run(self) -> None:
        """The writer task: drain the queue until cancelled or the stream breaks."""
        while True:
            await self._has_data.wait()
            self._has_data = self.loop.Event()
            self._wrote_directly = False
            if not self._queue:
                continue
            parts, self._queue = self._queue, []
            self._writing = True
            try:
                for data in _pieces(parts, self._queued):
                    await self.stream.send_all(data)
                    # bytes in flight count against the bound until they are written
                    self._queued -= len(data)
                    if self._queued < self.max_buffered_bytes and self._has_room is not None:
                        self._has_room.set()
            except self._stream_errors as exc:
                self.fail(ConnectionClosed(f"cannot write to the peer: {exc!r}"))
                return
            finally:
                self._writing = False
            if not self._queue and self._idle is not None:
                self._idle.set()

    def fail(self, error: ConnectionClosed) -> None:
        """Stop accepting messages (writers waiting for room are woken to see the error)."""
        if self.error is None:
            self.error = error
            if self.on_failure is not None:
                self.on_failure(error)
        if self._has_room is not None:
            self._has_room.set()
        if self._idle is not None:
            self._idle.set()

    async def flush(self) -> None:
        """Wait until everything queued so far has been written (or writing failed)."""
        while (self._queue or self._writing) and self.error is None:
            if self._idle is None or self._idle.is_set():
                self._idle = self.loop.Event()
            await self._idle.wait()


WRITE_BYTES = 256 * 1024


def _pieces(parts: list[bytes], size: int) -> typing.Iterator[bytes]:
    """The queued messages joined for writing, each followed by its newline: at once when
    small, else in pieces of about WRITE_BYTES, each released as it goes, so a big backlog
    is never held twice."""
    if size <= WRITE_BYTES:
        parts.append(b"")  # the last newline, in the same copy
        yield _LF.join(parts)
        return
    while parts:
        end, taken = 0, 0
        while end < len(parts) and taken < WRITE_BYTES:
            taken += len(parts[end]) + 1
            end += 1
        piece = parts[:end]
        piece.append(b"")
        del parts[:end]
        data = _LF.join(piece)
        yield data
