"""Writing an agent: serve it (`serve_agent`; its limits in `ConnectionOptions`), advertise
what it implements (`agent_capabilities`), run its prompt turns (`PromptTurns`,
`V1PromptTurns`) with the helpers a turn's work calls (`Turn`, `V1Turn`, tool-call handles), or
serve whole sessions from one work function and a session store (`serve_turns`).

Every name here is also importable from `acpwire`, except the less common ones listed in
`__all__` below; the modules inside this package are implementation detail.
"""

from .._wire.options import ConnectionOptions
from .capabilities import CapabilityMismatch, agent_capabilities, capability_mismatches
from .diffs import git_patch, v1_diff, v2_diff
from .endpoint import V1Factory, V2Factory, serve_agent
from .schedulers import PromptTurns, V1PromptTurns
from .sessions import MemorySessionStore, SessionStore, StoredSession, serve_turns, turn_agents
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
    "AgentTurn",
    "AnyWork",
    "CapabilityMismatch",
    "ConnectionOptions",
    "CustomStopReason",
    "Location",
    "MemorySessionStore",
    "PermissionChoice",
    "PromptTurns",
    "RunState",
    "SessionStore",
    "StopReason",
    "StoredSession",
    "ToolCallHandle",
    "Turn",
    "TurnToolCall",
    "V1Factory",
    "V1PromptTurns",
    "V1Turn",
    "V1TurnToolCall",
    "V2Factory",
    "Work",
    "agent_capabilities",
    "capability_mismatches",
    "git_patch",
    "serve_agent",
    "serve_turns",
    "text_of",
    "turn_agents",
    "v1_diff",
    "v2_diff",
]
