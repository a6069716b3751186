"""What the requests of one `AgentApp` share: its open connections, the sessions its agents
named (and the session store, which knows the sessions of every connection, earlier ones
and other processes included), the task group Streamable HTTP connections run in, and the
checks every request passes (guard.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ..._loop import Nursery
from ..._wire.options import ConnectionOptions
from ..endpoint import AgentEndpoint
from ..sessions import SessionStore
from .agent_stream import Outlet
from .asgi import Scope
from .connection import RemoteConnection
from .guard import BrowserChecks, Denied, Request, authorized
from .options import RemoteOptions


class Hub:
    def __init__(
        self,
        factories: dict[int, Callable[[Any], Any]],
        options: ConnectionOptions,
        remote: RemoteOptions,
        store: SessionStore | None = None,
    ) -> None:
        self.factories = factories
        self.store = store
        # a turn whose client dropped runs on (and is recorded) as long as a connection
        # without a client may
        grace = max(options.background_grace_period, remote.idle_timeout)
        self.options = dataclasses.replace(options, background_grace_period=grace)
        self.remote = remote
        self.connections: dict[str, RemoteConnection] = {}
        self.nursery: Nursery | None = None  # the lifespan's, while it runs
        self._sessions: dict[str, None] = {}  # named on any connection, oldest first
        self._checks = BrowserChecks(remote.allowed_origins, remote.allowed_hosts)

    def new_connection(self, profile: str, outlet: Outlet | None = None) -> RemoteConnection:
        """A new ACP connection of `profile` ("http", "websocket" or "resumable websocket"),
        counted from now on."""
        connection = RemoteConnection(
            AgentEndpoint(self.factories, options=self.options),
            self.remote,
            profile=profile,
            outlet=outlet,
            on_session=self.remember_session,
        )
        self.connections[connection.id] = connection
        return connection

    def forget(self, connection: RemoteConnection) -> None:
        """The connection ended: its id is unknown from now on (404)."""
        if self.connections.get(connection.id) is connection:
            del self.connections[connection.id]

    def end_all(self) -> None:
        for connection in list(self.connections.values()):
            connection.end()
            connection.cancel()

    @property
    def full(self) -> bool:
        """True at `RemoteOptions.max_connections` connections (new ones get 503)."""
        return len(self.connections) >= self.remote.max_connections

    def start(self, connection: RemoteConnection) -> bool:
        """Run a Streamable HTTP connection in the lifespan's task group (False: no lifespan)."""
        if self.nursery is None:
            return False
        self.nursery.start_soon(self._serve, connection)
        return True

    async def _serve(self, connection: RemoteConnection) -> None:
        try:
            await connection.run()
        finally:
            self.forget(connection)

    def remember_session(self, session: str) -> None:
        """A session an agent named (the newest `RemoteOptions.known_sessions` are kept)."""
        sessions = self._sessions
        if session in sessions:
            return
        sessions[session] = None
        if len(sessions) > self.remote.known_sessions:
            del sessions[next(iter(sessions))]

    def knows_session(self, connection: RemoteConnection, session: str) -> bool:
        """Whether a session-scoped stream may be opened: the agent named the session on this
        connection, or on another one of this server, or the session store has it (a client
        reconnecting to resume or load it, after a restart or through another process)."""
        if session in connection.routes.sessions or session in self._sessions:
            return True
        return self.store is not None and self.store.get(session) is not None

    async def refusal(
        self, scope: Scope, headers: Mapping[str, str], *, websocket: bool
    ) -> Denied | None:
        """The answer to a request that may not pass (see guard.py), or None. `headers`: the
        request's (`asgi.headers_of`), read once per request by its caller."""
        server = scope.get("server")
        reason = self._checks.refusal(
            headers, scheme=scope.get("scheme", "http"), server=server[0] if server else None
        )
        if reason is not None:
            return Denied(403, reason)
        authorize = self.remote.authorize
        if authorize is None:  # no hook lets everything through
            return None
        client = scope.get("client")
        request = Request(
            method="GET" if websocket else scope["method"],
            path=scope.get("path", ""),
            headers=headers,
            client=(client[0], client[1]) if client else None,
            websocket=websocket,
        )
        return await authorized(authorize, request)
