"""The client side of ACP over Streamable HTTP, as a byte stream (the RFD's HTTP profile).

Each line the connection writes is POSTed as one JSON message: `initialize` first, answered
`200` with its result and the `Acp-Connection-Id`; everything after it carries that header,
and a message of a session (`params.sessionId`, or an answer to a request that came for a
session) carries `Acp-Session-Id` too, and is answered `202`. What the server sends comes on
long-lived `GET` event streams, merged into what `receive_some` returns: the
connection-scoped one, opened once `initialize` succeeded, and one per session, opened
before the first message of that session is POSTed (so the updates a `session/load`
replays have somewhere to go) or as soon as a result names a new session. Messages keep
their order within each stream. Leaving `open_streamable_http` DELETEs the connection.

A POST the server refuses fails that request with an error response naming the status; a
401, 403, 404 or 410 (the connection is gone or not ours) and a network error end the
connection, as does the end of the connection-scoped stream. Needs the `remote` extra.

Resuming (`reconnect`, when the server's `initialize` result offers resumable streams): a
stream that breaks or ends is opened again with `Last-Event-ID` (the `id` of the last event
read, 0 before any), and a POST that fails on the network is sent again with the same
`Acp-Message-Seq` (the server takes it once), each up to `Reconnect.attempts` times with
growing waits; a 404 or 409 (the connection, or what the stream missed, is gone) or the
last failed attempt ends the connection with `ResumeFailed`.
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass

import anyio
import httpx
import msgspec
from msgspec import UnsetType

from .._loop import Event, Nursery, current_loop
from ..errors import RemoteConnectionError
from .envelope import Envelope, NotAMessage, RequestId, envelope, one_line
from .reconnect import GONE, LAST_EVENT_ID_HEADER, Reconnect, offers_resumption, resume_failed
from .remote_http import (
    CONNECTION_ID_HEADER,
    SESSION_ID_HEADER,
    http_client,
    refused,
)
from .sse import EventTooLarge, SseParser

log = logging.getLogger("acpwire")

CONNECTION_GONE = frozenset({401, 403, 404, 410})
"""Statuses of a POST that mean the connection is unusable (credentials refused, or the
server no longer knows it): the connection ends."""
DELETE_TIMEOUT = 5.0
"""Seconds leaving the block waits for the server to take the DELETE."""
PRIOR_KNOWLEDGE_HINT = (
    " (HTTP/2 over http:// starts without asking; a server that speaks only HTTP/1.1 there, "
    "such as uvicorn, drops it: pass open_remote(..., http2=False))"
)
"""Added to the error of an `initialize` POST that failed on cleartext HTTP/2."""
HTTP_ERROR = -32603
"""The JSON-RPC code of the error a request gets when its POST was refused."""
MESSAGE_SEQ_HEADER = "Acp-Message-Seq"
"""A resuming client's POST number (from 1), so that the server takes a retried POST once."""


class StreamableHttpStream:
    """A `ByteStream` over Streamable HTTP (`open_streamable_http` makes one)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        nursery: Nursery,
        *,
        max_message_bytes: int,
        max_buffered_bytes: int,
        prior_knowledge: bool = False,
        reconnect: Reconnect | None = None,
    ) -> None:
        self._client = client
        self._reconnect = reconnect
        self.resumable = False
        """Whether the streams are resumed after a cut (asked for, and the server offers it)."""
        self._cursors: dict[str | None, str] = {}  # stream (None: connection's) -> last id read
        self._posts = 0  # POSTs numbered so far (resuming)
        self._resume_failed = False
        self._prior_knowledge = prior_knowledge
        self.url = url
        self._endpoint = httpx.URL(url)  # parsed once, not by httpx per request
        self._nursery = nursery
        self._loop = current_loop()
        self._max_message_bytes = max_message_bytes
        self._max_buffered_bytes = max_buffered_bytes
        self.connection_id: str | None = None
        """The `Acp-Connection-Id` the server answered `initialize` with."""
        self._partial = b""  # the start of a line whose end has not been written yet
        self._received: collections.deque[bytes] = collections.deque()
        self._received_bytes = 0
        self._readable: Event = self._loop.Event()  # set: something arrived, or the end
        self._room: Event = self._loop.Event()  # set: the reader took some
        self._what: str | None = None  # why the connection ended, once it did
        self._status: int | None = None
        self._sessions: dict[str, Event] = {}  # session -> set once its stream opened or failed
        self._request_sessions: dict[RequestId, str | None] = {}  # the server's requests

    # ------------------------------------------------------------------ sending

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """POST each complete line of `data`, in order."""
        *lines, self._partial = (self._partial + bytes(data)).split(b"\n")
        for line in lines:
            if line:
                await self._post(line)

    async def _post(self, line: bytes) -> None:
        if self._what is not None:
            raise anyio.BrokenResourceError(self._what)
        try:
            message = envelope(line)
        except NotAMessage as exc:  # our own connection wrote it: a bug, not the peer's
            raise ValueError(f"cannot send {line[:80]!r}: {exc}") from None
        if self.connection_id is None:
            await self._initialize(line, message)
            return
        if message.method is not None or isinstance(message.id, UnsetType):
            session = message.params_session
        else:
            session = self._request_sessions.pop(message.id, None)
        if session is not None:
            await self._session_stream(session)
        headers = {"content-type": "application/json", CONNECTION_ID_HEADER: self.connection_id}
        if session is not None:
            headers[SESSION_ID_HEADER] = session
        if self.resumable:
            self._posts += 1
            headers[MESSAGE_SEQ_HEADER] = str(self._posts)
            response = await self._retried_post(line, headers)
        else:
            response = await self._request("POST", content=line, headers=headers)
        if response.is_success:
            return
        error = await refused(self.url, response, "refused a POST")
        if response.status_code in CONNECTION_GONE or not message.is_request:
            self._resume_failed = self.resumable and response.status_code in GONE
            self._end(error.what, response.status_code)
            raise anyio.BrokenResourceError(error.what)
        self._answer_error(message, response.status_code, error.what)

    async def _initialize(self, line: bytes, message: Envelope) -> None:
        if message.method != "initialize" or not message.is_request:
            what = f"the first message must be the `initialize` request, not {line[:80]!r}"
            self._end(what)
            raise anyio.BrokenResourceError(what)
        hint = PRIOR_KNOWLEDGE_HINT if self._prior_knowledge else ""
        response = await self._request(
            "POST", content=line, headers={"content-type": "application/json"}, hint=hint
        )
        if response.status_code != 200:
            error = await refused(self.url, response, "refused `initialize`")
            self._end(error.what, response.status_code)
            raise anyio.BrokenResourceError(error.what)
        body = response.content
        connection_id = response.headers.get(CONNECTION_ID_HEADER)
        if connection_id is not None:
            self.connection_id = connection_id
            self.resumable = self._reconnect is not None and offers_resumption(body)
            self._nursery.start_soon(self._read_events, None, self._loop.Event())
        elif not _failed(body):  # an initialize that failed opens no connection
            what = f"answered `initialize` without an {CONNECTION_ID_HEADER} header"
            self._end(what)
            raise anyio.BrokenResourceError(what)
        await self._deliver([body])

    async def _request(self, method: str, *, hint: str = "", **kwargs: object) -> httpx.Response:
        try:
            return await self._client.request(method, self._endpoint, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            what = f"{method} failed: {exc!r}{hint}"
            self._end(what)
            raise anyio.BrokenResourceError(what) from exc

    async def _retried_post(self, line: bytes, headers: dict[str, str]) -> httpx.Response:
        """POST `line`, again after each network failure (the server takes it once)."""
        assert self._reconnect is not None
        failure = ""
        for delay in (0.0, *self._reconnect.delays()):
            await self._loop.sleep(delay)
            if self._what is not None:
                raise anyio.BrokenResourceError(self._what)
            try:
                return await self._client.request(
                    "POST", self._endpoint, content=line, headers=headers
                )
            except httpx.TransportError as exc:
                failure = f"POST failed: {exc!r}"
        what = f"{failure} (after {self._reconnect.attempts} more attempts)"
        self._resume_failed = True
        self._end(what)
        raise anyio.BrokenResourceError(what)

    def _answer_error(self, message: Envelope, status: int, what: str) -> None:
        """Fail our own request whose POST was refused, as if the server had answered it."""
        error = {"code": HTTP_ERROR, "message": what, "data": {"status": status}}
        answer = {"jsonrpc": "2.0", "id": message.id, "error": error}
        self._push(msgspec.json.encode(answer) + b"\n")

    # ------------------------------------------------------------------ event streams

    async def _session_stream(self, session: str) -> None:
        """Open the session's event stream unless it is open, and wait until the server
        answered the GET (a refusal is logged: a lenient server may then send the session's
        messages on the connection-scoped stream)."""
        opened = self._sessions.get(session)
        if opened is None:
            opened = self._sessions[session] = self._loop.Event()
            self._nursery.start_soon(self._read_events, session, opened)
        await opened.wait()

    async def _read_events(self, session: str | None, opened: Event) -> None:
        scope = "the connection's" if session is None else f"session {session}'s"
        what = f"the server ended {scope} event stream"
        delays: Iterator[float] | None = None  # while resuming: the waits left
        try:
            while True:
                ended = await self._read_stream(session, opened, scope, delays is not None)
                what, status = ended.what, ended.status
                if status is not None:
                    self._status = status
                if ended.final or not self.resumable or self._what is not None:
                    return
                if ended.opened:
                    delays = None  # it was resumed: a later cut has every attempt again
                elif status is not None and delays is None:
                    return  # refused at its first opening: as without resumption
                if status in GONE:
                    self._fail_resuming(what, status)
                    return
                if delays is None:
                    assert self._reconnect is not None
                    delays = self._reconnect.delays()
                delay = next(delays, None)
                if delay is None:
                    self._fail_resuming(f"{what} (and every attempt to resume it)", status)
                    return
                log.info("%s: %s; opening it again", self.url, what)
                await self._loop.sleep(delay)
        finally:
            opened.set()
            if session is None:
                self._end(what)
            else:
                if self._sessions.get(session) is opened:
                    del self._sessions[session]  # the next message of the session reopens it
                if self._what is None:
                    log.info("%s: %s", self.url, what)

    async def _read_stream(
        self, session: str | None, opened: Event, scope: str, resuming: bool
    ) -> _Ended:
        """Read one GET of the stream until it ends, and say how it did."""
        headers = {
            "accept": "text/event-stream",
            # the stream is read raw (aiter_raw), so it must not arrive compressed
            "accept-encoding": "identity",
            CONNECTION_ID_HEADER: self.connection_id or "",
        }
        if session is not None:
            headers[SESSION_ID_HEADER] = session
        if resuming or session in self._cursors:
            headers[LAST_EVENT_ID_HEADER] = self._cursors.get(session, "0")
        streamed = False
        try:
            async with self._client.stream("GET", self._endpoint, headers=headers) as response:
                if response.status_code != 200:
                    error = await refused(self.url, response, f"refused {scope} event stream")
                    return _Ended(error.what, status=response.status_code)
                opened.set()
                parser = SseParser(self._max_message_bytes)
                async for chunk in response.aiter_raw():
                    streamed = True
                    events = parser.feed(chunk)
                    if events:
                        await self._deliver(events, session)
                    if parser.last_event_id is not None:
                        self._cursors[session] = parser.last_event_id
        except httpx.HTTPError as exc:
            return _Ended(f"{scope} event stream failed: {exc!r}", opened=streamed)
        except EventTooLarge as exc:
            return _Ended(f"{scope} event stream sent {exc}", final=True)
        return _Ended(f"the server ended {scope} event stream", opened=streamed)

    def _fail_resuming(self, what: str, status: int | None = None) -> None:
        self._resume_failed = True
        self._end(what, status)

    async def _deliver(self, messages: list[bytes], session: str | None = None) -> None:
        """Messages from the server (one event stream's, in order), to the reader."""
        data = b"\n".join(messages)
        # Only a request or a response concerns the transport, and neither can lack an
        # `"id"` key, spelt plainly or with `\u` escapes: notifications are not decoded.
        if (
            b'"id"' in data
            or b"\\u" in data
            or b"\r" in data
            or data.count(b"\n") >= len(messages)  # a message spread over lines
        ):
            for message in messages:
                self._note(message, session)
            data = b"\n".join(map(one_line, messages))
        while self._received_bytes >= self._max_buffered_bytes and self._what is None:
            self._room = self._loop.Event()
            await self._room.wait()
        self._push(data + b"\n")

    def _note(self, data: bytes, session: str | None) -> None:
        """Remember the stream of a request from the server (its answer names the session),
        and open the stream of a session a result names."""
        try:
            message = envelope(data)
        except NotAMessage:
            return  # the connection answers it as unparsable
        if message.is_request and not isinstance(message.id, UnsetType):
            self._request_sessions[message.id] = session or message.params_session
        elif message.result_session is not None and message.result_session not in (self._sessions):
            # a new session: open its stream now, so its updates flow from the start
            opened = self._sessions[message.result_session] = self._loop.Event()
            self._nursery.start_soon(self._read_events, message.result_session, opened)

    def _push(self, line: bytes) -> None:
        self._received.append(line)
        self._received_bytes += len(line)
        self._readable.set()

    # ------------------------------------------------------------------ receiving

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """What arrived (whole lines), waiting for some; b"" once the connection ended."""
        while not self._received:
            if self._what is not None:
                return b""
            self._readable = self._loop.Event()
            await self._readable.wait()
        data = b"".join(self._received)
        self._received.clear()
        self._received_bytes = 0
        self._room.set()
        return data

    # ------------------------------------------------------------------ ending

    def _end(self, what: str, status: int | None = None) -> None:
        if self._what is None:
            self._what, self._status = what, status if status is not None else self._status
        self._readable.set()
        self._room.set()

    async def closed_reason(self) -> RemoteConnectionError:
        """The error calls fail with once the connection ended (`ClientConnection`)."""
        what = self._what or "the connection was closed"
        if self._resume_failed:
            return resume_failed(self.url, what, self._status)
        return RemoteConnectionError(self.url, what, status=self._status)

    async def send_eof(self) -> None:
        """No more messages: end the connection (DELETE)."""
        await self.aclose()

    async def aclose(self) -> None:
        """DELETE the connection (best effort, bounded) and stop reading its streams."""
        connection_id, self.connection_id = self.connection_id, None
        self._end("the connection was closed by this client")
        if connection_id is not None:
            with self._loop.CancelScope(shield=True), self._loop.move_on_after(DELETE_TIMEOUT):
                with contextlib.suppress(httpx.HTTPError):
                    await self._client.delete(
                        self._endpoint, headers={CONNECTION_ID_HEADER: connection_id}
                    )
        self._nursery.cancel_scope.cancel()


@dataclass(frozen=True)
class _Ended:
    """How one GET of an event stream ended: why (`what`), the status of a refusal, whether
    it had streamed (something came: a resumed stream starts its attempts afresh), and
    `final` when it must not be opened again."""

    what: str
    status: int | None = None
    opened: bool = False
    final: bool = False


def _failed(answer: bytes) -> bool:
    try:
        return envelope(answer).failed
    except NotAMessage:
        return False


@contextlib.asynccontextmanager
async def open_streamable_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    http2: bool = True,
    max_message_bytes: int,
    max_buffered_bytes: int,
    verify: object = True,
    reconnect: Reconnect | None = None,
) -> AsyncIterator[StreamableHttpStream]:
    """A Streamable HTTP connection to the ACP endpoint `url`, open while the block runs
    (nothing is sent until the connection writes `initialize`). `http2` as for
    `remote_http.http_client`."""
    async with http_client(
        url, headers=headers, http2=http2, verify=verify, event_streams_apart=True
    ) as client:
        async with current_loop().open_nursery() as nursery:
            stream = StreamableHttpStream(
                client,
                url,
                nursery,
                max_message_bytes=max_message_bytes,
                max_buffered_bytes=max_buffered_bytes,
                prior_knowledge=http2 and url.startswith("http://"),
                reconnect=reconnect,
            )
            try:
                yield stream
            finally:
                await stream.aclose()
