"""The agent side: serve an agent implementation over stdio or any trio stream.

    class MyAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None: ...
        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse: ...

    trio.run(serve_agent, MyAgent)                 # v2 only, over stdio
    trio.run(partial(serve_agent, MyAgent, v1=MyV1Agent))   # v2 and v1

`initialize` picks the version: the client's if this agent speaks it, otherwise the latest
one below it; -32022 when every version this agent speaks is newer than the client's.
Requests before `initialize` get -32600; notifications before it are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import trio

from acp_schema import v1, v2

from .connection import Connection
from .dispatch import handler_dispatch
from .errors import RpcError
from .jsonrpc import Call
from .transport import stdio_stream
from .versions import SURFACES, Surface, bootstrap_codec, negotiate, protocol_version_of

V2Factory = Callable[[v2.ClientPeer], v2.AgentBase]
V1Factory = Callable[[v1.ClientPeer], v1.AgentBase]


class AgentEndpoint:
    """Serves one connection: negotiates the version, then dispatches to the implementation."""

    def __init__(self, factories: dict[int, Callable[[Any], Any]], **limits: Any) -> None:
        if not factories:
            raise ValueError("serve_agent needs an agent implementation for at least one version")
        self.factories = factories
        self.limits = {"peer": "the client", **limits}  # `peer`: the name in log messages
        self.surface: Surface | None = None
        self.agent: Any = None
        self.connection: Connection | None = None

    async def serve(self, stream: trio.abc.Stream) -> None:
        self.connection = Connection(stream, bootstrap_codec(), self._route, **self.limits)
        await self.connection.run()

    async def _route(self, call: Call) -> Any:
        """Before initialize succeeded; then the connection dispatches to the agent directly."""
        if call.method == "initialize" and call.is_request:
            return await self._initialize(call)
        if call.is_request:
            raise RpcError.invalid_request(
                "the connection is not initialized: send `initialize` first"
            )
        return None

    async def _initialize(self, call: Call) -> Any:
        assert self.connection is not None
        try:
            requested = protocol_version_of(call.params)
        except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
            raise RpcError.invalid_params(f"initialize: {exc}") from None
        supported = sorted(self.factories)
        version = negotiate(requested, supported)
        if version is None:
            raise RpcError.unsupported_protocol_version(requested, supported)
        surface = SURFACES[version]
        try:
            params = surface.initialize.params.decode(call.params)
        except msgspec.ValidationError as exc:
            raise RpcError.invalid_params(str(exc)) from None
        agent = self.factories[version](surface.module.ClientPeer(self.connection))
        result = await agent.initialize(params)
        if result.protocol_version != version:
            raise RpcError.internal_error(
                f"the agent answered initialize with protocol version {result.protocol_version}, "
                f"but version {version} was negotiated"
            )
        # Switch only once initialize succeeded: a failed one leaves the connection as it was.
        self.surface, self.agent = surface, agent
        self.connection.core.codec = surface.agent_codec
        self.connection.dispatch = handler_dispatch(agent, surface.agent_base)
        return result


async def serve_agent(
    v2: V2Factory | None = None,
    *,
    v1: V1Factory | None = None,
    stream: trio.abc.Stream | None = None,
    **limits: Any,
) -> None:
    """Serve an agent until the client closes the connection.

    `v2` / `v1`: build the implementation for that protocol version from the typed peer it
    calls the client through. `stream` defaults to this process's stdin/stdout. `limits`
    go to `Connection` (`max_line_bytes`, `max_concurrent_requests`).
    """
    factories: dict[int, Callable[[Any], Any]] = {}
    if v2 is not None:
        factories[2] = v2
    if v1 is not None:
        factories[1] = v1
    endpoint = AgentEndpoint(factories, **limits)
    await endpoint.serve(stream if stream is not None else stdio_stream())
