"""acpwire: a runtime for the Agent Client Protocol (ACP) on top of the generated `acp_schema`
bindings, on trio or asyncio (the same classes and calls on both: it runs in whichever loop
calls it, a running one included).

Everything an agent or a client needs, the types to annotate it with included, is
importable from here:

- an agent (`acpwire.agent`): subclass `acp_schema.v2.AgentBase`, run
  `trio.run(serve_agent, MyAgent)` or `asyncio.run(serve_agent(MyAgent))`; `PromptTurns` runs
  the v2 prompt lifecycle (`Turn` sends the updates, `TurnToolCall` a tool call's),
  `V1PromptTurns` the v1 one (`V1Turn`, `V1TurnToolCall`); `agent_capabilities` advertises
  what the class implements; `serve_turns` serves one `AgentTurn` work function (`AnyWork`,
  its tool calls `ToolCallHandle`s, permission options `PermissionChoice`s) over v2 and v1,
  sessions listed, resumed and loaded from a `MemorySessionStore`, a durable
  `SqliteSessionStore` or your own `SessionStore` of `StoredSession`s; `agent_app` serves the same classes over the network (WebSocket and
  Streamable HTTP, an ASGI app: `serve_remote` runs it under Hypercorn; `RemoteOptions`,
  `bearer_token`, resumable streams with `ResumeOptions`);
- a client (`acpwire.client`): subclass `acp_schema.v2.ClientBase`,
  `async with open_agent(command, v2=MyClient) as conn` (or `connect(stream, ...)` over any
  byte stream, `open_remote(url, ...)` to a remote agent), then `conn.v2` (a `Negotiated`; `conn.v1` a `V1Negotiated`) calls the agent
  through `.peer` and `.subscribe(session_id)` iterates a session's updates (an
  `UpdateStream`); `open_session` (resume -> load -> new, the replayed history folded:
  `Opened`), `prompt` (one turn as a typed event stream: `TurnEvents` / `V1TurnEvents` of
  `TurnEvent` / `V1TurnEvent`: `SessionUpdateEvent`, `PermissionRequested`,
  `ElicitationRequested`), `AgentRequests` with `TurnClient` /
  `V1TurnClient`, `Permissions` and the policies (`Policy`, deciding a `Decision`; a
  `Verdict` once decided) `approve_all`, `approve_reads`, `deny_all`, `ask_user`, `rules`,
  the folded `SessionState` / `V1SessionState`, `authenticated`, `V1UnknownSessionUpdate` (a
  v1 update of a type these bindings do not know);
- errors (`acpwire.errors`): `RpcError` (answer a request with a JSON-RPC error), `PeerError`
  (the peer answered one), `InvalidResponse`, `ConnectionClosed` / `PeerExited`,
  `ProtocolMismatch`, `InitializeTimeout`, `RemoteConnectionError` / `ResumeFailed`, `NotInitialized`, `AgentNotFound` /
  `AgentNotExecutable` / `AgentLaunchError`;
- the limits and checks of a connection: `ConnectionOptions` (`options=` of `serve_agent`,
  `serve_turns`, `connect` and `open_agent`), its line hook seeing each line as a `WireLine`,
  its `telemetry` an `Instrumentation` (`acpwire.otel.Telemetry`: OpenTelemetry spans, `pip
  install acpwire[otel]`; a `ConnectionInstrumentation` per connection);
- extension (`_`-prefixed) methods sent to the peer, from either side: `Extensions`
  (`Extensions(self.client)` in an agent, `conn.extensions` in a client);
- what a connection runs over: `acpwire.streams` (`stdio_stream`, `ByteStream`, ...), and
  in-process pairs for tests in `acpwire.testing`;
- forwarding (a proxy, a recorder): `Verbatim`, a received line kept byte for byte with its
  typed view (re-encoding a decoded message drops the fields these bindings do not know).

Import from `acpwire` or from those public packages; the modules inside them are
implementation detail.
"""

from typing import TYPE_CHECKING

from . import _lazy, _moved
from ._version import __version__
from .agent import (
    AgentTurn,
    AnyWork,
    ConnectionInstrumentation,
    ConnectionOptions,
    CustomStopReason,
    Extensions,
    Instrumentation,
    PermissionChoice,
    PromptTurns,
    RunState,
    StopReason,
    ToolCallHandle,
    Turn,
    TurnToolCall,
    V1PromptTurns,
    V1Turn,
    V1TurnToolCall,
    WireLine,
    Work,
    agent_capabilities,
    serve_agent,
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
    RemoteConnectionError,
    ResumeFailed,
    RpcError,
)
from .streams import stdio_stream
from .verbatim import Verbatim

__all__ = [  # noqa: RUF022 (grouped by side, sorted within a group)
    "__version__",
    "ConnectionOptions",
    "Extensions",
    "WireLine",
    "Instrumentation",
    "ConnectionInstrumentation",
    # the agent side
    "AgentTurn",
    "AnyWork",
    "CustomStopReason",
    "MemorySessionStore",
    "PermissionChoice",
    "PromptTurns",
    "RemoteOptions",
    "ResumeOptions",
    "RunState",
    "SessionStore",
    "SqliteSessionStore",
    "StopReason",
    "StoredSession",
    "ToolCallHandle",
    "Turn",
    "TurnToolCall",
    "V1PromptTurns",
    "V1Turn",
    "V1TurnToolCall",
    "Work",
    "agent_app",
    "agent_capabilities",
    "bearer_token",
    "serve_agent",
    "serve_remote",
    "serve_turns",
    "stdio_stream",
    # the client side
    "AgentRequests",
    "ClientConnection",
    "Decision",
    "ElicitationRequested",
    "Negotiated",
    "Opened",
    "PermissionContext",
    "PermissionRequested",
    "Permissions",
    "Policy",
    "SessionState",
    "SessionUpdateEvent",
    "TurnClient",
    "TurnEvent",
    "TurnEvents",
    "UpdateStream",
    "V1Negotiated",
    "V1SessionState",
    "V1TurnClient",
    "V1TurnEvent",
    "V1TurnEvents",
    "V1UnknownSessionUpdate",
    "Verdict",
    "approve_all",
    "approve_reads",
    "ask_user",
    "authenticated",
    "connect",
    "deny_all",
    "open_agent",
    "open_remote",
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
    "RemoteConnectionError",
    "ResumeFailed",
    "RpcError",
    # forwarding
    "Verbatim",
]

if TYPE_CHECKING:  # imported on first use at run time (`_lazy`: an agent never imports the
    # client package); the client's old names
    from .agent import (
        MemorySessionStore,
        RemoteOptions,
        ResumeOptions,
        SessionStore,
        SqliteSessionStore,
        StoredSession,
        agent_app,
        bearer_token,
        serve_remote,
        serve_turns,
    )
    from .client import (
        AgentRequests,
        ClientConnection,
        Decision,
        ElicitationRequested,
        Negotiated,
        Opened,
        PermissionContext,
        PermissionRequested,
        Permissions,
        Policy,
        SessionState,
        SessionUpdateEvent,
        TurnClient,
        TurnEvent,
        TurnEvents,
        UpdateStream,
        V1Negotiated,
        V1SessionState,
        V1TurnClient,
        V1TurnEvent,
        V1TurnEvents,
        V1UnknownSessionUpdate,
        Verdict,
        approve_all,
        approve_reads,
        ask_user,
        authenticated,
        connect,
        deny_all,
        open_agent,
        open_remote,
        open_session,
        prompt,
        rules,
    )
    from .client import V1Connection as V1Connection
    from .client import V1Event as V1Event
    from .client import V2Connection as V2Connection
    from .client import V2Event as V2Event
    from .client import V2TurnEvents as V2TurnEvents
else:  # ... and the old names at run time, with a DeprecationWarning, until the next release
    __getattr__, __dir__ = _lazy.exports(
        __name__,
        {old: new for old, new in _lazy.CLIENT_RENAMED.items() if new in __all__},
        rest_from=_lazy.CLIENT,
    )

_moved.install()
