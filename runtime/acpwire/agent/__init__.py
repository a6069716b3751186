"""Writing an agent: serve it (`serve_agent`; its limits in `ConnectionOptions`), or serve it
over the network (`agent_app`, an ASGI app for WebSocket and Streamable HTTP, run by
`serve_remote`; its checks in `RemoteOptions`, `bearer_token`), advertise
what it implements (`agent_capabilities`), send extension methods to the client
(`Extensions`), run its prompt turns (`PromptTurns`,
`V1PromptTurns`) with the helpers a turn's work calls (`Turn`, `V1Turn`, tool-call handles), or
serve whole sessions from one work function and a session store (`serve_turns`; in memory,
or durable: `SqliteSessionStore`, `RedisSessionStore`).

The names an agent is written and annotated with are also importable from `acpwire`; the
less common ones (`AgentApp`, `Denied`, `Request`, `turn_agents`, `SavingSessionStore`, `RedisSessionStore`, `git_patch`, `v1_diff`, `v2_diff`, `text_of`,
`capability_mismatches`, `CapabilityMismatch`, `Location`, `AgentFactory`,
`V1AgentFactory`) only from here. The modules inside this package are implementation detail.
"""

from typing import TYPE_CHECKING

from .._lazy import exports
from .._wire.extensions import Extensions
from .._wire.options import ConnectionOptions
from .._wire.telemetry import ConnectionInstrumentation, Instrumentation
from .._wire.wire_line import WireLine
from .capabilities import CapabilityMismatch, agent_capabilities, capability_mismatches
from .diffs import git_patch, v1_diff, v2_diff
from .endpoint import AgentFactory, V1AgentFactory, serve_agent
from .schedulers import PromptTurns, V1PromptTurns
from .turns import (
    AgentTurn,
    AnyWork,
    CustomStopReason,
    Location,
    PermissionChoice,
    RunState,
    StopReason,
    ToolCallHandle,
    Turn,
    TurnToolCall,
    V1Turn,
    V1TurnToolCall,
    Work,
    text_of,
)

__all__ = [
    "AgentApp",
    "AgentFactory",
    "AgentTurn",
    "AnyWork",
    "CapabilityMismatch",
    "ConnectionInstrumentation",
    "ConnectionOptions",
    "CustomStopReason",
    "Denied",
    "Extensions",
    "Instrumentation",
    "Location",
    "MemorySessionStore",
    "PermissionChoice",
    "PromptTurns",
    "RedisSessionStore",
    "RemoteOptions",
    "Request",
    "ResumeOptions",
    "RunState",
    "SavingSessionStore",
    "SessionStore",
    "SqliteSessionStore",
    "StopReason",
    "StoredSession",
    "ToolCallHandle",
    "Turn",
    "TurnToolCall",
    "V1AgentFactory",
    "V1PromptTurns",
    "V1Turn",
    "V1TurnToolCall",
    "WireLine",
    "Work",
    "agent_app",
    "agent_capabilities",
    "bearer_token",
    "capability_mismatches",
    "git_patch",
    "serve_agent",
    "serve_remote",
    "serve_turns",
    "text_of",
    "turn_agents",
    "v1_diff",
    "v2_diff",
]

_RENAMED = {"V2Factory": "AgentFactory", "V1Factory": "V1AgentFactory"}
"""The names of earlier releases: they still resolve, with a DeprecationWarning, until the
next release (one version-naming rule: no prefix for v2, `V1` for v1)."""

if TYPE_CHECKING:  # imported on first use at run time (`_lazy`); the old names
    from .remote import (
        AgentApp,
        Denied,
        RemoteOptions,
        Request,
        ResumeOptions,
        agent_app,
        bearer_token,
        serve_remote,
    )
    from .sessions import (
        MemorySessionStore,
        SavingSessionStore,
        SessionStore,
        StoredSession,
        serve_turns,
        turn_agents,
    )
    from .stores import RedisSessionStore, SqliteSessionStore

    V2Factory = AgentFactory
    V1Factory = V1AgentFactory
else:  # ... and the old names with a DeprecationWarning, until the next release
    __getattr__, __dir__ = exports(__name__, _RENAMED)
