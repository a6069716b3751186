"""The byte stream an agent endpoint runs over on a remote server: what the client sends is
fed in as lines (`feed`), what the agent writes is handed, line by line, to an outlet (the
WebSocket, or the router of the Streamable HTTP event streams).

This is how the server reuses the runtime whole: each ACP connection is the ordinary
`serve_agent` endpoint (framing, JSON-RPC core, dispatch, limits) over one of these.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable

from ..._loop import Event, current_loop

Outlet = Callable[[bytes], Awaitable[None]]
"""Takes one message the agent wrote (a JSON text, no newline), waiting while its way to the
client is full; raising a stream error (the loop's BrokenResourceError) ends the agent's
output."""


class AgentStream:
    """A `ByteStream` for `AgentEndpoint.serve`: input from `feed`, output to an `Outlet`."""

    def __init__(self, outlet: Outlet, *, max_buffered_bytes: int) -> None:
        self._loop = current_loop()
        self._outlet = outlet
        self._max_buffered_bytes = max_buffered_bytes
        self._incoming: collections.deque[bytes] = collections.deque()
        self._incoming_bytes = 0
        self._arrived: Event = self._loop.Event()
        self._taken: Event = self._loop.Event()
        self._input_ended = False
        self._closed = False
        self._partial = b""

    # ------------------------------------------------------------------ the client's side

    async def feed(self, message: bytes) -> bool:
        """Hand the agent one message (one line of JSON), waiting while `max_buffered_bytes`
        are unread; False when the agent's input has ended (nothing was handed)."""
        while self._incoming_bytes >= self._max_buffered_bytes and not self._input_ended:
            self._taken = self._loop.Event()
            await self._taken.wait()
        if self._input_ended:
            return False
        self._incoming.append(message + b"\n")
        self._incoming_bytes += len(message) + 1
        self._arrived.set()
        return True

    def end_input(self) -> None:
        """The client is gone: the agent reads EOF once it read what was fed."""
        self._input_ended = True
        self._arrived.set()
        self._taken.set()

    # ------------------------------------------------------------------ the agent's side

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        while not self._incoming:
            if self._input_ended:
                return b""
            self._arrived = self._loop.Event()
            await self._arrived.wait()
        data = b"".join(self._incoming)
        self._incoming.clear()
        self._incoming_bytes = 0
        self._taken.set()
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise self._loop.ClosedResourceError("the connection was closed")
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        for line in lines:
            if line:
                await self._outlet(line)

    async def send_eof(self) -> None:
        """The agent wrote its last message."""

    async def aclose(self) -> None:
        self._closed = True
        self.end_input()
