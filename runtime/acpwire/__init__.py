"""acpwire: a runtime for the Agent Client Protocol (ACP) on top of the generated `acp_schema`
bindings, on trio or asyncio (the same classes and calls on both: it runs in whichever loop
calls it, a running one included).

Everything an agent or a client needs is importable from here:

- an agent (`acpwire.agent`): subclass `acp_schema.v2.AgentBase`, run
  `trio.run(serve_agent, MyAgent)` or `asyncio.run(serve_agent(MyAgent))`; `PromptTurns` runs
  the v2 prompt lifecycle (`Turn` sends the updates), `V1PromptTurns` the v1 one;
  `agent_capabilities` advertises what the class implements; `serve_turns` serves one
  `AgentTurn` work function over v2 and v1, sessions listed, resumed and loaded from a
  `MemorySessionStore` or your own `SessionStore`;
- a client (`acpwire.client`): subclass `acp_schema.v2.ClientBase`,
  `async with open_agent(command, v2=MyClient) as conn` (or `connect(stream, ...)` over any
  byte stream), then `conn.v2.peer` calls the agent and `conn.v2.subscribe(session_id)`
  iterates a session's updates; `open_session` (resume -> load -> new, the replayed history
  folded), `prompt` (one turn as a typed event stream: `SessionUpdateEvent`,
  `PermissionRequested`, `ElicitationRequested`), `AgentRequests` with `TurnClient` /
  `V1TurnClient`, `Permissions` and the policies `approve_all`, `approve_reads`, `deny_all`,
  `ask_user`, `rules`, the folded `SessionState` / `V1SessionState`, `authenticated`;
- errors (`acpwire.errors`): `RpcError` (answer a request with a JSON-RPC error), `PeerError`
  (the peer answered one), `InvalidResponse`, `ConnectionClosed` / `PeerExited`,
  `ProtocolMismatch`, `InitializeTimeout`, `NotInitialized`, `AgentNotFound` /
  `AgentNotExecutable` / `AgentLaunchError`;
- the limits and checks of a connection: `ConnectionOptions` (`options=` of `serve_agent`,
  `serve_turns`, `connect` and `open_agent`);
- what a connection runs over: `acpwire.streams` (`stdio_stream`, `ByteStream`, ...), and
  in-process pairs for tests in `acpwire.testing`.

Import from `acpwire` or from those public packages; the modules inside them are
implementation detail.
"""

from typing import TypeAlias

from . import _moved
from . import agent as _agent
from ._version import __version__
from .agent import (
    AgentTurn,
    ConnectionOptions,
    CustomStopReason,
    MemorySessionStore,
    PromptTurns,
    Turn,
    V1PromptTurns,
    agent_capabilities,
    serve_agent,
    serve_turns,
)
from .client import (
    AgentRequests,
    ClientConnection,
    ElicitationRequested,
    PermissionContext,
    PermissionRequested,
    Permissions,
    SessionState,
    SessionUpdateEvent,
    TurnClient,
    V1SessionState,
    V1TurnClient,
    approve_all,
    approve_reads,
    ask_user,
    authenticated,
    connect,
    deny_all,
    open_agent,
    open_session,
    prompt,
    rules,
)
from .errors import (
    AgentLaunchError,
    AgentNotExecutable,
    AgentNotFound,
    ConnectionClosed,
    InitializeTimeout,
    InvalidResponse,
    NotInitialized,
    PeerError,
    PeerExited,
    ProtocolMismatch,
    RpcError,
)
from .streams import stdio_stream

StopReason: TypeAlias = _agent.StopReason
"""ACP's stop reasons, the values of `acp_schema.v2.SessionStateUpdate.stop_reason`: what a turn's
`Work` returns (or a `CustomStopReason`)."""

RunState: TypeAlias = _agent.RunState
"""The values of `acp_schema.v2.SessionStateUpdate.state`."""

Work: TypeAlias = _agent.Work
"""A turn's work for `PromptTurns.start`: `async def work(turn: Turn) -> StopReason`."""

__all__ = [  # noqa: RUF022 (grouped by side, sorted within a group)
    "__version__",
    "ConnectionOptions",
    # the agent side
    "AgentTurn",
    "CustomStopReason",
    "MemorySessionStore",
    "PromptTurns",
    "RunState",
    "StopReason",
    "Turn",
    "V1PromptTurns",
    "Work",
    "agent_capabilities",
    "serve_agent",
    "serve_turns",
    "stdio_stream",
    # the client side
    "AgentRequests",
    "ClientConnection",
    "ElicitationRequested",
    "PermissionContext",
    "PermissionRequested",
    "Permissions",
    "SessionState",
    "SessionUpdateEvent",
    "TurnClient",
    "V1SessionState",
    "V1TurnClient",
    "approve_all",
    "approve_reads",
    "ask_user",
    "authenticated",
    "connect",
    "deny_all",
    "open_agent",
    "open_session",
    "prompt",
    "rules",
    # errors
    "AgentLaunchError",
    "AgentNotExecutable",
    "AgentNotFound",
    "ConnectionClosed",
    "InitializeTimeout",
    "InvalidResponse",
    "NotInitialized",
    "PeerError",
    "PeerExited",
    "ProtocolMismatch",
    "RpcError",
]

_moved.install()
