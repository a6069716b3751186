"""The WebSocket profile with resumable streams (`RemoteOptions.resumable`): the connection
outlives its socket, and a client that lost the socket opens another one that goes on where
the first stopped.

- A client asks for resumption with `Last-Event-ID: 0` on its first upgrade; a new
  connection without it is served as without the option (websocket_profile.py: it ends with
  its socket, and its `initialize` result does not advertise resumption).
- A new resumable connection runs in the request that opened it until it ends: the client's DELETE, `idle_timeout` seconds without a socket, or the
  agent's end. Its messages go to one `RetainingMailbox`; the frames are numbered from 1 (the
  cursor, never written: both sides count the text frames), and the socket of the moment
  reads the mailbox.
- A resume is an upgrade with `Acp-Connection-Id` and `Last-Event-ID` (the number of frames
  the client read): 404 for an unknown or ended connection, 409 when the frames after the
  cursor are no longer kept, 400 for a cursor never sent or missing. The `101` carries
  `Acp-Received`: the number of the client's frames the server read, so the client sends
  again those the cut lost. A socket that replaces another one ends it.

A socket that closes or drops leaves the connection waiting for a resume (the close code
cannot tell a client that left from one that dropped): a client that leaves for good sends a
DELETE (`open_remote(..., resume=True)` does).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..._loop import CancelScope, current_loop
from ...streams.envelope import NotAMessage, envelope, one_line
from .asgi import Receive, Scope, Send, encoded, headers_of
from .connection import RemoteConnection
from .replay import LAST_EVENT_ID, CursorGone, RetainingMailbox, UnknownCursor, cursor_of
from .websocket_profile import (
    SESSION_METHOD,
    admitted,
    close_too_big,
    refuse,
    refused_when_full,
    serve,
    session_refusal,
)

if TYPE_CHECKING:
    from .hub import Hub

RECEIVED = "acp-received"
"""The `101` header of a resume: how many of the client's text frames the server read."""
PROFILE = "resumable websocket"
"""The `RemoteConnection.profile` of a WebSocket connection that outlives its socket."""
FOREVER = 1e9
"""A socket's wait for the agent's next message (WebSocket keepalives are the server's)."""


async def handle(app: Hub, scope: Scope, receive: Receive, send: Send) -> None:
    if not await admitted(app, scope, receive, send):
        return
    headers = headers_of(scope)
    connection_id = headers.get("acp-connection-id")
    if connection_id is not None:
        await _resume(app, connection_id, headers.get(LAST_EVENT_ID), scope, receive, send)
        return
    if await refused_when_full(app, scope, send):
        return
    if LAST_EVENT_ID not in headers:
        await serve(app, receive, send)  # a client that does not resume
        return
    connection = app.new_connection(PROFILE)
    try:
        async with current_loop().open_nursery() as nursery:
            nursery.start_soon(connection.run)
            reader = _mailbox(connection).attach()
            await _serve_socket(app, connection, reader, receive, send)
            await connection.done.wait()
    finally:
        app.forget(connection)


def _mailbox(connection: RemoteConnection) -> RetainingMailbox:
    mailbox = connection.mailbox(None)
    assert isinstance(mailbox, RetainingMailbox)
    return mailbox


async def _resume(
    app: Hub,
    connection_id: str,
    last_event_id: str | None,
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    connection = app.connections.get(connection_id)
    if connection is None or connection.profile != PROFILE or connection.ended:
        await refuse(scope, send, 404, f"unknown Acp-Connection-Id {connection_id!r}")
        return
    if last_event_id is None:
        await refuse(scope, send, 400, "a resuming WebSocket upgrade carries Last-Event-ID")
        return
    mailbox = _mailbox(connection)
    try:
        reader = mailbox.resume(cursor_of(last_event_id.strip()))
    except CursorGone as exc:
        await refuse(scope, send, 409, f"{mailbox.name}: {exc}")
        return
    except UnknownCursor as exc:
        await refuse(scope, send, 400, f"{mailbox.name}: {exc}")
        return
    await _serve_socket(app, connection, reader, receive, send)


async def _serve_socket(
    app: Hub, connection: RemoteConnection, reader: int, receive: Receive, send: Send
) -> None:
    """Carry the connection over this socket until it ends or another one replaces it."""
    mailbox = _mailbox(connection)
    connection.attach()
    try:
        await send(
            {
                "type": "websocket.accept",
                "headers": encoded(
                    {"acp-connection-id": connection.id, RECEIVED: str(connection.received)}
                ),
            }
        )
        async with current_loop().open_nursery() as nursery:
            nursery.start_soon(_read, app, connection, receive, send, nursery.cancel_scope)
            await _write(mailbox, reader, send)
            nursery.cancel_scope.cancel()
        with contextlib.suppress(Exception):  # ended, replaced by another socket, or gone
            await send({"type": "websocket.close", "code": 1000})
    finally:
        mailbox.detach(reader)
        connection.detach()


async def _write(mailbox: RetainingMailbox, reader: int, send: Send) -> None:
    """Send the agent's messages until the mailbox ends, another socket took over, or this
    one is gone (what it took then is kept for the resume)."""
    while True:
        item = await mailbox.take(reader, FOREVER)
        if item is None:
            return
        if not isinstance(item, bytes):
            continue  # KEEPALIVE
        try:
            await send({"type": "websocket.send", "text": item.decode()})
        except Exception:  # the server's own error for a socket that went away
            return


async def _read(
    app: Hub,
    connection: RemoteConnection,
    receive: Receive,
    send: Send,
    done: CancelScope,
) -> None:
    limit = app.remote.max_message_bytes
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                return
            text = message.get("text") if kind == "websocket.receive" else None
            if text is None:
                continue  # a binary frame: ignored
            connection.received += 1
            data = text.encode()
            if len(data) > limit:
                connection.end()  # not resumable: the client would send it again
                await close_too_big(send, limit)
                return
            if connection.received == 1:
                _expect_initialize(connection, data)
            if SESSION_METHOD in data:
                refusal = session_refusal(connection, data)
                if refusal is not None:
                    if refusal:
                        await connection.answer(envelope(data), refusal)
                    continue
            if not await connection.stream.feed(one_line(data)):
                return
    finally:
        done.cancel()


def _expect_initialize(connection: RemoteConnection, data: bytes) -> None:
    with contextlib.suppress(NotAMessage):
        message = envelope(data)
        if message.method == "initialize" and message.is_request:
            connection.expect_initialize(message.id)  # type: ignore[arg-type]
