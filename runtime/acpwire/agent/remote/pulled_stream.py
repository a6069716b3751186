"""The byte stream of a WebSocket connection (not resumable): the agent's reader reads the
client's messages from the socket itself, and sends the answer it gives there, so a round
trip passes through no task of ours between the server's `receive()` and its `send()`.

- Input: `receive_some` awaits the `Source` (the ASGI `receive`, one text frame a call). The
  server reads no more than the reader takes (ASGI servers queue a few frames at most):
  back-pressure as over stdio.
- Output: a message the reader task itself gives while it is away from the socket (the answer
  of a request it ran) is taken at once (`try_send`, the outbox's `DirectWrite`: no trip
  through the connection's writer task) and sent by the reader before it reads again. One a
  read at most: the outbox writes directly once until input arrives or its writer ran. A
  message another task sends (a turn's update, the answer of a handler that waited), or one
  sent while the reader waits for the socket, goes through the writer task (`send_all`),
  after what is owed: so nothing waits for a reader held up in a notification handler that
  waits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..._loop import current_loop
from .agent_stream import AgentStream, Outlet

Source = Callable[[], Awaitable[bytes]]
"""The client's next message (one JSON text, no newline); b"" once the client is gone."""


class PulledAgentStream(AgentStream):
    """An `AgentStream` whose input is pulled from a `Source` by the agent's reader (`feed`
    is not used)."""

    def __init__(self, source: Source, outlet: Outlet, *, max_buffered_bytes: int) -> None:
        super().__init__(outlet, max_buffered_bytes=max_buffered_bytes)
        self._source = source
        self._current_task = current_loop().current_task
        self._reader: object = None  # the task that last read
        self._receiving = False  # the reader waits for the socket
        # taken, not sent yet (a list: rarely more than one; a deque costs 0.5 KiB a connection)
        self._owed: list[bytes] = []

    def try_send(self, parts: list[bytes]) -> int:
        """Take the lines of `parts` for the reader to send before it reads again: all the
        bytes, or 0 (none) from another task, or when the reader waits for the socket (or will
        read no more)."""
        if self._receiving or self._input_ended or self._closed or self._partial:
            return 0
        if self._current_task() is not self._reader:
            return 0
        if len(parts) == 2 and parts[1] == b"\n":  # one message (what the outbox offers)
            self._owed.append(parts[0])
            return len(parts[0]) + 1
        data = b"".join(parts)
        if not data.endswith(b"\n"):
            return 0
        self._owed += [line for line in data.split(b"\n") if line]
        return len(data)

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        owed = self._owed
        while owed:  # taken one at a time: whoever sends next sends after it
            await self._outlet(owed.pop(0))
        if self._input_ended:
            return b""
        self._reader = self._current_task()
        self._receiving = True
        try:
            message = await self._source()
        finally:
            self._receiving = False
        if not message:
            self.end_input()
            return b""
        return message + b"\n"

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        owed = self._owed
        while owed:
            await self._outlet(owed.pop(0))
        await super().send_all(data)
