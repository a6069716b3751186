"""`acpwire check --url`: the checker's raw lines over a remote connection (the RFD's WebSocket
profile: one text frame per line, both ways), a new connection where a process would be
started. Built on acpwire's WebSocket stream (`streams/websocket.py`); needs the `remote`
extra.

Not Streamable HTTP (yet): acpwire's HTTP stream POSTs JSON-RPC messages only (the bad-input
lines are none), and ends the connection on a 404, which servers answer a POST of an unknown
session with (the checker's probes name one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from .._wire.options import ConnectionOptions
from ..errors import RemoteConnectionError
from ..streams.extra import remote_module
from .check_peer import AgentNotStarted, Channel, Connect

__all__ = ["RemoteChannel", "remote_channel"]

FEATURE = "acpwire check --url"


class RemoteChannel:
    """An open remote connection to the agent as a `Channel`."""

    def __init__(self, stream: Any, url: str) -> None:
        self._stream = stream  # streams.websocket.WebSocketStream
        self.url = url
        self._ended: str | None = None  # why the connection ended, once it did

    async def send_all(self, data: bytes) -> None:
        try:
            await self._stream.send_all(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the agent is gone: what it (did not) answer is the evidence

    async def receive_some(self) -> bytes:
        data: bytes = await self._stream.receive_some()
        if not data:
            reason: RemoteConnectionError = await self._stream.closed_reason()
            self._ended = reason.what
        return data

    async def close(self) -> None:
        await self._stream.aclose()

    def gone(self) -> bool:
        return self._ended is not None

    def summary(self) -> str:
        return (
            f"the agent at {self.url} ended the connection before answering initialize: "
            f"{self._ended or 'no answer'}"
        )


def remote_channel(url: str, headers: Mapping[str, str]) -> Connect:
    """Each call opens a new WebSocket to `url` (with `headers`)."""
    websocket = remote_module("acpwire.streams.websocket", FEATURE)
    max_message_bytes = ConnectionOptions().max_line_bytes

    @asynccontextmanager
    async def connected() -> AsyncIterator[Channel]:
        opened = False
        try:
            async with websocket.open_websocket(
                url, headers=dict(headers), max_message_bytes=max_message_bytes
            ) as stream:
                opened = True
                yield RemoteChannel(stream, url)
        except RemoteConnectionError as error:
            if opened:
                raise
            raise AgentNotStarted(str(error)) from error

    return connected
