"""acpwire.client.state: a session's updates folded by the schema's patch rules (v2 and v1).

Updates are written as the JSON an agent sends and decoded with the generated codec, so each
test states the wire behaviour. `make_streams.py` streams (every stable variant) are folded
and checked against a small fold of the raw JSON written here from the schema's descriptions.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import subprocess
import sys
import typing
from typing import Any

import anyio
import msgspec
import pytest

from acp_schema import tag_of, v1, v2
from acpwire.client import SessionState, authenticated, open_agent, open_session
from acpwire.client.state import patch_meta
from helpers.clients import TurnClientV2
from helpers.constants import INIT_V2
from helpers.folds import chunk, decode, fold, text
from helpers.paths import INTEROP, ROOT
from helpers.raw import error_response, response
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, decode_update, state_for

pytestmark = pytest.mark.usefixtures("loop")

MAKE_STREAMS = ROOT / "tests" / "data" / "conformance" / "make_streams.py"


# ------------------------------------------------------------------ messages


def test_chunks_append_by_message_id_and_interleave(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        chunk("agent_message_chunk", "m1", "Hel"),
        chunk("agent_thought_chunk", "t1", "hmm"),
        chunk("agent_message_chunk", "m1", "lo"),
        chunk("user_message_chunk", "u1", "hi"),
    )
    assert [(m.message_id, m.role, m.text()) for m in state.messages.values()] == [
        ("m1", "agent", "Hello"),
        ("t1", "thought", "hmm"),
        ("u1", "user", "hi"),
    ]


def test_full_message_replaces_chunks_null_clears_omitted_keeps(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        chunk("agent_message_chunk", "m1", "draft"),
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("final")]},
    )
    assert state.messages["agent", "m1"].text() == "final"
    state.apply(decode(v2_surface, {"sessionUpdate": "agent_message", "messageId": "m1"}))
    assert state.messages["agent", "m1"].text() == "final"  # omitted: unchanged
    state.apply(decode(v2_surface, chunk("agent_message_chunk", "m1", "!")))
    assert state.messages["agent", "m1"].text() == "final!"  # chunks append to the replacement
    state.apply(
        decode(v2_surface, {"sessionUpdate": "agent_message", "messageId": "m1", "content": None})
    )
    assert state.messages["agent", "m1"].content == []


def test_message_meta_patches_by_key(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        {"sessionUpdate": "user_message", "messageId": "u", "_meta": {"a": 1, "b": {"x": 1}}},
        {"sessionUpdate": "user_message", "messageId": "u", "_meta": {"a": None, "b": {"y": 2}}},
    )
    assert state.messages["user", "u"].meta == {"b": {"y": 2}}
    state.apply(
        decode(v2_surface, {"sessionUpdate": "user_message", "messageId": "u", "_meta": None})
    )
    assert state.messages["user", "u"].meta is None


def test_patch_meta_rules() -> None:
    assert patch_meta({"a": 1}, msgspec.UNSET) == {"a": 1}
    assert patch_meta({"a": 1}, None) is None
    assert patch_meta(None, {"a": None, "b": 2}) == {"b": 2}


# ------------------------------------------------------------------ tool calls


def test_new_tool_call_defaults_and_null_resets(v2_surface: AnySurface) -> None:
    state = fold(v2_surface, {"sessionUpdate": "tool_call_update", "toolCallId": "c"})
    call = state.tool_calls["c"]
    assert (call.title, call.name, call.kind, call.status, call.content) == (
        None,
        None,
        "other",
        "pending",
        [],
    )
    state.apply(
        decode(
            v2_surface,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "title": "Read a.py",
                "name": "read",
                "kind": "read",
                "status": "in_progress",
                "rawInput": {"path": "a.py"},
                "locations": [{"path": "/a.py"}],
            },
        )
    )
    call = state.tool_calls["c"]
    assert (call.title, call.name, call.kind, call.status) == (
        "Read a.py",
        "read",
        "read",
        "in_progress",
    )
    state.apply(
        decode(
            v2_surface,
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"},
        )
    )
    call = state.tool_calls["c"]
    assert (call.title, call.kind, call.status, call.raw_input) == (
        "Read a.py",
        "read",
        "completed",
        {"path": "a.py"},
    )
    assert call.locations is not None and call.locations[0].path == "/a.py"
    state.apply(
        decode(
            v2_surface,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "title": None,
                "kind": None,
                "status": None,
                "locations": None,
                "rawInput": None,
            },
        )
    )
    call = state.tool_calls["c"]
    assert (call.title, call.kind, call.status, call.locations, call.raw_input) == (
        None,
        "other",
        "pending",
        None,
        None,
    )


def tool_content(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def contents(state: SessionState, key: str) -> list[str]:
    out = []
    for item in state.tool_calls[key].content:
        assert tag_of(item) == "content" and tag_of(item.content) == "text"
        out.append(item.content.text)
    return out


def test_tool_call_content_replaced_by_update_appended_by_chunk(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [tool_content("a")]},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_content("b"),
        },
    )
    assert contents(state, "c") == ["a", "b"]
    state.apply(decode(v2_surface, {"sessionUpdate": "tool_call_update", "toolCallId": "c"}))
    assert contents(state, "c") == ["a", "b"]
    state.apply(
        decode(
            v2_surface,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "content": [tool_content("z")],
            },
        )
    )
    assert contents(state, "c") == ["z"]
    state.apply(
        decode(
            v2_surface, {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": None}
        )
    )
    assert contents(state, "c") == []


def test_chunk_for_unseen_tool_call_creates_it(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "n",
            "content": tool_content("x"),
        },
    )
    assert contents(state, "n") == ["x"] and state.tool_calls["n"].status == "pending"


# ------------------------------------------------------------------ the rest of v2


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_terminal_output_snapshot_then_chunks(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        {"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls", "cwd": "/w"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"a\n")},
        {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": b64(b"X")}},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"Y")},
        {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {"exitCode": 0}},
    )
    terminal = state.terminals["t"]
    assert (terminal.command, terminal.cwd, terminal.output()) == ("ls", "/w", b"XY")
    assert terminal.exit_status is not None and terminal.exit_status.exit_code == 0
    state.apply(
        decode(v2_surface, {"sessionUpdate": "terminal_update", "terminalId": "t", "output": None})
    )
    assert state.terminals["t"].output() == b""


def test_run_state_usage_info_plan_commands_config_notices_compaction(
    v2_surface: AnySurface,
) -> None:
    state = fold(
        v2_surface,
        {"sessionUpdate": "state_update", "state": "running"},
        {
            "sessionUpdate": "usage_update",
            "used": 5,
            "size": 100,
            "cost": {"amount": 1.5, "currency": "USD"},
        },
        {"sessionUpdate": "usage_update", "used": 7, "size": 100},
        {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2026-01-01T00:00:00Z"},
        {"sessionUpdate": "session_info_update", "updatedAt": None},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "entries": [{"content": "do", "priority": "high", "status": "pending"}],
            },
        },
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "command", "name": "web", "description": "search"}],
        },
        {"sessionUpdate": "notice", "severity": "warning", "title": "slow"},
        {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "in_progress"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text("sum")},
        {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "completed"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    )
    assert (
        state.run is not None and state.run_state == "idle" and state.run.stop_reason == "end_turn"
    )
    assert state.usage is not None and state.usage.used == 7
    assert state.usage.cost is not None and state.usage.cost.amount == 1.5  # omitted: kept
    assert (state.title, state.updated_at) == ("T", None)
    assert [e.content for e in state.plans["p"].entries] == ["do"]
    assert [c.name for c in state.available_commands] == ["web"]
    assert [n.title for n in state.notices] == ["slow"]
    compaction = state.compactions["k"]
    assert compaction.status == "completed" and len(compaction.content) == 1
    assert not state.unknown


def test_unknown_variants_are_kept_in_order(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        {"sessionUpdate": "_vendor_progress", "pct": 10},
        chunk("agent_message_chunk", "m", "x"),
        {"sessionUpdate": "future_thing", "a": 1},
        {"sessionUpdate": "plan_update", "plan": {"type": "graph", "nodes": []}},
    )
    assert [type(u).__name__ for u in state.unknown] == [
        "UnknownSessionUpdate",
        "UnknownSessionUpdate",
        "PlanUpdate",
    ]
    assert state.messages["agent", "m"].text() == "x"


# ------------------------------------------------------------------ snapshots


def test_snapshot_is_not_changed_by_later_updates(v2_surface: AnySurface) -> None:
    state = fold(
        v2_surface,
        chunk("agent_message_chunk", "m", "a"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"},
        {"sessionUpdate": "notice", "severity": "info", "title": "n1"},
    )
    before = state.snapshot()
    for update in (
        chunk("agent_message_chunk", "m", "b"),
        chunk("agent_message_chunk", "m2", "new"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": tool_content("x"),
        },
        {"sessionUpdate": "notice", "severity": "info", "title": "n2"},
    ):
        state.apply(decode(v2_surface, update))
    middle = state.snapshot()
    state.apply(decode(v2_surface, chunk("agent_message_chunk", "m", "c")))
    assert before.messages["agent", "m"].text() == "a" and ("agent", "m2") not in before.messages
    assert before.tool_calls["c"].status == "in_progress" and before.tool_calls["c"].content == []
    assert [n.title for n in before.notices] == ["n1"]
    assert middle.messages["agent", "m"].text() == "ab"
    assert (
        state.messages["agent", "m"].text() == "abc" and state.tool_calls["c"].status == "completed"
    )


# ------------------------------------------------------------------ v1


def test_v1_chunks_without_message_id_group_by_runs_of_one_role(v1_surface: AnySurface) -> None:
    state = fold(
        v1_surface,
        {"sessionUpdate": "agent_message_chunk", "content": text("a")},
        {"sessionUpdate": "agent_message_chunk", "content": text("b")},
        {"sessionUpdate": "agent_thought_chunk", "content": text("t")},
        {"sessionUpdate": "agent_message_chunk", "content": text("c")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("d")},
    )
    assert [(m.message_id, m.role, m.text()) for m in state.messages.values()] == [
        (None, "agent", "ab"),
        (None, "thought", "t"),
        (None, "agent", "c"),
        ("m", "agent", "d"),
    ]


def test_v1_tool_call_then_updates_where_null_leaves_unchanged(v1_surface: AnySurface) -> None:
    state = fold(
        v1_surface,
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Edit", "kind": "edit"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "status": "in_progress",
            "title": None,
        },
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "x", "priority": "low", "status": "pending"}],
        },
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    )
    call = state.tool_calls["c"]
    assert (call.title, call.kind, call.status) == ("Edit", "edit", "in_progress")
    assert [e.content for e in state.plan] == ["x"] and state.current_mode_id == "code"


# ------------------------------------------------------------------ recorded streams


@functools.cache
def streams(version: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, str(MAKE_STREAMS), "--version", version, "--messages", "3000"],
        check=True,
        capture_output=True,
    ).stdout
    updates = []
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("method") == "session/update":
            updates.append(message["params"]["update"])
    return updates


def reference_fold(updates: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Agent message text and tool call (title, kind, status, content count), from raw JSON."""
    texts: dict[str, list[str]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for u in updates:
        tag = u["sessionUpdate"]
        if tag == "agent_message_chunk" and u["content"]["type"] == "text":
            texts.setdefault(u["messageId"], []).append(u["content"]["text"])
        elif tag == "agent_message" and "content" in u:
            blocks = u["content"] or []
            texts[u["messageId"]] = [b["text"] for b in blocks if b["type"] == "text"]
        elif tag == "agent_message":
            texts.setdefault(u["messageId"], [])
        elif tag == "tool_call_update":
            call = calls.setdefault(
                u["toolCallId"], {"title": None, "kind": "other", "status": "pending", "n": 0}
            )
            for field, reset in (("title", None), ("kind", "other"), ("status", "pending")):
                if field in u:
                    call[field] = reset if u[field] is None else u[field]
            if "content" in u:
                call["n"] = len(u["content"] or [])
        elif tag == "tool_call_content_chunk":
            call = calls.setdefault(
                u["toolCallId"], {"title": None, "kind": "other", "status": "pending", "n": 0}
            )
            call["n"] += 1
    return {k: "".join(v) for k, v in texts.items()}, calls


def test_every_v2_variant_of_a_recorded_stream_folds_like_the_reference(
    v2_surface: AnySurface,
) -> None:
    updates = streams("v2")
    tags = {u["sessionUpdate"] for u in updates}
    union = typing.get_args(typing.get_args(v2.SessionUpdate)[0])
    known = {cls.__struct_config__.tag for cls in union}
    assert known <= tags, f"make_streams lacks {known - tags}"
    state = fold(v2_surface, *updates)
    assert not state.unknown
    texts, calls = reference_fold(updates)
    agent = {m.message_id: m.text() for m in state.messages.values() if m.role == "agent"}
    assert agent == texts
    ours = {
        k: {"title": c.title, "kind": c.kind, "status": c.status, "n": len(c.content)}
        for k, c in state.tool_calls.items()
    }
    assert ours == calls


def test_a_recorded_v1_stream_folds_every_variant(v1_surface: AnySurface) -> None:
    updates = streams("v1")
    state = fold(v1_surface, *updates)
    assert not state.unknown
    assert state.tool_calls and state.messages and state.plan and state.available_commands
    statuses = {c.status for c in state.tool_calls.values()}
    assert statuses <= {"pending", "in_progress", "completed", "failed"}


def test_snapshots_of_a_long_stream_match_a_fresh_fold(v2_surface: AnySurface) -> None:
    """Copy-on-write: a snapshot taken every 50 updates still equals a fresh fold of the
    prefix after 50 more updates were applied."""
    updates = [decode(v2_surface, u) for u in streams("v2")[:600]]
    state = SessionState()
    for start in range(0, len(updates), 50):
        snap = state.snapshot()
        for update in updates[start : start + 50]:
            state.apply(update)
        fresh = SessionState()
        for update in updates[:start]:
            fresh.apply(update)
        assert {k: m.content for k, m in snap.messages.items()} == {
            k: m.content for k, m in fresh.messages.items()
        }
        assert {k: (c.status, c.title, c.content) for k, c in snap.tool_calls.items()} == {
            k: (c.status, c.title, c.content) for k, c in fresh.tool_calls.items()
        }
        assert {k: t.output() for k, t in snap.terminals.items()} == {
            k: t.output() for k, t in fresh.terminals.items()
        }


# ------------------------------------------------------------------ resume / load / replay


def session_update(session_id: str, body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": session_id, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


async def test_v2_resume_replays_the_history_into_the_state_before_returning(
    v2_surface: AnySurface,
) -> None:
    history = [
        session_update(
            "sess_1", {"sessionUpdate": "user_message", "messageId": "u", "content": [text("q")]}
        ),
        *[
            session_update("sess_1", chunk("agent_message_chunk", "a", str(i % 10)))
            for i in range(1500)
        ],
        session_update(
            "sess_1", {"sessionUpdate": "agent_message", "messageId": "b", "content": [text("B")]}
        ),
    ]  # more than the subscription's buffer (1024): the replay is read while it arrives
    async with raw_agent(capabilities={"session": {}}, surface=v2_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                assert call["method"] == "session/resume"
                assert call["params"] == {
                    "sessionId": "sess_1",
                    "cwd": "/w",
                    "mcpServers": [],
                    "replayFrom": {"type": "start"},
                }
                await peer.send(*history, response(call["id"], {}))

            nursery.start_soon(agent)
            opened = await open_session(conn.v2, cwd="/w", session_id="sess_1")
        assert (opened.how, opened.session_id) == ("resumed", "sess_1")
        texts = {k: m.text() for k, m in opened.state.messages.items()}
        assert texts == {
            ("user", "u"): "q",
            ("agent", "a"): "0123456789" * 150,
            ("agent", "b"): "B",
        }


@pytest.mark.parametrize(
    ("capabilities", "expect"),
    [({}, ["session/new"]), ({"session": {}}, ["session/resume", "session/new"])],
)
async def test_v2_without_the_session_capability_or_with_resume_missing_opens_a_new_one(
    v2_surface: AnySurface, capabilities: dict[str, Any], expect: list[str]
) -> None:
    async with raw_agent(capabilities=capabilities, surface=v2_surface) as (conn, peer):
        methods: list[str] = []
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                methods.append(call["method"])
                if call["method"] == "session/resume":
                    await peer.send(error_response(call["id"], -32601, "Method not found"))
                    call = await peer.receive()
                    methods.append(call["method"])
                await peer.send(response(call["id"], {"sessionId": "sess_new"}))

            nursery.start_soon(agent)
            opened = await open_session(conn.v2, cwd="/w", session_id="sess_old")
        assert (opened.how, opened.session_id, methods) == ("new", "sess_new", expect)


async def test_v1_load_replays_into_the_state_and_without_load_a_new_session_opens(
    v1_surface: AnySurface,
) -> None:
    async with raw_agent(capabilities={"loadSession": True}, surface=v1_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                assert call["method"] == "session/load"
                replayed = [
                    session_update(
                        "s", {"sessionUpdate": "user_message_chunk", "content": text("hi")}
                    ),
                    session_update(
                        "s", {"sessionUpdate": "agent_message_chunk", "content": text("yo")}
                    ),
                ]
                await peer.send(*replayed, response(call["id"], {}))

            nursery.start_soon(agent)
            opened = await open_session(conn.v1, cwd="/w", session_id="s")
        assert opened.how == "loaded"
        assert [(m.role, m.text()) for m in opened.state.messages.values()] == [
            ("user", "hi"),
            ("agent", "yo"),
        ]
    async with raw_agent(surface=v1_surface) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def new_only() -> None:
                call = await peer.receive()
                assert call["method"] == "session/new"
                await peer.send(response(call["id"], {"sessionId": "fresh"}))

            nursery.start_soon(new_only)
            opened1 = await open_session(conn.v1, cwd="/w", session_id="s")
        assert (opened1.how, opened1.session_id) == ("new", "fresh")


async def test_authenticated_retries_after_authentication_required() -> None:
    async with raw_agent(version=1) as (conn, peer):
        async with anyio.create_task_group() as nursery:
            seen: list[str] = []

            async def agent() -> None:
                call = await peer.receive()
                seen.append(call["method"])
                await peer.send(error_response(call["id"], -32000, "Authentication required"))
                auth = await peer.receive()
                seen.append(f"{auth['method']} {auth['params']['methodId']}")
                await peer.send(response(auth["id"], {}))
                call = await peer.receive()
                seen.append(call["method"])
                await peer.send(response(call["id"], {"sessionId": "s2"}))

            nursery.start_soon(agent)
            peer_v1 = conn.v1.peer
            new = await authenticated(
                lambda: peer_v1.session_new(v1.NewSessionRequest(cwd="/w", mcp_servers=[])),
                lambda: peer_v1.authenticate(v1.AuthenticateRequest(method_id="api_key")),
            )
        assert new.session_id == "s2"
        assert seen == ["session/new", "authenticate api_key", "session/new"]


async def test_the_typescript_v2_agent_without_session_support_gets_a_new_session() -> None:
    command = ["node", "ts/agent_v2.mjs", "--no-session-capability"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    async with open_agent(command, v2=TurnClientV2, cwd=str(INTEROP), env=env) as conn:
        await conn.initialize(INIT_V2)
        opened = await open_session(conn.v2, cwd=str(INTEROP), session_id="sess_gone")
        assert opened.how == "new" and opened.session_id.startswith("sess_ts_v2_")


# ------------------------------------------------------------------ every surface


def test_an_update_of_any_surface_folds_into_its_versions_state(surface: AnySurface) -> None:
    """Was: `SessionState` put every update of `v2.unstable` into `unknown` (its handlers were
    keyed by the stable classes), `V1SessionState` likewise for `v1.unstable`."""
    state = state_for(surface)
    for update in (
        chunk("agent_message_chunk", "m", "Hel"),
        chunk("agent_message_chunk", "m", "lo"),
        {"sessionUpdate": "usage_update", "used": 5, "size": 100},
    ):
        state.apply(decode_update(surface, update))
    assert state.unknown == []
    assert [(m.role, m.text()) for m in state.messages.values()] == [("agent", "Hello")]
    assert state.usage is not None and state.usage.used == 5
