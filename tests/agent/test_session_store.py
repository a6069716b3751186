"""Sessions served completely (`acpwire.agent.sessions`): history recorded as sent, `session/list`
with cursor paging, v2 `session/resume` with `replayFrom`, v1 `session/load`, advertised as
served. Driven with raw JSON lines over in-memory streams; two connections share a store."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest

import acp_schema.v2 as v2
from acpwire.agent import MemorySessionStore, serve_agent, turn_agents
from acpwire.examples import tool_agent
from acpwire.testing import memory_stream_pair
from helpers.constants import RAW_INIT_V1, RAW_INIT_V2
from helpers.lines import is_permission_request, new_session, on, selected, text_block
from helpers.raw import RawPeer, error_response, receive, request, response
from helpers.serving import served_tool_agent

pytestmark = pytest.mark.usefixtures("loop")


def idle(session_id: str) -> dict[str, Any]:
    return on(session_id, {"sessionUpdate": "state_update", "state": "idle"})


async def finished_turn(peer: RawPeer, session_id: str, version: int) -> list[dict[str, Any]]:
    """Run one turn of the example agent, allowing its tool call; every message it sent."""
    await peer.send(
        request("p", "session/prompt", {"sessionId": session_id, "prompt": [text_block("hi")]})
    )
    sent: list[dict[str, Any]] = []
    while True:
        message = await peer.receive()
        if is_permission_request(message):
            await peer.send(selected(message, "allow"))
            continue
        sent.append(message)
        update = message.get("params", {}).get("update", {})
        if (message.get("id") == "p" and version == 1) or update.get("state") == "idle":
            return sent


async def test_initialize_advertises_what_is_served() -> None:
    agent_v2, agent_v1 = turn_agents(tool_agent.work, name="tool-agent", version="1.0")
    for init, capabilities in (
        (RAW_INIT_V2, {"session": {}}),
        (
            RAW_INIT_V1,
            {"loadSession": True, "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}},
        ),
    ):
        agent_end, client_end = memory_stream_pair()
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(partial(serve_agent, agent_v2, v1=agent_v1, stream=agent_end))
            result = (await RawPeer(client_end).call(1, "initialize", init))["result"]
            key = "capabilities" if init is RAW_INIT_V2 else "agentCapabilities"
            assert result[key] == capabilities
            nursery.cancel_scope.cancel()


async def test_v2_resume_replays_the_recorded_history_then_the_state_then_responds() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(2, store) as peer:
        sid = await new_session(peer, 2)
        sent = await finished_turn(peer, sid, 2)
    history = [
        m
        for m in sent
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] != "state_update"
    ]
    assert history[0]["params"]["update"]["sessionUpdate"] == "user_message"
    async with served_tool_agent(2, store) as peer:  # a new connection, the same store
        resume = {"sessionId": sid, "cwd": "/repo", "replayFrom": {"type": "start"}}
        await peer.send(request(7, "session/resume", resume))
        assert await receive(peer, len(history) + 2) == [*history, idle(sid), response(7, {})]


async def test_v2_resume_without_replay_sends_only_the_current_state() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(2, store) as peer:
        sid = await new_session(peer, 2)
        await finished_turn(peer, sid, 2)
        reply = await peer.call(7, "session/resume", {"sessionId": sid, "cwd": "/repo"})
        assert [reply, await peer.receive()] == [idle(sid), response(7, {})]


async def test_v2_resume_during_a_permission_reports_requires_action() -> None:
    async with served_tool_agent(2) as peer:
        sid = await new_session(peer, 2)
        await peer.send(
            request("p", "session/prompt", {"sessionId": sid, "prompt": [text_block("hi")]})
        )
        while not is_permission_request(await peer.receive()):
            pass
        reply = await peer.call(7, "session/resume", {"sessionId": sid, "cwd": "/repo"})
        state = on(sid, {"sessionUpdate": "state_update", "state": "requires_action"})
        assert [reply, await peer.receive()] == [state, response(7, {})]


async def test_v2_resume_refuses_unknown_cursors_sessions_and_another_cwd() -> None:
    async with served_tool_agent(2) as peer:
        sid = await new_session(peer, 2)
        custom = {"sessionId": sid, "cwd": "/repo", "replayFrom": {"type": "_since", "at": 3}}
        reply = await peer.call(1, "session/resume", custom)
        assert reply["error"]["code"] == -32602
        assert "'_since' is not supported" in reply["error"]["message"]
        reply = await peer.call(2, "session/resume", {"sessionId": "sess_nope", "cwd": "/repo"})
        assert reply["error"]["code"] == -32002
        reply = await peer.call(3, "session/resume", {"sessionId": sid, "cwd": "/elsewhere"})
        assert reply["error"]["code"] == -32602
        await peer.expect_silence()


async def test_v1_load_replays_the_prompt_and_the_turn_then_responds() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(1, store) as peer:
        sid = await new_session(peer, 1)
        sent = await finished_turn(peer, sid, 1)
    updates = [m for m in sent if m.get("method") == "session/update"]
    prompt = on(sid, {"sessionUpdate": "user_message_chunk", "content": text_block("hi")})
    async with served_tool_agent(1, store) as peer:
        load = {"sessionId": sid, "cwd": "/repo", "mcpServers": []}
        await peer.send(request(9, "session/load", load))
        assert await receive(peer, len(updates) + 2) == [prompt, *updates, response(9, {})]


async def test_v1_resume_does_not_replay() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(1, store) as peer:
        sid = await new_session(peer, 1)
        await finished_turn(peer, sid, 1)
        reply = await peer.call(9, "session/resume", {"sessionId": sid, "cwd": "/repo"})
        assert reply == response(9, {})
        await peer.expect_silence()


async def test_a_session_is_replayed_only_in_the_version_it_was_recorded_in() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(1, store) as peer:
        sid = await new_session(peer, 1)
    async with served_tool_agent(2, store) as peer:
        resume = {"sessionId": sid, "cwd": "/repo", "replayFrom": {"type": "start"}}
        reply = await peer.call(1, "session/resume", resume)
        assert reply["error"]["code"] == -32602
        assert "recorded over ACP v1" in reply["error"]["message"]


async def test_session_list_pages_with_a_cursor_and_filters_by_cwd() -> None:
    store = MemorySessionStore()
    async with served_tool_agent(2, store, page_size=2) as peer:
        ids = [await new_session(peer, 2, cwd) for cwd in ("/a", "/b", "/a", "/a", "/a")]
        await finished_turn(peer, ids[0], 2)
        listed: list[str] = []
        cursor = None
        while True:
            params = {"cwd": "/a"} if cursor is None else {"cwd": "/a", "cursor": cursor}
            page = (await peer.call("l", "session/list", params))["result"]
            listed += [info["sessionId"] for info in page["sessions"]]
            assert len(page["sessions"]) <= 2
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert listed == [ids[0], ids[2], ids[3], ids[4]]
        first = (await peer.call("l", "session/list", {}))["result"]["sessions"][0]
        assert first["title"] == "hi" and first["cwd"] == "/a" and "updatedAt" in first
        reply = await peer.call("bad", "session/list", {"cursor": "not ours"})
        assert reply == error_response("bad", -32602, reply["error"]["message"])
        assert "nextCursor" in reply["error"]["message"]


async def test_a_custom_store_records_every_update_sent() -> None:
    class ListingStore(MemorySessionStore):
        """Records into a list of its own (the store is pluggable)."""

        def __init__(self) -> None:
            super().__init__()
            self.sent: list[tuple[str, Any]] = []

        def recorder(self, session_id: str) -> Callable[[Any], object]:
            return lambda update: self.sent.append((session_id, update))

    store = ListingStore()
    async with served_tool_agent(2, store) as peer:
        sid = await new_session(peer, 2)
        sent = await finished_turn(peer, sid, 2)
    updates = [m["params"]["update"] for m in sent if m.get("method") == "session/update"]
    assert [(s, json.loads(v2.encode_message(u))) for s, u in store.sent] == [
        (sid, update) for update in updates
    ]


@pytest.mark.parametrize("version", [2, 1])
async def test_a_resumed_session_never_reuses_the_ids_of_its_history(version: int) -> None:
    """Message ids are unique per type within a session, tool call ids within a session (the
    schema's MessageId and ToolCallId): a turn on a later connection continues the count."""
    store = MemorySessionStore()
    ids: list[set[str]] = []
    sid = ""
    for connection in range(2):
        async with served_tool_agent(version, store) as peer:
            if connection == 0:
                sid = await new_session(peer, version)
            sent = await finished_turn(peer, sid, version)
        ids.append(
            {
                value
                for message in sent
                for key, value in message.get("params", {}).get("update", {}).items()
                if key in ("messageId", "toolCallId")
            }
            | {
                message["result"]["messageId"]
                for message in sent
                if "messageId" in message.get("result", {})
            }
        )
    assert ids[0] and ids[1]
    assert not ids[0] & ids[1], f"the second connection's turn reused {ids[0] & ids[1]}"
