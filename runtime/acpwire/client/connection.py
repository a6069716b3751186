"""The client side: talk to an agent subprocess (or any stream) with typed calls.

    async with open_agent(["my-agent"], v2=MyClient) as conn:
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=...))
        agent = conn.v2            # the connection typed for protocol version 2
        session = await agent.peer.session_new(v2.NewSessionRequest(cwd="/repo"))
        async with agent.subscribe(session.session_id) as updates:
            async for update in updates: ...     # v2.SessionUpdate

`initialize` sends the request of the newest version this client has an implementation
for; when the agent answers with another version this client also speaks, the connection
switches to it, otherwise `ProtocolMismatch` is raised. `conn.v2` / `conn.v1` are the
connection seen through the negotiated version (`conn.protocol_version` says which).

Order: a session's updates and the agent's requests for that session reach the client in
wire order. A request carrying a `sessionId` (permission, fs, terminal, ...) is handed to
its handler only once every subscriber of that session took the updates received before
it; the `session_update` handler runs on the reader, so it always sees them first.

Errors: `open_agent` and `connect` raise the single exception that ended the block (see
`_groups.SingleException`), never an ExceptionGroup of their internal tasks.
"""

from __future__ import annotations

import collections
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Generic, TypeVar, cast, overload

import msgspec

from acp_schema import Codec, MethodSpec, v1, v2

from .._groups import SingleException
from .._loop import Event, current_loop
from .._wire.connection import DEFAULT_EOF_GRACE_PERIOD, DEFAULT_MAX_CONCURRENT_REQUESTS, Connection
from .._wire.dispatch import handler_dispatch, implemented
from .._wire.framing import DEFAULT_MAX_LINE_BYTES
from .._wire.jsonrpc import Call, RequestId
from .._wire.outbox import DEFAULT_MAX_BUFFERED_BYTES
from .._wire.versions import (
    SURFACES,
    Surface,
    bootstrap_codec,
    check_built,
    check_factory,
    protocol_version_of,
)
from ..errors import (
    ConnectionClosed,
    InitializeTimeout,
    NotInitialized,
    ProtocolMismatch,
    RpcError,
)
from ..streams.agent_process import GRACE_PERIOD, TERMINATE_GRACE_PERIOD, spawn_agent
from ..streams.byte_stream import AnyByteStream
from .permissions import cancelled_permission
from .unknown_updates import V1UnknownSessionUpdate, open_session_updates

V2Factory = Callable[[v2.AgentPeer], v2.ClientBase]
"""What `open_agent(v2=...)` / `connect(v2=...)` take: builds the v2 client from the agent's
typed peer (the `ClientBase` subclass itself, or a function returning an instance)."""
V1Factory = Callable[[v1.AgentPeer], v1.ClientBase]
"""What `open_agent(v1=...)` / `connect(v1=...)` take: builds the v1 client."""

UPDATE_BUFFER = 1024
"""Updates a per-session iterator may hold before the connection waits for its reader."""

INITIALIZE_TIMEOUT = 30.0
"""Seconds `initialize` waits for the agent's answer by default."""

PERMISSION = "session/request_permission"
SESSION_UPDATE = "session/update"

Update = TypeVar("Update")
Peer = TypeVar("Peer")
Initialized = TypeVar("Initialized")


class _Gate:
    """A request held until `remaining` more updates were taken (counted from the gate
    before it in the stream, so taking an update counts down the first gate only)."""

    __slots__ = ("opened", "remaining")

    def __init__(self, remaining: int, opened: Event) -> None:
        self.remaining = remaining
        self.opened = opened


class HeldRequest:
    """A request of the session, queued among its updates in a stream that holds requests
    (`UpdateStream._holds_requests`): its handler runs once the reader took it and set
    `released`."""

    __slots__ = ("call", "released")

    def __init__(self, call: Call, released: Event) -> None:
        self.call = call
        self.released = released


class UpdateStream(Generic[Update]):
    """The updates of one session, in order, as an async iterator.

    Items are handed over through a deque, not a channel: a channel costs a scheduler
    round trip per item, which at tens of thousands of updates a second is most of the cost.
    The connection waits (back-pressure) while `UPDATE_BUFFER` updates are unread.

    A request of the session waits at a gate until the updates queued before it were taken.
    """

    def __init__(self) -> None:
        self._loop = current_loop()
        self._items: collections.deque[Update] = collections.deque()
        self._reader: Event | None = None  # set to wake a reader waiting for an item
        self._writer: Event | None = None  # set to wake a writer waiting for room
        self._closed = False
        self._gates: collections.deque[_Gate] = collections.deque()  # in arrival order
        # True: the session's requests are queued among the updates as `HeldRequest`s, in
        # wire order, their handlers held until the reader sets `released` (client/turns.py)
        self._holds_requests = False

    def _offer(self, update: Update) -> bool:
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

    async def _put(self, update: Update) -> None:
        """Add an update, waiting for room."""
        while not self._offer(update):
            self._writer = self._writer or self._loop.Event()
            await self._writer.wait()

    def _gate(self) -> Event | None:
        """An event set once the updates queued now were taken (None: nothing is queued)."""
        if not self._items or self._closed:
            return None
        waiting = len(self._items) - sum(gate.remaining for gate in self._gates)
        gate = _Gate(waiting, self._loop.Event())
        self._gates.append(gate)
        return gate.opened

    def _take_past_gates(self) -> Update:
        update = self._items.popleft()
        gates = self._gates
        gates[0].remaining -= 1
        while gates and gates[0].remaining <= 0:
            gates.popleft().opened.set()
        return update

    def _hold(self, call: Call) -> Event | None:
        """Queue a request among the updates (beyond the buffer limit: requests are few);
        None once closed (nobody will take it)."""
        if self._closed:
            return None
        held = HeldRequest(call, self._loop.Event())
        self._items.append(held)  # type: ignore[arg-type]
        if self._reader is not None:
            self._reader.set()
            self._reader = None
        return held.released

    def close(self) -> None:
        """Take no more updates: iterating ends after the ones already queued (leaving the
        `subscribe` block, or the connection's end, does this)."""
        for item in self._items:
            if isinstance(item, HeldRequest):
                item.released.set()
        self._closed = True
        for waiting in (self._reader, self._writer):
            if waiting is not None:
                waiting.set()
        for gate in self._gates:
            gate.opened.set()
        self._gates.clear()

    def __aiter__(self) -> UpdateStream[Update]:
        return self

    async def __anext__(self) -> Update:
        items = self._items
        while not items:
            if self._closed:
                raise StopAsyncIteration
            self._reader = self._reader or self._loop.Event()
            await self._reader.wait()
        if self._writer is not None and len(items) <= UPDATE_BUFFER // 2:
            self._writer.set()
            self._writer = None
        if self._gates:
            return self._take_past_gates()
        return items.popleft()


class Negotiated(Generic[Peer, Initialized, Update]):
    """The connection seen through the protocol version the agent chose, fully typed.

    `peer`: the agent's typed methods; `initialize_response`: the agent's answer to
    `initialize`; `subscribe` / `cancel`: as on `ClientConnection`, with typed updates.
    """

    def __init__(self, conn: ClientConnection, peer: Peer, initialize_response: Initialized):
        self.connection = conn
        """The connection itself (untyped by version)."""
        self.peer = peer
        """The agent's methods, typed for the negotiated version: `await view.peer.session_new(...)`."""
        self.initialize_response = initialize_response
        """The agent's answer to `initialize` (its capabilities, info, auth methods)."""

    def subscribe(self, session_id: str) -> AbstractAsyncContextManager[UpdateStream[Update]]:
        """Every `session/update` of a session, in order, while the block runs."""
        return self.connection.subscribe(session_id)

    async def cancel(self, session_id: str) -> None:
        """`session/cancel` (see `ClientConnection.cancel`)."""
        await self.connection.cancel(session_id)


V2Connection = Negotiated[v2.AgentPeer, v2.InitializeResponse, v2.SessionUpdate]
"""`conn.v2`: the connection typed for protocol version 2."""
V1Connection = Negotiated[
    v1.AgentPeer, v1.InitializeResponse, v1.SessionUpdate | V1UnknownSessionUpdate
]
"""`conn.v1`: the connection typed for protocol version 1 (an update of a type these bindings
do not know arrives as a `V1UnknownSessionUpdate`)."""


class ClientConnection:
    """A client's connection to one agent: version negotiation, typed calls, session updates."""

    def __init__(
        self,
        stream: AnyByteStream,
        factories: dict[int, Callable[[Any], Any]],
        *,
        peer: str = "the agent",
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        eof_grace_period: float = DEFAULT_EOF_GRACE_PERIOD,
        check_outgoing: bool = False,
    ) -> None:
        """`peer`: how error messages name the agent (`open_agent`: its command line); the
        other options as for `connect`."""
        self._factories = factories  # protocol version -> builds the client implementation
        # what each version's implementation subclasses (stable or unstable); TypeError naming
        # the fix for a client instance, a class of the wrong version, anything not callable
        self._surfaces = {
            version: check_factory(factory, version, "client") or SURFACES[version]
            for version, factory in factories.items()
        }
        self._peer = peer
        self._stderr_tail: Callable[[], str] = lambda: ""  # open_agent: the agent's stderr
        self._surface: Surface | None = None  # the negotiated surface
        self._client: v2.ClientBase | v1.ClientBase | None = None
        self._agent: v2.AgentPeer | v1.AgentPeer | None = None
        self._negotiated: V2Connection | V1Connection | None = None
        self._dispatch: Callable[[Call], Awaitable[Any] | None] = _not_initialized
        self._handles_updates = False
        self._update_spec: MethodSpec[Any, None] | None = None
        self._subscribers: dict[str, list[UpdateStream[Any]]] = {}
        self._gates: dict[RequestId, list[Event]] = {}
        self._connection = Connection(
            stream,
            bootstrap_codec(Codec[msgspec.Raw](msgspec.Raw)),
            _not_initialized,
            cancelled_result=self._cancelled_result,
            peer=peer,
            max_line_bytes=max_line_bytes,
            max_concurrent_requests=max_concurrent_requests,
            max_buffered_bytes=max_buffered_bytes,
            eof_grace_period=eof_grace_period,
            check_outgoing=check_outgoing,
        )
        self._connection.on_request = self._gate_behind_updates

    # ------------------------------------------------------------------ setup

    @overload
    async def initialize(
        self, params: v1.InitializeRequest, *, timeout: float | None = ...
    ) -> v1.InitializeResponse: ...

    @overload
    async def initialize(
        self, params: v2.InitializeRequest, *, timeout: float | None = ...
    ) -> v2.InitializeResponse | v1.InitializeResponse: ...

    async def initialize(
        self,
        params: v2.InitializeRequest | v1.InitializeRequest,
        *,
        timeout: float | None = INITIALIZE_TIMEOUT,
    ) -> v2.InitializeResponse | v1.InitializeResponse:
        """Send `initialize` and switch to the version the agent answers with.

        The answer is of the version the agent chose (v1 when a v2 request fell back to v1;
        `conn.v2` / `conn.v1` give it typed). Raises `InitializeTimeout` when the agent does
        not answer within `timeout` seconds (None: wait as long as it takes).
        """
        version = params.protocol_version
        if version not in self._factories:
            raise ValueError(
                f"no client implementation for protocol version {version}: pass "
                f"v{version}=<factory> to open_agent/connect, or send the request of one of "
                f"the versions given: {sorted(self._factories)}"
            )
        raw = await self._initialize_answer(self._surfaces[version].initialize, params, timeout)
        answered = protocol_version_of(raw)
        if answered not in self._factories:
            raise ProtocolMismatch(
                f"{self._peer} speaks protocol version {answered}; this client speaks "
                f"{sorted(self._factories)}"
            )
        surface = self._surfaces[answered]
        result = surface.initialize.result.decode(raw) if surface.initialize.result else raw
        self._switch_to(surface, result)
        return cast("v2.InitializeResponse | v1.InitializeResponse", result)

    async def _initialize_answer(
        self, spec: MethodSpec[Any, Any], params: Any, timeout: float | None
    ) -> msgspec.Raw:
        with self._connection.loop.move_on_after(timeout if timeout is not None else float("inf")):
            raw: msgspec.Raw = await self._connection.request(spec, params)
            return raw
        tail = self._stderr_tail()
        raise InitializeTimeout(
            f"{self._peer} did not answer `initialize` within {timeout:g} s"
            + (f"; stderr tail:\n{tail}\n" if tail else " and wrote nothing to stderr; ")
            + "check that the command starts an ACP agent speaking on its stdout, or pass "
            "a longer `timeout=` to initialize() if it is slow to start"
        )

    def _switch_to(self, surface: Surface, initialize_response: Any) -> None:
        agent = surface.module.AgentPeer(self._connection)
        client = self._factories[surface.version](agent)
        check_built(client, surface.version, "client", surface)
        self._surface, self._agent, self._client = surface, agent, client
        self._negotiated = Negotiated(self, agent, initialize_response)
        self._dispatch = handler_dispatch(client, surface.client_base)
        self._handles_updates = implemented(client, surface.client_base, "session_update")
        codec = open_session_updates(surface.client_codec, self._peer)  # v1: unknown tags kept
        self._update_spec = codec.inbound[SESSION_UPDATE]
        self._connection.core.codec = codec
        self._connection.dispatch = self._route

    @property
    def peer(self) -> str:
        """How log and error messages name the agent (`open_agent`: its command line)."""
        return self._peer

    @property
    def client(self) -> v2.ClientBase | v1.ClientBase:
        """The client implementation the factory built for the negotiated version."""
        self._require_initialized()
        assert self._client is not None  # set with the surface
        return self._client

    @property
    def closed(self) -> bool:
        """True once the connection ended (the agent closed its side, or the block was left):
        calls then raise `ConnectionClosed` / `PeerExited`."""
        return self._connection.closed

    @property
    def protocol_version(self) -> int:
        """The negotiated protocol version."""
        return self._require_initialized().version

    @property
    def v2_agent(self) -> v2.AgentPeer:
        """The agent's typed methods, when protocol version 2 was negotiated (`v2.peer`)."""
        return self.v2.peer

    @property
    def v1_agent(self) -> v1.AgentPeer:
        """The agent's typed methods, when protocol version 1 was negotiated (`v1.peer`)."""
        return self.v1.peer

    def _require_initialized(self) -> Surface:
        if self._surface is None:
            raise NotInitialized(
                f"{self._peer} is not initialized yet: call `await conn.initialize(...)` "
                "(and wait for it) before using the agent"
            )
        return self._surface

    def _negotiated_as(self, version: int) -> V2Connection | V1Connection:
        chosen = self._require_initialized().version
        if chosen != version:
            raise ProtocolMismatch(
                f"{self._peer} negotiated protocol version {chosen}, not {version}: use "
                f"`conn.v{chosen}`, or branch on `conn.protocol_version` to support both"
            )
        assert self._negotiated is not None  # set with the surface
        return self._negotiated

    # ------------------------------------------------------------------ incoming

    def _route(self, call: Call) -> Awaitable[Any] | None:
        """Dispatch once initialized; a session update goes to its subscribers first."""
        if call.spec is self._update_spec:
            notification: Any = call.message.params  # type: ignore[union-attr]
            streams = self._subscribers.get(notification.session_id)
            if streams:
                update = notification.update
                for stream in streams:
                    if not stream._offer(update):
                        return self._publish_waiting(streams, stream, update, call)
            if not self._handles_updates:
                return None
        elif self._gates and call.id in self._gates:
            return self._after_gates(self._gates.pop(call.id), call)
        return self._dispatch(call)

    async def _publish_waiting(
        self, streams: list[UpdateStream[Any]], full: UpdateStream[Any], update: Any, call: Call
    ) -> Any:
        """Back-pressure: wait until `full` and the subscribers after it have room."""
        for stream in streams[streams.index(full) :]:
            await stream._put(update)
        pending = self._dispatch(call)
        return None if pending is None else await pending

    def _gate_behind_updates(self, call: Call) -> None:
        """On arrival of a request (on the reader, in wire order): when it belongs to a
        session whose subscribers have not taken every earlier update, hold its handler."""
        session_id = getattr(call.params, "session_id", None) if call.spec else None
        streams = self._subscribers.get(session_id) if isinstance(session_id, str) else None
        if not streams:
            return
        gates = [
            gate
            for stream in streams
            if (gate := stream._hold(call) if stream._holds_requests else stream._gate())
            is not None
        ]
        if gates:
            assert not isinstance(call.id, msgspec.UnsetType)
            self._gates[call.id] = gates

    async def _after_gates(self, gates: list[Event], call: Call) -> Any:
        for gate in gates:
            await gate.wait()
        pending = self._dispatch(call)
        return None if pending is None else await pending

    def _cancelled_result(self, call: Call) -> Any:
        if call.method != PERMISSION or self._surface is None:
            return None
        return cancelled_permission(self._surface.module)

    # ------------------------------------------------------------------ sessions

    @asynccontextmanager
    async def subscribe(self, session_id: str) -> AsyncIterator[UpdateStream[Any]]:
        """Every `session/update` of a session, in order, while the block runs.

        Read it while the turn runs (e.g. in another task): once `UPDATE_BUFFER` updates are
        unread the connection waits for this reader (back-pressure, bounded memory), and
        answers behind those updates, like v1's `session/prompt` response, wait too. The
        agent's requests for this session (permission, fs, terminal) reach their handler
        only once this reader took the updates received before them: so don't wait for such
        a request in the task that should be reading. `conn.v2.subscribe` /
        `conn.v1.subscribe` give the items their type.
        """
        stream: UpdateStream[Any] = UpdateStream()
        self._subscribers.setdefault(session_id, []).append(stream)
        self._connection.on_close(stream.close)
        try:
            yield stream
        finally:
            self._subscribers[session_id].remove(stream)
            stream.close()

    async def cancel(self, session_id: str) -> None:
        """`session/cancel`, after answering this session's pending permission requests with
        the `cancelled` outcome (the spec's MUST)."""
        self._require_initialized()
        self._connection.cancel_requests(
            lambda call: (
                call.method == PERMISSION and getattr(call.params, "session_id", None) == session_id
            )
        )
        agent = self._agent
        if isinstance(agent, v2.AgentPeer):
            await agent.session_cancel(v2.CancelSessionNotification(session_id=session_id))
        elif isinstance(agent, v1.AgentPeer):
            await agent.session_cancel(v1.CancelNotification(session_id=session_id))

    # ------------------------------------------------------------------ typed views
    # (last in the class: within it, the names v2 and v1 are these properties from here on)

    @property
    def v2(self) -> V2Connection:
        """The connection typed for protocol version 2 (when the agent chose it). A client
        built on `acp_schema.v2.unstable` gets the unstable peer here, typed as the stable one:
        `cast(acp_schema.v2.unstable.AgentPeer, conn.v2.peer)` types its draft methods."""
        return cast("V2Connection", self._negotiated_as(2))

    @property
    def v1(self) -> V1Connection:
        """The connection typed for protocol version 1 (when the agent chose it; unstable
        peers as for `v2`)."""
        return cast("V1Connection", self._negotiated_as(1))


def _not_initialized(call: Call) -> None:
    """Nothing may arrive before `initialize` is answered."""
    if call.is_request:
        raise RpcError.invalid_request("the connection is not initialized yet")


def _factories(v2: V2Factory | None, v1: V1Factory | None) -> dict[int, Callable[[Any], Any]]:
    given: dict[int, Callable[[Any], Any] | None] = {2: v2, 1: v1}
    factories = {version: f for version, f in given.items() if f is not None}
    if not factories:
        raise ValueError(
            "a client needs an implementation for at least one version: pass v2=MyClient "
            "and/or v1=MyV1Client (ClientBase subclasses of acp_schema.v2 / acp_schema.v1)"
        )
    for version, factory in factories.items():
        check_factory(factory, version, "client")  # misuse fails before anything is spawned
    return factories


@asynccontextmanager
async def connect(
    stream: AnyByteStream,
    *,
    v2: V2Factory | None = None,
    v1: V1Factory | None = None,
    closed_reason: Callable[[], Any] | None = None,
    peer: str = "the agent",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
    eof_grace_period: float = DEFAULT_EOF_GRACE_PERIOD,
    check_outgoing: bool = False,
) -> AsyncIterator[ClientConnection]:
    """A client connection over any byte stream, served while the block runs.

    `v2` / `v1`: build the client implementation for that protocol version from the typed
    peer it calls the agent through: the `ClientBase` subclass itself, or a function
    returning an instance; at least one. `closed_reason()`: the error pending calls fail with
    once the stream ends. `peer`: how log and error messages name the agent.
    `max_line_bytes`: longest line accepted; longer ones are answered -32600 and skipped.
    `max_concurrent_requests`: the agent's requests handled at once (as many more wait).
    `max_buffered_bytes`: send buffer bound; a slow reader slows the senders.
    `eof_grace_period`: once the agent closes its side, how long its requests already
    received may still run before they are answered with an error. `check_outgoing`: check
    what this client sends against the schema first (development and tests: a typo in an
    enum value or a union tag fails the send).
    An exception ending the block leaves it as itself, not in an ExceptionGroup.
    """
    conn = ClientConnection(
        stream,
        _factories(v2, v1),
        peer=peer,
        max_line_bytes=max_line_bytes,
        max_concurrent_requests=max_concurrent_requests,
        max_buffered_bytes=max_buffered_bytes,
        eof_grace_period=eof_grace_period,
        check_outgoing=check_outgoing,
    )
    conn._connection.closed_reason = closed_reason
    with SingleException() as single:
        async with conn._connection.loop.open_nursery() as nursery:
            await nursery.start(conn._connection.run)
            try:
                with single.callers_code():
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
    grace_period: float = GRACE_PERIOD,
    terminate_grace_period: float = TERMINATE_GRACE_PERIOD,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
    max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
    eof_grace_period: float = DEFAULT_EOF_GRACE_PERIOD,
    check_outgoing: bool = False,
) -> AsyncIterator[ClientConnection]:
    """Spawn an agent subprocess and connect to it over its stdio.

    `command`: the program and its arguments (no shell). `env`: the agent's environment
    (default: this process's). `cwd`: its working directory. `grace_period`: seconds the
    agent gets to exit once its stdin is closed, then SIGTERM; `terminate_grace_period`:
    seconds after SIGTERM before SIGKILL. The other options as for `connect`.

    When the agent dies, pending and later calls raise `PeerExited` with its exit code and
    the tail of its stderr. Leaving the block closes its stdin and waits for it to exit, then
    ends its process group (`acpwire.streams.spawn_agent` says how, and the longest this takes).
    An exception ending the block (`PeerExited`, or one of the block's own) leaves it as
    itself, not in an ExceptionGroup.
    """
    _factories(v2, v1)  # misuse fails before anything is spawned
    with SingleException() as single:
        async with spawn_agent(
            command,
            env=env,
            cwd=cwd,
            grace_period=grace_period,
            terminate_grace_period=terminate_grace_period,
        ) as agent:
            async with connect(
                agent.stream,
                v2=v2,
                v1=v1,
                closed_reason=agent.exited,
                peer=f"agent `{shlex.join(command)}`",
                max_line_bytes=max_line_bytes,
                max_concurrent_requests=max_concurrent_requests,
                max_buffered_bytes=max_buffered_bytes,
                eof_grace_period=eof_grace_period,
                check_outgoing=check_outgoing,
            ) as conn:
                conn._stderr_tail = lambda: "\n".join(agent.stderr_tail)
                with single.callers_code():
                    yield conn


__all__ = [
    "ClientConnection",
    "ConnectionClosed",
    "InitializeTimeout",
    "Negotiated",
    "NotInitialized",
    "UpdateStream",
    "V1Connection",
    "V2Connection",
    "connect",
    "open_agent",
]
