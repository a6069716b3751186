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

import shlex
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, cast, overload

import msgspec

from acp_schema import Codec, MethodSpec, v1, v2

from .._groups import SingleException
from .._wire.connection import Connection
from .._wire.dispatch import handler_dispatch, implemented
from .._wire.extensions import Extensions
from .._wire.jsonrpc import Call
from .._wire.options import ConnectionOptions, call_options
from .._wire.versions import (
    AnySurface,
    bootstrap_codec,
    check_built,
    check_factory,
    protocol_version_of,
    stable_surface,
)
from ..errors import (
    ConnectionClosed,
    InitializeTimeout,
    InvalidResponse,
    NotInitialized,
    ProtocolMismatch,
    RpcError,
)
from ..streams.agent_process import GRACE_PERIOD, TERMINATE_GRACE_PERIOD, spawn_agent
from ..streams.byte_stream import AnyByteStream
from .cancelled_turns import SESSION_CANCEL, CancelledTurns, cancelled_answer
from .router import UpdateRouter, UpdateStream
from .unknown_updates import V1UnknownSessionUpdate, open_session_updates

if TYPE_CHECKING:  # the unstable surfaces are imported by the programs that use them
    import acp_schema.v1.unstable as v1u
    import acp_schema.v1.unstable.handlers
    import acp_schema.v2.unstable as v2u
    import acp_schema.v2.unstable.handlers

ClientFactory: TypeAlias = (
    Callable[[v2.AgentPeer], v2.ClientBase]
    | Callable[
        ["acp_schema.v2.unstable.handlers.AgentPeer"], "acp_schema.v2.unstable.handlers.ClientBase"
    ]
)
"""What `open_agent(v2=...)` / `connect(v2=...)` take: builds the v2 client from the agent's
typed peer (the `ClientBase` subclass itself, or a function returning an instance), of
`acp_schema.v2` or `acp_schema.v2.unstable`."""

V1ClientFactory: TypeAlias = (
    Callable[[v1.AgentPeer], v1.ClientBase]
    | Callable[
        ["acp_schema.v1.unstable.handlers.AgentPeer"], "acp_schema.v1.unstable.handlers.ClientBase"
    ]
)
"""What `open_agent(v1=...)` / `connect(v1=...)` take: builds the v1 client (of `acp_schema.v1`
or `acp_schema.v1.unstable`)."""

AnyClient: TypeAlias = (
    "v2.ClientBase | v1.ClientBase"
    " | acp_schema.v2.unstable.handlers.ClientBase | acp_schema.v1.unstable.handlers.ClientBase"
)

INITIALIZE_TIMEOUT = 30.0
"""Seconds `initialize` waits for the agent's answer by default."""

SESSION_UPDATE = "session/update"

Update = TypeVar("Update")
Peer = TypeVar("Peer")
Initialized = TypeVar("Initialized")


class _Negotiated(Generic[Peer, Initialized, Update]):
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


class Negotiated(_Negotiated[v2.AgentPeer, v2.InitializeResponse, v2.SessionUpdate]):
    """`conn.v2`: the connection seen through protocol version 2, fully typed: `peer` (the
    agent's typed methods), `initialize_response` (the agent's answer to `initialize`),
    `subscribe` / `cancel` (as on `ClientConnection`, with typed updates)."""

    peer: v2.AgentPeer
    """The agent's methods: `await conn.v2.peer.session_new(...)`."""
    initialize_response: v2.InitializeResponse
    """The agent's answer to `initialize` (its capabilities, info, auth methods)."""


class V1Negotiated(
    _Negotiated[v1.AgentPeer, v1.InitializeResponse, v1.SessionUpdate | V1UnknownSessionUpdate]
):
    """`conn.v1`: the connection seen through protocol version 1, as `Negotiated` for v2 (an
    update of a type these bindings do not know arrives as a `V1UnknownSessionUpdate`)."""

    peer: v1.AgentPeer
    """The agent's methods: `await conn.v1.peer.session_new(...)`."""
    initialize_response: v1.InitializeResponse
    """The agent's answer to `initialize` (its capabilities, info, auth methods)."""


class ClientConnection:
    """A client's connection to one agent: version negotiation, typed calls, session updates."""

    def __init__(
        self,
        stream: AnyByteStream,
        factories: dict[int, Callable[[Any], Any]],
        *,
        peer: str = "the agent",
        closed_reason: Callable[[], Any] | None = None,
        stderr_tail: Callable[[], str] | None = None,
        agent_pid: int | None = None,
        options: ConnectionOptions | None = None,
        max_line_bytes: int = ConnectionOptions.max_line_bytes,
        max_concurrent_requests: int = ConnectionOptions.max_concurrent_requests,
        max_buffered_bytes: int = ConnectionOptions.max_buffered_bytes,
        eof_grace_period: float = ConnectionOptions.eof_grace_period,
        check_outgoing: bool = ConnectionOptions.check_outgoing,
    ) -> None:
        """`peer`: how error messages name the agent (`open_agent`: its command line).
        `stderr_tail()`: what the agent wrote to stderr lately, quoted when it does not
        answer `initialize` (`open_agent`). `agent_pid`: the agent process's id
        (`open_agent`). The other options as for `connect`."""
        self._factories = factories  # protocol version -> builds the client implementation
        # what each version's implementation subclasses (stable or unstable); TypeError naming
        # the fix for a client instance, a class of the wrong version, anything not callable
        self._surfaces = {
            version: check_factory(factory, version, "client") or stable_surface(version)
            for version, factory in factories.items()
        }
        self._peer = peer
        self._stderr_tail = stderr_tail
        self._agent_pid = agent_pid
        self._surface: AnySurface | None = None  # the negotiated surface
        self._client: Any = None  # the implementation of the negotiated surface
        self._agent: Any = None  # the negotiated surface's `AgentPeer`
        self._negotiated: Negotiated | V1Negotiated | None = None
        self._router = UpdateRouter()
        self._connection = Connection(
            stream,
            bootstrap_codec(Codec[msgspec.Raw](msgspec.Raw)),
            _not_initialized,
            options=call_options(
                options,
                max_line_bytes=max_line_bytes,
                max_concurrent_requests=max_concurrent_requests,
                max_buffered_bytes=max_buffered_bytes,
                eof_grace_period=eof_grace_period,
                check_outgoing=check_outgoing,
            ),
            peer=peer,
            peer_side="agent",
            on_request=self._router.on_request,
            cancelled_result=self._cancelled_result,
            closed_reason=closed_reason,
        )
        self._connection.on_close(lambda: self._router.close(self._connection.failure))
        self._cancelled_turns = CancelledTurns(self._connection)

    @asynccontextmanager
    async def _serving(self) -> AsyncIterator[None]:
        """Serve the connection while the block runs (`connect`, `open_agent`); an exception
        ending the block leaves it as itself, not in an ExceptionGroup."""
        with SingleException() as single:
            async with self._connection.loop.open_nursery() as nursery:
                await nursery.start(self._connection.run)
                try:
                    with single.callers_code():
                        yield
                finally:
                    nursery.cancel_scope.cancel()

    # ------------------------------------------------------------------ setup

    @overload
    async def initialize(
        self, params: v1.InitializeRequest | v1u.InitializeRequest, *, timeout: float | None = ...
    ) -> v1.InitializeResponse: ...

    @overload
    async def initialize(
        self, params: v2.InitializeRequest | v2u.InitializeRequest, *, timeout: float | None = ...
    ) -> v2.InitializeResponse | v1.InitializeResponse: ...

    async def initialize(
        self,
        params: v2.InitializeRequest
        | v1.InitializeRequest
        | v2u.InitializeRequest
        | v1u.InitializeRequest,
        *,
        timeout: float | None = INITIALIZE_TIMEOUT,
    ) -> v2.InitializeResponse | v1.InitializeResponse:
        """Send `initialize` and switch to the version the agent answers with.

        The answer is of the version the agent chose (v1 when a v2 request fell back to v1;
        `conn.v2` / `conn.v1` give it typed). Raises `InitializeTimeout` when the agent does
        not answer within `timeout` seconds (None: wait as long as it takes), and
        `InvalidResponse` (naming the JSON path) when its answer does not fit the schema of the
        version it answered with.
        """
        version = params.protocol_version
        if version not in self._factories:
            raise ValueError(
                f"no client implementation for protocol version {version}: pass "
                f"v{version}=<factory> to open_agent/connect, or send the request of one of "
                f"the versions given: {sorted(self._factories)}"
            )
        raw = await self._initialize_answer(self._surfaces[version].initialize, params, timeout)
        try:
            answered = protocol_version_of(raw)
        except msgspec.ValidationError as exc:
            raise InvalidResponse("initialize", _in_result(exc)) from None
        if answered not in self._factories:
            raise ProtocolMismatch(
                f"{self._peer} speaks protocol version {answered}; this client speaks "
                f"{sorted(self._factories)}"
            )
        surface = self._surfaces[answered]
        decoder = surface.initialize.result
        assert decoder is not None  # a request: it has a result
        try:
            result = decoder.decode(raw)
        except msgspec.ValidationError as exc:  # the version's answer, but not a valid one
            reason = f"{_in_result(exc)} (as protocol version {answered})"
            raise InvalidResponse("initialize", reason) from None
        self._switch_to(surface, result)
        return cast("v2.InitializeResponse | v1.InitializeResponse", result)

    async def _initialize_answer(
        self, spec: MethodSpec[Any, Any], params: Any, timeout: float | None
    ) -> msgspec.Raw:
        with self._connection.loop.move_on_after(timeout if timeout is not None else float("inf")):
            raw: msgspec.Raw = await self._connection.request(spec, params)
            return raw
        tail = self._stderr_tail() if self._stderr_tail is not None else ""
        raise InitializeTimeout(
            f"{self._peer} did not answer `initialize` within {timeout:g} s"
            + (f"; stderr tail:\n{tail}\n" if tail else " and wrote nothing to stderr; ")
            + "check that the command starts an ACP agent speaking on its stdout, or pass "
            "a longer `timeout=` to initialize() if it is slow to start"
        )

    def _switch_to(self, surface: AnySurface, initialize_response: Any) -> None:
        agent = surface.agent_peer(self._cancelled_turns)
        client = self._factories[surface.protocol_version](agent)
        check_built(client, surface.protocol_version, "client", surface)
        self._surface, self._agent, self._client = surface, agent, client
        view = Negotiated if surface.protocol_version == 2 else V1Negotiated
        self._negotiated = view(self, agent, initialize_response)
        codec = open_session_updates(surface.client_codec, self._peer)  # v1: unknown tags kept
        handles_updates = implemented(client, surface.client_base, "session_update")
        route, updates = self._router.routing(
            self._cancelled_turns.dispatch(handler_dispatch(client, surface.client_base), surface),
            codec.inbound[SESSION_UPDATE],
            on_update=client.session_update if handles_updates else None,
        )
        self._connection.switch_to(codec, route, initialize_response, direct=updates)

    @property
    def peer(self) -> str:
        """How log and error messages name the agent (`open_agent`: its command line)."""
        return self._peer

    @property
    def agent_pid(self) -> int | None:
        """The agent process's id when `open_agent` started it (None for `connect`)."""
        return self._agent_pid

    @property
    def extensions(self) -> Extensions:
        """Extension (`_`-prefixed) requests and notifications to the agent:
        `await conn.extensions.request("_acme/ping", params, result=Pong)` (see `Extensions`)."""
        return Extensions(self._connection)

    @property
    def client(self) -> AnyClient:
        """The client implementation the factory built for the negotiated version (of the
        surface its class subclasses)."""
        self._require_initialized()
        assert self._client is not None  # set with the surface
        client: AnyClient = self._client
        return client

    @property
    def closed(self) -> bool:
        """True once the connection ended (the agent closed its side, or the block was left):
        calls then raise `ConnectionClosed` / `PeerExited`."""
        return self._connection.closed

    @property
    def protocol_version(self) -> int:
        """The negotiated protocol version."""
        return self._require_initialized().protocol_version

    @property
    def v2_agent(self) -> v2.AgentPeer:
        """The agent's typed methods, when protocol version 2 was negotiated (`v2.peer`)."""
        return self.v2.peer

    @property
    def v1_agent(self) -> v1.AgentPeer:
        """The agent's typed methods, when protocol version 1 was negotiated (`v1.peer`)."""
        return self.v1.peer

    def _require_initialized(self) -> AnySurface:
        if self._surface is None:
            raise NotInitialized(
                f"{self._peer} is not initialized yet: call `await conn.initialize(...)` "
                "(and wait for it) before using the agent"
            )
        return self._surface

    def _negotiated_as(self, version: int) -> Negotiated | V1Negotiated:
        chosen = self._require_initialized().protocol_version
        if chosen != version:
            raise ProtocolMismatch(
                f"{self._peer} negotiated protocol version {chosen}, not {version}: use "
                f"`conn.v{chosen}`, or branch on `conn.protocol_version` to support both"
            )
        assert self._negotiated is not None  # set with the surface
        return self._negotiated

    def _cancelled_result(self, call: Call) -> Any:
        return None if self._surface is None else cancelled_answer(call, self._surface)

    # ------------------------------------------------------------------ sessions

    def subscribe(self, session_id: str) -> AbstractAsyncContextManager[UpdateStream[Any]]:
        """Every `session/update` of a session, in order, while the block runs. Iterating
        ends when the block is left; when the connection ends first (the agent exited, a
        remote connection was lost), it raises why (`PeerExited`, `RemoteConnectionError`,
        `ConnectionClosed`) after the updates received before.

        Read it while the turn runs (e.g. in another task): once `UPDATE_BUFFER` updates are
        unread the connection waits for this reader (back-pressure, bounded memory), and
        answers behind those updates, like v1's `session/prompt` response, wait too. The
        agent's requests for this session (permission, fs, terminal) reach their handler
        only once this reader took the updates received before them: so don't wait for such
        a request in the task that should be reading. `conn.v2.subscribe` /
        `conn.v1.subscribe` give the items their type.
        """
        return self._router.subscribe(session_id)

    def _subscribe_turn(self, session_id: str) -> AbstractAsyncContextManager[UpdateStream[Any]]:
        """`subscribe` for `prompt()`: the session's requests come in among its updates."""
        return self._router.subscribe(session_id, holds_requests=True)

    async def cancel(self, session_id: str) -> None:
        """`session/cancel`, after answering this session's pending permission requests with
        the `cancelled` outcome (the spec's MUST); until the session's next `session/prompt`,
        its permission requests that crossed the cancel are answered `cancelled` too, without
        reaching the client's handler."""
        surface = self._require_initialized()
        spec = surface.agent_methods[SESSION_CANCEL]
        await self._cancelled_turns.notify(spec, spec.params.type(session_id=session_id))

    # ------------------------------------------------------------------ typed views
    # (last in the class: within it, the names v2 and v1 are these properties from here on)

    @property
    def v2(self) -> Negotiated:
        """The connection typed for protocol version 2 (when the agent chose it). A client
        built on `acp_schema.v2.unstable` gets the unstable peer here, typed as the stable one:
        `cast(acp_schema.v2.unstable.AgentPeer, conn.v2.peer)` types its draft methods."""
        return cast("Negotiated", self._negotiated_as(2))

    @property
    def v1(self) -> V1Negotiated:
        """The connection typed for protocol version 1 (when the agent chose it; unstable
        peers as for `v2`)."""
        return cast("V1Negotiated", self._negotiated_as(1))


def _in_result(exc: msgspec.ValidationError) -> str:
    """The decoder's message about the `initialize` result, its JSON path given from the
    response (`$.result...`), as for any other response that does not fit."""
    text = str(exc)
    head, marker, path = text.rpartition(" - at `$")
    return f"{head} - at `$.result{path}" if marker else text


def _not_initialized(call: Call) -> None:
    """Nothing may arrive before `initialize` is answered."""
    if call.is_request:
        raise RpcError.invalid_request("the connection is not initialized yet")


def _factories(
    v2: ClientFactory | None, v1: V1ClientFactory | None
) -> dict[int, Callable[[Any], Any]]:
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
    v2: ClientFactory | None = None,
    v1: V1ClientFactory | None = None,
    closed_reason: Callable[[], Any] | None = None,
    peer: str = "the agent",
    options: ConnectionOptions | None = None,
    max_line_bytes: int = ConnectionOptions.max_line_bytes,
    max_concurrent_requests: int = ConnectionOptions.max_concurrent_requests,
    max_buffered_bytes: int = ConnectionOptions.max_buffered_bytes,
    eof_grace_period: float = ConnectionOptions.eof_grace_period,
    check_outgoing: bool = ConnectionOptions.check_outgoing,
) -> AsyncIterator[ClientConnection]:
    """A client connection over any byte stream, served while the block runs.

    `v2` / `v1`: build the client implementation for that protocol version from the typed
    peer it calls the agent through: the `ClientBase` subclass itself, or a function
    returning an instance; at least one. `closed_reason()`: the error pending calls fail with
    once the stream ends. `peer`: how log and error messages name the agent.
    `options`: the connection's limits and checks (`ConnectionOptions`, which documents them;
    the defaults when not given). The keywords `max_line_bytes` ... `check_outgoing` are the
    same options in the form of earlier releases, still accepted; prefer `options=` (one call
    uses one form).
    An exception ending the block leaves it as itself, not in an ExceptionGroup.
    """
    conn = ClientConnection(
        stream,
        _factories(v2, v1),
        peer=peer,
        closed_reason=closed_reason,
        options=options,
        max_line_bytes=max_line_bytes,
        max_concurrent_requests=max_concurrent_requests,
        max_buffered_bytes=max_buffered_bytes,
        eof_grace_period=eof_grace_period,
        check_outgoing=check_outgoing,
    )
    async with conn._serving():
        yield conn


@asynccontextmanager
async def open_agent(
    command: Sequence[str],
    *,
    v2: ClientFactory | None = None,
    v1: V1ClientFactory | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    grace_period: float = GRACE_PERIOD,
    terminate_grace_period: float = TERMINATE_GRACE_PERIOD,
    options: ConnectionOptions | None = None,
    max_line_bytes: int = ConnectionOptions.max_line_bytes,
    max_concurrent_requests: int = ConnectionOptions.max_concurrent_requests,
    max_buffered_bytes: int = ConnectionOptions.max_buffered_bytes,
    eof_grace_period: float = ConnectionOptions.eof_grace_period,
    check_outgoing: bool = ConnectionOptions.check_outgoing,
) -> AsyncIterator[ClientConnection]:
    """Spawn an agent subprocess and connect to it over its stdio.

    `command`: the program and its arguments (no shell). `env`: the agent's environment
    (default: this process's). `cwd`: its working directory. `grace_period`: seconds the
    agent gets to exit once its stdin is closed, then SIGTERM; `terminate_grace_period`:
    seconds after SIGTERM before SIGKILL. `options` and the other options as for `connect`.

    When the agent dies, pending and later calls raise `PeerExited` with its exit code and
    the tail of its stderr. Leaving the block closes its stdin and waits for it to exit, then
    ends its process group (`acpwire.streams.spawn_agent` says how, and the longest this takes).
    An exception ending the block (`PeerExited`, or one of the block's own) leaves it as
    itself, not in an ExceptionGroup.
    """
    factories = _factories(v2, v1)  # misuse fails before anything is spawned
    options = call_options(
        options,
        max_line_bytes=max_line_bytes,
        max_concurrent_requests=max_concurrent_requests,
        max_buffered_bytes=max_buffered_bytes,
        eof_grace_period=eof_grace_period,
        check_outgoing=check_outgoing,
    )
    with SingleException() as single:
        async with spawn_agent(
            command,
            env=env,
            cwd=cwd,
            grace_period=grace_period,
            terminate_grace_period=terminate_grace_period,
        ) as agent:
            conn = ClientConnection(
                agent.stream,
                factories,
                peer=f"agent `{shlex.join(command)}`",
                closed_reason=agent.exited,
                stderr_tail=lambda: "\n".join(agent.stderr_tail),
                agent_pid=agent.process.pid,
                options=options,
            )
            async with conn._serving():
                with single.callers_code():
                    yield conn


__all__ = [
    "ClientConnection",
    "ConnectionClosed",
    "InitializeTimeout",
    "Negotiated",
    "NotInitialized",
    "UpdateStream",
    "V1Negotiated",
    "connect",
    "open_agent",
]
