"""acpwire.client.permissions: policies answering `session/request_permission` (v2 and v1), the
remembered `*_always` answers, `cancelled` vs a reject option, and policies inside a turn."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acpwire.client import (
    AgentRequests,
    PermissionRequested,
    Permissions,
    approve_all,
    approve_reads,
    deny_all,
    prompt,
    rules,
)
from acpwire.client.permissions import context_of
from helpers.clients import turn_client
from helpers.constants import PROMPT_V2, SESSION
from helpers.lines import state, user_message
from helpers.raw import request, response
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, decode_params, decode_update, module, state_for

pytestmark = pytest.mark.usefixtures("loop")

OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]


def permission_request(
    surface: AnySurface,
    kind: str | None = "edit",
    name: str | None = None,
    options: list[dict[str, Any]] = OPTIONS,
    tool_call_id: str = "c1",
) -> Any:
    """A permission request for a tool call (of `kind`, named `name`), as `surface`'s client
    decodes it: v2 asks with a tool call subject, v1 names the tool call."""
    tool_call: dict[str, Any] = {"toolCallId": tool_call_id}
    if kind:
        tool_call["kind"] = kind
    if name:
        tool_call["name"] = name
    params: dict[str, Any] = {"sessionId": "s", "options": options}
    if surface.protocol_version == 2:
        params |= {"title": "May I?", "subject": {"type": "tool_call", "toolCall": tool_call}}
    else:
        params["toolCall"] = tool_call
    return decode_params(surface, "session/request_permission", params)


def command_request(surface: AnySurface, command: str) -> Any:
    """A v2 permission request with a command subject."""
    subject = {"type": "command", "command": command, "cwd": "/w"}
    params = {"sessionId": "s", "title": "Run?", "subject": subject, "options": OPTIONS}
    return decode_params(surface, "session/request_permission", params)


def chosen(answer: Any) -> str:
    option_id = getattr(answer.outcome, "option_id", None)
    return option_id or type(answer.outcome).__name__.removesuffix("PermissionOutcome").lower()


async def test_ready_policies_choose_among_the_offered_options(surface: AnySurface) -> None:
    read, edit = permission_request(surface, "read"), permission_request(surface, "edit")
    assert chosen(await Permissions(approve_all).answer(edit)) == "once"
    assert chosen(await Permissions(deny_all).answer(read)) == "no"
    assert chosen(await Permissions(approve_reads).answer(read)) == "once"
    assert chosen(await Permissions(approve_reads).answer(edit)) == "no"  # asked, nobody: reject


async def test_without_a_fitting_option_the_answer_is_cancelled(surface: AnySurface) -> None:
    def offering(*options: dict[str, Any]) -> Any:
        return permission_request(surface, options=list(options))

    assert chosen(await Permissions(deny_all).answer(offering(OPTIONS[0]))) == "cancelled"
    # allowed by the policy, but the agent offers no allow option: not approved
    assert chosen(await Permissions(approve_all).answer(offering(OPTIONS[2]))) == "cancelled"
    always = offering(OPTIONS[1], OPTIONS[3])
    assert chosen(await Permissions(approve_all).answer(always)) == "always"
    answer = await Permissions(deny_all).answer(offering(OPTIONS[0]))
    assert isinstance(answer.outcome, module(surface).CancelledPermissionOutcome)


async def test_per_tool_rules_by_name_then_kind_and_command_subjects(
    surface: AnySurface,
) -> None:
    policy = Permissions(
        rules({"git_push": "reject", "edit": "allow", "execute": "reject"}, default="allow")
    )
    assert chosen(await policy.answer(permission_request(surface, name="git_push"))) == "no"
    assert chosen(await policy.answer(permission_request(surface, name="write_file"))) == "once"
    assert chosen(await policy.answer(permission_request(surface, "fetch"))) == "once"
    if surface.protocol_version == 2:  # v2 may ask about a command
        assert chosen(await policy.answer(command_request(surface, "rm -rf build"))) == "no"


def test_the_context_takes_the_kind_from_the_state_when_the_subject_omits_it(
    surface: AnySurface,
) -> None:
    state = state_for(surface)
    tool_call = {"sessionUpdate": "tool_call_update", "toolCallId": "c9", "kind": "read"}
    state.apply(decode_update(surface, tool_call))
    context = context_of(permission_request(surface, kind=None, tool_call_id="c9"), state)
    assert context.kind == "read" and context.tool_call_id == "c9"
    if surface.protocol_version == 2:
        assert context_of(command_request(surface, "ls")).command == "ls"


async def test_an_always_answer_is_remembered_per_session_and_tool(surface: AnySurface) -> None:
    permissions = Permissions()  # ask every time
    asked: list[str] = []
    types = module(surface)

    def asking(option_id: str) -> Any:
        async def ask() -> Any:
            asked.append(option_id)
            outcome = types.SelectedPermissionOutcome(option_id=option_id)
            return types.RequestPermissionResponse(outcome=outcome)

        return ask

    def edit() -> Any:
        return permission_request(surface, "edit")

    def read() -> Any:
        return permission_request(surface, "read")

    assert chosen(await permissions.answer(edit(), asking("always"))) == "always"
    assert chosen(await permissions.answer(edit(), asking("no"))) == "always"
    assert chosen(await permissions.answer(read(), asking("never"))) == "never"
    assert chosen(await permissions.answer(read(), asking("once"))) == "never"
    assert asked == ["always", "never"]
    other_session = edit()
    other_session.session_id = "other"
    assert chosen(await permissions.answer(other_session, asking("once"))) == "once"
    permissions.forget("s")
    assert chosen(await permissions.answer(edit(), asking("no"))) == "no"


def reads_approved(surface: AnySurface) -> type[Any]:
    """The turn client of `surface` whose policy approves reads."""

    def __init__(self: Any, agent: Any) -> None:
        self.requests = AgentRequests(Permissions(approve_reads))

    return type("ReadsApprovedClient", (turn_client(surface),), {"__init__": __init__})


async def test_in_a_turn_the_policy_answers_and_only_asked_requests_become_events(
    v2_surface: AnySurface,
) -> None:
    def permission(request_id: int, kind: str) -> dict[str, Any]:
        params = permission_request(v2_surface, kind)
        params.session_id = SESSION
        return request(request_id, "session/request_permission", msgspec.to_builtins(params))

    client = reads_approved(v2_surface)
    async with raw_agent(client=client, surface=v2_surface) as (conn, peer):
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
