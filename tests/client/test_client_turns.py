"""acpwire.client.turns: a prompt turn as an ordered, typed event stream (v2 and v1), against raw
JSON-line agents (each test states the wire) and the official SDK peers."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from acp_schema import tag_of, v1, v2
from acpwire.client import (
    ElicitationRequested,
    PermissionRequested,
    SessionUpdateEvent,
    open_agent,
    prompt,
)
from acpwire.errors import PeerError
from helpers.clients import TurnClientV1, TurnClientV2
from helpers.constants import INIT_V1, INIT_V2, PROMPT_V1, PROMPT_V2, SESSION
from helpers.lines import state, update, user_message
from helpers.paths import INTEROP, ROOT
from helpers.raw import error_response, notification, request, response
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, module
from helpers.typecheck import mypy_strict_errors

pytestmark = pytest.mark.usefixtures("loop")


def chunk(text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    return update({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": content})


def permission(request_id: int) -> dict[str, Any]:
    params = {
        "sessionId": SESSION,
        "title": "Edit a.py?",
        "subject": {
            "type": "tool_call",
            "toolCall": {"toolCallId": "c1", "title": "Edit a.py", "kind": "edit"},
        },
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
    }
    return request(request_id, "session/request_permission", params)


def describe(event: Any) -> str:
    """One short word for a turn's event, whatever the surface (by the update's wire tag)."""
    if isinstance(event, PermissionRequested):
        return "permission"
    assert isinstance(event, SessionUpdateEvent)
    u: Any = event.update
    if tag_of(u) == "state_update":
        return f"state {u.state}"
    if tag_of(u) == "agent_message_chunk":
        assert tag_of(u.content) == "text"
        return f"chunk {u.content.text}"
    return type(u).__name__


async def test_a_v2_turn_gives_updates_and_permission_in_wire_order_until_idle(
    v2_surface: AnySurface,
) -> None:
    async with raw_agent(surface=v2_surface) as (conn, peer):
        log: list[str] = []
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                assert call["method"] == "session/prompt"
                await peer.send(response(call["id"], {"messageId": "u1"}), user_message("u1"))
                after = [chunk(c) for c in "bcdefghij"]  # one write: read with the request
                burst = [state("running"), chunk("a"), permission(7), *after]
                await peer.send(b"".join(msgspec.json.encode(m) + b"\n" for m in burst))
                answer = await peer.receive()
                assert answer == {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
                }
                await peer.send(state("idle", "end_turn"), chunk("after the turn"))

            nursery.start_soon(agent)
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                async for event in turn:
                    log.append(describe(event))
                    if isinstance(event, PermissionRequested):
                        # the subject's tool call was applied before the event
                        assert turn.state.tool_calls["c1"].title == "Edit a.py"
                        event.select("yes")
        assert log == [
            "UserMessage",
            "state running",
            "chunk a",
            "permission",
            *[f"chunk {c}" for c in "bcdefghij"],
            "state idle",
        ]
        assert turn.ended and turn.stop_reason == "end_turn"
        assert turn.state.messages["agent", "m"].text() == "abcdefghij"
        assert turn.prompt_response == module(v2_surface).PromptResponse(message_id="u1")


async def test_a_v2_turn_ends_at_the_idle_after_its_own_user_message(
    v2_surface: AnySurface,
) -> None:
    """A held prompt: the previous work's idle comes first and does not end this turn; the
    response may come after this turn's idle (the end is found when it arrives)."""
    async with raw_agent(surface=v2_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                await peer.send(state("running"), state("idle", "end_turn"))  # previous work
                await peer.send(user_message("u2"), state("running"), chunk("x"))
                await peer.send(state("idle", "max_tokens"))
                await peer.send(response(call["id"], {"messageId": "u2"}))

            nursery.start_soon(agent)
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                log = [describe(event) async for event in turn]
        assert log[-2:] == ["chunk x", "state idle"]
        assert log.count("state idle") == 2
        assert turn.stop_reason == "max_tokens"


async def test_leaving_the_turn_early_cancels_on_the_wire_and_answers_permission(
    v2_surface: AnySurface,
) -> None:
    async with raw_agent(surface=v2_surface) as (conn, peer):
        async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
            call = await peer.receive()
            await peer.send(response(call["id"], {"messageId": "u1"}), permission(9))
            async for event in turn:
                if isinstance(event, PermissionRequested):
                    break  # unanswered
        lines = [await peer.receive(), await peer.receive()]  # in either order
        assert {"jsonrpc": "2.0", "id": 9, "result": {"outcome": {"outcome": "cancelled"}}} in lines
        assert notification("session/cancel", {"sessionId": SESSION}) in lines
        assert not turn.ended


async def test_turn_cancel_sends_cancel_and_the_turn_ends_cancelled(v2_surface: AnySurface) -> None:
    async with raw_agent(surface=v2_surface) as (conn, peer):
        async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
            call = await peer.receive()
            await peer.send(response(call["id"], {"messageId": "u1"}), user_message("u1"))
            await peer.send(state("running"))
            async for event in turn:
                if describe(event) == "state running":
                    await turn.cancel()
                    assert await peer.receive() == notification(
                        "session/cancel", {"sessionId": SESSION}
                    )
                    await peer.send(state("idle", "cancelled"))
        assert turn.stop_reason == "cancelled"
        assert turn.state.run_state == "idle"


async def test_an_elicitation_of_the_session_is_an_event_answered_from_the_loop(
    v2_surface: AnySurface,
) -> None:
    elicitation = {
        "mode": "form",
        "sessionId": SESSION,
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    async with raw_agent(surface=v2_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                await peer.send(response(call["id"], {"messageId": "u1"}), user_message("u1"))
                await peer.send(chunk("a"), request(5, "elicitation/create", elicitation))
                answer = await peer.receive()
                assert answer["id"] == 5
                assert answer["result"] == {"action": "accept", "content": {"name": "Ada"}}
                await peer.send(state("idle", "end_turn"))

            nursery.start_soon(agent)
            log = []
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                async for event in turn:
                    if isinstance(event, ElicitationRequested):
                        log.append("elicitation")
                        answer = module(v2_surface).AcceptElicitationResponse(
                            content={"name": "Ada"}
                        )
                        event.respond(answer)
                    else:
                        log.append(describe(event))
        assert log == ["UserMessage", "chunk a", "elicitation", "state idle"]


async def test_a_prompt_the_agent_rejects_leaves_the_turn_as_a_peer_error(
    v2_surface: AnySurface,
) -> None:
    async with raw_agent(surface=v2_surface) as (conn, peer):
        with pytest.raises(PeerError) as raised:
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                call = await peer.receive()
                await peer.send(error_response(call["id"], -32602, "bad prompt"))
                async for _ in turn:
                    pass
        assert raised.value.code == -32602
        await peer.expect_silence()  # no turn runs: nothing to cancel


async def test_a_permission_outside_a_turn_is_rejected_with_the_offered_reject_option(
    v2_surface: AnySurface,
) -> None:
    """Nobody to ask: the default policy (ask) rejects, with the agent's reject option."""
    async with raw_agent(surface=v2_surface) as (_, peer):
        await peer.send(permission(3))
        result = (await peer.receive())["result"]
        assert result == {"outcome": {"outcome": "selected", "optionId": "no"}}


async def test_a_v1_turn_ends_at_the_prompt_response_after_the_updates_before_it(
    v1_surface: AnySurface,
) -> None:
    async with raw_agent(surface=v1_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                chunks = [
                    update(
                        {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": t},
                        }
                    )
                    for t in "abc"
                ]
                params = {
                    "sessionId": SESSION,
                    "toolCall": {"toolCallId": "c1", "title": "Run"},
                    "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                }
                await peer.send(chunks[0], request(4, "session/request_permission", params))
                assert (await peer.receive())["result"]["outcome"]["optionId"] == "ok"
                await peer.send(chunks[1], chunks[2])
                await peer.send(response(call["id"], {"stopReason": "end_turn"}))

            nursery.start_soon(agent)
            async with prompt(conn.v1, conn.client.requests, PROMPT_V1) as turn:
                log = []
                async for event in turn:
                    log.append(describe(event))
                    if isinstance(event, PermissionRequested):
                        assert turn.state.tool_calls["c1"].title == "Run"
                        event.select("ok")
        assert log == ["chunk a", "permission", "chunk b", "chunk c"]
        assert turn.stop_reason == "end_turn" and turn.state.stop_reason == "end_turn"
        assert [m.text() for m in turn.state.messages.values()] == ["abc"]


TYPED_TURN = """
from typing import assert_type
import acp_schema.v2 as v2
from acpwire.client import ClientConnection
from acpwire import SessionState
from acpwire import AgentRequests, PermissionRequested, SessionUpdateEvent, prompt

async def use(conn: ClientConnection, requests: AgentRequests, params: v2.PromptRequest) -> None:
    async with prompt(conn.v2, requests, params) as turn:
        async for event in turn:
            if isinstance(event, SessionUpdateEvent):
                assert_type(event.update, v2.SessionUpdate)
            elif isinstance(event, PermissionRequested):
                assert_type(event.request, v2.RequestPermissionRequest)
                event.select(event.request.options[0].option_id)
        assert_type(turn.state, SessionState)
        turn.state.no_such_field
"""


def test_a_turn_loop_is_checked_by_mypy_strict(tmp_path: Path) -> None:
    errors = mypy_strict_errors(TYPED_TURN, tmp_path)
    assert len(errors) == 1 and ":17: error:" in errors[0] and "no_such_field" in errors[0], errors


# ------------------------------------------------------------------ the official SDK peers

PEER_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("generated", "runtime")),
}


def text_prompt(module: Any, session_id: str, text: str) -> Any:
    return module.PromptRequest(session_id=session_id, prompt=[module.TextContent(text=text)])


async def test_a_turn_against_the_typescript_sdk_v2_agent() -> None:
    command = ["node", "ts/agent_v2.mjs"]
    async with open_agent(command, v2=TurnClientV2, cwd=str(INTEROP), env=PEER_ENV) as conn:
        await conn.initialize(INIT_V2)
        session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd=str(ROOT)))
        params = text_prompt(v2, session.session_id, "read the readme")
        async with prompt(conn.v2, conn.client.requests, params) as turn:
            async for event in turn:
                if isinstance(event, PermissionRequested):
                    assert turn.state.tool_calls["call_1"].title == "Read README.md"
                    event.select("allow")
        assert turn.stop_reason == "end_turn" and turn.state.run_state == "idle"
        agent = [m.text() for m in turn.state.messages.values() if m.role == "agent"]
        assert agent == ["Hello from the TS v2 agent. The tool finished. Done."]
        call = turn.state.tool_calls["call_1"]
        assert call.status == "completed" and len(call.content) == 1

        slow = text_prompt(v2, session.session_id, "slow")
        async with prompt(conn.v2, conn.client.requests, slow, state=turn.state) as turn2:
            async for event in turn2:
                if isinstance(event, SessionUpdateEvent) and describe(event) == "chunk slow 2 ":
                    await turn2.cancel()
        assert turn2.stop_reason == "cancelled" and turn2.state is turn.state


async def test_a_turn_against_the_python_sdk_v1_agent() -> None:
    command = [sys.executable, "py/agent_v1.py"]
    async with open_agent(command, v1=TurnClientV1, cwd=str(INTEROP), env=PEER_ENV) as conn:
        await conn.initialize(INIT_V1)
        session = await conn.v1.peer.session_new(
            v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[])
        )
        params = text_prompt(v1, session.session_id, "read the readme")
        async with prompt(conn.v1, conn.client.requests, params) as turn:
            async for event in turn:
                if isinstance(event, PermissionRequested):
                    assert turn.state.tool_calls["call_1"].status == "pending"
                    event.select("allow")
        assert turn.stop_reason == "end_turn"
        text = "".join(m.text() for m in turn.state.messages.values() if m.role == "agent")
        assert text == "Hello from the Python v1 agent. The tool finished. Done."
        assert turn.state.tool_calls["call_1"].status == "completed"
