"""The session fold keeps the schema's rules, each test quoting the description it follows
(schema/v1 and schema/v2): message ID spaces, plan replacement whatever the content type, a
tool call update for an id never seen, and the patch rule of every tool call field."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_schema import OpenVariant, v1, v2
from acpwire.client import SessionState, V1SessionState
from acpwire.client.state import TOOL_CALL_FIELDS
from helpers.folds import chunk, decode, fold, text
from helpers.surfaces import AnySurface, module

# ------------------------------------------------------------------ message ID spaces


def test_v2_each_message_type_has_its_own_id_space(v2_surface: AnySurface) -> None:
    """v2 `MessageId`: "Each message type, such as user messages, agent messages, and agent
    thoughts, has its own ID space: messages of different types may share an ID and remain
    distinct messages." """
    state = fold(
        v2_surface,
        {"sessionUpdate": "user_message", "messageId": "m", "content": [text("question")]},
        chunk("agent_message_chunk", "m", "ans"),
        chunk("agent_thought_chunk", "m", "hmm"),
        chunk("agent_message_chunk", "m", "wer"),
        {"sessionUpdate": "user_message", "messageId": "m", "content": [text("edited")]},
    )
    assert [(key, m.message_id, m.role, m.text()) for key, m in state.messages.items()] == [
        (("user", "m"), "m", "user", "edited"),  # the upsert replaced the user message only
        (("agent", "m"), "m", "agent", "answer"),
        (("thought", "m"), "m", "thought", "hmm"),
    ]


def test_v2_a_full_message_patches_only_its_own_type(v2_surface: AnySurface) -> None:
    """v2 `agent_thought`: "When a client receives another `agent_thought` update with the
    same `messageId`, fields in the new update patch the previous fields for that message."
    (that message: the thought, not the agent message of the same id)."""
    state = fold(
        v2_surface,
        chunk("agent_message_chunk", "x", "said"),
        {"sessionUpdate": "agent_thought", "messageId": "x", "content": None, "_meta": {"k": 1}},
    )
    assert state.messages["agent", "x"].text() == "said"
    assert state.messages["agent", "x"].meta is None
    assert state.messages["thought", "x"].content == []
    assert state.messages["thought", "x"].meta == {"k": 1}


def test_v1_chunks_of_different_types_with_one_id_stay_apart(v1_surface: AnySurface) -> None:
    """v1 `ContentChunk.messageId`: "All chunks belonging to the same message share the same
    `messageId`." A v1 message is of one type (its chunks' tag), so a user chunk and an agent
    chunk are never one message, even under one id; chunks without an id still group by
    runs of one role, keyed (role, n)."""
    state = fold(
        v1_surface,
        {"sessionUpdate": "user_message_chunk", "messageId": "m", "content": text("q")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")},
        {"sessionUpdate": "agent_thought_chunk", "messageId": "m", "content": text("t")},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("b")},
        {"sessionUpdate": "agent_message_chunk", "content": text("c")},
        {"sessionUpdate": "agent_message_chunk", "content": text("d")},
        {"sessionUpdate": "user_message_chunk", "content": text("e")},
    )
    assert [(key, m.message_id, m.text()) for key, m in state.messages.items()] == [
        (("user", "m"), "m", "q"),
        (("agent", "m"), "m", "ab"),
        (("thought", "m"), "m", "t"),
        (("agent", 3), None, "cd"),
        (("user", 4), None, "e"),
    ]


def test_snapshots_keep_messages_of_each_type_apart(v2_surface: AnySurface) -> None:
    state = fold(v2_surface, chunk("agent_message_chunk", "m", "a"))
    before = state.snapshot()
    state.apply(decode(v2_surface, chunk("user_message_chunk", "m", "u")))
    state.apply(decode(v2_surface, chunk("agent_message_chunk", "m", "b")))
    assert list(before.messages) == [("agent", "m")]
    assert before.messages["agent", "m"].text() == "a"
    assert state.messages["agent", "m"].text() == "ab"
    assert state.messages["user", "m"].text() == "u"


# ------------------------------------------------------------------ plans

ITEMS = {
    "sessionUpdate": "plan_update",
    "plan": {
        "type": "items",
        "planId": "p",
        "entries": [{"content": "step", "priority": "high", "status": "pending"}],
    },
}
MERMAID = {
    "sessionUpdate": "plan_update",
    "plan": {"type": "_mermaid", "planId": "p", "source": "graph TD; a-->b", "x": {"y": [1]}},
}


def test_v2_a_plan_of_an_unknown_content_type_still_replaces_the_plan(
    v2_surface: AnySurface,
) -> None:
    """v2 `PlanUpdateContent` (other): "Receivers that do not understand this content type
    should preserve the raw payload when storing [...]. It still replaces any earlier content
    for the same `planId`." """
    state = fold(v2_surface, ITEMS, MERMAID)
    plan = state.plans["p"]
    assert isinstance(plan, OpenVariant) and plan.tag == "_mermaid"
    assert plan == MERMAID["plan"]  # the raw payload, as received
    assert state.unknown == []  # plan_update is a known variant
    state.apply(decode(v2_surface, ITEMS))  # and a known content type replaces it back
    assert isinstance(state.plans["p"], module(v2_surface).PlanItems)
    assert [e.content for e in state.plans["p"].entries] == ["step"]


def test_v2_an_unknown_plan_content_without_a_plan_id_goes_to_unknown(
    v2_surface: AnySurface,
) -> None:
    """No `planId` (required by the schema): nothing to replace, the update is kept whole."""
    bad = {"sessionUpdate": "plan_update", "plan": {"type": "_mermaid", "planId": 7}}
    state = fold(v2_surface, ITEMS, bad)
    assert isinstance(state.plans["p"], module(v2_surface).PlanItems)
    assert [type(u).__name__ for u in state.unknown] == ["PlanUpdate"]


def test_v1_a_plan_replaces_the_whole_plan(v1_surface: AnySurface) -> None:
    """v1 `Plan.entries`: "The client replaces the entire plan with each update." """
    entry = {"priority": "low", "status": "pending"}
    state = fold(
        v1_surface,
        {
            "sessionUpdate": "plan",
            "entries": [{**entry, "content": "a"}, {**entry, "content": "b"}],
        },
        {"sessionUpdate": "plan", "entries": [{**entry, "content": "c"}]},
    )
    assert [e.content for e in state.plan] == ["c"]


# ------------------------------------------------------------------ tool calls never seen


def test_v2_a_tool_call_update_of_a_new_id_creates_it_at_the_defaults(
    v2_surface: AnySurface,
) -> None:
    """v2 `ToolCallUpdate`: "When a client receives a tool call ID it has not seen before,
    omitted fields start at their protocol defaults." """
    state = fold(
        v2_surface, {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}
    )
    call = state.tool_calls["c"]
    assert (call.title, call.kind, call.status, call.content) == (None, "other", "completed", [])


def test_v1_a_tool_call_update_of_an_id_never_seen_creates_the_tool_call(
    v1_surface: AnySurface,
) -> None:
    """v1 `ToolCallUpdate`: "An update to an existing tool call." The fold still creates a
    tool call for an id it has not seen (the choice documented on V1SessionState: an agent
    that skipped `tool_call`, or a subscriber that missed it, keeps the call's progress)."""
    state = fold(
        v1_surface,
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Run"},
    )
    call = state.tool_calls["c"]
    assert (call.title, call.kind, call.status, call.content) == ("Run", "other", "in_progress", [])
    assert state.unknown == []
    assert "an update to an existing tool call" in (V1SessionState.__doc__ or "")


def test_v1_a_permission_request_for_an_unseen_tool_call_creates_it_too() -> None:
    state = V1SessionState()
    state.apply_permission_request(
        v1.RequestPermissionRequest(
            session_id="s",
            tool_call=v1.ToolCallUpdate(tool_call_id="c", title="Delete /tmp/x", kind="delete"),
            options=[],
        )
    )
    assert (state.tool_calls["c"].title, state.tool_calls["c"].kind) == ("Delete /tmp/x", "delete")


# ------------------------------------------------------------------ every tool call field

VALUES: dict[str, Any] = {
    "name": "bash",
    "title": "Run",
    "kind": "execute",
    "status": "in_progress",
    "locations": [{"path": "/repo/a.py", "line": 3}],
    "rawInput": {"cmd": "ls"},
    "rawOutput": {"out": "a.py"},
    "capabilities": {"cancel": {}},
}


def wire_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


def stored(call: Any, field: str) -> Any:
    """The field's value as JSON (structs by their wire names)."""
    return msgspec.to_builtins(getattr(call, field))


def test_the_table_names_the_fields_of_both_versions_updates() -> None:
    names = [name for name, _ in TOOL_CALL_FIELDS]
    for cls in (v2.ToolCallUpdate, v2.ToolCallProgress):
        assert set(names) <= set(cls.__struct_fields__), cls
    v1_fields = set(v1.ToolCallUpdate.__struct_fields__)
    assert set(names) - v1_fields == {"capabilities"}
    assert set(names) - {"capabilities"} <= set(v1.ToolCall.__struct_fields__)
    assert {wire_name(n) for n in names} == set(VALUES)


@pytest.mark.parametrize(("field", "start"), TOOL_CALL_FIELDS)
def test_v2_each_tool_call_field_omitted_keeps_null_resets_value_replaces(
    v2_surface: AnySurface, field: str, start: Any
) -> None:
    """v2 `ToolCallUpdate`: "omitted fields leave the existing tool call value unchanged,
    `null` clears or unsets the value, and concrete values replace the previous value"
    (`kind`: "`null` resets it to `other`"; `status`: "`null` resets it to `pending`")."""
    wire = wire_name(field)
    state = SessionState()
    new = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    state.apply(decode(v2_surface, new))
    assert getattr(state.tool_calls["c"], field) == start
    state.apply(decode(v2_surface, {**new, wire: VALUES[wire]}))
    assert stored(state.tool_calls["c"], field) == VALUES[wire]
    state.apply(decode(v2_surface, new))
    assert stored(state.tool_calls["c"], field) == VALUES[wire]
    state.apply(decode(v2_surface, {**new, wire: None}))
    assert getattr(state.tool_calls["c"], field) == start


@pytest.mark.parametrize(
    ("field", "start"), [(n, s) for n, s in TOOL_CALL_FIELDS if n != "capabilities"]
)
def test_v1_each_tool_call_field_null_and_omitted_keep(
    v1_surface: AnySurface, field: str, start: Any
) -> None:
    """v1 `ToolCallUpdate.name`: "Omitting it or sending `null` both mean that the existing
    name is left unchanged." (v1's update has no clearing for any field)."""
    wire = wire_name(field)
    value = VALUES[wire]
    state = fold(v1_surface, {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Start"})
    assert getattr(state.tool_calls["c"], field) == ("Start" if field == "title" else start)
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    state.apply(decode(v1_surface, {**update, wire: value}))
    assert stored(state.tool_calls["c"], field) == value
    state.apply(decode(v1_surface, {**update, wire: None}))
    state.apply(decode(v1_surface, update))
    assert stored(state.tool_calls["c"], field) == value
    start_again = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T", wire: value}
    state.apply(
        decode(v1_surface, start_again)
    )  # a repeated `tool_call` starts it over, fields given
    assert stored(state.tool_calls["c"], field) == value
