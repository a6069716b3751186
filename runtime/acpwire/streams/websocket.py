"""The client side of ACP over WebSocket, as a byte stream: each line the connection writes
goes out as one text frame, each text frame received comes in as one line; binary frames
are ignored (the RFD). Built on httpx-ws (the handshake, over httpx; anyio: trio and asyncio);
the connection's reader reads the socket itself (`websocket_session`), frames go out through
one `SocketWriter`.

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping

import anyio
import httpcore
import httpx
import httpx_ws
import wsproto.connection
from websockets.frames import Frame, Opcode
from websockets.utils import accept_key
from wsproto.frame_protocol import CloseReason

from ..errors import RemoteConnectionError
from .remote_http import CONNECTION_ID_HEADER, http_client, http_url, refused
from .websocket_session import WebSocketSession

KEEPALIVE_INTERVAL = 20.0
"""Seconds between the client's WebSocket pings (answered by the server's pongs)."""
KEEPALIVE_TIMEOUT = 20.0
"""Seconds a ping may wait for its pong before the connection counts as lost."""


def _text_frame(line: bytes) -> bytes:
    """One masked text frame carrying `line`, which must be UTF-8 (the encoder's lines are)."""
    line.decode()  # raises UnicodeDecodeError: a text frame is UTF-8
    return Frame(Opcode.TEXT, line).serialize(mask=True, extensions=())


class WebSocketStream:
    """A `ByteStream` over an open WebSocket (`open_websocket` makes one)."""

    def __init__(self, session: WebSocketSession, url: str) -> None:
        self._session = session
        self.url = url
        response = session.response
        self.connection_id = response.headers.get(CONNECTION_ID_HEADER) if response else None
        """The `Acp-Connection-Id` of the 101 response (None when the server sent none)."""
        self._partial = b""  # the start of a line whose end has not been written yet
        self._what: str | None = None  # why the connection ended, once it did
        self._closed = False

    def try_send(self, parts: list[bytes]) -> int:
        """Send the lines of `parts` now (`DirectWrite`: a lone request or answer goes out
        with no trip through the connection's writer task): the bytes taken, 0 when none
        (the writer's `send_all` sends them). When the socket takes part of the frames, the
        last newline is left to `send_all`, which writes the rest first."""
        data = b"".join(parts)
        session = self._session
        if self._partial or not data.endswith(b"\n") or not self._open():
            return 0
        try:
            frames = b"".join(_text_frame(line) for line in data.split(b"\n")[:-1] if line)
        except UnicodeDecodeError:
            return 0  # `send_all` raises it
        if not session.writer.try_send(frames):
            return 0
        return len(data) - 1 if session.writer.owed else len(data)

    def _open(self) -> bool:
        return self._session.connection.state is wsproto.connection.ConnectionState.OPEN

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send each complete line of `data` as one text frame, all in one write (after
        what `try_send` left owed)."""
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        frames = [_text_frame(line) for line in lines if line]
        session = self._session
        if not frames and not session.writer.owed:
            return
        if not self._open():
            self._ended("sending failed: the WebSocket is closing")
            raise anyio.BrokenResourceError(self.what())
        try:
            await session.writer.send(b"".join(frames))
        except httpcore.WriteError as exc:
            self._ended(f"sending failed ({type(exc).__name__})")
            await session.close(CloseReason.INTERNAL_ERROR, "Stream write error")
            raise anyio.BrokenResourceError(self.what()) from exc

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The text frames received so far, one line each; b"" once the connection ended."""
        if self._what is not None and not self._session.lines:
            return b""
        data = await self._session.receive_lines(max_bytes)
        if not data:
            self._ended(self._session.ended or "the WebSocket connection was lost")
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


def handshake_fault(response: httpx.Response | None) -> str | None:
    """What makes the server's 101 no WebSocket handshake (RFC 6455 4.1: the client fails
    the connection), or None. (httpx-ws takes any 101.)"""
    if response is None:
        return None
    key = response.request.headers.get("sec-websocket-key", "")
    expected = accept_key(key)
    got = response.headers.get("sec-websocket-accept")
    if got != expected:
        return (
            f"its 101 response is no WebSocket handshake: Sec-WebSocket-Accept {got!r}, "
            f"not {expected!r} (the answer to the key sent)"
        )
    if response.headers.get("upgrade", "").lower() != "websocket":
        return f"its 101 response upgrades to {response.headers.get('upgrade')!r}, not websocket"
    return None


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
            connecting: contextlib.AbstractAsyncContextManager[WebSocketSession]
            connecting = httpx_ws.aconnect_ws(
                target,
                client,
                max_message_size_bytes=max_message_bytes,
                keepalive_ping_interval_seconds=keepalive_interval,
                keepalive_ping_timeout_seconds=keepalive_timeout,
                session_class=WebSocketSession,
            )
            async with connecting as session:
                opened = True
                fault = handshake_fault(session.response)
                if fault is None:
                    stream = WebSocketStream(session, url)
                    try:
                        yield stream
                    finally:
                        await stream.aclose()
            if fault is not None:  # raised here: not in the group of httpx-ws's tasks
                raise RemoteConnectionError(url, fault)
        except httpx_ws.WebSocketUpgradeError as exc:
            if opened:
                raise
            raise await refused(url, exc.response, "refused the WebSocket upgrade") from None
        except httpx.HTTPError as exc:
            if opened:
                raise
            raise RemoteConnectionError(url, f"cannot connect: {exc!r}") from None
