"""The agent's turn helpers refuse what the schema forbids for their own arguments: a
ValueError naming the rule at the call, and nothing sent (v2 and v1, on both loops).

The helpers talk to a recording peer: every request and notification they send is kept, so
a test sees exactly what went out."""

from __future__ import annotations

from typing import Any

import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, MethodSpec
from acpwire.agent import CustomStopReason, Turn
from acpwire.agent.turns import PermissionChoice, TurnToolCall, V1Turn, V1TurnToolCall

pytestmark = pytest.mark.usefixtures("loop")

NO_OPTIONS = (
    r"session/request_permission: options must contain at least one option \(schema: minItems 1\)"
)
TWICE = r"option id 'allow' appears twice: each optionId MUST be unique within the request"
RELATIVE = r"tool call location 'src/a\.py' is relative: ACP paths MUST be absolute"


class Recording:
    """A Caller that keeps what is sent; a permission request is answered `cancelled`."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def request(self, spec: MethodSpec[Any, Any], params: Any) -> Any:
        self.sent.append((spec.name, params))
        assert spec.result is not None
        return spec.result.convert({"outcome": {"outcome": "cancelled"}})

    async def notify(self, spec: MethodSpec[Any, None], params: Any) -> None:
        self.sent.append((spec.name, params))

    def updates(self) -> list[Any]:
        return [params.update for method, params in self.sent if method == "session/update"]


def v2_turn() -> tuple[Turn, Recording]:
    peer = Recording()
    return Turn(v2.ClientPeer(peer), "s", [], "user_1"), peer


def v1_turn() -> tuple[V1Turn, Recording]:
    peer = Recording()
    return V1Turn(v1.ClientPeer(peer), "s", [], "turn_1"), peer


def v2_permission(*option_ids: str) -> v2.RequestPermissionRequest:
    options = [v2.PermissionOption(option_id=i, name=i, kind="allow_once") for i in option_ids]
    return v2.RequestPermissionRequest(session_id="s", title="Run?", options=options)


def v1_permission(*option_ids: str) -> v1.RequestPermissionRequest:
    options = [v1.PermissionOption(option_id=i, name=i, kind="allow_once") for i in option_ids]
    return v1.RequestPermissionRequest(
        session_id="s", tool_call=v1.ToolCallUpdate(tool_call_id="c"), options=options
    )


# --------------------------------------------------------------------------- permission


async def test_v2_a_permission_request_without_options_is_refused_before_anything_is_sent() -> None:
    """v2 `RequestPermissionRequest.options`: "Must contain at least one option." (minItems 1;
    without the check the request went out, after a `requires_action` state update)."""
    turn, peer = v2_turn()
    with pytest.raises(ValueError, match=NO_OPTIONS):
        await turn.request_permission(v2_permission())
    call = TurnToolCall(turn, "c")
    with pytest.raises(ValueError, match=NO_OPTIONS):
        await call.request_permission("Run?", options=())
    assert peer.sent == []
    assert await call.request_permission("Run?") is None  # the default options go out
    assert [method for method, _ in peer.sent] == [
        "session/update",
        "session/request_permission",
        "session/update",
    ]


async def test_v2_permission_option_ids_must_be_unique() -> None:
    """v2 `PermissionOption.optionId`: "MUST be unique within the request." """
    turn, peer = v2_turn()
    with pytest.raises(ValueError, match=TWICE):
        await turn.request_permission(v2_permission("allow", "reject", "allow"))
    twice = [
        PermissionChoice("allow", "Yes", "allow_once"),
        PermissionChoice("allow", "No", "reject_once"),
    ]
    with pytest.raises(ValueError, match=TWICE):
        await TurnToolCall(turn, "c").request_permission("Run?", twice)
    assert peer.sent == []


async def test_v1_permission_option_ids_must_be_unique_and_no_options_is_allowed() -> None:
    """v1 `PermissionOptionId`: "Unique identifier for a permission option."; v1's `options`
    has no minItems, so an empty list is sent."""
    turn, peer = v1_turn()
    with pytest.raises(ValueError, match=TWICE):
        turn.request_permission(v1_permission("allow", "allow"))
    twice = [PermissionChoice("allow", "Yes", "allow_once")] * 2
    with pytest.raises(ValueError, match=TWICE):
        await V1TurnToolCall(turn, "c").request_permission("Run?", twice)
    assert peer.sent == []
    await turn.request_permission(v1_permission())
    assert [(m, len(p.options)) for m, p in peer.sent] == [("session/request_permission", 0)]


# --------------------------------------------------------------------------- locations


async def test_v2_tool_call_locations_are_absolute_with_lines_from_1() -> None:
    """v2 `ToolCallLocation.path`: "The absolute file path being accessed or modified.";
    `line`: "Optional 1-based line number within the file. [...] `0` is invalid." """
    turn, peer = v2_turn()
    with pytest.raises(ValueError, match=RELATIVE):
        await turn.tool_call("Read", locations=["src/a.py"])
    with pytest.raises(ValueError, match=r"line 0 is out of range: lines are 1\.\.4294967295"):
        await turn.tool_call("Read", locations=[("/r/a.py", 0)])
    call = TurnToolCall(turn, "c")
    with pytest.raises(ValueError, match=RELATIVE):
        call.update(locations=[("src/a.py", 3)])  # raises at the call, before any await
    with pytest.raises(ValueError, match="line 4294967296 is out of range"):
        call.update(locations=[("/r/a.py", 2**32)])
    assert peer.sent == []
    await turn.tool_call("Read", locations=["/r/a.py", ("/r/b.py", 1)])
    await call.update(locations=[("/r/a.py", 2**32 - 1)], status="completed")
    sent = [(u.tool_call_id, [(p.path, p.line) for p in u.locations]) for u in peer.updates()]
    assert sent == [
        ("call_user_1_0", [("/r/a.py", UNSET), ("/r/b.py", 1)]),
        ("c", [("/r/a.py", 2**32 - 1)]),
    ]


async def test_v1_tool_call_locations_are_absolute_with_lines_from_0() -> None:
    """v1 `ToolCallLocation.path`: "The absolute file path being accessed or modified.";
    `line`: uint32, minimum 0."""
    turn, peer = v1_turn()
    with pytest.raises(ValueError, match=RELATIVE):
        await turn.tool_call("Read", locations=["src/a.py"])
    with pytest.raises(ValueError, match=r"line -1 is out of range: lines are 0\.\.4294967295"):
        await turn.tool_call("Read", locations=[("/r/a.py", -1)])
    call = V1TurnToolCall(turn, "c", [v1.Content(content=v1.TextContent(text="kept"))])
    with pytest.raises(ValueError, match=RELATIVE):
        call.update(locations=["src/a.py"], content=[])
    assert len(call.content) == 1  # a refused update changes nothing
    assert peer.sent == []
    await turn.tool_call("Read", locations=[("/r/a.py", 0)])
    assert [[(p.path, p.line) for p in u.locations] for u in peer.updates()] == [[("/r/a.py", 0)]]


async def test_diff_paths_are_absolute_on_both_versions() -> None:
    """v1 `Diff.path`: "The absolute file path being modified." (v2: `changes` is
    authoritative for affected absolute paths.)"""
    v1_turn_, v1_peer = v1_turn()
    with pytest.raises(ValueError, match=r"diff path 'a\.py' is relative.*v1 Diff\.path"):
        V1TurnToolCall(v1_turn_, "c").diff("a.py", None, "x\n")
    v2_turn_, v2_peer = v2_turn()
    with pytest.raises(ValueError, match=r"diff path 'a\.py' is relative"):
        TurnToolCall(v2_turn_, "c").diff("a.py", None, "x\n")
    assert v1_peer.sent == v2_peer.sent == []


# --------------------------------------------------------------------------- state


async def test_a_state_or_stop_reason_that_is_not_acps_needs_an_underscore() -> None:
    """v2 `StateUpdate` (other): "Unknown values that do not begin with `_` are reserved for
    future ACP variants."; stop reasons likewise (custom ones MUST begin with `_`)."""
    turn, peer = v2_turn()
    with pytest.raises(ValueError, match=r"state 'paused' is not one of \['idle', 'requires_"):
        await turn.state("paused")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stop reason 'paused' is not one of"):
        await turn.state("idle", "paused")  # type: ignore[arg-type]
    assert peer.sent == []
    await turn.state("_thinking_hard")  # type: ignore[arg-type]
    await turn.state("idle", CustomStopReason("_paused"))
    assert [(u.state, u.stop_reason) for u in peer.updates()] == [
        ("_thinking_hard", UNSET),
        ("idle", "_paused"),
    ]


def test_the_checks_are_listed_in_the_helpers_docstring() -> None:
    import acpwire.agent.turns as turns

    doc = turns.__doc__ or ""
    for rule in ("minItems: 1", "unique within the request", "AbsolutePath", "begin with `_`"):
        assert rule in doc
