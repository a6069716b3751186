"""Session updates written as the JSON an agent sends, decoded with the generated client codec
and folded into a fresh `SessionState` / `V1SessionState` (the fold tests state wire behaviour)."""

from __future__ import annotations

import json
from typing import Any

from acp_schema import v1, v2
from acpwire.client import SessionState, V1SessionState


def decode(module: Any, update: dict[str, Any]) -> Any:
    """`update` (a `session/update`'s update object) decoded by `module`'s client codec."""
    line = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }
    return module.CLIENT_CODEC.decode(json.dumps(line).encode()).params.update


def fold(*updates: dict[str, Any]) -> SessionState:
    state = SessionState()
    for update in updates:
        state.apply(decode(v2, update))
    return state


def fold_v1(*updates: dict[str, Any]) -> V1SessionState:
    state = V1SessionState()
    for update in updates:
        state.apply(decode(v1, update))
    return state


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunk(tag: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": tag, "messageId": message_id, "content": text(value)}
