"""`acpwire check --url`: the checker's raw lines over a remote connection (the RFD's WebSocket
profile: one text frame per line, both ways), a new connection where a process would be
started. Built on acpwire's WebSocket stream (`streams/websocket.py`); needs the `remote`
extra.
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
    """An open WebSocket to the agent as a `Channel`."""

    def __init__(self, stream: Any, url: str) -> None:
        self._stream = stream  # streams.websocket.WebSocketStream
        self.url = url
        self._ended = False

    async def send_all(self, data: bytes) -> None:
        try:
            await self._stream.send_all(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the agent is gone: what it (did not) answer is the evidence

    async def receive_some(self) -> bytes:
        data: bytes = await self._stream.receive_some()
        self._ended = not data
        return data

    async def close(self) -> None:
        await self._stream.aclose()

    def gone(self) -> bool:
        return self._ended

    def summary(self) -> str:
        return f"the agent at {self.url} ended the connection before answering initialize: " + str(
            self._stream.what()
        )


def remote_channel(url: str, headers: Mapping[str, str]) -> Connect:
    """Each call opens a new WebSocket to `url` (with `headers`)."""
    websocket = remote_module("acpwire.streams.websocket", FEATURE)

    @asynccontextmanager
    async def connected() -> AsyncIterator[Channel]:
        opened = False
        try:
            async with websocket.open_websocket(
                url,
                headers=dict(headers),
                max_message_bytes=ConnectionOptions().max_line_bytes,
            ) as stream:
                opened = True
                yield RemoteChannel(stream, url)
        except RemoteConnectionError as error:
            if opened:
                raise
            raise AgentNotStarted(str(error)) from error

    return connected
