"""The WebSocket profile: a GET with `Upgrade: websocket` on the endpoint opens one ACP
connection for the socket's life. The `101` carries `Acp-Connection-Id`; each text frame is
one JSON-RPC message, both ways; binary frames are ignored (the RFD); `initialize` comes
first (requests before it are answered -32600, as over stdio). A message over
`max_message_bytes` closes the socket with 1009. When the socket closes or drops, the agent
reads EOF: its requests get the endpoint's grace period, its running turns up to
`RemoteOptions.idle_timeout` (their messages dropped: they finish and are recorded for the
client to resume), then the connection ends. (The close code cannot tell a client that left
from one that dropped: Hypercorn reports 1006 for both.)

The agent's reader reads the socket itself (`ClientFrames`, the connection's source:
pulled_stream.py) and sends the answers it gives before it reads again: a round trip costs
no task of ours between the server's `receive()` and its `send()`.

A refused upgrade (the checks, 503 when the server is full, 404 for another path) is
answered with an HTTP status where the server supports ASGI's `websocket.http.response`
extension (Hypercorn, uvicorn), otherwise by closing the handshake (403).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...streams.envelope import NotAMessage, envelope, one_line
from .asgi import Receive, Scope, Send, encoded, headers_of
from .connection import RemoteConnection, WebSocketOutlet

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("acpwire")

TOO_BIG = 1009
GOING_AWAY = 1001
INTERNAL_ERROR = 1011
SESSION_METHOD = b'"session/'
"""Only a frame containing this may open or close a session (`SessionLimit`)."""


async def handle(app: Hub, scope: Scope, receive: Receive, send: Send) -> None:
    if not await admitted(app, scope, receive, send) or await refused_when_full(app, scope, send):
        return
    await serve(app, receive, send)


async def serve(app: Hub, receive: Receive, send: Send) -> None:
    """Serve a new connection over this socket, until the socket ends."""
    outlet = WebSocketOutlet(send)
    connection = app.new_connection("websocket", outlet)
    outlet.sessions = connection.sessions
    connection.pull_from(
        ClientFrames(app.remote.max_message_bytes, connection, receive, send, outlet)
    )
    connection.attach()
    try:
        await send(
            {
                "type": "websocket.accept",
                "headers": encoded({"acp-connection-id": connection.id}),
            }
        )
        await connection.run()
        if outlet.open:
            outlet.open = False
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1000})
    finally:
        app.forget(connection)


class ClientFrames:
    """The client's messages, read from the socket by the agent's reader itself (the
    connection's `Source`: pulled_stream.py): each text frame's bytes; binary frames are
    skipped, a request the session limit refuses is answered here; b"" once the socket is
    gone or closed for a message over the limit (the connection then ends)."""

    def __init__(
        self,
        limit: int,
        connection: RemoteConnection,
        receive: Receive,
        send: Send,
        outlet: WebSocketOutlet,
    ) -> None:
        self._limit = limit
        self._connection = connection
        self._receive = receive
        self._send = send
        self._outlet = outlet

    async def __call__(self) -> bytes:
        receive, limit = self._receive, self._limit
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                return self._ended()
            if kind != "websocket.receive":
                continue
            text = message.get("text")
            if text is None:
                continue  # a binary frame: ignored
            data = text.encode()
            if len(data) > limit:
                self._ended()
                await close_too_big(self._send, limit)
                return b""
            if SESSION_METHOD in data:
                refusal = session_refusal(self._connection, data)
                if refusal is not None:
                    if refusal:
                        await self._send({"type": "websocket.send", "text": refusal.decode()})
                    continue
            return one_line(data) if b"\n" in data or b"\r" in data else data

    def _ended(self) -> bytes:
        self._outlet.open = False
        self._connection.end()
        return b""


async def close_too_big(send: Send, limit: int) -> None:
    """Close the socket for a message over `max_message_bytes` (1009)."""
    reason = f"a message may have at most {limit} bytes"
    await send({"type": "websocket.close", "code": TOO_BIG, "reason": reason})


async def admitted(app: Hub, scope: Scope, receive: Receive, send: Send) -> bool:
    """Whether the upgrade passes the path and the app's checks (else it was refused)."""
    if (await receive())["type"] != "websocket.connect":
        return False
    path = app.remote.path
    if path is not None and scope.get("path") != path:
        await refuse(scope, send, 404, f"not found: the ACP endpoint is {path}")
        return False
    denied = await app.refusal(scope, headers_of(scope), websocket=True)
    if denied is not None:
        await refuse(scope, send, denied.status, denied.reason, denied.headers)
        return False
    return True


async def refused_when_full(app: Hub, scope: Scope, send: Send) -> bool:
    """Whether a new connection was refused (503) because the server is full."""
    if not app.full:
        return False
    await refuse(
        scope,
        send,
        503,
        f"the server is at its limit of {app.remote.max_connections} connections: try again later",
        {"retry-after": "5"},
    )
    return True


def session_refusal(connection: RemoteConnection, data: bytes) -> bytes | None:
    try:
        message = envelope(data)
    except NotAMessage:
        return None  # the agent answers it as unparsable
    return connection.sessions.refusal(message)


async def refuse(
    scope: Scope, send: Send, status: int, reason: str, headers: Mapping[str, str] | None = None
) -> None:
    if "websocket.http.response" in scope.get("extensions", {}):
        body = reason.encode()
        pairs = {
            **(headers or {}),
            "content-type": "text/plain; charset=utf-8",
            "content-length": str(len(body)),
        }
        await send(
            {"type": "websocket.http.response.start", "status": status, "headers": encoded(pairs)}
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
