"""The Streamable HTTP profile (the RFD's routing tree), one ASGI request at a time:

    POST   415 unless `Content-Type: application/json`; 413 over `max_message_bytes`;
           400 for text that is not one JSON-RPC message, 501 for a batch (an array);
           `initialize` without `Acp-Connection-Id`: a new connection, 200 with the
           agent's answer and the `Acp-Connection-Id` header (503 when the server is full,
           504 when the agent does not answer in time);
           otherwise 400 without `Acp-Connection-Id`, 404 for an unknown one, 400 for a
           message of a session without (or with another) `Acp-Session-Id`; else the
           message goes to the agent and the answer is 202 at once.
    GET    406 unless `Accept` includes `text/event-stream`; 400 without
           `Acp-Connection-Id`, 404 for an unknown connection or a session the server does
           not know; else the event stream: connection-scoped, or the session's with
           `Acp-Session-Id`. It ends when the connection does, or once a write to it
           waited `stall_timeout` for the client (the client stopped reading it).
    DELETE 400 without `Acp-Connection-Id`, 404 for an unknown one; else the connection
           ends (the agent reads EOF, as when a stdio client closes its stdin) and 202.
           An ended connection is 404 to every request from then on.

With resumable streams (`RemoteOptions.resumable`, replay.py) every event carries an `id:`
(its stream's cursor); a GET with `Last-Event-ID` goes on after that cursor: 409 when what
followed it is no longer kept, 400 for a cursor the stream never sent. A POST may carry
`Acp-Message-Seq` (a number growing by POST): one at or below the highest taken is a retry
of a POST the server already has, answered 202 and not handed on again. A DELETE may end a
resumable WebSocket connection too (its client's goodbye, which a closing socket cannot say).

Any other method is 405. Every request first passes the app's checks (guard.py).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from msgspec import UnsetType

from ..._loop import CancelScope, Event, current_loop
from ...streams import sse
from ...streams.envelope import NotAMessage, envelope, one_line
from .asgi import (
    CLOSE,
    Message,
    Receive,
    Scope,
    Send,
    closes,
    closing,
    encoded,
    headers_of,
    respond,
)
from .connection import RemoteConnection
from .mailbox import KEEPALIVE, Mailbox
from .options import RemoteOptions
from .replay import LAST_EVENT_ID, CursorGone, RetainingMailbox, UnknownCursor, cursor_of

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("acpwire")

CONNECTION_ID = "acp-connection-id"
SESSION_ID = "acp-session-id"
MESSAGE_SEQ = "acp-message-seq"
JSON = "application/json"
RETRY_AFTER = "5"
PARSE_ERROR = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
EVENT_STREAM = tuple(
    encoded(
        {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",  # proxies (nginx) must not hold events back
        }
    )
)
"""An event stream's response headers (built once: a stream is opened per session)."""
EVENT_STREAM_CLOSING = (*EVENT_STREAM, *encoded(CLOSE))
"""Those over HTTP/1.1 (`asgi.closing`: the stream ends with its connection)."""


async def handle(app: Hub, scope: Scope, receive: Receive, send: Send) -> None:
    method = scope["method"]
    headers = headers_of(scope)
    # A body is read before any answer: an HTTP/2 server may fail a stream whose response
    # ended while its request was still being sent.
    body = b"" if method in ("GET", "HEAD") else await _read_body(receive, headers, app.remote)
    path = app.remote.path
    if path is not None and scope.get("path") != path:
        await respond(send, 404, f"not found: the ACP endpoint is {path}")
        return
    if method not in ("POST", "GET", "DELETE"):
        await respond(
            send,
            405,
            "the ACP endpoint takes POST, GET and DELETE",
            headers={"allow": "POST, GET, DELETE"},
        )
        return
    denied = await app.refusal(scope, headers, websocket=False)
    if denied is not None:
        await respond(send, denied.status, denied.reason, headers=denied.headers)
        return
    if method == "POST":
        await _post(app, headers, body, send)
    elif method == "GET":
        await _get(app, scope, headers, receive, send)
    else:
        await _delete(app, scope, headers, send)


DRAINED_BODIES = 4
"""How much of a body over the limit is read and dropped before the 413, in limits."""


async def _read_body(
    receive: Receive, headers: dict[str, str], remote: RemoteOptions
) -> bytes | None:
    """The request's body; None once it is over `max_message_bytes` (the rest is read and
    dropped, up to `DRAINED_BODIES` times the limit: a client still sending when the 413
    comes would miss it (HTTP/1.1: the connection closes under its write), and Hypercorn
    0.18 fails on HTTP/2 data for a stream already answered)."""
    limit = remote.max_message_bytes
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        await _drain(receive, DRAINED_BODIES * limit)
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            if message.get("more_body", False):
                await _drain(receive, DRAINED_BODIES * limit - size)
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _drain(receive: Receive, budget: int) -> None:
    """Read the rest of a body and drop it, up to `budget` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        budget -= len(message.get("body", b""))


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


async def _post(app: Hub, headers: dict[str, str], body: bytes | None, send: Send) -> None:
    if _media_type(headers.get("content-type", "")) != JSON:
        await respond(
            send, 415, "a POST to the ACP endpoint carries Content-Type: application/json"
        )
        return
    if body is None:
        limit = app.remote.max_message_bytes
        await respond(send, 413, f"a message may have at most {limit} bytes")
        return
    try:
        message = envelope(body)
    except NotAMessage as exc:
        if exc.batch:
            await respond(
                send, 501, "JSON-RPC batches are not supported: send one message per POST"
            )
        else:
            await respond(send, 400, PARSE_ERROR, content_type=JSON)
        return
    line = one_line(body)
    connection_id = headers.get(CONNECTION_ID)
    if message.method == "initialize" and message.is_request and connection_id is None:
        await _initialize(app, line, message.id, send)
        return
    connection = await _connection(app, headers, send)
    if connection is None:
        return
    connection.touch()
    if app.remote.resumable is not None and _retried(connection, headers.get(MESSAGE_SEQ)):
        await respond(send, 202)
        return
    refusal = connection.routes.incoming(
        message, headers.get(SESSION_ID), lambda session: app.knows_session(connection, session)
    )
    if refusal is not None:
        await respond(send, 400, refusal)
        return
    over_limit = connection.sessions.refusal(message)
    if over_limit is not None:
        await respond(send, 202)  # then the answer, as the agent's would come
        if over_limit:
            await connection.answer(message, over_limit)
        return
    if not await connection.stream.feed(line):
        await respond(send, 404, f"the connection {connection.id!r} has ended")
        return
    await respond(send, 202)


def _retried(connection: RemoteConnection, seq: str | None) -> bool:
    """Whether a POST is a retry of one taken already (its `Acp-Message-Seq`)."""
    if seq is None or not seq.isdigit():
        return False
    number = int(seq)
    if number <= connection.last_post:
        return True
    connection.last_post = number
    return False


async def _connection(
    app: Hub, headers: dict[str, str], send: Send, *, websocket: bool = False
) -> RemoteConnection | None:
    """The Streamable HTTP connection the request names (`websocket`: or a WebSocket's);
    None once it was answered 400 (no `Acp-Connection-Id`) or 404 (unknown, ended, or of
    the other profile)."""
    connection_id = headers.get(CONNECTION_ID)
    if connection_id is None:
        await respond(send, 400, "missing Acp-Connection-Id header: POST `initialize` first")
        return None
    connection = app.connections.get(connection_id)
    if connection is None or (connection.profile != "http" and not websocket):
        await respond(send, 404, f"unknown Acp-Connection-Id {connection_id!r}")
        return None
    if connection.ended:
        await respond(send, 404, f"the connection {connection_id!r} has ended")
        return None
    return connection


async def _initialize(app: Hub, line: bytes, request_id: object, send: Send) -> None:
    if app.full:
        await respond(
            send,
            503,
            f"the server is at its limit of {app.remote.max_connections} "
            "connections: try again later",
            headers={"retry-after": RETRY_AFTER},
        )
        return
    assert not isinstance(request_id, UnsetType)
    connection = app.new_connection("http")
    if not app.start(connection):
        app.forget(connection)
        await respond(
            send,
            500,
            "the ASGI server did not run the app's lifespan, which "
            "Streamable HTTP connections live in: enable it (uvicorn --lifespan on)",
        )
        return
    answer = await connection.initialize(line, request_id, app.remote.initialize_timeout)  # type: ignore[arg-type]
    if not answer:
        connection.end()
        connection.cancel()
        await respond(send, 504, "the agent did not answer `initialize` in time")
        return
    if envelope(answer).failed:
        connection.end()  # a failed initialize opens no connection: the client starts over
        await respond(send, 200, answer, content_type=JSON)
        return
    await respond(
        send, 200, answer, content_type=JSON, headers={"acp-connection-id": connection.id}
    )


async def _get(
    app: Hub, scope: Scope, headers: dict[str, str], receive: Receive, send: Send
) -> None:
    accepted = {_media_type(item) for item in headers.get("accept", "").split(",")}
    if "text/event-stream" not in accepted:
        await respond(
            send,
            406,
            "a GET of the ACP endpoint opens an event stream: send "
            "Accept: text/event-stream (or Upgrade: websocket)",
        )
        return
    connection = await _connection(app, headers, send)
    if connection is None:
        return
    session = headers.get(SESSION_ID)
    if session is not None and not app.knows_session(connection, session):
        await respond(send, 404, f"unknown Acp-Session-Id {session!r} for this connection")
        return
    mailbox = connection.mailbox(session)
    reader = await _reader(mailbox, headers.get(LAST_EVENT_ID), send)
    if reader is None:
        return
    connection.attach()
    try:
        await _stream_events(app, scope, receive, send, mailbox, reader)
    finally:
        mailbox.detach(reader)
        connection.detach()


WRITE_BYTES = 64 * 1024
"""Bytes of queued messages after which one write of an event stream takes no more (the last
one may pass it): a write the client does not take within `stall_timeout` ends the stream,
so a write is kept to what a reader that still reads takes in that time."""


async def _stream_events(
    app: Hub, scope: Scope, receive: Receive, send: Send, mailbox: Mailbox, reader: int
) -> None:
    """The event stream's response: the mailbox's messages as they come (a keepalive comment
    in a silence), until the mailbox closes, another reader replaces this one, the client
    disconnects, or a write waits `stall_timeout` for the client."""
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": EVENT_STREAM_CLOSING if closes(scope) else EVENT_STREAM,
    }
    stall = app.remote.stall_timeout
    if not await _sent(send, start, stall):
        return
    loop = current_loop()
    cursors = mailbox if isinstance(mailbox, RetainingMailbox) else None
    async with loop.open_nursery() as nursery:
        gone = loop.Event()
        nursery.start_soon(_until_disconnected, receive, nursery.cancel_scope, gone)
        while True:
            item = await mailbox.take(reader, app.remote.keepalive_interval)
            if item is None:
                break
            if item is KEEPALIVE:
                data = sse.KEEPALIVE
            else:  # with those queued meanwhile: one write a burst
                assert isinstance(item, bytes)
                burst = [item, *mailbox.take_queued(reader, WRITE_BYTES - len(item))]
                if cursors is None:
                    data = b"".join(map(sse.event, burst))
                else:
                    first = cursors.taken - len(burst) + 1
                    data = b"".join(
                        sse.identified_event(message, first + i) for i, message in enumerate(burst)
                    )
            body = {"type": "http.response.body", "body": data, "more_body": True}
            if not await _sent(send, body, stall):
                # HTTP/2: its flow-control window spent and never renewed, as by a client
                # that closed the response without resetting the stream (httpx does)
                log.warning(
                    "ending the event stream of %s: its client took nothing for %g s "
                    "(RemoteOptions.stall_timeout)",
                    mailbox.name,
                    stall,
                )
                nursery.cancel_scope.cancel()
                return  # unended: the end would wait behind what the client does not take
        nursery.cancel_scope.cancel()
    if not gone.is_set():  # (Hypercorn's HTTP/2 waits forever to end a stream of a closed
        # connection: the request would never end, its stream never count as closed)
        end = {"type": "http.response.body", "body": b"", "more_body": False}
        with contextlib.suppress(Exception):  # the client may be gone
            await _sent(send, end, stall)


async def _sent(send: Send, message: Message, timeout: float) -> bool:
    """Whether `send(message)` finished within `timeout` seconds (a client that stopped
    reading leaves it waiting: forever, once its socket or its HTTP/2 stream's window is
    full)."""
    with current_loop().move_on_after(timeout):
        await send(message)
        return True
    return False


async def _reader(mailbox: Mailbox, last_event_id: str | None, send: Send) -> int | None:
    """The stream's new reader: after the client's `Last-Event-ID` on a resumable stream;
    None once the request was answered 409 (gone) or 400 (unknown)."""
    if last_event_id is None or not isinstance(mailbox, RetainingMailbox):
        return mailbox.attach()
    try:
        return mailbox.resume(cursor_of(last_event_id.strip()))
    except CursorGone as exc:
        await respond(send, 409, f"{mailbox.name}: {exc}")
    except UnknownCursor as exc:
        await respond(send, 400, f"{mailbox.name}: {exc}")
    return None


async def _until_disconnected(receive: Receive, scope: CancelScope, gone: Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()
    scope.cancel()


async def _delete(app: Hub, scope: Scope, headers: dict[str, str], send: Send) -> None:
    resumable = app.remote.resumable is not None
    connection = await _connection(app, headers, send, websocket=resumable)
    if connection is None:
        return
    connection.end()  # counted until its agent is done (its turns may run on: `end`)
    await respond(send, 202, headers=closing(scope))
