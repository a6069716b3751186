"""`agent_app`: an ASGI 3 application serving agents over the RFD's remote transport, both
profiles on one endpoint (`/acp`): Streamable HTTP (POST, GET event streams, DELETE) and
WebSocket (GET with `Upgrade: websocket`). One agent instance per ACP connection (the same
factories as `serve_agent`), many connections per process.

Streamable HTTP connections outlive the requests that carry them, so they run in a task
group the app opens in the ASGI lifespan (Hypercorn and uvicorn run it by default); a
WebSocket connection runs in its own request. See http_profile.py and websocket_profile.py
for each profile, routes.py for where each message goes, guard.py for the checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._loop import current_loop
from ..._wire.options import ConnectionOptions
from ..._wire.versions import check_factory
from ..endpoint import AgentFactory, V1AgentFactory
from ..sessions import SessionStore
from . import http_profile, websocket_profile, websocket_resume
from .asgi import Receive, Scope, Send
from .hub import Hub
from .options import RemoteOptions


class AgentApp:
    """The ASGI application `agent_app` builds (call it as `app(scope, receive, send)`, or
    hand it to an ASGI server)."""

    def __init__(
        self,
        factories: dict[int, Callable[[Any], Any]],
        options: ConnectionOptions,
        remote: RemoteOptions,
        store: SessionStore | None = None,
    ) -> None:
        for version, factory in factories.items():
            check_factory(factory, version, "agent")  # misuse fails now, not per connection
        self.options = options
        """The limits of each ACP connection."""
        self.remote = remote
        """The server's checks and limits."""
        self.store = store
        """The session store shared by every connection (None: sessions are known from what
        the agents named in this process)."""
        self._hub = Hub(factories, options, remote, store)

    @property
    def open_connections(self) -> int:
        """How many ACP connections are open now (both profiles)."""
        return len(self._hub.connections)

    def end_connections(self) -> None:
        """End every open connection now, as if each client had gone (the agents read EOF,
        then their handlers are cancelled); the lifespan's shutdown does this."""
        self._hub.end_all()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await http_profile.handle(self._hub, scope, receive, send)
        elif kind == "websocket":
            profile = websocket_profile if self.remote.resumable is None else websocket_resume
            await profile.handle(self._hub, scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with current_loop().open_nursery() as nursery:
            self._hub.nursery = nursery
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            self._hub.nursery = None
            self._hub.end_all()
            nursery.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})


def agent_app(
    v2: AgentFactory | None = None,
    *,
    v1: V1AgentFactory | None = None,
    options: ConnectionOptions | None = None,
    remote: RemoteOptions | None = None,
    store: SessionStore | None = None,
) -> AgentApp:
    """An ASGI application serving your agent remotely, over Streamable HTTP and WebSocket.

    `v2` / `v1`: as for `serve_agent` (the `AgentBase` subclasses, or functions returning an
    instance; `turn_agents(...)` gives `serve_turns`' pair); each ACP connection gets its own
    instance. `options`: the limits of each connection (`ConnectionOptions`); `remote`: the
    server's checks and limits (`RemoteOptions`: authentication, allowed origins, message
    size, connections, ...). `store`: the session store every connection shares, which the
    server knows sessions from (a client reconnecting may open a session's stream before it
    loads the session); by default the store of `turn_agents`' classes, so `agent_app(agent,
    v1=v1_agent)` with `agent, v1_agent = turn_agents(work, name=..., version=...,
    store=SqliteSessionStore(path))` serves sessions that outlive connections and restarts. Serve it with `serve_remote(app)`
    or any ASGI server:
    `hypercorn module:app` (HTTP/2, WebSocket; `-k trio` for trio). TypeError at once when an
    implementation cannot be served.
    """
    factories: dict[int, Callable[[Any], Any]] = {}
    if v2 is not None:
        factories[2] = v2
    if v1 is not None:
        factories[1] = v1
    if not factories:
        raise ValueError(
            "agent_app needs an agent implementation: pass your AgentBase subclass, e.g. "
            "agent_app(MyAgent) for v2 or agent_app(v1=MyV1Agent) for v1"
        )
    return AgentApp(
        factories,
        options if options is not None else ConnectionOptions(),
        remote if remote is not None else RemoteOptions(),
        _shared_store(factories, store),
    )


def _shared_store(
    factories: dict[int, Callable[[Any], Any]], store: SessionStore | None
) -> SessionStore | None:
    """The store given, else the one the `turn_agents` classes share; ValueError when the
    classes record into another store than the one given (the server would not know their
    sessions)."""
    theirs = {
        id(served.store): served.store
        for factory in factories.values()
        if (served := getattr(factory, "served", None)) is not None
    }
    if store is None:
        return next(iter(theirs.values()), None)
    if any(other is not store for other in theirs.values()):
        raise ValueError(
            "agent_app(store=...) is not the store the turn_agents classes record into: pass "
            "the same store to turn_agents(..., store=store), or leave agent_app's out"
        )
    return store
