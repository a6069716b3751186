"""Writing a client: connect to an agent (`open_agent` spawns one, `connect` takes any byte
stream; their limits in `ConnectionOptions`), read a session's updates (`subscribe`,
`UpdateStream`), or to one served over the network (`open_remote`: WebSocket or Streamable
HTTP), fold them into a session's state (`SessionState`, `V1SessionState`), answer
permission requests by policy (`Permissions`), send extension methods to the agent
(`ClientConnection.extensions`, `Extensions`), run a prompt turn as a typed event stream
(`prompt`, `AgentRequests`) and open a session again with its history (`open_session`).

The names a client is written and annotated with are also importable from `acpwire`; the
less common ones (`load`, `replay`, the state's records `Message`, `ToolCall`, `Terminal`,
`Compaction`, `Role`, `ClientFactory`, `V1ClientFactory`) only from here. The modules inside
this package are implementation detail.
"""

from typing import TYPE_CHECKING

from .._lazy import CLIENT_RENAMED, exports
from .._wire.extensions import Extensions
from .._wire.options import ConnectionOptions
from .._wire.telemetry import ConnectionInstrumentation, Instrumentation
from .._wire.wire_line import WireLine
from .connection import (
    ClientConnection,
    ClientFactory,
    Negotiated,
    UpdateStream,
    V1ClientFactory,
    V1Negotiated,
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
    TurnEvent,
    TurnEvents,
    V1TurnClient,
    V1TurnEvent,
    V1TurnEvents,
    prompt,
)
from .unknown_updates import V1UnknownSessionUpdate

__all__ = [
    "AgentRequests",
    "ClientConnection",
    "ClientFactory",
    "Compaction",
    "ConnectionInstrumentation",
    "ConnectionOptions",
    "Decision",
    "ElicitationRequested",
    "Extensions",
    "Instrumentation",
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
    "TurnEvent",
    "TurnEvents",
    "UpdateStream",
    "V1ClientFactory",
    "V1Negotiated",
    "V1SessionState",
    "V1TurnClient",
    "V1TurnEvent",
    "V1TurnEvents",
    "V1UnknownSessionUpdate",
    "Verdict",
    "WireLine",
    "approve_all",
    "approve_reads",
    "ask_user",
    "authenticated",
    "connect",
    "deny_all",
    "load",
    "open_agent",
    "open_remote",
    "open_session",
    "prompt",
    "replay",
    "rules",
]

if TYPE_CHECKING:  # imported on first use at run time (`_lazy`); the old names
    from .remote import open_remote

    V2Factory = ClientFactory
    V1Factory = V1ClientFactory
    V2Connection = Negotiated
    V1Connection = V1Negotiated
    V2Event = TurnEvent
    V1Event = V1TurnEvent
    V2TurnEvents = TurnEvents
else:  # ... and the old names with a DeprecationWarning, until the next release
    __getattr__, __dir__ = exports(__name__, CLIENT_RENAMED)
