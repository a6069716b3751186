"""The send path: a bounded buffer of framed messages and one writer task that drains it.

Messages queued while a write is in progress go out together in the next `send_all`, so a
burst of notifications costs one system call, not one each. The buffer is bounded: a
sender waits while `max_buffered_bytes` are queued, so a slow reader slows the writer
instead of growing memory.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from .errors import ConnectionClosed
from .framing import frame

DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024


class Outbox:
    def __init__(
        self,
        stream: trio.abc.Stream,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        on_failure: Callable[[ConnectionClosed], None] | None = None,
    ):
        self.stream = stream
        self.on_failure = on_failure
        self.max_buffered_bytes = max_buffered_bytes
        self._queue: list[bytes] = []
        self._queued = 0
        self._has_data = trio.Event()
        self._has_room = trio.Event()
        self._has_room.set()
        self._idle = trio.Event()
        self._idle.set()
        self.error: ConnectionClosed | None = None

    async def put(self, message: bytes) -> None:
        """Queue one message (waits while the buffer is full); raises once writing failed."""
        while True:
            if self.error is not None:
                raise self.error
            if self._queued < self.max_buffered_bytes:
                break
            await self._has_room.wait()
        data = frame(message)
        self._queue.append(data)
        self._queued += len(data)
        if self._queued >= self.max_buffered_bytes:
            self._has_room = trio.Event()
        self._idle = trio.Event() if self._idle.is_set() else self._idle
        self._has_data.set()

    def put_nowait(self, message: bytes) -> None:
        """Queue a small control message at once, past the bound (never waits)."""
        if self.error is not None:
            raise self.error
        data = frame(message)
        self._queue.append(data)
        self._queued += len(data)
        self._idle = trio.Event() if self._idle.is_set() else self._idle
        self._has_data.set()

    async def run(self) -> None:
        """The writer task: drain the queue until cancelled or the stream breaks."""
        while True:
            await self._has_data.wait()
            self._has_data = trio.Event()
            batch, self._queue, self._queued = self._queue, [], 0
            self._has_room.set()
            try:
                await self.stream.send_all(b"".join(batch))
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                self.fail(ConnectionClosed(f"cannot write to the peer: {exc!r}"))
                return
            if not self._queue:
                self._idle.set()

    def fail(self, error: ConnectionClosed) -> None:
        """Stop accepting messages (writers waiting for room are woken to see the error)."""
        if self.error is None:
            self.error = error
            if self.on_failure is not None:
                self.on_failure(error)
        self._has_room.set()
        self._idle.set()

    async def flush(self) -> None:
        """Wait until everything queued so far has been written."""
        await self._idle.wait()
