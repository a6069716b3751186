"""The bounded queue of one event stream (connection-scoped or one session's): the agent's
messages wait here until the client's GET takes them.

Bounded in bytes: while `max_bytes` are queued, the agent's writer waits (back-pressure: the
agent's sends slow down; its other streams wait behind it, as on stdio). A stream whose
reader takes nothing for `stall_timeout` seconds while it is full (a client that stopped
reading, or never opened the stream) is `Stalled`: the connection is then closed, so one
slow reader never holds more than `max_bytes` (plus the one message being queued) of memory.

One reader at a time: a new GET for the stream replaces the one before (that response ends),
so a client whose stream broke without it noticing can simply open it again. A reader's write
that waits `stall_timeout` for the client ends it (http_profile.py): the box then has no
reader, as after a disconnect.
"""

from __future__ import annotations

import collections

from ..._loop import Event, Loop

KEEPALIVE = object()
"""What `take` returns when nothing arrived within its timeout."""


class Stalled(Exception):
    """The stream stayed full with no reader progress for the stall timeout."""


class Mailbox:
    def __init__(self, loop: Loop, name: str, *, max_bytes: int, stall_timeout: float) -> None:
        self._loop = loop
        self.name = name
        """Which stream (for log messages)."""
        self._max_bytes = max_bytes
        self._stall_timeout = stall_timeout
        self._queue: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._filled: Event = loop.Event()  # set when a message arrives or the box changes
        self._emptied: Event = loop.Event()  # set when the reader took something
        self._reader = 0  # the current reader's token (0: none)
        self.closed = False

    @property
    def queued_bytes(self) -> int:
        return self._size

    async def put(self, message: bytes) -> None:
        """Queue a message, waiting while the box is full; `Stalled` when no reader took
        anything for the stall timeout. Dropped once the box is closed."""
        if self._size >= self._max_bytes:
            await self._room()
        if self.closed:
            return
        self._queue.append(message)
        self._size += len(message)
        self._filled.set()

    async def _room(self) -> None:
        """Wait while the box is full (`Stalled` after the stall timeout)."""
        while self._size >= self._max_bytes and not self.closed:
            self._emptied = self._loop.Event()
            with self._loop.move_on_after(self._stall_timeout):
                await self._emptied.wait()
            if not self._emptied.is_set() and not self.closed:
                raise Stalled(
                    f"{self.name}: the client read nothing for {self._stall_timeout:g} s "
                    f"while {self._size} bytes were queued"
                )

    def attach(self) -> int:
        """A new reader (the one before is told to stop); its token for `take`."""
        self._reader += 1
        self._wake_reader()
        return self._reader

    async def take(self, reader: int, timeout: float) -> bytes | object | None:
        """The next message for `reader`; `KEEPALIVE` after `timeout` seconds without one;
        None once the box closed (and is empty) or another reader replaced this one."""
        with self._loop.move_on_after(timeout):
            while True:
                if reader != self._reader:
                    return None
                message = self._next()
                if message is not None:
                    self._emptied.set()
                    return message
                if self.closed:
                    return None
                if self._filled.is_set():
                    self._filled = self._loop.Event()
                await self._filled.wait()
        return KEEPALIVE

    def _next(self) -> bytes | None:
        """The next message for the reader, taken (None: none queued)."""
        if not self._queue:
            return None
        message = self._queue.popleft()
        self._size -= len(message)
        return message

    def take_queued(self, reader: int, max_bytes: int) -> list[bytes]:
        """The messages queued now for `reader` (none once another reader replaced it),
        without waiting, until they reach `max_bytes` (the last one may pass it): what
        arrived while the last one was being sent goes out together."""
        if reader != self._reader:
            return []
        messages = []
        size = 0
        while size < max_bytes and (message := self._next()) is not None:
            messages.append(message)
            size += len(message)
        if messages:
            self._emptied.set()
        return messages

    def detach(self, reader: int) -> None:
        """`reader` went away (its client disconnected)."""
        if reader == self._reader:
            self._reader = 0

    def close(self) -> None:
        """No more messages: the reader gets what is queued, then the end."""
        self.closed = True
        self._wake_reader()
        self._emptied.set()

    def _wake_reader(self) -> None:
        self._filled.set()
