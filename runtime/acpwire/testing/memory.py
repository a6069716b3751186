"""In-process streams for testing agents and clients, on trio and on asyncio alike.

`memory_stream_pair()` connects two endpoints without a subprocess or a socket: what one end
sends, the other receives. It runs on whichever event loop is running (it is built on anyio),
so one test can check an agent and a client on trio and on asyncio (the example is in
`acpwire.testing`'s documentation).

The streams behave like a pipe in each direction: `receive_some` returns b"" once the peer has
sent EOF (`send_eof`) or closed its end (`aclose`) and everything it sent was read; sending
once the peer closed its end raises anyio's `BrokenResourceError`, using an end after closing
it raises anyio's `ClosedResourceError`. With `max_buffered_bytes` a sender waits while that many
bytes are unread, which makes back-pressure observable.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel

__all__ = ["MemoryStream", "memory_stream_pair"]


class _Pipe:
    """One direction: bytes written at one end and read at the other."""

    def __init__(self, max_buffered_bytes: int | None) -> None:
        self.buffer = bytearray()
        self.max_buffered_bytes = max_buffered_bytes
        self.writer_closed = False  # EOF once the buffer is read
        self.reader_closed = False
        self._changed: anyio.Event | None = None

    def room(self) -> int | None:
        """How many bytes a writer may add now (None: any number)."""
        if self.max_buffered_bytes is None:
            return None
        return max(0, self.max_buffered_bytes - len(self.buffer))

    def changed(self) -> None:
        """Wake whoever waits on this pipe (a reader for data, a writer for room)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_for_change(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()


class MemoryStream:
    """One end of a `memory_stream_pair()`: a bidirectional byte stream with trio's stream
    methods (`receive_some`, `send_all`, `send_eof`, `aclose`, `wait_send_all_might_not_block`),
    and `aclose_receiving` to close the reading direction alone.

    One task at a time may send, and one at a time may receive (anyio's `BusyResourceError`
    otherwise); sending and receiving may overlap.
    """

    def __init__(self, outgoing: _Pipe, incoming: _Pipe) -> None:
        """Built by `memory_stream_pair()`. @private"""
        self._outgoing = outgoing
        self._incoming = incoming
        self._sending = False
        self._receiving = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send all of `data`, waiting for room while a bounded pipe is full.

        Raises `ClosedResourceError` when this end was closed or sent EOF, and
        `BrokenResourceError` when the other end was closed (possibly after part of `data`).
        """
        if self._sending:
            raise anyio.BusyResourceError("sending")
        self._sending = True
        try:
            await anyio.lowlevel.checkpoint()
            remaining = memoryview(data).cast("B")
            while True:
                self._check_can_send()
                room = self._outgoing.room()
                if room != 0:
                    taken = remaining if room is None else remaining[:room]
                    self._outgoing.buffer += taken
                    self._outgoing.changed()
                    remaining = remaining[len(taken) :]
                if not remaining:
                    return
                await self._outgoing.wait_for_change()
        finally:
            self._sending = False

    async def wait_send_all_might_not_block(self) -> None:
        """Return once a bounded pipe has room (at once for an unbounded one)."""
        await anyio.lowlevel.checkpoint()
        pipe = self._outgoing
        while pipe.room() == 0 and not pipe.writer_closed and not pipe.reader_closed:
            await pipe.wait_for_change()

    async def send_eof(self) -> None:
        """Tell the other end no more data comes (its `receive_some` then returns b"")."""
        await anyio.lowlevel.checkpoint()
        self._close_outgoing()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """Up to `max_bytes` bytes (all that is buffered with None), waiting until some are
        there; b"" at EOF. Raises `ClosedResourceError` when this end was closed."""
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be None or at least 1")
        if self._receiving:
            raise anyio.BusyResourceError("receiving")
        self._receiving = True
        try:
            await anyio.lowlevel.checkpoint()
            pipe = self._incoming
            while not pipe.buffer and not pipe.writer_closed and not pipe.reader_closed:
                await pipe.wait_for_change()
            if pipe.reader_closed:
                raise anyio.ClosedResourceError
            size = len(pipe.buffer) if max_bytes is None else min(max_bytes, len(pipe.buffer))
            data = bytes(pipe.buffer[:size])
            del pipe.buffer[:size]
            pipe.changed()
            return data
        finally:
            self._receiving = False

    async def aclose(self) -> None:
        """Close this end: the other end reads EOF, and its sends fail from now on."""
        self._close_outgoing()
        self._close_incoming()
        await anyio.lowlevel.checkpoint()

    async def aclose_receiving(self) -> None:
        """Stop reading but go on sending, like a process that closed its stdin: the other
        end's sends fail with `BrokenResourceError` from now on (what it sent and this end
        did not read is dropped), and `receive_some` here raises `ClosedResourceError`."""
        self._close_incoming()
        await anyio.lowlevel.checkpoint()

    def _close_outgoing(self) -> None:
        self._outgoing.writer_closed = True
        self._outgoing.changed()

    def _close_incoming(self) -> None:
        self._incoming.reader_closed = True
        self._incoming.buffer.clear()
        self._incoming.changed()

    def _check_can_send(self) -> None:
        if self._outgoing.writer_closed:
            raise anyio.ClosedResourceError
        if self._outgoing.reader_closed:
            raise anyio.BrokenResourceError


def memory_stream_pair(
    max_buffered_bytes: int | None = None,
) -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-memory streams: what one sends, the other receives.

    `max_buffered_bytes` bounds each direction: a sender waits while that many bytes are
    unread (None: unbounded, a send never waits). Works on trio and on asyncio; the pair may
    be made before the event loop runs.
    """
    if max_buffered_bytes is not None and max_buffered_bytes < 1:
        raise ValueError("max_buffered_bytes must be None or at least 1")
    one_way = _Pipe(max_buffered_bytes)
    other_way = _Pipe(max_buffered_bytes)
    return MemoryStream(one_way, other_way), MemoryStream(other_way, one_way)
