"""A client in raw JSON-RPC lines (no acpwire), correct unless told one defect to have, for
`acpwire check --client`'s tests: `python broken_client.py DEFECT [--v1] [-- <agent command>]`
(or `--agent=<agent command as one shell-quoted string>`, as clients with such an option take it).

With an agent command it spawns the agent and speaks to it over the agent's stdio (as the SDK
example clients do); without one it speaks on its own stdin/stdout. It initializes, opens a
session, prompts "Please read the README" (a permission request gets the allow option), then
"Please be slow", cancelled with session/cancel after 3 chunks (a permission request after that
gets `cancelled`), closes the session and ends. Defects (one per rule family and then some):
see `DEFECTS`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from typing import Any, BinaryIO

DEFECTS = {
    "none": "a correct client",
    "no-initialize": "sends session/new before initialize",
    "init-params": "sends initialize without the protocol version",
    "capabilities": "(v1) advertises fs.readTextFile, answers fs/read_text_file -32601 (the "
    "correct client serves it: -32002 for the file the checker asks, which does not exist)",
    "bad-params": "sends session/new with cwd 42",
    "reads-late": "reads nothing for 3 seconds after its first prompt",
    "permission-option": "answers a permission request with an option not offered",
    "permission-after-cancel": "answers the permission request after session/cancel `selected`",
    "unknown-method": "answers an unknown method -32603",
    "ids": "answers a request of a large integer id with the id as a string",
    "twice": "answers every request of an unknown method twice",
    "answers-notifications": "answers unknown notifications with an error",
    "reuse-id": "(v1) sends session/list with the id of its pending session/prompt",
    "stdout": "writes a log line to the agent's stdin",
}
argv = sys.argv[1:]
AGENT = argv[argv.index("--") + 1 :] if "--" in argv else []
OWN = argv[: argv.index("--")] if "--" in argv else argv
for option in OWN:
    if option.startswith("--agent="):
        OWN.remove(option)
        AGENT = shlex.split(option.removeprefix("--agent="))
DEFECT = OWN[0] if OWN else "none"
VERSION = 1 if "--v1" in OWN else 2
assert DEFECT in DEFECTS, f"unknown defect {DEFECT!r}: one of {', '.join(DEFECTS)}"

if AGENT:
    agent = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    to_agent: BinaryIO = agent.stdin
    from_agent: BinaryIO = agent.stdout
else:
    to_agent, from_agent = sys.stdout.buffer, sys.stdin.buffer

next_id = 0
session_id = ""
turn_chunks = 0
cancel_after = 0
cancel_sent = False


def send(message: dict[str, Any]) -> None:
    to_agent.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    to_agent.flush()


def request(method: str, params: dict[str, Any], request_id: int | None = None) -> int:
    global next_id
    if request_id is None:
        next_id += 1
        request_id = next_id
    send({"id": request_id, "method": method, "params": params})
    return request_id


def answer(request_id: Any, **member: Any) -> None:
    if DEFECT == "ids" and isinstance(request_id, int) and request_id > 2**31:
        request_id = str(request_id)
    send({"id": request_id, **member})


def method_not_found(request_id: Any, method: str) -> None:
    code = -32603 if DEFECT == "unknown-method" else -32601
    for _ in range(2 if DEFECT == "twice" else 1):
        answer(request_id, error={"code": code, "message": f"Method not found: {method}"})


def on_request(request_id: Any, method: str, params: dict[str, Any]) -> None:
    if method == "session/request_permission":
        if cancel_sent and DEFECT != "permission-after-cancel":
            answer(request_id, result={"outcome": {"outcome": "cancelled"}})
            return
        option = "maybe" if DEFECT == "permission-option" else "allow"
        answer(request_id, result={"outcome": {"outcome": "selected", "optionId": option}})
    elif method == "fs/read_text_file" and DEFECT != "capabilities":
        answer(request_id, error={"code": -32002, "message": "Resource not found"})
    else:
        method_not_found(request_id, method)


def on_notification(method: str, params: dict[str, Any]) -> None:
    global turn_chunks, cancel_sent
    if DEFECT == "answers-notifications" and not method.startswith("session/"):
        send({"id": None, "error": {"code": -32601, "message": "Method not found"}})
    update = params.get("update") if method == "session/update" else None
    if isinstance(update, dict) and update.get("sessionUpdate") == "agent_message_chunk":
        turn_chunks += 1
        if cancel_after and turn_chunks == cancel_after and not cancel_sent:
            cancel_sent = True
            send({"method": "session/cancel", "params": {"sessionId": session_id}})


def read_until(done: Any) -> dict[str, Any]:
    """Serve the agent's requests and notifications until a message that is `done`."""
    while True:
        line = from_agent.readline()
        if not line:
            sys.exit("the agent closed its stdout")
        message = json.loads(line)
        method = message.get("method")
        if done(message):
            return dict(message)
        if isinstance(method, str) and "id" in message:
            on_request(message["id"], method, message.get("params") or {})
        elif isinstance(method, str):
            on_notification(method, message.get("params") or {})


def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
    rid = request(method, params)
    return read_until(lambda m: m.get("id") == rid and "method" not in m)


def turn(text: str) -> None:
    """Prompt and wait for the turn's end (v2: idle; v1: the prompt's response)."""
    rid = request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    if DEFECT == "reads-late":
        time.sleep(3)
    if DEFECT == "reuse-id" and VERSION == 1:
        request("session/list", {}, rid)

    def ended(message: dict[str, Any]) -> bool:
        if VERSION == 1:
            return message.get("id") == rid and "stopReason" in (message.get("result") or {})
        update = (message.get("params") or {}).get("update") or {}
        return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"

    read_until(ended)


def main() -> None:
    global session_id, cancel_after
    if DEFECT == "stdout":
        to_agent.write(b"broken client starting\n")
    info = {"name": "broken-client", "version": DEFECT}
    if VERSION >= 2:
        init: dict[str, Any] = {"protocolVersion": 2, "info": info, "capabilities": {}}
    else:
        fs = {"readTextFile": True}
        init = {"protocolVersion": 1, "clientInfo": info, "clientCapabilities": {"fs": fs}}
    if DEFECT == "init-params":
        del init["protocolVersion"]
    new_session: dict[str, Any] = {
        "cwd": 42 if DEFECT == "bad-params" else os.getcwd(),
        "mcpServers": [],
    }
    if DEFECT == "no-initialize":
        call("session/new", new_session)
    call("initialize", init)
    session_id = call("session/new", new_session).get("result", {}).get("sessionId", "")
    if DEFECT == "bad-params":
        new_session["cwd"] = os.getcwd()
        session_id = call("session/new", new_session)["result"]["sessionId"]
    turn("Please read the README")
    cancel_after = turn_chunks + 3
    turn("Please be slow")
    call("session/close", {"sessionId": session_id})


if __name__ == "__main__":
    main()
    to_agent.close()
    if AGENT:
        sys.exit(agent.wait())
