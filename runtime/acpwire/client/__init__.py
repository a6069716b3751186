"""Writing a client: connect to an agent (`open_agent` spawns one, `connect` takes any byte
stream; their limits in `ConnectionOptions`), read a session's updates (`subscribe`,
`UpdateStream`), fold them into a session's state (`SessionState`, `V1SessionState`), answer
permission requests by policy (`Permissions`), run a prompt turn as a typed event stream
(`prompt`, `AgentRequests`) and open a session again with its history (`open_session`).

Every name here is also importable from `acpwire`, except the less common ones listed in
`__all__` below; the modules inside this package are implementation detail.
"""

from .._wire.options import ConnectionOptions
from .connection import (
    ClientConnection,
    Negotiated,
    UpdateStream,
    V1Connection,
    V1Factory,
    V2Connection,
    V2Factory,
    connect,
    open_agent,
)
from .opening import Opened, authenticated, load, open_session, replay
from .permissions import (
    Decision,
    PermissionContext,
    Permissions,
    Policy,
    Verdict,
    approve_all,
    approve_reads,
    ask_user,
    deny_all,
    rules,
)
from .state import Compaction, Message, Role, SessionState, Terminal, ToolCall, V1SessionState
from .turns import (
    AgentRequests,
    ElicitationRequested,
    PermissionRequested,
    SessionUpdateEvent,
    TurnClient,
    TurnEvents,
    V1Event,
    V1TurnClient,
    V1TurnEvents,
    V2Event,
    V2TurnEvents,
    prompt,
)

__all__ = [
    "AgentRequests",
    "ClientConnection",
    "Compaction",
    "ConnectionOptions",
    "Decision",
    "ElicitationRequested",
    "Message",
    "Negotiated",
    "Opened",
    "PermissionContext",
    "PermissionRequested",
    "Permissions",
    "Policy",
    "Role",
    "SessionState",
    "SessionUpdateEvent",
    "Terminal",
    "ToolCall",
    "TurnClient",
    "TurnEvents",
    "UpdateStream",
    "V1Connection",
    "V1Event",
    "V1Factory",
    "V1SessionState",
    "V1TurnClient",
    "V1TurnEvents",
    "V2Connection",
    "V2Event",
    "V2Factory",
    "V2TurnEvents",
    "Verdict",
    "approve_all",
    "approve_reads",
    "ask_user",
    "authenticated",
    "connect",
    "deny_all",
    "load",
    "open_agent",
    "open_session",
    "prompt",
    "replay",
    "rules",
]
