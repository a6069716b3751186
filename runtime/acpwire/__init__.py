"""acpwire: a thin runtime for the Agent Client Protocol (ACP) on top of the generated
`acp_schema` bindings, on trio or asyncio (the same classes and calls on both: it runs in
whichever loop calls it, a running one included).

Everything an agent or a client needs is importable from here:

- an agent: subclass `acp_schema.v2.AgentBase`, run `trio.run(serve_agent, MyAgent)` or
  `asyncio.run(serve_agent(MyAgent))`;
  `PromptTurns` runs the v2 prompt lifecycle (`Turn` sends the updates), `V1PromptTurns`
  the v1 one; `agent_capabilities` advertises what the class implements;
- a client: subclass `acp_schema.v2.ClientBase`, `async with open_agent(command, v2=MyClient)
  as conn` (or `connect(stream, ...)` over any byte stream), then `conn.v2.peer` calls the
  agent and `conn.v2.subscribe(session_id)` iterates a session's updates;
- the session layer, for both protocol versions with the same code: on the client side
  `open_session` (resume -> load -> new, the replayed history folded), `prompt` (one turn as
  a typed event stream: `SessionUpdateEvent`, `PermissionRequested`, `ElicitationRequested`),
  `AgentRequests` with `TurnClient` / `V1TurnClient` (the agent's requests to the running
  turn), `Permissions` and the policies `approve_all`, `approve_reads`, `deny_all`,
  `ask_user`, `rules` (functions of a `PermissionContext`), the folded `SessionState` /
  `V1SessionState`, `authenticated` (a call retried after authentication); on the agent side
  `serve_turns` (one `AgentTurn` work function served over v2 and v1, sessions listed,
  resumed and loaded from a `MemorySessionStore` or your own store);
- errors: `RpcError` (answer a request with a JSON-RPC error), `PeerError` (the peer answered
  one), `InvalidResponse`, `ConnectionClosed` / `PeerExited`, `ProtocolMismatch`,
  `InitializeTimeout`, `NotInitialized`, `AgentNotFound` / `AgentNotExecutable` /
  `AgentLaunchError`.

The modules behind these names (`acpwire.agent`, `acpwire.client`, ...) are implementation
detail: import from `acpwire`.
"""

from typing import TypeAlias

__version__ = "0.2.0"
"""This release of acpwire (the acp-schema release it requires is in its metadata)."""

# Imported after __version__: acpwire.sessions reads it.
from . import lifecycle as _lifecycle  # noqa: E402
from .agent import serve_agent  # noqa: E402
from .capabilities import agent_capabilities  # noqa: E402
from .client import (  # noqa: E402
    ClientConnection,
    InitializeTimeout,
    NotInitialized,
    connect,
    open_agent,
)
from .errors import (  # noqa: E402
    ConnectionClosed,
    InvalidResponse,
    PeerError,
    PeerExited,
    ProtocolMismatch,
    RpcError,
)
from .lifecycle import AgentTurn, CustomStopReason, PromptTurns, Turn, V1PromptTurns  # noqa: E402
from .permissions import (  # noqa: E402
    PermissionContext,
    Permissions,
    approve_all,
    approve_reads,
    ask_user,
    deny_all,
    rules,
)
from .resume import authenticated, open_session  # noqa: E402
from .session import SessionState, V1SessionState  # noqa: E402
from .sessions import MemorySessionStore, serve_turns  # noqa: E402
from .transport import AgentLaunchError, AgentNotExecutable, AgentNotFound, stdio_stream  # noqa: E402
from .turns import (  # noqa: E402
    AgentRequests,
    ElicitationRequested,
    PermissionRequested,
    SessionUpdateEvent,
    TurnClient,
    V1TurnClient,
    prompt,
)

StopReason: TypeAlias = _lifecycle.StopReason
"""ACP's stop reasons, the values of `acp_schema.v2.SessionStateUpdate.stop_reason`: what a turn's
`Work` returns (or a `CustomStopReason`)."""

RunState: TypeAlias = _lifecycle.RunState
"""The values of `acp_schema.v2.SessionStateUpdate.state`."""

Work: TypeAlias = _lifecycle.Work
"""A turn's work for `PromptTurns.start`: `async def work(turn: Turn) -> StopReason`."""

__all__ = [
    "AgentLaunchError",
    "AgentNotExecutable",
    "AgentNotFound",
    "AgentRequests",
    "AgentTurn",
    "ClientConnection",
    "ConnectionClosed",
    "CustomStopReason",
    "ElicitationRequested",
    "InitializeTimeout",
    "InvalidResponse",
    "MemorySessionStore",
    "NotInitialized",
    "PeerError",
    "PeerExited",
    "PermissionContext",
    "PermissionRequested",
    "Permissions",
    "PromptTurns",
    "ProtocolMismatch",
    "RpcError",
    "RunState",
    "SessionState",
    "SessionUpdateEvent",
    "StopReason",
    "Turn",
    "TurnClient",
    "V1PromptTurns",
    "V1SessionState",
    "V1TurnClient",
    "Work",
    "agent_capabilities",
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
    "serve_agent",
    "serve_turns",
    "stdio_stream",
]
