"""The client side of ACP over WebSocket, as a byte stream: each line the connection writes
goes out as one text frame, each text frame received comes in as one line; binary frames
are ignored (the RFD). Built on httpx-ws (wsproto over httpx, anyio: trio and asyncio); the
frames received are parsed by `websockets`' sans-IO protocol.

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Mapping
from typing import cast

import anyio
import httpcore
import httpx
import httpx_ws
import httpx_ws._api
import wsproto.connection
import wsproto.events
from websockets.client import ClientProtocol
from websockets.frames import Close, CloseCode, Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri
from websockets.utils import accept_key
from wsproto.frame_protocol import CloseReason

from ..errors import RemoteConnectionError
from .envelope import one_line
from .remote_http import CONNECTION_ID_HEADER, http_client, http_url, refused

log = logging.getLogger("acpwire")

KEEPALIVE_INTERVAL = 20.0
"""Seconds between the client's WebSocket pings (answered by the server's pongs)."""
KEEPALIVE_TIMEOUT = 20.0
"""Seconds a ping may wait for its pong before the connection counts as lost."""
INBOX_BYTES = 1 << 20
"""Bytes of received text frames held for the reader before the socket is read again."""
READ_BYTES = 1 << 16
"""Bytes asked of the socket per read. httpx-ws asks its `max_message_size_bytes` (here the
connection's `max_line_bytes`, 64 MiB by default), which on trio is the size of the buffer
`recv` allocates: a fresh mmap per read (with its munmap and mremap, 3 system calls, its pages
faulted in zeroed) for the few hundred bytes a read usually returns. (Over asyncio, anyio
reads from the transport's own buffer: the size asked changes nothing there.)"""


_ANY_URI = parse_uri("ws://localhost/")
"""The parser's URI: used only for the handshake, which httpx-ws makes (the parser starts open)."""


class _Inbox:
    """The text frames received and not read yet (as lines), and why the socket ended."""

    def __init__(self) -> None:
        self.lines: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.ended: str | None = None
        self.paused_until: float | None = 0.0
        """When the socket's reader last waited for the reader of lines (back-pressure) to
        take some: the loop's clock; None while it waits."""
        self._arrived = anyio.Event()
        self._taken = anyio.Event()

    def put(self, line: bytes) -> None:
        self.lines.append(line)
        self.size += len(line)

    def end(self, what: str) -> None:
        if self.ended is None:
            self.ended = what
        self._arrived.set()
        self._taken.set()

    async def handed(self) -> None:
        """Wake the reader; wait while `INBOX_BYTES` are unread (back-pressure)."""
        self._arrived.set()
        if self.size < INBOX_BYTES or self.ended is not None:
            return
        self.paused_until = None
        try:
            while self.size >= INBOX_BYTES and self.ended is None:
                self._taken = anyio.Event()
                await self._taken.wait()
        finally:
            self.paused_until = anyio.current_time()

    def paused_within(self, seconds: float) -> bool:
        """Whether the socket went unread (back-pressure) in the last `seconds`."""
        until = self.paused_until
        return until is None or anyio.current_time() - until < seconds

    async def wait(self) -> None:
        """Until a line arrives or the socket ends."""
        if not self.lines and self.ended is None:
            self._arrived = anyio.Event()
            await self._arrived.wait()

    def take(self, max_bytes: int | None) -> bytes:
        """The lines queued (at most `max_bytes` of them: the rest stays)."""
        data = b"".join(self.lines)
        self.lines.clear()
        if max_bytes is not None and len(data) > max_bytes:
            data, rest = data[:max_bytes], data[max_bytes:]
            self.lines.append(rest)
        self.size = sum(map(len, self.lines))
        self._taken.set()
        return data


class _BatchingSession(httpx_ws.AsyncWebSocketSession):
    """httpx-ws's session with its receiving side replaced. httpx-ws hands each event to
    `receive()` through an unbuffered memory stream: a rendezvous of two tasks per message
    (plus a cancel scope), and the socket is read again only once the reader took every
    event of the last read, which made a streaming client spend most of its time switching
    tasks. Here the text frames of one socket read go to an `_Inbox` together, with one
    wake-up, and the reader takes them all at once. The frames received are parsed by
    `websockets`' sans-IO protocol, not wsproto's (a third of wsproto's CPU time per frame:
    `bench/ws_parse.py`). The text frames the client sends are framed by `websockets` too
    (`WebSocketStream.send_all`: the lines of one write in one socket write); the handshake,
    pings, pongs (answered here) and the close stay httpx-ws's (wsproto)."""

    failure: tuple[int, str] | None = None
    """Why the client refused a frame: the close code it closes the WebSocket with, and what
    the reader is told."""

    @functools.cached_property
    def inbox(self) -> _Inbox:
        return _Inbox()

    async def _background_receive(self, max_bytes: int) -> None:
        inbox = self.inbox
        # the size limit is the connection's line limit (`max_line_bytes`), applied above
        parser = ClientProtocol(_ANY_URI, state=State.OPEN, max_size=None)
        partial: list[bytes] = []  # the frames so far of a fragmented text message
        read_bytes = min(max_bytes, READ_BYTES)
        try:
            while not self._should_close.is_set():
                parser.receive_data(await self._read_stream(read_bytes))
                parser.data_to_send()  # its own answers go unsent: pongs are sent below
                for frame in cast("list[Frame]", parser.events_received()):  # open: frames only
                    if self._should_close.is_set():
                        break  # what followed the server's close frame
                    await self._received(frame, partial)
                if parser.parser_exc is not None and self.failure is None:
                    what = f"the server sent an invalid WebSocket frame ({parser.parser_exc})"
                    # the parser's code: 1007 for text that is not UTF-8, else 1002
                    sent = parser.close_sent
                    self.failure = (sent.code if sent else CloseCode.PROTOCOL_ERROR, what)
                if self.failure is not None:
                    # the close frame first: the reader, once told, closes the socket
                    code, what = self.failure
                    await self.close(code, "Invalid frame")
                    inbox.end(f"{what}: closed with code {int(code)}")
                    return
                await inbox.handed()
        except (httpcore.ReadError, httpcore.WriteError, httpx_ws._api.EndOfStream) as exc:
            inbox.end(f"the WebSocket connection was lost ({type(exc).__name__})")
            await self.close(CloseReason.INTERNAL_ERROR, "Stream error")
        finally:
            inbox.end("the WebSocket connection was lost")

    async def _background_keepalive_ping(
        self, interval_seconds: float, timeout_seconds: float | None = None
    ) -> None:
        """httpx-ws's keepalive (a ping every `interval_seconds`, its pong due within
        `timeout_seconds`), except that the pong is not overdue while the socket went unread
        (the reader of lines taking nothing: back-pressure): it waits in the socket, behind
        the frames not read yet. (httpx-ws's closed the connection of a reader that paused.)"""
        while not self._should_close.is_set():
            await anyio.sleep(interval_seconds)
            try:
                pong = await self.ping()
            except wsproto.utilities.LocalProtocolError:
                return  # closing
            if timeout_seconds is None:
                continue
            while True:
                with anyio.move_on_after(timeout_seconds):
                    await pong.wait()
                if pong.is_set():
                    break
                if not self.inbox.paused_within(timeout_seconds):
                    what = f"the server did not answer a ping within {timeout_seconds:g} s"
                    self.inbox.end(what)
                    await self.close(CloseReason.INTERNAL_ERROR, "Keepalive ping timeout")
                    return

    async def _received(self, frame: Frame, partial: list[bytes]) -> None:
        opcode = frame.opcode
        if opcode is Opcode.TEXT and frame.fin:
            self._put(bytes(frame.data))  # (a bytearray)
        elif opcode is Opcode.TEXT or (opcode is Opcode.CONT and partial):
            partial.append(bytes(frame.data))
            if frame.fin:
                self._put(b"".join(partial))
                partial.clear()
        elif opcode is Opcode.PING:
            if self.connection.state is not wsproto.connection.ConnectionState.OPEN:
                return  # closing: a ping crossing our close frame gets no pong
            data = self.connection.send(wsproto.events.Pong(bytes(frame.data)))
            async with self._write_lock:
                await self.stream.write(data)
        elif opcode is Opcode.PONG:
            self._ping_manager.ack(bytes(frame.data))
        elif opcode is Opcode.CLOSE:
            close = Close.parse(bytes(frame.data))
            code = int(close.code)
            self.inbox.end(f"the server closed the WebSocket (code {code}: {close.reason!r})")
            # answered at once, with its code (RFC 6455 5.5.1), not when the client leaves
            await self.close(code if code != CloseCode.NO_STATUS_RCVD else CloseCode.NORMAL_CLOSURE)
        elif frame.fin:  # the end of a binary message (the RFD: ignored)
            log.debug("ignored a binary message from the server")

    def _put(self, data: bytes) -> None:
        if self.failure is not None:
            return  # what followed a refused frame in the same read
        try:
            data.decode()  # as wsproto did: a text frame is UTF-8, or the connection fails
        except UnicodeDecodeError:
            what = "the server sent a text frame that is not UTF-8"
            self.failure = (CloseCode.INVALID_DATA, what)
            return
        self.inbox.put(one_line(data) + b"\n")


def _text_frame(line: bytes) -> bytes:
    """One masked text frame carrying `line`, which must be UTF-8 (the encoder's lines are)."""
    line.decode()  # raises UnicodeDecodeError: a text frame is UTF-8
    return Frame(Opcode.TEXT, line).serialize(mask=True, extensions=())


class WebSocketStream:
    """A `ByteStream` over an open WebSocket (`open_websocket` makes one)."""

    def __init__(self, session: _BatchingSession, url: str) -> None:
        self._session = session
        self.url = url
        response = session.response
        self.connection_id = response.headers.get(CONNECTION_ID_HEADER) if response else None
        """The `Acp-Connection-Id` of the 101 response (None when the server sent none)."""
        self._partial = b""  # the start of a line whose end has not been written yet
        self._what: str | None = None  # why the connection ended, once it did
        self._closed = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send each complete line of `data` as one text frame, all in one write."""
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        frames = [_text_frame(line) for line in lines if line]
        if not frames:
            return
        session = self._session
        if session.connection.state is not wsproto.connection.ConnectionState.OPEN:
            self._ended("sending failed: the WebSocket is closing")
            raise anyio.BrokenResourceError(self.what())
        try:
            async with session._write_lock:
                await session.stream.write(b"".join(frames))
        except httpcore.WriteError as exc:
            self._ended(f"sending failed ({type(exc).__name__})")
            await session.close(CloseReason.INTERNAL_ERROR, "Stream write error")
            raise anyio.BrokenResourceError(self.what()) from exc

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The text frames received so far, one line each; b"" once the connection ended."""
        inbox = self._session.inbox
        while not inbox.lines:
            if self._what is not None:
                return b""
            if inbox.ended is not None:
                self._ended(inbox.ended)
                return b""
            await inbox.wait()
        return inbox.take(max_bytes)

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
            connecting: contextlib.AbstractAsyncContextManager[_BatchingSession]
            connecting = httpx_ws.aconnect_ws(
                target,
                client,
                max_message_size_bytes=max_message_bytes,
                keepalive_ping_interval_seconds=keepalive_interval,
                keepalive_ping_timeout_seconds=keepalive_timeout,
                session_class=_BatchingSession,
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
