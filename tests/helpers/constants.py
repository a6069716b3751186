"""Messages the tests share: typed (what a typed client sends) and raw (what a raw peer sends)."""

from __future__ import annotations

from typing import Any

import acp_schema.v1 as v1
import acp_schema.v2 as v2

SESSION = "sess_1"
"""The first session id of the test agents (the echo agents, the scripted ones)."""

INIT_V2 = v2.InitializeRequest(protocol_version=2, info=v2.Implementation(name="t", version="0"))
INIT_V1 = v1.InitializeRequest(
    protocol_version=1, client_info=v1.Implementation(name="t", version="0")
)

RAW_INIT_V2: dict[str, Any] = {"protocolVersion": 2, "info": {"name": "raw", "version": "0"}}
"""`initialize` params of a raw v2 peer, and the result a raw v2 agent answers it with."""
RAW_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": RAW_INIT_V2,
}
"""A raw v2 peer's whole `initialize` request (what a raw HTTP or WebSocket client posts)."""
RAW_INIT_V1: dict[str, Any] = {"protocolVersion": 1, "clientInfo": {"name": "raw", "version": "0"}}

PROMPT_V2 = v2.PromptRequest(session_id=SESSION, prompt=[v2.TextContent(text="hi")])
PROMPT_V1 = v1.PromptRequest(session_id=SESSION, prompt=[v1.TextContent(text="hi")])

PERMISSION_REQUEST = v2.RequestPermissionRequest(
    session_id=SESSION,
    title="Run it?",
    subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallUpdate(tool_call_id="call_1")),
    options=[v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
)
