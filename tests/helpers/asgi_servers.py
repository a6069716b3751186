"""Any ASGI application served in a test, by Hypercorn (on the test's loop) or uvicorn
(asyncio only), on a free loopback port: `hypercorn_serving(app)`, `uvicorn_serving(app)`;
and `CookieAffinity`, an ASGI wrapper acting as a load balancer with cookie affinity.
(`helpers.remote.served` runs an `AgentApp` through acpwire's own `serve_remote`.)"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from functools import partial
from typing import Any, Literal

import anyio
import sniffio

AFFINITY = b"backend=b7"


class CookieAffinity:
    """An ASGI wrapper, as a load balancer with cookie affinity: the answer to a connection's
    first request (the `initialize` POST, the WebSocket upgrade) sets a cookie; every later
    request of the connection (with its `Acp-Connection-Id`: POSTs, GETs, the DELETE, a
    resuming upgrade) without it is refused (403)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.with_cookie = 0
        """Later requests that carried the cookie."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if b"acp-connection-id" not in headers:  # the connection's first request
            answer = "http.response.start" if scope["type"] == "http" else "websocket.accept"

            async def setting_the_cookie(message: Any) -> None:
                if message["type"] == answer:
                    cookie = (b"set-cookie", AFFINITY + b"; Path=/; HttpOnly")
                    message = {**message, "headers": [*message.get("headers", []), cookie]}
                await send(message)

            await self.app(scope, receive, setting_the_cookie)
            return
        if AFFINITY not in headers.get(b"cookie", b""):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})  # before accept: 403
                return
            await send({"type": "http.response.start", "status": 403, "headers": []})
            await send({"type": "http.response.body", "body": b"no affinity cookie"})
            return
        self.with_cookie += 1
        await self.app(scope, receive, send)


def _listener() -> tuple[socket.socket, str]:
    listener = socket.create_server(("127.0.0.1", 0))
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/acp"


@contextlib.asynccontextmanager
async def hypercorn_serving(app: Any) -> AsyncIterator[str]:
    """`app` under Hypercorn (HTTP/1.1, cleartext HTTP/2, WebSocket); yields the `/acp` URL."""
    from hypercorn.config import Config

    if sniffio.current_async_library() == "trio":
        from hypercorn.trio import serve
    else:
        from hypercorn.asyncio import serve  # type: ignore[assignment]
    listener, url = _listener()
    config = Config()
    config.bind = [f"fd://{listener.detach()}"]
    config.accesslog = None
    config.graceful_timeout = 0.5
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(serve, app, config, shutdown_trigger=stop.wait))
        try:
            yield url
        finally:
            stop.set()


UvicornWebSocket = Literal["wsproto", "websockets", "websockets-sansio"]
"""uvicorn's WebSocket implementations."""


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any, ws: UvicornWebSocket = "wsproto") -> AsyncIterator[str]:
    """`app` under uvicorn (HTTP/1.1 with h11; WebSocket with `ws`: "wsproto", "websockets" or
    "websockets-sansio"; the lifespan on; asyncio only); yields the `/acp` URL once it listens."""
    import uvicorn

    listener, url = _listener()
    config = uvicorn.Config(app, lifespan="on", ws=ws, log_level="warning")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: server.serve(sockets=[listener]))
        try:
            while not server.started:
                await anyio.sleep(0.01)
            yield url
        finally:
            server.should_exit = True
