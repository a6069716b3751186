"""acpwire.client.permissions: policies answering `session/request_permission` (v2 and v1), the
remembered `*_always` answers, `cancelled` vs a reject option, and policies inside a turn."""

from __future__ import annotations

import json
from typing import Any

import anyio
import msgspec
import pytest

from acp_schema import v1, v2
from acpwire.client import (
    AgentRequests,
    PermissionRequested,
    Permissions,
    SessionState,
    approve_all,
    approve_reads,
    deny_all,
    prompt,
    rules,
)
from acpwire.client.permissions import context_of
from helpers.clients import TurnClientV2
from helpers.constants import PROMPT_V2, SESSION
from helpers.lines import state, user_message
from helpers.raw import request, response
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, decode_params

pytestmark = pytest.mark.usefixtures("loop")

OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]


def v2_request(
    kind: str | None = "edit",
    name: str | None = None,
    options: list[dict[str, Any]] = OPTIONS,
    tool_call_id: str = "c1",
) -> v2.RequestPermissionRequest:
    tool_call: dict[str, Any] = {"toolCallId": tool_call_id}
    if kind:
        tool_call["kind"] = kind
    if name:
        tool_call["name"] = name
    params = {
        "sessionId": "s",
        "title": "May I?",
        "subject": {"type": "tool_call", "toolCall": tool_call},
        "options": options,
    }
    return decode_v2(params)


def command_request(command: str) -> v2.RequestPermissionRequest:
    subject = {"type": "command", "command": command, "cwd": "/w"}
    params = {"sessionId": "s", "title": "Run?", "subject": subject, "options": OPTIONS}
    return decode_v2(params)


def v1_request(kind: str, options: list[dict[str, Any]] = OPTIONS) -> v1.RequestPermissionRequest:
    params = {"sessionId": "s", "toolCall": {"toolCallId": "c1", "kind": kind}, "options": options}
    return decode_params(v1.SURFACE, "session/request_permission", params)


def decode_v2(params: dict[str, Any]) -> Any:
    return decode_params(v2.SURFACE, "session/request_permission", params)


def chosen(answer: Any) -> str:
    option_id = getattr(answer.outcome, "option_id", None)
    return option_id or type(answer.outcome).__name__.removesuffix("PermissionOutcome").lower()


async def test_ready_policies_choose_among_the_offered_options() -> None:
    read, edit = v2_request("read"), v2_request("edit")
    assert chosen(await Permissions(approve_all).answer(edit)) == "once"
    assert chosen(await Permissions(deny_all).answer(read)) == "no"
    assert chosen(await Permissions(approve_reads).answer(read)) == "once"
    assert chosen(await Permissions(approve_reads).answer(edit)) == "no"  # asked, nobody: reject
    assert chosen(await Permissions(approve_all).answer(v1_request("edit"))) == "once"
    assert chosen(await Permissions(deny_all).answer(v1_request("read"))) == "no"


async def test_without_a_fitting_option_the_answer_is_cancelled() -> None:
    only_allow = [OPTIONS[0]]
    only_reject = [OPTIONS[2]]
    assert chosen(await Permissions(deny_all).answer(v2_request(options=only_allow))) == "cancelled"
    # allowed by the policy, but the agent offers no allow option: not approved
    assert chosen(await Permissions(approve_all).answer(v2_request(options=only_reject))) == (
        "cancelled"
    )
    always = [OPTIONS[1], OPTIONS[3]]
    assert chosen(await Permissions(approve_all).answer(v2_request(options=always))) == "always"
    v1_answer = await Permissions(deny_all).answer(v1_request("x", options=only_allow))
    assert isinstance(v1_answer.outcome, v1.CancelledPermissionOutcome)
    assert chosen(await Permissions(deny_all).answer(v2_request(options=only_allow))) == "cancelled"


async def test_per_tool_rules_by_name_then_kind_and_command_subjects() -> None:
    policy = Permissions(
        rules({"git_push": "reject", "edit": "allow", "execute": "reject"}, default="allow")
    )
    assert chosen(await policy.answer(v2_request("edit", name="git_push"))) == "no"
    assert chosen(await policy.answer(v2_request("edit", name="write_file"))) == "once"
    assert chosen(await policy.answer(command_request("rm -rf build"))) == "no"
    assert chosen(await policy.answer(v2_request("fetch"))) == "once"


def test_the_context_takes_the_kind_from_the_state_when_the_subject_omits_it() -> None:
    state = SessionState()
    tool_call = {"sessionUpdate": "tool_call_update", "toolCallId": "c9", "kind": "read"}
    line = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": tool_call},
    }
    state.apply(v2.CLIENT_CODEC.decode(json.dumps(line).encode()).params.update)
    context = context_of(v2_request(kind=None, tool_call_id="c9"), state)
    assert context.kind == "read" and context.tool_call_id == "c9"
    assert context_of(command_request("ls")).command == "ls"


async def test_an_always_answer_is_remembered_per_session_and_tool() -> None:
    permissions = Permissions()  # ask every time
    asked: list[str] = []

    def asking(option_id: str) -> Any:
        async def ask() -> v2.RequestPermissionResponse:
            asked.append(option_id)
            outcome = v2.SelectedPermissionOutcome(option_id=option_id)
            return v2.RequestPermissionResponse(outcome=outcome)

        return ask

    assert chosen(await permissions.answer(v2_request("edit"), asking("always"))) == "always"
    assert chosen(await permissions.answer(v2_request("edit"), asking("no"))) == "always"
    assert chosen(await permissions.answer(v2_request("read"), asking("never"))) == "never"
    assert chosen(await permissions.answer(v2_request("read"), asking("once"))) == "never"
    assert asked == ["always", "never"]
    other_session = v2_request("edit")
    other_session.session_id = "other"
    assert chosen(await permissions.answer(other_session, asking("once"))) == "once"
    permissions.forget("s")
    assert chosen(await permissions.answer(v2_request("edit"), asking("no"))) == "no"


class ReadsApprovedClient(TurnClientV2):
    def __init__(self, agent: Any) -> None:
        self.requests = AgentRequests(Permissions(approve_reads))


async def test_in_a_turn_the_policy_answers_and_only_asked_requests_become_events() -> None:
    def permission(request_id: int, kind: str) -> dict[str, Any]:
        params = v2_request(kind)
        params.session_id = SESSION
        return request(request_id, "session/request_permission", msgspec.to_builtins(params))

    async with raw_agent(client=ReadsApprovedClient) as (conn, peer):
        events: list[str] = []
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                await peer.send(response(call["id"], {"messageId": "u"}), user_message("u"))
                await peer.send(state("running"), permission(1, "read"))
                assert (await peer.receive())["result"]["outcome"]["optionId"] == "once"
                await peer.send(permission(2, "edit"))  # asked: the user says always
                assert (await peer.receive())["result"]["outcome"]["optionId"] == "always"
                await peer.send(permission(3, "edit"))  # remembered
                assert (await peer.receive())["result"]["outcome"]["optionId"] == "always"
                await peer.send(state("idle", "end_turn"))

            nursery.start_soon(agent)
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                async for event in turn:
                    if isinstance(event, PermissionRequested):
                        events.append(event.request.title)
                        event.select("always")
        assert events == ["May I?"]  # only the one the policy asked
        assert turn.stop_reason == "end_turn"


# ------------------------------------------------------------------ every surface


def permission_request(surface: AnySurface, kind: str) -> Any:
    """A permission request for a tool call of `kind`, as `surface`'s client decodes it."""
    tool_call = {"toolCallId": "c1", "kind": kind}
    params: dict[str, Any] = {"sessionId": "s", "options": OPTIONS}
    if surface.protocol_version == 2:
        params |= {"title": "May I?", "subject": {"type": "tool_call", "toolCall": tool_call}}
    else:
        params["toolCall"] = tool_call
    return decode_params(surface, "session/request_permission", params)


async def test_the_answer_is_of_the_requests_surface(surface: AnySurface) -> None:
    """Was: a request of `v2.unstable` was answered with a v1 `RequestPermissionResponse`
    (anything not a stable v2 request was taken for v1), which its connection refuses."""
    response_type = surface.client_methods["session/request_permission"].result.type
    for policy in (approve_all, deny_all):
        answer = await Permissions(policy).answer(permission_request(surface, "edit"))
        assert type(answer) is response_type
    only_allow = permission_request(surface, "edit")
    only_allow.options = only_allow.options[:1]
    cancelled = await Permissions(deny_all).answer(only_allow)
    assert type(cancelled) is response_type and chosen(cancelled) == "cancelled"


async def test_approve_reads_sees_the_tool_calls_kind_on_every_surface(
    surface: AnySurface,
) -> None:
    """Was: on `v2.unstable` the tool call's kind was lost (so a read was asked about, and
    with nobody to ask rejected); on `v1.unstable` the request was read as a v2 one."""
    assert chosen(await Permissions(approve_reads).answer(permission_request(surface, "read"))) == (
        "once"
    )
    assert chosen(await Permissions(approve_reads).answer(permission_request(surface, "edit"))) == (
        "no"
    )
    context = context_of(permission_request(surface, "search"))
    assert (context.kind, context.tool_call_id) == ("search", "c1")
