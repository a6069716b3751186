"""Any ASGI application served in a test, by Hypercorn (on the test's loop) or uvicorn
(asyncio only), on a free loopback port: `hypercorn_serving(app)`, `uvicorn_serving(app)`.
(`helpers.remote.served` runs an `AgentApp` through acpwire's own `serve_remote`.)"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import anyio
import sniffio


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


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any) -> AsyncIterator[str]:
    """`app` under uvicorn (HTTP/1.1 with h11, WebSocket with wsproto, the lifespan on; asyncio
    only); yields the `/acp` URL once it listens."""
    import uvicorn

    listener, url = _listener()
    config = uvicorn.Config(app, lifespan="on", ws="wsproto", log_level="warning")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: server.serve(sockets=[listener]))
        try:
            while not server.started:
                await anyio.sleep(0.01)
            yield url
        finally:
            server.should_exit = True
