"""One client WebSocket of ACP, read by the connection's reader itself: `receive_lines` reads
the socket, feeds `websockets`' sans-IO parser, answers the server's pings and close at once
and returns the lines of the text frames. There is no task between the socket and the reader:
a message costs no task switch, and a round trip a pass of the event loop or two.

While the reader is away (not in `receive_lines`, e.g. it waits for the client's handlers
to take what it read) for longer than `AWAY_SECONDS`, a watcher task reads the socket in its
place, up to `INBOX_BYTES` of lines held for it: pings are answered and a dead peer noticed
however long the reader pauses, but the hot path has one reader only. The same task sends
the keepalive pings.

httpx-ws makes the handshake (its `AsyncWebSocketSession`, with its background tasks
replaced) and frames what the client sends (wsproto); every frame goes out through one
`SocketWriter`. Needs the `remote` extra.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import httpcore
import httpx_ws
import wsproto.connection
import wsproto.events
from websockets.client import ClientProtocol
from websockets.frames import Close, CloseCode, Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri
from wsproto.frame_protocol import CloseReason

from .envelope import one_line
from .socket_writer import SocketWriter

log = logging.getLogger("acpwire")

AWAY_SECONDS = 1.0
"""Seconds the reader may be away before the watcher reads the socket in its place."""
INBOX_BYTES = 1 << 20
"""Bytes of text frames the watcher reads for a reader away before it leaves the socket unread
(back-pressure)."""
CLOSE_FRAME_SECONDS = 1.0
"""Seconds the close frame may wait for the socket before the socket closes without it: a
server that stopped reading would never take it (closing waited forever, shielded)."""
READ_BYTES = 1 << 16
"""Bytes asked of the socket per read. httpx-ws asks its `max_message_size_bytes` (here the
connection's `max_line_bytes`, 64 MiB by default), which on trio is the size of the buffer
`recv` allocates: a fresh mmap per read (with its munmap and mremap, 3 system calls, its pages
faulted in zeroed) for the few hundred bytes a read usually returns. (Over asyncio, anyio
reads from the transport's own buffer: the size asked changes nothing there.)"""

_ANY_URI = parse_uri("ws://localhost/")
"""The parser's URI: used only for the handshake, which httpx-ws makes (the parser starts open)."""
_LOST = (httpcore.ReadError, httpcore.WriteError, anyio.ClosedResourceError)


class WebSocketSession(httpx_ws.AsyncWebSocketSession):
    """An open client WebSocket: `receive_lines` for the reader, `writer` for what is sent."""

    def __init__(self, stream: httpcore.AsyncNetworkStream, **options: Any) -> None:
        super().__init__(stream, **options)
        self.writer = SocketWriter(stream)
        # the size limit is the connection's line limit (`max_line_bytes`), applied above
        self._parser = ClientProtocol(_ANY_URI, state=State.OPEN, max_size=None)
        self._partial: list[bytes] = []  # the frames so far of a fragmented text message
        self.lines: collections.deque[bytes] = collections.deque()
        """Lines read and not taken yet (by the watcher, or past a reader's `max_bytes`)."""
        self._size = 0  # of lines
        self.received = 0
        """Text messages received (each one line)."""
        self.ended: str | None = None
        """Why the socket ended (None while it is open)."""
        self.lost = anyio.Event()
        """Set once the socket ended."""
        self._failure: tuple[int, str] | None = None  # a frame refused: close code, what
        self._present = False  # the reader is in `receive_lines`
        self._reads = 0  # of the socket, that returned data
        self._receives = 0  # calls of `receive_lines` (the watcher sees the reader active)
        self._away_read: anyio.CancelScope | None = None  # the watcher reading
        self._handed_back = anyio.Event()
        self._pong: tuple[bytes, anyio.Event] | None = None  # the keepalive ping unanswered
        self._pong_sent = -math.inf
        self._paused_at = -math.inf  # when the socket was last seen unread (reader away)

    @contextlib.asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncIterator[WebSocketSession]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._watch)
            try:
                yield self
            finally:
                tasks.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await self.close()

    # ------------------------------------------------------------------ reading

    async def receive_lines(self, max_bytes: int | None = None) -> bytes:
        """The lines of the text frames received (at most `max_bytes`: the rest waits for
        the next call), reading the socket until there is one; b"" once it ended."""
        self._receives += 1
        if self.lines:
            return self._take(max_bytes)
        if self.ended is not None:
            return b""
        self._present = True
        try:
            if self._away_read is not None:  # the watcher reads: take the socket back
                self._away_read.cancel()
                await self._handed_back.wait()
            while not self.lines and self.ended is None:
                await self._read()
        finally:
            self._present = False
        return self._take(max_bytes) if self.lines else b""

    def _take(self, max_bytes: int | None) -> bytes:
        lines = self.lines
        data = lines.popleft() if len(lines) == 1 else b"".join(lines)
        lines.clear()
        if max_bytes is not None and len(data) > max_bytes:
            data, rest = data[:max_bytes], data[max_bytes:]
            lines.append(rest)
        self._size = len(lines[0]) if lines else 0
        return data

    async def _read(self) -> None:
        """Read the socket once; take its frames."""
        try:
            data = await self.stream.read(READ_BYTES)
        except _LOST as exc:
            return await self._lose(f"the WebSocket connection was lost ({type(exc).__name__})")
        if not data:
            return await self._lose("the WebSocket connection was lost (EndOfStream)")
        self._reads += 1
        parser = self._parser
        parser.receive_data(data)
        parser.data_to_send()  # its own answers go unsent: the answers are sent below
        ping: bytes | None = None
        close: Close | None = None
        for frame in cast("list[Frame]", parser.events_received()):  # open: frames only
            opcode = frame.opcode
            if opcode is Opcode.TEXT and frame.fin:
                self._put(bytes(frame.data))  # (a bytearray)
            elif opcode is Opcode.TEXT or (opcode is Opcode.CONT and self._partial):
                self._partial.append(bytes(frame.data))
                if frame.fin:
                    self._put(b"".join(self._partial))
                    self._partial.clear()
            elif opcode is Opcode.PING:
                ping = bytes(frame.data)  # the last one answered (RFC 6455 5.5.3)
            elif opcode is Opcode.PONG:
                self._ponged(bytes(frame.data))
            elif opcode is Opcode.CLOSE:
                close = Close.parse(bytes(frame.data))
                break  # what followed the server's close frame
            elif frame.fin:  # the end of a binary message (the RFD: ignored)
                log.debug("ignored a binary message from the server")
        if parser.parser_exc is not None and self._failure is None:
            what = f"the server sent an invalid WebSocket frame ({parser.parser_exc})"
            # the parser's code: 1007 for text that is not UTF-8, else 1002
            sent = parser.close_sent
            self._failure = (sent.code if sent else CloseCode.PROTOCOL_ERROR, what)
        if ping is not None or close is not None or self._failure is not None:
            with anyio.CancelScope(shield=True):  # the lines are kept; the answers go out
                await self._answer(ping, close)

    def _put(self, data: bytes) -> None:
        if self._failure is not None:
            return  # what followed a refused frame in the same read
        try:
            data.decode()  # as wsproto did: a text frame is UTF-8, or the connection fails
        except UnicodeDecodeError:
            self._failure = (
                CloseCode.INVALID_DATA,
                "the server sent a text frame that is not UTF-8",
            )
            return
        line = one_line(data) + b"\n"
        self.lines.append(line)
        self._size += len(line)
        self.received += 1

    async def _answer(self, ping: bytes | None, close: Close | None) -> None:
        """A pong to the server's last ping; the server's close echoed, or a refused frame's."""
        if self._failure is not None:
            # the close frame first: the reader, once told, closes the socket
            code, what = self._failure
            self._end(f"{what}: closed with code {int(code)}")
            await self.close(code, "Invalid frame")
            return
        if ping is not None and self.connection.state is wsproto.connection.ConnectionState.OPEN:
            # (closing: a ping crossing our close frame gets no pong)
            pong = self.connection.send(wsproto.events.Pong(ping))
            try:
                await self.writer.send_or_queue(pong)
            except httpcore.WriteError as exc:
                return await self._lose(f"the WebSocket connection was lost ({type(exc).__name__})")
        if close is not None:
            code = int(close.code)
            self._end(f"the server closed the WebSocket (code {code}: {close.reason!r})")
            # answered at once, with its code (RFC 6455 5.5.1), not when the client leaves
            await self.close(code if code != CloseCode.NO_STATUS_RCVD else CloseCode.NORMAL_CLOSURE)

    def _end(self, what: str) -> None:
        if self.ended is None:
            self.ended = what
            self.lost.set()

    async def _lose(self, what: str) -> None:
        self._end(what)
        await self.close(CloseReason.INTERNAL_ERROR, "Stream error")

    # ------------------------------------------------------------------ sending

    async def send(self, event: wsproto.events.Event) -> None:
        """httpx-ws's `send` (its `send_text`, `ping`...), through the writer."""
        try:
            await self.writer.send(self.connection.send(event))
        except httpcore.WriteError as exc:
            await self.close(CloseReason.INTERNAL_ERROR, "Stream write error")
            raise httpx_ws.WebSocketNetworkError() from exc

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        """httpx-ws's `close` (a close frame, unless one was sent, then the socket closed),
        the frame through the writer."""
        self._should_close.set()
        self._end("the WebSocket was closed by this client")
        state = self.connection.state
        closing = wsproto.connection.ConnectionState
        if state not in {closing.LOCAL_CLOSING, closing.CLOSED}:
            data = self.connection.send(wsproto.events.CloseConnection(code, reason))
            with anyio.move_on_after(CLOSE_FRAME_SECONDS):
                try:
                    await self.writer.send_or_queue(data)
                except httpcore.WriteError:
                    pass
        self.writer.close()
        await self.stream.aclose()  # a write waiting for the socket fails

    # ------------------------------------------------------------------ the watcher

    async def _watch(self) -> None:
        """Ping every keepalive interval (its pong due within the timeout, not counting time
        the socket went unread or kept delivering frames: the pong waits behind them) and
        read the socket for a reader away for `AWAY_SECONDS`, until the socket ends."""
        interval = self._keepalive_ping_interval_seconds
        timeout = self._keepalive_ping_timeout_seconds
        now = anyio.current_time()
        next_ping = now + interval if interval is not None else math.inf
        seen, seen_at = self._receives, now  # the reader, as last seen active
        last_look, attentive = now, False  # attentive: the watcher read until this look
        reads = self._reads
        try:
            while self.ended is None:
                if self._present or self._receives != seen:
                    if seen_at < last_look or self._reads != reads:
                        # back from away (unread until lately), or frames keep coming: the
                        # pong may wait behind them
                        self._paused_at = now
                    seen, seen_at = self._receives, now
                elif now > seen_at and not attentive:
                    self._paused_at = now  # away since the last look: the socket went unread
                last_look, attentive, reads = now, False, self._reads
                pong_due = math.inf
                if self._pong is not None and timeout is not None:
                    pong_due = max(self._pong_sent, self._paused_at) + timeout
                if self._pong is not None and now >= pong_due:
                    self._end(f"the server did not answer a ping within {timeout:g} s")
                    await self.close(CloseReason.INTERNAL_ERROR, "Keepalive ping timeout")
                    return
                if interval is not None and self._pong is None and next_ping == math.inf:
                    next_ping = now + interval  # the last ping was answered
                if now >= next_ping:
                    await self._ping(timeout)
                    next_ping = math.inf  # the next once this one is answered
                    now = anyio.current_time()
                    continue
                wake = min(next_ping, pong_due, now + AWAY_SECONDS)
                if now - seen_at >= AWAY_SECONDS and self._size < INBOX_BYTES:
                    attentive = await self._read_away(wake)
                else:
                    with anyio.move_on_after(wake - now):
                        await self.lost.wait()
                now = anyio.current_time()
        except (*_LOST, httpx_ws.WebSocketNetworkError):
            self._end("the WebSocket connection was lost")

    async def _read_away(self, until: float) -> bool:
        """Read the socket in the reader's place until `until`, the reader's return, or
        `INBOX_BYTES` of lines held (then False: the socket is left unread)."""
        self._handed_back = anyio.Event()
        with anyio.CancelScope(deadline=until) as self._away_read:
            while self.ended is None and self._size < INBOX_BYTES and not self._present:
                await self._read()
        self._away_read = None
        self._handed_back.set()
        return self._size < INBOX_BYTES

    async def _ping(self, timeout: float | None) -> None:
        """Send a keepalive ping, its write waiting at most `timeout` seconds: one the socket
        does not take by then (the server reads nothing) counts as unanswered."""
        payload = f"{id(self):x}{anyio.current_time()!r}".encode()
        self._pong = (payload, anyio.Event())
        self._pong_sent = anyio.current_time()
        if self.connection.state is not wsproto.connection.ConnectionState.OPEN:
            return
        frame = self.connection.send(wsproto.events.Ping(payload))
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            await self.writer.send_or_queue(frame)

    def _ponged(self, payload: bytes) -> None:
        if self._pong is not None and self._pong[0] == payload:
            self._pong[1].set()
            self._pong = None
