"""acpwire: a thin trio runtime for the Agent Client Protocol (ACP) on top of the generated
`acp_schema` bindings.

Everything an agent or a client needs is importable from here:

- an agent: subclass `acp_schema.v2.AgentBase`, run `trio.run(serve_agent, MyAgent)`;
  `PromptTurns` runs the v2 prompt lifecycle (`Turn` sends the updates), `V1PromptTurns`
  the v1 one; `agent_capabilities` advertises what the class implements;
- a client: subclass `acp_schema.v2.ClientBase`, `async with open_agent(command, v2=MyClient)
  as conn` (or `connect(stream, ...)` over any trio stream), then `conn.v2.peer` calls the
  agent and `conn.v2.subscribe(session_id)` iterates a session's updates;
- errors: `RpcError` (answer a request with a JSON-RPC error), `PeerError` (the peer answered
  one), `InvalidResponse`, `ConnectionClosed` / `PeerExited`, `ProtocolMismatch`,
  `InitializeTimeout`, `NotInitialized`, `AgentNotFound` / `AgentNotExecutable` /
  `AgentLaunchError`.

The modules behind these names (`acpwire.agent`, `acpwire.client`, ...) are implementation
detail: import from `acpwire`.
"""

from typing import TypeAlias

from . import lifecycle as _lifecycle
from .agent import serve_agent
from .capabilities import agent_capabilities
from .client import ClientConnection, InitializeTimeout, NotInitialized, connect, open_agent
from .errors import (
    ConnectionClosed,
    InvalidResponse,
    PeerError,
    PeerExited,
    ProtocolMismatch,
    RpcError,
)
from .lifecycle import CustomStopReason, PromptTurns, Turn, V1PromptTurns
from .transport import AgentLaunchError, AgentNotExecutable, AgentNotFound, stdio_stream

StopReason: TypeAlias = _lifecycle.StopReason
"""ACP's stop reasons, the values of `acp_schema.v2.SessionStateUpdate.stop_reason`: what a turn's
`Work` returns (or a `CustomStopReason`)."""

RunState: TypeAlias = _lifecycle.RunState
"""The values of `acp_schema.v2.SessionStateUpdate.state`."""

Work: TypeAlias = _lifecycle.Work
"""A turn's work for `PromptTurns.start`: `async def work(turn: Turn) -> StopReason`."""

__version__ = "0.2.0"
"""This release of acpwire (the acp-schema release it requires is in its metadata)."""

__all__ = [
    "AgentLaunchError",
    "AgentNotExecutable",
    "AgentNotFound",
    "ClientConnection",
    "ConnectionClosed",
    "CustomStopReason",
    "InitializeTimeout",
    "InvalidResponse",
    "NotInitialized",
    "PeerError",
    "PeerExited",
    "PromptTurns",
    "ProtocolMismatch",
    "RpcError",
    "RunState",
    "StopReason",
    "Turn",
    "V1PromptTurns",
    "Work",
    "agent_capabilities",
    "connect",
    "open_agent",
    "serve_agent",
    "stdio_stream",
]
