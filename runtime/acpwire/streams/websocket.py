"""The client side of ACP over WebSocket, as a byte stream: each line the connection writes
goes out as one text frame, each text frame received comes in as one line; binary frames
are ignored (the RFD). Built on httpx-ws (wsproto over httpx, anyio: trio and asyncio).

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping

import anyio
import httpx
import httpx_ws
import wsproto.events

from ..errors import RemoteConnectionError
from .envelope import one_line
from .remote_http import CONNECTION_ID_HEADER, http_client, http_url, refused

log = logging.getLogger("acpwire")

KEEPALIVE_INTERVAL = 20.0
"""Seconds between the client's WebSocket pings (answered by the server's pongs)."""
KEEPALIVE_TIMEOUT = 20.0
"""Seconds a ping may wait for its pong before the connection counts as lost."""


class WebSocketStream:
    """A `ByteStream` over an open WebSocket (`open_websocket` makes one)."""

    def __init__(self, session: httpx_ws.AsyncWebSocketSession, url: str) -> None:
        self._session = session
        self.url = url
        response = session.response
        self.connection_id = response.headers.get(CONNECTION_ID_HEADER) if response else None
        """The `Acp-Connection-Id` of the 101 response (None when the server sent none)."""
        self._partial = b""  # the start of a line whose end has not been written yet
        self._received: collections.deque[bytes] = collections.deque()
        self._what: str | None = None  # why the connection ended, once it did
        self._closed = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send each complete line of `data` as one text frame."""
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        for line in lines:
            if not line:
                continue
            try:
                await self._session.send_text(line.decode())
            except (httpx_ws.HTTPXWSException, wsproto.utilities.LocalProtocolError) as exc:
                self._ended(f"sending failed ({type(exc).__name__})")
                raise anyio.BrokenResourceError(self.what()) from exc

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The next text frame as a line; b"" once the connection ended."""
        while not self._received:
            if self._what is not None:
                return b""
            try:
                message = await self._session.receive()
            except httpx_ws.WebSocketDisconnect as exc:
                self._ended(f"the server closed the WebSocket (code {exc.code}: {exc.reason!r})")
                return b""
            except httpx_ws.HTTPXWSException as exc:
                self._ended(f"the WebSocket connection was lost ({type(exc).__name__})")
                return b""
            if isinstance(message, wsproto.events.TextMessage):
                self._received.append(one_line(message.data.encode()) + b"\n")
            else:
                log.debug("ignored a %s from %s", type(message).__name__, self.url)
        data = self._received.popleft()
        if max_bytes is not None and len(data) > max_bytes:
            data, rest = data[:max_bytes], data[max_bytes:]
            self._received.appendleft(rest)
        return data

    def _ended(self, what: str) -> None:
        if self._what is None:
            self._what = what

    def what(self) -> str:
        """Why the connection ended (or that it was closed by this side)."""
        return self._what or "the connection was closed"

    async def closed_reason(self) -> RemoteConnectionError:
        """The error calls fail with once the connection ended (`ClientConnection`)."""
        return RemoteConnectionError(self.url, self.what())

    async def send_eof(self) -> None:
        """WebSocket has no half-close: close it (the server ends the ACP connection)."""
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ended("the connection was closed by this client")
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await self._session.close()


@contextlib.asynccontextmanager
async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int,
    keepalive_interval: float | None = KEEPALIVE_INTERVAL,
    keepalive_timeout: float | None = KEEPALIVE_TIMEOUT,
    verify: object = True,
) -> AsyncIterator[WebSocketStream]:
    """A WebSocket to the ACP endpoint `url` (`ws://`, `wss://`, or `http(s)://`), open while
    the block runs. Raises `RemoteConnectionError` when it cannot be opened (naming the URL,
    and the HTTP status and the server's words when it refused the upgrade)."""
    target = http_url(url)
    opened = False
    async with http_client(target, headers=headers, http2=False, verify=verify) as client:
        try:
            connecting: contextlib.AbstractAsyncContextManager[httpx_ws.AsyncWebSocketSession]
            connecting = httpx_ws.aconnect_ws(
                target,
                client,
                max_message_size_bytes=max_message_bytes,
                keepalive_ping_interval_seconds=keepalive_interval,
                keepalive_ping_timeout_seconds=keepalive_timeout,
            )
            async with connecting as session:
                opened = True
                stream = WebSocketStream(session, url)
                try:
                    yield stream
                finally:
                    await stream.aclose()
        except httpx_ws.WebSocketUpgradeError as exc:
            if opened:
                raise
            raise await refused(url, exc.response, "refused the WebSocket upgrade") from None
        except httpx.HTTPError as exc:
            if opened:
                raise
            raise RemoteConnectionError(url, f"cannot connect: {exc!r}") from None
