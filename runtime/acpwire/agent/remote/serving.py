"""`serve_remote`: run an `agent_app` under Hypercorn on the running loop (trio or asyncio),
HTTP/1.1 and HTTP/2 (cleartext by prior knowledge or upgrade, or TLS with ALPN) and
WebSocket on one port.

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..._loop import TASK_STATUS_IGNORED, current_loop
from ...streams.extra import remote_module
from .app import AgentApp

if TYPE_CHECKING:
    import trio  # the annotation only: an asyncio program imports no trio

WEBSOCKET_PING_INTERVAL = 20.0
"""Seconds between the server's WebSocket pings (Hypercorn sends them; ASGI apps cannot)."""

KEEP_ALIVE_TIMEOUT = 30.0
"""Seconds Hypercorn keeps an idle HTTP connection open (its default is 5 s, httpx's pool keeps
one 5 s too: a POST sent as the server closed the connection would fail). Longer than a
client's keep-alive, so the client lets an idle connection go first."""

KEEP_ALIVE_MAX_REQUESTS = 1 << 40
"""Requests one HTTP connection may carry. Hypercorn's default (1000) closes an HTTP/2
connection after its 1000th request with a GOAWAY that httpx's client does not survive for the
requests already sent (it fails them): every ACP message a client sends is a POST, so a busy
connection reaches 1000 in minutes."""

BACKLOG = 1024
"""Connections the listening socket queues before they are accepted. Hypercorn listens again with
its own `backlog` (100): a burst of clients (each Streamable HTTP connection opens two or more
TCP connections) overflowed it."""

DEFAULT_BIND = "127.0.0.1:8000"

_NO_STATUS = cast("trio.TaskStatus[list[str]]", TASK_STATUS_IGNORED)  # either loop's ignores it


async def serve_remote(
    app: AgentApp,
    *,
    bind: str | Sequence[str] = DEFAULT_BIND,
    certfile: str | None = None,
    keyfile: str | None = None,
    websocket_ping_interval: float | None = WEBSOCKET_PING_INTERVAL,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    access_log: bool = False,
    task_status: trio.TaskStatus[list[str]] = _NO_STATUS,
) -> None:
    """Serve `app` with Hypercorn until cancelled, `shutdown_trigger()` returns, or (asyncio,
    no trigger) SIGINT/SIGTERM. On asyncio, cancelled, Hypercorn shuts down gracefully: open
    WebSockets get up to its `graceful_timeout` (3 s) to end.

    `bind`: `host:port` (port 0: any free one), or several; `fd://N` for an inherited socket,
    `unix:path`. `certfile` and `keyfile` (PEM) turn TLS on, and with it HTTP/2 by ALPN
    (cleartext HTTP/2 works by prior knowledge). Started with `nursery.start(...)` /
    `task_group.start(...)`, it reports the endpoint's URLs once it listens
    (`[url] = await nursery.start(partial(serve_remote, app, bind="127.0.0.1:0"))`). A `bind`
    on an address other than loopback serves the network: set `RemoteOptions.authorize`.
    """
    config_module = remote_module("hypercorn.config", "serve_remote")
    scheme = "https" if certfile else "http"
    listeners, urls, binds = [], [], []
    for address in [bind] if isinstance(bind, str) else bind:
        if address.startswith(("fd://", "unix:")):
            binds.append(address)
            continue
        host, _, port = address.rpartition(":")
        listener = socket.create_server((host.strip("[]"), int(port)), backlog=BACKLOG)
        listeners.append(listener)
        bound_port = listener.getsockname()[1]
        urls.append(f"{scheme}://{host}:{bound_port}{app.remote.path or '/'}")
        binds.append(f"fd://{listener.detach()}")  # Hypercorn owns the socket from here on
    config = config_module.Config()
    config.bind = binds
    config.backlog = BACKLOG
    config.certfile = certfile
    config.keyfile = keyfile
    config.websocket_ping_interval = websocket_ping_interval
    config.keep_alive_timeout = KEEP_ALIVE_TIMEOUT
    config.keep_alive_max_requests = KEEP_ALIVE_MAX_REQUESTS
    config.websocket_max_message_size = app.remote.max_message_bytes
    config.accesslog = logging.getLogger("hypercorn.access") if access_log else None
    on_trio = current_loop().name == "trio"
    serve = remote_module(
        "hypercorn.trio" if on_trio else "hypercorn.asyncio", "serve_remote"
    ).serve
    task_status.started(urls)  # the sockets listen already: connections wait for Hypercorn
    serving = serve(app, config, shutdown_trigger=shutdown_trigger)
    await (serving if on_trio else _cancelled_once(serving))


async def _cancelled_once(serving: Coroutine[Any, Any, None]) -> None:
    """Run Hypercorn's asyncio worker as a task of its own, so that a cancellation reaches it
    once. It shuts down on one, but an anyio cancel scope (a task group's, as in
    `task_group.start(serve_remote, ...)`) cancels again at each await of its shutdown, and it
    then fails with InvalidStateError instead of stopping."""
    import asyncio  # here: a trio program imports neither

    import anyio

    task = asyncio.ensure_future(serving)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task])
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error from None  # Hypercorn failed while it shut down: that, not the cancel
        raise
