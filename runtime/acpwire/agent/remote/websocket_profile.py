"""The WebSocket profile: a GET with `Upgrade: websocket` on the endpoint opens one ACP
connection for the socket's life. The `101` carries `Acp-Connection-Id`; each text frame is
one JSON-RPC message, both ways; binary frames are ignored (the RFD); `initialize` comes
first (requests before it are answered -32600, as over stdio). A message over
`max_message_bytes` closes the socket with 1009. When the socket closes, the agent reads EOF:
its requests get the endpoint's grace period, then the connection ends.

A refused upgrade (the checks, 503 when the server is full, 404 for another path) is
answered with an HTTP status where the server supports ASGI's `websocket.http.response`
extension (Hypercorn, uvicorn), otherwise by closing the handshake (403).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..._loop import current_loop
from ...streams.envelope import one_line
from .asgi import Receive, Scope, Send, encoded
from .connection import RemoteConnection, WebSocketOutlet

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger("acpwire")

TOO_BIG = 1009
GOING_AWAY = 1001
INTERNAL_ERROR = 1011


async def handle(app: Hub, scope: Scope, receive: Receive, send: Send) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    path = app.remote.path
    if path is not None and scope.get("path") != path:
        await _refuse(scope, send, 404, f"not found: the ACP endpoint is {path}")
        return
    denied = await app.refusal(scope, websocket=True)
    if denied is not None:
        await _refuse(scope, send, denied.status, denied.reason, denied.headers)
        return
    if app.full:
        await _refuse(
            scope,
            send,
            503,
            f"the server is at its limit of "
            f"{app.remote.max_connections} connections: try again later",
            {"retry-after": "5"},
        )
        return
    outlet = WebSocketOutlet(send)
    connection = app.new_connection("websocket", outlet)
    try:
        await send(
            {
                "type": "websocket.accept",
                "headers": encoded({"acp-connection-id": connection.id}),
            }
        )
        async with current_loop().open_nursery() as nursery:
            nursery.start_soon(_read, app, connection, receive, send, outlet)
            await connection.run()
            nursery.cancel_scope.cancel()
        if outlet.open:
            outlet.open = False
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1000})
    finally:
        app.forget(connection)


async def _read(
    app: Hub,
    connection: RemoteConnection,
    receive: Receive,
    send: Send,
    outlet: WebSocketOutlet,
) -> None:
    limit = app.remote.max_message_bytes
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                outlet.open = False
                return
            if kind != "websocket.receive":
                continue
            text = message.get("text")
            if text is None:
                continue  # a binary frame: ignored
            data = text.encode()
            if len(data) > limit:
                outlet.open = False
                await send(
                    {
                        "type": "websocket.close",
                        "code": TOO_BIG,
                        "reason": f"a message may have at most {limit} bytes",
                    }
                )
                return
            if not await connection.stream.feed(one_line(data)):
                return
    finally:
        connection.end()


async def _refuse(
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
