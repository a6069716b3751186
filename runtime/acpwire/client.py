"""The client side: talk to an agent subprocess (or any stream) with typed calls.

    async with open_agent(["my-agent"], v2=MyClient) as conn:
        init = await conn.initialize(v2.InitializeRequest(protocol_version=2, info=...))
        agent = conn.v2_agent
        session = await agent.session_new(v2.NewSessionRequest(cwd="/repo", mcp_servers=[]))
        async with conn.subscribe(session.session_id) as updates:
            async for update in updates: ...

`initialize` sends the request of the newest version this client has an implementation
for; when the agent answers with another version this client also speaks, the connection
switches to it, otherwise `ProtocolMismatch` is raised.
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import trio

from acp_schema import v1, v2
from acp_schema._support import Codec, MethodSpec

from .connection import Connection
from .dispatch import handler_dispatch, implemented
from .errors import ConnectionClosed, ProtocolMismatch, RpcError
from .jsonrpc import Call
from .transport import spawn_agent
from .versions import SURFACES, Surface, bootstrap_codec, protocol_version_of

V2Factory = Callable[[v2.AgentPeer], v2.ClientBase]
V1Factory = Callable[[v1.AgentPeer], v1.ClientBase]

UPDATE_BUFFER = 1024
"""Updates a per-session iterator may hold before the connection waits for its reader."""

PERMISSION = "session/request_permission"
SESSION_UPDATE = "session/update"


class UpdateStream:
    """The updates of one session, in order, as an async iterator.

    Items are handed over through a deque, not a trio channel: a channel costs a scheduler
    round trip per item, which at tens of thousands of updates a second is most of the cost.
    The connection waits (back-pressure) while `UPDATE_BUFFER` updates are unread.
    """

    def __init__(self) -> None:
        self._items: collections.deque[Any] = collections.deque()
        self._reader: trio.Event | None = None  # set to wake a reader waiting for an item
        self._writer: trio.Event | None = None  # set to wake a writer waiting for room
        self._closed = False

    def offer(self, update: Any) -> bool:
        """Add an update unless the buffer is full (False); once closed, updates are dropped."""
        if self._closed:
            return True
        if len(self._items) >= UPDATE_BUFFER:
            return False
        self._items.append(update)
        if self._reader is not None:
            self._reader.set()
            self._reader = None
        return True

    async def put(self, update: Any) -> None:
        """Add an update, waiting for room."""
        while not self.offer(update):
            self._writer = self._writer or trio.Event()
            await self._writer.wait()

    def close(self) -> None:
        self._closed = True
        for waiting in (self._reader, self._writer):
            if waiting is not None:
                waiting.set()

    def __aiter__(self) -> UpdateStream:
        return self

    async def __anext__(self) -> Any:
        items = self._items
        while not items:
            if self._closed:
                raise StopAsyncIteration
            self._reader = self._reader or trio.Event()
            await self._reader.wait()
        if self._writer is not None and len(items) <= UPDATE_BUFFER // 2:
            self._writer.set()
            self._writer = None
        return items.popleft()


class ClientConnection:
    """A client's connection to one agent: version negotiation, typed calls, session updates."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        factories: dict[int, Callable[[Any], Any]],
        **limits: Any,
    ) -> None:
        if not factories:
            raise ValueError("a client needs an implementation for at least one version")
        self.factories = factories
        self.surface: Surface | None = None
        self.client: Any = None
        self.agent: v2.AgentPeer | v1.AgentPeer | None = None
        self._dispatch: Callable[[Call], Awaitable[Any] | None] = _not_initialized
        self._handles_updates = False
        self._update_spec: MethodSpec[Any, None] | None = None
        self._subscribers: dict[str, list[UpdateStream]] = {}
        self.connection = Connection(
            stream,
            bootstrap_codec(Codec[msgspec.Raw](msgspec.Raw)),
            _not_initialized,
            cancelled_result=self._cancelled_result,
            **limits,
        )

    # ------------------------------------------------------------------ setup

    async def initialize(self, params: v2.InitializeRequest | v1.InitializeRequest) -> Any:
        """Send `initialize` and switch to the version the agent answers with."""
        version = params.protocol_version
        if version not in self.factories:
            raise ValueError(f"no client implementation for protocol version {version}")
        requested = SURFACES[version]
        raw: msgspec.Raw = await self.connection.request(requested.initialize, params)
        answered = protocol_version_of(raw)
        if answered not in self.factories:
            raise ProtocolMismatch(
                f"the agent speaks protocol version {answered}; this client speaks "
                f"{sorted(self.factories)}"
            )
        surface = SURFACES[answered]
        result = surface.initialize.result.decode(raw) if surface.initialize.result else raw
        self.surface = surface
        self.agent = surface.module.AgentPeer(self.connection)
        self.client = self.factories[answered](self.agent)
        self._dispatch = handler_dispatch(self.client, surface.client_base)
        self._handles_updates = implemented(self.client, surface.client_base, "session_update")
        self._update_spec = surface.client_codec.inbound[SESSION_UPDATE]
        self.connection.core.codec = surface.client_codec
        self.connection.dispatch = self._route
        return result

    @property
    def protocol_version(self) -> int:
        if self.surface is None:
            raise RuntimeError("not initialized")
        return self.surface.version

    @property
    def v2_agent(self) -> v2.AgentPeer:
        """The agent's typed methods, when protocol version 2 was negotiated."""
        if not isinstance(self.agent, v2.AgentPeer):
            raise ProtocolMismatch(f"negotiated protocol version is not 2: {self.agent}")
        return self.agent

    @property
    def v1_agent(self) -> v1.AgentPeer:
        """The agent's typed methods, when protocol version 1 was negotiated."""
        if not isinstance(self.agent, v1.AgentPeer):
            raise ProtocolMismatch(f"negotiated protocol version is not 1: {self.agent}")
        return self.agent

    # ------------------------------------------------------------------ incoming

    def _route(self, call: Call) -> Awaitable[Any] | None:
        """Dispatch once initialized; a session update goes to its subscribers first."""
        if call.spec is self._update_spec:
            notification: Any = call.message.params  # type: ignore[union-attr]
            streams = self._subscribers.get(notification.session_id)
            if streams:
                update = notification.update
                for stream in streams:
                    if not stream.offer(update):
                        return self._publish_waiting(streams, stream, update, call)
            if not self._handles_updates:
                return None
        return self._dispatch(call)

    async def _publish_waiting(
        self, streams: list[UpdateStream], full: UpdateStream, update: Any, call: Call
    ) -> Any:
        """Back-pressure: wait until `full` and the subscribers after it have room."""
        for stream in streams[streams.index(full) :]:
            await stream.put(update)
        pending = self._dispatch(call)
        return None if pending is None else await pending

    def _cancelled_result(self, call: Call) -> Any:
        if call.method != PERMISSION or self.surface is None:
            return None
        module = self.surface.module
        outcome_cls = (
            getattr(module, "CancelledPermissionOutcome", None)
            or module.CancelledRequestPermissionOutcome
        )
        return module.RequestPermissionResponse(outcome=outcome_cls())

    # ------------------------------------------------------------------ sessions

    @asynccontextmanager
    async def subscribe(self, session_id: str) -> AsyncIterator[UpdateStream]:
        """Every `session/update` of a session, in order, while the block runs.

        Read it while the turn runs (e.g. in another task): once `UPDATE_BUFFER` updates are
        unread the connection waits for this reader (back-pressure, bounded memory), and
        answers behind those updates, like v1's `session/prompt` response, wait too.
        """
        stream = UpdateStream()
        self._subscribers.setdefault(session_id, []).append(stream)
        self.connection.on_close(stream.close)
        try:
            yield stream
        finally:
            self._subscribers[session_id].remove(stream)
            stream.close()

    async def cancel(self, session_id: str) -> None:
        """`session/cancel`, after answering this session's pending permission requests with
        the `cancelled` outcome (the spec's MUST)."""
        self.connection.cancel_requests(
            lambda call: (
                call.method == PERMISSION and getattr(call.params, "session_id", None) == session_id
            )
        )
        agent = self.agent
        if agent is None:
            raise RuntimeError("not initialized")
        if isinstance(agent, v2.AgentPeer):
            await agent.session_cancel(v2.CancelSessionNotification(session_id=session_id))
        else:
            await agent.session_cancel(v1.CancelNotification(session_id=session_id))


def _not_initialized(call: Call) -> None:
    """Nothing may arrive before `initialize` is answered."""
    if call.is_request:
        raise RpcError.invalid_request("the connection is not initialized yet")


@asynccontextmanager
async def connect(
    stream: trio.abc.Stream,
    *,
    v2: V2Factory | None = None,
    v1: V1Factory | None = None,
    closed_reason: Callable[[], Any] | None = None,
    **limits: Any,
) -> AsyncIterator[ClientConnection]:
    """A client connection over any trio stream, served while the block runs."""
    factories: dict[int, Callable[[Any], Any]] = {}
    if v2 is not None:
        factories[2] = v2
    if v1 is not None:
        factories[1] = v1
    conn = ClientConnection(stream, factories, **limits)
    conn.connection.closed_reason = closed_reason
    async with trio.open_nursery() as nursery:
        await nursery.start(conn.connection.run)
        try:
            yield conn
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_agent(
    command: Sequence[str],
    *,
    v2: V2Factory | None = None,
    v1: V1Factory | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    **limits: Any,
) -> AsyncIterator[ClientConnection]:
    """Spawn an agent subprocess and connect to it over its stdio.

    When the agent dies, pending and later calls raise `PeerExited` with its exit code and
    the tail of its stderr. Leaving the block closes its stdin and waits for it to exit.
    """
    limits.setdefault("peer", " ".join(command))  # the name in log messages
    async with spawn_agent(command, env=env, cwd=cwd) as agent:
        async with connect(
            agent.stream, v2=v2, v1=v1, closed_reason=agent.exited, **limits
        ) as conn:
            yield conn


__all__ = ["ClientConnection", "ConnectionClosed", "connect", "open_agent"]
