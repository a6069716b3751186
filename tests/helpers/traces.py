"""A hand-written trace breaking each rule `acpwire show` checks once (`BROKEN`), for
tests/cli: the findings it must produce and their lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.commands import ACPWIRE, ENV, HELLO_AGENT


def update(session: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def state(name: str, reason: str | None = None) -> dict[str, Any]:
    body = {"sessionUpdate": "state_update", "state": name}
    if reason is not None:
        body["stopReason"] = reason
    return update("s1", body)


def chunk(text: Any) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    return update(
        "s1", {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": content}
    )


def user_message(message_id: str) -> dict[str, Any]:
    content = [{"type": "text", "text": "hi"}]
    return update(
        "s1", {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
    )


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def result(request_id: int, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def prompt(request_id: int) -> dict[str, Any]:
    return request(
        request_id,
        "session/prompt",
        {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
    )


PERMISSION = {
    "sessionId": "s1",
    "title": "Run it?",
    "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
}
INFO = {"name": "broken", "version": "1"}
BROKEN: list[tuple[str, Any, str | tuple[str, ...] | None]] = [  # (side, message, findings)
    ("client", request(0, "initialize", {"protocolVersion": 2, "info": INFO}), None),
    ("agent", result(0, {"protocolVersion": 2, "info": INFO}), None),
    ("client", request(1, "session/new", {"cwd": "/", "mcpServers": []}), None),
    ("agent", result(1, {"sessionId": "s1"}), None),
    # turn 1: the user message before the prompt response, output before running, idle
    # without a stop reason, a permission without requires_action
    ("client", prompt(2), None),
    (
        "agent",
        user_message("u1"),
        "MUST v2 lifecycle: the user message came before the `session/prompt` response",
    ),
    ("agent", result(2, {"messageId": "u1"}), None),
    ("agent", chunk("early"), "MUST v2 lifecycle: output before `state_update` running"),
    (
        "agent",
        request(7, "session/request_permission", PERMISSION),
        "SHOULD v2 lifecycle: no `requires_action` state",
    ),
    ("client", result(7, {"outcome": {"outcome": "selected", "optionId": "yes"}}), None),
    (
        "agent",
        state("idle"),
        "MUST v2 lifecycle: the idle `state_update` ending the turn has no stop reason",
    ),
    # turn 2: no user message, a reserved stop reason
    ("client", prompt(3), None),
    ("agent", result(3, {"messageId": "u2"}), None),
    ("agent", state("running"), None),
    (
        "agent",
        chunk(5),
        "error schema: does not fit the v2.unstable schema: Expected `str`, got `int`",
    ),
    (
        "agent",
        state("idle", "paused"),
        (
            "MUST v2 lifecycle: the turn ended without a `user_message` reporting where its"
            " prompt was inserted",
            "MUST v2 lifecycle: stop reason 'paused': a custom one must begin with `_`",
        ),
    ),
    # turn 3: cancelled, a pending permission answered selected, the turn ends end_turn
    ("client", prompt(4), None),
    ("agent", result(4, {"messageId": "u3"}), None),
    ("agent", user_message("u3"), None),
    ("agent", state("running"), None),
    ("agent", state("requires_action"), None),
    ("agent", request(8, "session/request_permission", PERMISSION), None),
    ("client", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}, None),
    (
        "client",
        result(8, {"outcome": {"outcome": "selected", "optionId": "yes"}}),
        "MUST cancellation: a permission request pending at `session/cancel`",
    ),
    (
        "agent",
        state("idle", "end_turn"),
        "MUST v2 lifecycle: the turn was cancelled but ended 'end_turn'",
    ),
    # JSON-RPC
    ("agent", result(99, {}), "MUST jsonrpc: a response to no pending request (id 99)"),
    ("agent", "Traceback (most recent call last):", "error schema: a line that is not JSON"),
    (
        "client",
        request(5, "session/list", {}),
        "MUST jsonrpc: request #5 from the client was never answered",
    ),
]


def write_trace(path: Path, messages: list[tuple[str, Any]], command: str = "agent") -> Path:
    """A trace of `messages` ((side, message or text) in order, a millisecond apart), the
    header on line 1 and the first message on line 2; `(side, "eof")` for an EOF record."""
    header = {"acpwire_trace": 1, "started": "2026-01-01T00:00:00.000000Z", "command": [command]}
    lines = [json.dumps(header)]
    for n, (side, message) in enumerate(messages):
        record: dict[str, Any] = {"t": n / 1000, "from": side}
        if message == "eof":
            record["eof"] = True
        else:
            record["text" if isinstance(message, str) else "line"] = message
        lines.append(json.dumps(record))
    lines.append(json.dumps({"t": 1.0, "exit": {"code": 1}}))
    path.write_text("\n".join(lines) + "\n")
    return path


def broken_trace(path: Path) -> Path:
    messages = [(side, message) for side, message, _ in BROKEN]
    return write_trace(path, messages, command="broken-agent")


def expected_findings() -> list[tuple[int, str]]:
    """(trace line, finding text) of BROKEN: the header is line 1."""
    return [
        (n + 2, finding)
        for n, (_, _, found) in enumerate(BROKEN)
        for finding in ((found,) if isinstance(found, str) else found or ())
    ]


def record_hello_trace(path: Path) -> Path:
    """The hello client's session with the hello agent, recorded by `acpwire trace` at
    `path` (the client prompts "Hi", allows the permission, prompts an unknown session and
    closes the session)."""
    tap = [*ACPWIRE, "trace", "--out", str(path), "--", *HELLO_AGENT]
    done = subprocess.run(
        [sys.executable, "-m", "acpwire.examples.hello_client", "--", *tap],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert done.returncode == 0, done.stderr
    assert "agent: acpwire!" in done.stdout
    return path
