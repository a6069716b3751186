"""A v2 agent in raw JSON-RPC lines (no acpwire), correct unless told one defect to have, for
`acpwire check`'s tests: `python broken_agent.py [DEFECT]`.

A prompt asks permission, then says one chunk and ends `end_turn`; a prompt containing "slow"
says a chunk every 50 ms (40 of them) so it can be cancelled or closed. Defects (one per rule
family and then some): see `DEFECTS`.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

DEFECTS = {
    "none": "a correct agent",
    "version": "initialize answers version 3, above the 2 asked for",
    "capabilities": "advertises session.delete, answers it -32601",
    "silent-delete": "advertises session.delete, never answers it",
    "user-message": "no user_message update after accepting a prompt",
    "cancel": "ignores session/cancel (the slow turn ends end_turn)",
    "close-order": "answers session/close before the cancelled turn's idle",
    "unknown-method": "answers an unknown method -32603",
    "ids": "answers a request of a large integer id with the id as a string",
    "parse-error": "exits on a line that is not JSON",
    "stdout": "logs to stdout",
    "older-version": "answers a request of version 0 with version 2 (not -32022)",
    "no-running": "reports no running state",
    "no-requires-action": "reports no requires_action while its permission request is pending",
    "no-stop-reason": "reports idle without a stop reason",
    "stop-reason": "ends turns with the stop reason `done` (a custom one must begin with `_`)",
    "no-message-id": "sends agent_message_chunk without a messageId",
    "after-cancel": "says one more chunk after the idle `cancelled`",
    "answers-notifications": "answers unknown notifications with an error",
    "invalid-params": "answers session/new with a wrong cwd -32603",
    "no-credentials": "not a defect: answers session/prompt -32000 (Authentication required), "
    "as an agent without an API key does",
    "proceeds": "runs the tool call whatever the permission answer",
    "unknown-approves": "takes an option not offered, or an outcome it does not know, as approval",
    "custom-stop-reason": "not a defect: ends its turns with the custom stop reason `_paused`",
}
DEFECT = sys.argv[1] if len(sys.argv) > 1 else "none"
assert DEFECT in DEFECTS, f"unknown defect {DEFECT!r}: one of {', '.join(DEFECTS)}"
SLOW_CHUNKS, SLOW_DELAY = 40, 0.05


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def answer_id(request_id: Any) -> Any:
    if DEFECT == "ids" and isinstance(request_id, int) and request_id > 2**31:
        return str(request_id)
    return request_id


def respond(request_id: Any, result: dict[str, Any]) -> None:
    send({"id": answer_id(request_id), "result": result})


def fail(request_id: Any, code: int, message: str) -> None:
    send({"id": answer_id(request_id), "error": {"code": code, "message": message}})


def update(session_id: str, **fields: Any) -> None:
    send({"method": "session/update", "params": {"sessionId": session_id, "update": fields}})


class Turn:
    def __init__(self, session_id: str, slow: bool) -> None:
        self.session_id = session_id
        self.left = SLOW_CHUNKS if slow else 0
        self.next_at = time.monotonic()
        self.waiting: str | None = None  # the permission request's id

    def say(self, text: str) -> None:
        message_id = {} if DEFECT == "no-message-id" else {"messageId": f"agent_{self.session_id}"}
        content = {"type": "text", "text": text}
        update(self.session_id, sessionUpdate="agent_message_chunk", **message_id, content=content)

    def end(self, stop_reason: str) -> None:
        if DEFECT == "stop-reason" and stop_reason == "end_turn":
            stop_reason = "done"
        if DEFECT == "custom-stop-reason" and stop_reason == "end_turn":
            stop_reason = "_paused"
        reason = {} if DEFECT == "no-stop-reason" else {"stopReason": stop_reason}
        update(self.session_id, sessionUpdate="state_update", state="idle", **reason)
        if DEFECT == "after-cancel" and stop_reason == "cancelled":
            self.say("one more")
        del turns[self.session_id]


sessions: set[str] = set()
turns: dict[str, Turn] = {}
permissions: dict[str, Turn] = {}


def start_turn(request_id: Any, session_id: str, text: str) -> None:
    message_id = f"user_{request_id}"
    respond(request_id, {"messageId": message_id})
    if DEFECT != "user-message":
        content = [{"type": "text", "text": text}]
        update(session_id, sessionUpdate="user_message", messageId=message_id, content=content)
    if DEFECT != "no-running":
        update(session_id, sessionUpdate="state_update", state="running")
    turn = turns[session_id] = Turn(session_id, "slow" in text)
    if turn.left:
        return
    turn.waiting = f"permission_{request_id}"
    permissions[turn.waiting] = turn
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    call = {"toolCallId": f"call_{request_id}", "title": "Say hello", "status": "pending"}
    update(session_id, sessionUpdate="tool_call_update", **call)
    subject = {"type": "tool_call", "toolCall": call}
    params = {"sessionId": session_id, "title": "Say hello", "subject": subject, "options": options}
    send({"id": turn.waiting, "method": "session/request_permission", "params": params})
    if DEFECT not in ("no-requires-action", "no-running"):
        update(session_id, sessionUpdate="state_update", state="requires_action")


def step(turn: Turn) -> None:
    if turn.left:
        turn.left -= 1
        turn.say("slow ")
        turn.next_at = time.monotonic() + SLOW_DELAY
        if not turn.left:
            turn.end("end_turn")


def approved(result: Any) -> bool:
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict):
        return False
    kind, option = outcome.get("outcome"), outcome.get("optionId")
    unknown = kind not in ("selected", "cancelled") or (
        kind == "selected" and option not in ("allow", "reject")
    )
    if DEFECT == "proceeds" or (DEFECT == "unknown-approves" and unknown):
        return True
    return kind == "selected" and option == "allow"


def permission_answered(request_id: Any, result: Any) -> None:
    turn = permissions.pop(request_id, None)
    if turn is None or turn.session_id not in turns:
        return
    turn.waiting = None
    if DEFECT != "no-running":
        update(turn.session_id, sessionUpdate="state_update", state="running")
    call_id = f"call_{request_id.removeprefix('permission_')}"
    for status in ("in_progress", "completed") if approved(result) else ("failed",):
        update(turn.session_id, sessionUpdate="tool_call_update", toolCallId=call_id, status=status)
    turn.say("hello")
    turn.end("end_turn")


def handle(request_id: Any, method: str, params: Any) -> None:
    if not isinstance(params, dict):
        params = {}
    session_id = params.get("sessionId")
    if method == "initialize":
        asked = params.get("protocolVersion")
        if DEFECT == "older-version" and asked == 0:
            asked = 2
        if not isinstance(asked, int) or asked < 2:
            fail(request_id, -32022, "Unsupported protocol version")
            return
        session = {"delete": {}} if DEFECT in ("capabilities", "silent-delete") else {}
        version = 3 if DEFECT == "version" else 2
        info = {"name": "broken-agent", "version": DEFECT}
        respond(
            request_id,
            {"protocolVersion": version, "info": info, "capabilities": {"session": session}},
        )
    elif method == "session/new":
        if not isinstance(params.get("cwd"), str):
            code = -32603 if DEFECT == "invalid-params" else -32602
            fail(request_id, code, "Invalid params: cwd must be a string")
            return
        new_id = f"sess_{len(sessions) + 1}"
        sessions.add(new_id)
        respond(request_id, {"sessionId": new_id})
    elif method == "session/list":
        respond(request_id, {"sessions": []})
    elif method in ("session/resume", "session/prompt") and session_id not in sessions:
        fail(request_id, -32002, "Resource not found")
    elif method == "session/resume":
        respond(request_id, {})
    elif method == "session/prompt" and DEFECT == "no-credentials":
        fail(request_id, -32000, "Authentication required")
    elif method == "session/prompt":
        text = " ".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict))
        start_turn(request_id, session_id, text)
    elif method == "session/close":
        turn = turns.get(session_id)
        if turn is not None and DEFECT == "close-order":
            respond(request_id, {})
            turn.end("cancelled")
            return
        if turn is not None:
            turn.end("cancelled")
        sessions.discard(session_id)
        respond(request_id, {})
    elif method == "session/delete" and DEFECT == "silent-delete":
        pass
    elif DEFECT == "unknown-method":
        fail(request_id, -32603, "Internal error")
    else:
        fail(request_id, -32601, "Method not found")


def notified(method: str, params: Any) -> None:
    if DEFECT == "answers-notifications" and not method.startswith("session/"):
        fail(None, -32601, "Method not found")
    if method == "session/cancel" and DEFECT != "cancel" and isinstance(params, dict):
        turn = turns.get(params.get("sessionId"))
        if turn is not None:
            turn.end("cancelled")


def receive(line: bytes) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        if DEFECT == "parse-error":
            sys.exit(1)
        fail(None, -32700, "Parse error")
        return
    if not isinstance(message, dict):
        fail(None, -32600, "Invalid request")
        return
    method = message.get("method")
    if "method" not in message and ("result" in message or "error" in message):
        permission_answered(message.get("id"), message.get("result"))
    elif not isinstance(method, str):
        fail(message.get("id"), -32600, "Invalid request")
    elif "id" in message:
        handle(message["id"], method, message.get("params"))
    else:
        notified(method, message.get("params"))


def main() -> None:
    if DEFECT == "stdout":
        print("broken agent starting")
    buffer = b""
    while True:
        due = [t.next_at for t in turns.values() if t.left]
        wait = max(0.0, min(due) - time.monotonic()) if due else None
        readable, _, _ = select.select([0], [], [], wait)
        if readable:
            chunk = os.read(0, 65536)
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    receive(line)
        now = time.monotonic()
        for turn in list(turns.values()):
            if turn.left and turn.next_at <= now:
                step(turn)


if __name__ == "__main__":
    main()
