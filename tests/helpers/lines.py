"""ACP messages as the raw JSON a peer writes on the wire: session updates, prompts and the
answers to them (session `SESSION` unless a function takes a session id)."""

from __future__ import annotations

from typing import Any

from helpers.constants import SESSION
from helpers.raw import RawPeer, notification, request, response


def on(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    """A `session/update` of `session_id`."""
    return notification("session/update", {"sessionId": session_id, "update": update})


def update(update: dict[str, Any]) -> dict[str, Any]:
    return on(SESSION, update)


def state(value: str, stop_reason: str | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {"sessionUpdate": "state_update", "state": value}
    if stop_reason is not None:
        fields["stopReason"] = stop_reason
    return update(fields)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def user_message(message_id: str, text: str = "hi") -> dict[str, Any]:
    """The echo of a prompt (by default of PROMPT_V2's text)."""
    content = [text_block(text)]
    return update({"sessionUpdate": "user_message", "messageId": message_id, "content": content})


def chunk_notification(session_id: str, text: str) -> dict[str, Any]:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "msg_1",
        "content": text_block(text),
    }
    return on(session_id, update)


def prompt(id: Any, text: str) -> dict[str, Any]:
    return request(id, "session/prompt", {"sessionId": SESSION, "prompt": [text_block(text)]})


def accepted(id: Any, message_id: str) -> dict[str, Any]:
    """A v2 agent's answer to `session/prompt`."""
    return response(id, {"messageId": message_id})


def is_permission_request(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/request_permission"


def selected(ask: dict[str, Any], option_id: str) -> dict[str, Any]:
    """The client's answer to the permission request `ask`."""
    return response(ask["id"], {"outcome": {"outcome": "selected", "optionId": option_id}})


async def new_session(peer: RawPeer, version: int, cwd: str = "/repo") -> str:
    """Open a session over `version` (initialized already); its id."""
    params: dict[str, Any] = {"cwd": cwd} if version == 2 else {"cwd": cwd, "mcpServers": []}
    reply = await peer.call(f"new {cwd}", "session/new", params)
    session_id: str = reply["result"]["sessionId"]
    return session_id
