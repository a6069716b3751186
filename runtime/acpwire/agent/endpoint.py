"""The agent side: serve an agent implementation over stdio or any byte stream, on trio or asyncio.

    class MyAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None: ...
        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse: ...

    trio.run(serve_agent, MyAgent)                 # v2 only, over stdio
    trio.run(partial(serve_agent, MyAgent, v1=MyV1Agent))   # v2 and v1
    asyncio.run(serve_agent(MyAgent))              # the same on asyncio

`initialize` picks the version: the client's if this agent speaks it, otherwise the latest
one below it. When every version this agent speaks is newer than the client's, a v1-only
agent answers with version 1 (v1 has no -32022), any other answers -32022.
Requests before `initialize` get -32600; notifications before it are ignored. Requests that
arrive while `initialize` runs (pipelined behind it) wait for it, then are served in the
order they reached the endpoint (or get that -32600 if it failed).

The surface served is the one the implementation subclasses: `acp_schema.v2.AgentBase`
serves the stable methods, `acp_schema.v2.unstable.AgentBase` the draft ones too. A factory
function's surface is read from its return annotation (stable when it has none). What cannot
be served as given raises TypeError before anything is read.

The first `initialize` answered is checked against the handlers the agent overrides
(`acpwire.agent_capabilities`): one WARNING on the `acpwire` logger lists the optional methods
served but not advertised, or advertised but not served.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

import acp_schema.v2.methods as v2_methods
from acp_schema import v2

from .._groups import SingleException
from .._loop import Event, current_loop
from .._wire.connection import Connection
from .._wire.dispatch import Dispatch, handler_dispatch
from .._wire.jsonrpc import Call
from .._wire.options import ConnectionOptions, call_options
from .._wire.versions import (
    AnySurface,
    bootstrap_codec,
    check_built,
    check_factory,
    negotiate,
    protocol_version_of,
    stable_surface,
)
from ..errors import RpcError
from ..streams.byte_stream import AnyByteStream
from ..streams.stdio import stdio_stream
from .capabilities import capability_mismatches, describe

log = logging.getLogger("acpwire")

if TYPE_CHECKING:  # the unstable surfaces are imported by the programs that use them
    import acp_schema.v1.handlers
    import acp_schema.v1.unstable.handlers
    import acp_schema.v2.unstable.handlers

AgentFactory: TypeAlias = (
    Callable[[v2.ClientPeer], v2.AgentBase]
    | Callable[
        ["acp_schema.v2.unstable.handlers.ClientPeer"], "acp_schema.v2.unstable.handlers.AgentBase"
    ]
)
"""What `serve_agent(v2=...)` takes: builds the v2 agent from the client's typed peer (the
`AgentBase` subclass itself, or a function returning an instance), of `acp_schema.v2` or
`acp_schema.v2.unstable`."""

V1AgentFactory: TypeAlias = (  # v1 named, not imported: a v2 agent imports no v1 handlers
    Callable[["acp_schema.v1.handlers.ClientPeer"], "acp_schema.v1.handlers.AgentBase"]
    | Callable[
        ["acp_schema.v1.unstable.handlers.ClientPeer"], "acp_schema.v1.unstable.handlers.AgentBase"
    ]
)
"""What `serve_agent(v1=...)` takes: builds the v1 agent from the client's typed peer (of
`acp_schema.v1` or `acp_schema.v1.unstable`)."""


class AgentEndpoint:
    """Serves one connection: negotiates the version, then dispatches to the implementation."""

    def __init__(
        self,
        factories: dict[int, Callable[[Any], Any]],
        *,
        options: ConnectionOptions | None = None,
    ) -> None:
        """`factories`: protocol version -> what builds the implementation from its
        `ClientPeer` (checked here: TypeError naming the fix when it cannot be served).
        `options`: the connection's limits (defaults: `ConnectionOptions()`)."""
        if not factories:
            raise ValueError(
                "serve_agent needs an agent implementation: pass your AgentBase subclass, "
                "e.g. serve_agent(MyAgent) for v2 or serve_agent(v1=MyV1Agent) for v1"
            )
        self.factories = factories
        self.surfaces = {
            version: check_factory(factory, version, "agent") or stable_surface(version)
            for version, factory in factories.items()
        }
        self.options = options if options is not None else ConnectionOptions()
        self.surface: AnySurface | None = None
        self.agent: Any = None
        self._dispatch: Dispatch | None = None  # the agent's, once initialize succeeded
        self.connection: Connection | None = None
        self.loop = current_loop()
        self._initializing = False
        self._held: collections.deque[Event] = collections.deque()

    async def serve(self, stream: AnyByteStream, connection_id: str | None = None) -> None:
        """Serve the client at the other end of `stream`; `connection_id`: the connection's
        `WireLine.connection` (a remote connection's `Acp-Connection-Id`)."""
        with SingleException():
            await self.connect(stream, connection_id).run()

    def connect(self, stream: AnyByteStream, connection_id: str | None = None) -> Connection:
        """The connection that serves the client at the other end of `stream` once run (what
        `serve` runs)."""
        self.connection = Connection(
            stream,
            bootstrap_codec(),
            self._route,
            options=self.options,
            peer="the client",
            peer_side="client",
            connection_id=connection_id,
        )
        return self.connection

    async def _route(self, call: Call) -> Any:
        """Before initialize succeeded; then the connection dispatches to the agent directly."""
        if not call.is_request:
            return None
        if call.method == v2_methods.INITIALIZE.name and not self._initializing:
            return await self._initialize(call)
        if not self._initializing:
            # Requests read together start in either order: let an initialize read before
            # this request start (or finish) first.
            await self.loop.checkpoint()
        pending = await self._after_initialize(call) if self._initializing else self._start(call)
        return None if pending is None else await pending

    def _start(self, call: Call) -> Awaitable[Any] | None:
        """Start a request that arrived before initialize was answered."""
        if self._dispatch is not None:
            return self._dispatch(call)
        if call.method == v2_methods.INITIALIZE.name:
            return self._initialize(call)
        raise RpcError.invalid_request("the connection is not initialized: send `initialize` first")

    async def _after_initialize(self, call: Call) -> Awaitable[Any] | None:
        """Wait until initialize and the requests held before this one have started, then
        start this one."""
        turn = self.loop.Event()
        self._held.append(turn)
        try:
            await turn.wait()
        except self.loop.Cancelled:
            if turn.is_set():
                self._release_next()
            else:
                self._held.remove(turn)
            raise
        try:
            return self._start(call)
        finally:
            self._release_next()

    def _release_next(self) -> None:
        if self._held:
            self._held.popleft().set()

    async def _initialize(self, call: Call) -> Any:
        self._initializing = True
        try:
            return await self._negotiate(call)
        finally:
            self._initializing = False
            self._release_next()

    async def _negotiate(self, call: Call) -> Any:
        assert self.connection is not None
        try:
            requested = protocol_version_of(call.params)
        except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
            raise RpcError.invalid_params(f"initialize: {exc}") from None
        supported = sorted(self.factories)
        version = negotiate(requested, supported)
        if version is None:
            raise RpcError.unsupported_protocol_version(requested, supported)
        surface = self.surfaces[version]
        try:
            params = surface.initialize.params.decode(call.params)
        except msgspec.ValidationError as exc:
            raise RpcError.invalid_params(str(exc)) from None
        agent = self.factories[version](surface.client_peer(self.connection))
        check_built(agent, version, "agent", surface)
        result = await agent.initialize(params)
        if result.protocol_version != version:
            raise RpcError.internal_error(
                f"the agent answered initialize with protocol version {result.protocol_version}, "
                f"but version {version} was negotiated"
            )
        # Switch only once initialize succeeded: a failed one leaves the connection as it was.
        dispatch = handler_dispatch(agent, surface.agent_base, surface.agent_codec)
        self.surface, self.agent, self._dispatch = surface, agent, dispatch
        self.connection.switch_to(surface.agent_codec, dispatch, result)
        self._check_capabilities(agent, result)
        return result

    def _check_capabilities(self, agent: Any, result: Any) -> None:
        """Once per connection: a later initialize goes to the agent directly."""
        mismatches = capability_mismatches(agent, result)
        if mismatches:
            log.warning("%s", describe(type(agent), mismatches))


async def serve_agent(
    v2: AgentFactory | None = None,
    *,
    v1: V1AgentFactory | None = None,
    stream: AnyByteStream | None = None,
    options: ConnectionOptions | None = None,
    max_line_bytes: int = ConnectionOptions.max_line_bytes,
    max_concurrent_requests: int = ConnectionOptions.max_concurrent_requests,
    max_buffered_bytes: int = ConnectionOptions.max_buffered_bytes,
    eof_grace_period: float = ConnectionOptions.eof_grace_period,
    check_outgoing: bool = ConnectionOptions.check_outgoing,
) -> None:
    """Serve an agent until the client closes the connection.

    `v2` / `v1`: build the implementation for that protocol version from the typed peer it
    calls the client through: the `AgentBase` subclass itself, or a function returning an
    instance (annotate its return type to serve an unstable surface). `stream` defaults to
    this process's stdin/stdout. `options`: the connection's limits and checks
    (`ConnectionOptions`, which documents them; the defaults when not given). The keywords
    `max_line_bytes` ... `check_outgoing` are the same options in the form of earlier
    releases, still accepted; prefer `options=` (one call uses one form).
    An exception leaves it as itself, not wrapped in an ExceptionGroup.
    Raises TypeError before reading anything when an implementation cannot be served.
    """
    factories: dict[int, Callable[[Any], Any]] = {}
    if v2 is not None:
        factories[2] = v2
    if v1 is not None:
        factories[1] = v1
    options = call_options(
        options,
        max_line_bytes=max_line_bytes,
        max_concurrent_requests=max_concurrent_requests,
        max_buffered_bytes=max_buffered_bytes,
        eof_grace_period=eof_grace_period,
        check_outgoing=check_outgoing,
    )
    endpoint = AgentEndpoint(factories, options=options)
    connection = endpoint.connect(stream if stream is not None else stdio_stream())
    with SingleException():  # `endpoint.serve`, one frame less on each wake-up of the reader
        await connection.run()
