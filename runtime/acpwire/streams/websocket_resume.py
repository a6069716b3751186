"""The client side of ACP over WebSocket with resumable streams (`open_remote(...,
transport="websocket", resume=True)`): when the socket is cut, a new one resumes the same
ACP connection, and no message is lost either way.

Both sides count text frames (the cursor, never written on the wire). The first upgrade
carries `Last-Event-ID: 0` (this client resumes: the server keeps the connection when the
socket drops, and says so in its `initialize` result); the resuming upgrade
carries `Acp-Connection-Id` and `Last-Event-ID` (the frames read so far); the server sends
again what followed, and its `101` says how many of this client's frames it read
(`Acp-Received`), so the client sends again the ones the cut lost (it keeps the last
`SENT_KEPT`). Sockets are kept by one task (`_keep`): the socket it opened last is the one
written to, and the reader reads each socket's frames in turn, so the order holds across a
cut. Leaving the block sends a DELETE (a closing socket cannot tell the server the client
left for good), then closes the socket.

Resumption is used once the server's `initialize` result offers it; otherwise a cut ends
the connection as without it. A 404 or 409 answer to the resuming upgrade, or the last of
`Reconnect.attempts`, ends the connection with `ResumeFailed`. Needs the `remote` extra.
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Mapping

import anyio
import anyio.abc
import httpx
import httpx_ws
import wsproto.utilities

from ..errors import RemoteConnectionError
from .envelope import NotAMessage, RequestId, envelope
from .reconnect import GONE, LAST_EVENT_ID_HEADER, Reconnect, offers_resumption, resume_failed
from .remote_http import CONNECTION_ID_HEADER, http_client, http_url, refused
from .websocket import KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT, handshake_fault
from .websocket_session import WebSocketSession

log = logging.getLogger("acpwire")

SENT_KEPT = 4096
"""The client's last frames kept to be sent again after a cut..."""
SENT_KEPT_BYTES = 8 * 1024 * 1024
"""... and at most this many bytes of them (a resume that needs an older one fails)."""
RECEIVED_HEADER = "Acp-Received"
DELETE_TIMEOUT = 5.0
"""Seconds leaving the block waits for the server to take the DELETE."""


class ResumableWebSocketStream:
    """A `ByteStream` over the WebSockets of one resumable ACP connection."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        reconnect: Reconnect,
        *,
        max_message_bytes: int,
        keepalive_interval: float | None,
        keepalive_timeout: float | None,
    ) -> None:
        self._client = client
        self.url = url
        self._target = http_url(url)
        self._reconnect = reconnect
        self._connect_options = {
            "max_message_size_bytes": max_message_bytes,
            "keepalive_ping_interval_seconds": keepalive_interval,
            "keepalive_ping_timeout_seconds": keepalive_timeout,
        }
        self.connection_id: str | None = None
        """The `Acp-Connection-Id` of the first `101`."""
        self.resumable = False
        """Whether a cut is resumed (the server's `initialize` result offers it)."""
        self.resumes = 0
        """How many times a cut socket was replaced."""
        self._socket: WebSocketSession | None = None  # the one written to
        self._sockets: collections.deque[WebSocketSession] = collections.deque()
        """The sockets read in turn: the first is read, whole, before the next."""
        self._arrived = anyio.Event()  # set: a new socket was added, or the end
        self._read_before = 0  # frames read on the sockets before the last one
        self._sent: collections.deque[bytes] = collections.deque()
        self._sent_bytes = 0  # of _sent
        self._sent_count = 0
        self._offer_known = False  # the server's initialize answer was read
        self._send_lock = anyio.Lock()
        self._partial = b""
        self._initialize_id: RequestId | None = None
        self._what: str | None = None
        self._failed = False
        self._status: int | None = None
        self._closing = False

    # ------------------------------------------------------------------ sockets

    async def keep(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Open the first socket (errors go to the caller of `start`), then replace each
        socket that is lost until the connection ends."""
        first: anyio.abc.TaskStatus[None] | None = task_status
        delays: Iterator[float] | None = None
        while True:
            try:
                served = await self._serve_socket(first)
                if served:
                    delays = None  # a later cut has every attempt again
            except httpx_ws.WebSocketUpgradeError as exc:
                if self._socket is None:
                    refusal = await refused(self.url, exc.response, "refused the WebSocket upgrade")
                    raise refusal from None
                error = await refused(self.url, exc.response, "refused to resume the connection")
                if exc.response.status_code in GONE:
                    return self._fail(error.what, exc.response.status_code)
            except (httpx.HTTPError, OSError) as exc:
                if self._socket is None:
                    raise RemoteConnectionError(self.url, f"cannot connect: {exc!r}") from None
            except RemoteConnectionError as exc:  # a 101 that is no WebSocket handshake
                if self._socket is None:
                    raise
                return self._fail(exc.what)
            first = None
            if self._closing or self._what is not None:
                return
            if not self.resumable:
                return self._end(self._sockets[-1].ended or "the WebSocket connection was lost")
            delays = delays or self._reconnect.delays()
            delay = next(delays, None)
            if delay is None:
                return self._fail(
                    f"the WebSocket connection was lost and {self._reconnect.attempts} "
                    "attempts to resume it failed"
                )
            await anyio.sleep(delay)

    async def _serve_socket(self, first: anyio.abc.TaskStatus[None] | None) -> bool:
        """One socket, from the upgrade (resuming unless `first`) until it is lost; False
        when it could not take over (the connection failed)."""
        headers = {LAST_EVENT_ID_HEADER: "0"}  # a first upgrade: "this client resumes"
        if first is None:
            assert self.connection_id is not None
            headers = {
                CONNECTION_ID_HEADER: self.connection_id,
                LAST_EVENT_ID_HEADER: str(self._read_before),
            }
        connecting = httpx_ws.aconnect_ws(
            self._target,
            self._client,
            session_class=WebSocketSession,
            headers=headers,
            **self._connect_options,  # type: ignore[arg-type]
        )
        async with connecting as socket:
            fault = handshake_fault(socket.response)
            if fault is None:
                return await self._use(socket, first)
        raise RemoteConnectionError(self.url, fault)  # here: not in httpx-ws's task group

    async def _use(
        self, socket: WebSocketSession, first: anyio.abc.TaskStatus[None] | None
    ) -> bool:
        """Take `socket` (the first, or a resuming one) until it is lost (`_serve_socket`)."""
        response = socket.response
        if first is not None:
            self.connection_id = response.headers.get(CONNECTION_ID_HEADER) if response else None
            self._socket = socket
            self._add(socket)
            first.started()
        else:
            received = response.headers.get(RECEIVED_HEADER, "") if response else ""
            async with self._send_lock:
                if not await self._send_again(socket, received):
                    return False
                self._socket = socket
                self._add(socket)
            self.resumes += 1
        try:
            await socket.lost.wait()
        finally:
            self._read_before += socket.received  # the next cursor: every frame received
        return True

    def _add(self, socket: WebSocketSession) -> None:
        self._sockets.append(socket)
        self._arrived.set()

    async def _send_again(self, socket: WebSocketSession, received: str) -> bool:
        """Send the frames the server did not read (False: they are no longer kept)."""
        if not received.isdigit():
            self._fail(f"the server resumed the connection without an {RECEIVED_HEADER} header")
            return False
        missing = self._sent_count - int(received)
        if missing > len(self._sent):
            self._fail(f"the server lost {missing} of this client's messages, more than kept")
            return False
        for line in list(self._sent)[len(self._sent) - missing :] if missing > 0 else ():
            await socket.send_text(line.decode())
        return True

    # ------------------------------------------------------------------ sending

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send each complete line of `data` as one text frame (kept to be sent again)."""
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        for line in lines:
            if not line:
                continue
            if self._what is not None:
                raise anyio.BrokenResourceError(self._what)
            if self._sent_count == 0:
                self._note_initialize(line)
            async with self._send_lock:
                self._sent_count += 1
                if self.resumable or not self._offer_known:
                    self._keep_sent(line)
                socket = self._socket
                assert socket is not None
                if socket.ended is not None and self.resumable:
                    continue  # sent again once resumed
                try:
                    await socket.send_text(line.decode())
                except (httpx_ws.HTTPXWSException, wsproto.utilities.LocalProtocolError):
                    if not self.resumable:
                        self._end("sending failed")
                        raise anyio.BrokenResourceError(self._what) from None

    def _keep_sent(self, line: bytes) -> None:
        sent = self._sent
        sent.append(line)
        self._sent_bytes += len(line)
        while len(sent) > SENT_KEPT or self._sent_bytes > SENT_KEPT_BYTES:
            self._sent_bytes -= len(sent.popleft())

    def _note_initialize(self, line: bytes) -> None:
        with contextlib.suppress(NotAMessage):
            message = envelope(line)
            if message.method == "initialize" and message.is_request:
                self._initialize_id = message.id  # type: ignore[assignment]

    # ------------------------------------------------------------------ receiving

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The text frames received so far, one line each; b"" once the connection ended."""
        while True:
            if not self._sockets:
                return b""
            socket = self._sockets[0]
            if self._what is not None and not socket.lines:
                return b""
            if socket.ended is None or socket.lines:
                data = await socket.receive_lines(max_bytes)
                if data:
                    if self._initialize_id is not None:
                        self._look_for_offer(data)
                    return data
            elif len(self._sockets) > 1:
                self._sockets.popleft()  # read whole: on to the next socket's
            else:
                self._arrived = anyio.Event()
                await self._arrived.wait()

    def _look_for_offer(self, data: bytes) -> None:
        """Whether the server offers resumption, from its `initialize` answer."""
        for line in data.splitlines():
            with contextlib.suppress(NotAMessage):
                message = envelope(line)
                if message.is_response and message.id == self._initialize_id:
                    self._initialize_id = None
                    self._offer_known = True
                    self.resumable = offers_resumption(line)
                    if not self.resumable:
                        self._sent.clear()
                    return

    # ------------------------------------------------------------------ ending

    def _end(self, what: str) -> None:
        if self._what is None:
            self._what = what
        self._arrived.set()

    def _fail(self, what: str, status: int | None = None) -> None:
        if self._what is None:
            self._failed, self._status = True, status
        self._end(what)

    async def closed_reason(self) -> RemoteConnectionError:
        """The error calls fail with once the connection ended (`ClientConnection`)."""
        what = self._what or "the connection was closed"
        if self._failed:
            return resume_failed(self.url, what, self._status)
        return RemoteConnectionError(self.url, what)

    async def send_eof(self) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End the connection: DELETE it (resumable: the server waits for a resume
        otherwise), then close the socket."""
        if self._closing:
            return
        self._closing = True
        self._end("the connection was closed by this client")
        with anyio.CancelScope(shield=True):
            if self.resumable and self.connection_id is not None:
                with anyio.move_on_after(DELETE_TIMEOUT), contextlib.suppress(httpx.HTTPError):
                    await self._client.delete(
                        self._target, headers={CONNECTION_ID_HEADER: self.connection_id}
                    )
            if self._socket is not None:
                with contextlib.suppress(Exception):
                    await self._socket.close()


@contextlib.asynccontextmanager
async def open_resumable_websocket(
    url: str,
    *,
    reconnect: Reconnect,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int,
    keepalive_interval: float | None = KEEPALIVE_INTERVAL,
    keepalive_timeout: float | None = KEEPALIVE_TIMEOUT,
    verify: object = True,
) -> AsyncIterator[ResumableWebSocketStream]:
    """A resumable WebSocket connection to the ACP endpoint `url`, open while the block runs.
    Raises `RemoteConnectionError` when the first socket cannot be opened."""
    async with http_client(http_url(url), headers=headers, http2=False, verify=verify) as client:
        stream = ResumableWebSocketStream(
            client,
            url,
            reconnect,
            max_message_bytes=max_message_bytes,
            keepalive_interval=keepalive_interval,
            keepalive_timeout=keepalive_timeout,
        )
        async with anyio.create_task_group() as tasks:
            await tasks.start(stream.keep)
            try:
                yield stream
            finally:
                await stream.aclose()
