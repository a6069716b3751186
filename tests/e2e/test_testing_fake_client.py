"""`acpwire.testing`'s fake client (`client_for`, `FakeClient`, `ClientScenario`) driving
acpwire's echo fixture agent, in-process and as a process, over v2 and v1, on every loop."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from acpwire import PeerError, approve_all, deny_all
from acpwire.examples.hello_agent import HelloAgent
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2
from acpwire.testing import FakeClient, ScenarioError, TurnResult, client_for

pytestmark = pytest.mark.usefixtures("loop")

ECHO_COMMAND = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
SLOW = "slow " * 40  # the echo agent streams it slowly: there is time to cancel


def only_tool_call(turn: TurnResult) -> tuple[str | None, str | None]:
    (call,) = turn.state.tool_calls.values()
    return call.title, call.status


@pytest.mark.parametrize("protocol", [2, 1])
async def test_a_turn_allowed_by_a_scripted_answer(protocol: int) -> None:
    async with client_for(EchoAgentV2, v1=EchoAgentV1, protocol=protocol) as client:
        assert client.protocol_version == protocol
        turn = await client.prompt("hello world", answers=["allow"])
    assert turn.stop_reason == "end_turn"
    assert turn.text == "hello world "
    assert only_tool_call(turn) == ("Echo the prompt", "completed")
    (request,) = turn.permission_requests
    assert [option.option_id for option in request.options] == ["allow", "reject"]


@pytest.mark.parametrize("protocol", [2, 1])
async def test_a_turn_rejected_by_a_scripted_answer(protocol: int) -> None:
    async with client_for(EchoAgentV2, v1=EchoAgentV1, protocol=protocol) as client:
        turn = await client.prompt("hello world", answers=["reject"])
    assert turn.stop_reason == "end_turn"
    assert turn.text == ""
    assert only_tool_call(turn) == ("Echo the prompt", "failed")


@pytest.mark.parametrize("protocol", [2, 1])
async def test_cancel_after_ends_the_turn_cancelled(protocol: int) -> None:
    async with client_for(EchoAgentV2, v1=EchoAgentV1, protocol=protocol) as client:
        turn = await client.prompt(SLOW, answers=["allow"], cancel_after=6)
        next_turn = await client.prompt("again", answers=["allow"])  # the session goes on
    assert turn.stop_reason == "cancelled"
    assert 0 < turn.text.count("slow") < 40
    assert next_turn.stop_reason == "end_turn"
    assert next_turn.text == "again "  # this turn's reply, not the session's


@pytest.mark.parametrize("protocol", [2, 1])
async def test_a_policy_answers_without_scripted_answers(protocol: int) -> None:
    async with client_for(
        EchoAgentV2, v1=EchoAgentV1, protocol=protocol, permissions=approve_all
    ) as client:
        allowed = await client.prompt("yes please")
    async with client_for(
        EchoAgentV2, v1=EchoAgentV1, protocol=protocol, permissions=deny_all
    ) as client:
        denied = await client.prompt("no thanks")
    assert (allowed.text, allowed.permission_requests) == ("yes please ", [])
    assert only_tool_call(denied)[1] == "failed"


@pytest.mark.parametrize("protocol", [2, 1])
async def test_the_agent_as_a_command(protocol: int) -> None:
    async with client_for(command=ECHO_COMMAND, protocol=protocol) as client:
        assert client.initialize_response.protocol_version == protocol
        turn = await client.prompt("over stdio", answers=["allow"])
    assert (turn.stop_reason, turn.text) == ("end_turn", "over stdio ")


async def test_a_v2_client_of_a_v1_agent_speaks_v1() -> None:
    async with client_for(v1=EchoAgentV1) as client:
        assert client.protocol_version == 1
        turn = await client.prompt("fallback", answers=["allow"])
    assert turn.text == "fallback "


async def test_a_permission_request_without_a_scripted_answer_names_the_fix() -> None:
    async with client_for(EchoAgentV2) as client:
        with pytest.raises(
            ScenarioError,
            match=r"permission \('Echo the prompt back\?'\) with options \['allow', 'reject'\], and no answer is left",
        ):
            await client.prompt("hi")
        with pytest.raises(
            ScenarioError,
            match=r"'yes' is not among the options the agent offered: \['allow', 'reject'\]",
        ):
            await client.prompt("hi", answers=["yes"])
        turn = await client.prompt("still usable", answers=["allow"])
    assert turn.text == "still usable "


async def test_a_cancelled_answer_is_sent_as_cancelled() -> None:
    async with client_for(v1=EchoAgentV1) as client:
        turn = await client.prompt("hi", answers=[None])
    assert turn.stop_reason == "cancelled"  # the v1 echo agent stops on a cancelled answer


@pytest.mark.parametrize("protocol", [2, 1])
async def test_a_client_scenario_as_data(protocol: int) -> None:
    scenario = {
        "cwd": "/work",
        "prompts": [
            {"text": "one two", "answers": ["allow"]},
            {"text": "three", "answers": ["reject"]},
            {"text": SLOW, "answers": ["allow"], "cancel_after": 6},
        ],
    }
    async with client_for(EchoAgentV2, v1=EchoAgentV1, protocol=protocol) as client:
        turns = await client.run(scenario)
        (session,) = await _listed_sessions(client)
    assert [turn.stop_reason for turn in turns] == ["end_turn", "end_turn", "cancelled"]
    assert [turn.text for turn in turns[:2]] == ["one two ", ""]
    assert session.cwd == "/work"


async def _listed_sessions(client: FakeClient) -> list[Any]:
    from acp_schema import v1, v2

    if client.protocol_version == 2:
        return list((await client.conn.v2.peer.session_list(v2.ListSessionsRequest())).sessions)
    return list((await client.conn.v1.peer.session_list(v1.ListSessionsRequest())).sessions)


def test_a_bad_client_scenario_names_the_field() -> None:
    from acpwire.testing import ClientScenario

    with pytest.raises(
        ScenarioError,
        match=r"client scenario \.prompts\[1\]\.answers\[0\]: Expected `str \| null`, got `int`",
    ):
        ClientScenario.parse({"prompts": [{"text": "a"}, {"text": "b", "answers": [1]}]})


async def test_client_for_needs_an_agent_one_way() -> None:
    with pytest.raises(TypeError, match="give the agent one way"):
        async with client_for():
            pass
    with pytest.raises(TypeError, match="give the agent one way"):
        async with client_for(EchoAgentV2, command=ECHO_COMMAND):
            pass


async def test_an_agent_error_reaches_the_test_as_peer_error() -> None:
    async with client_for(HelloAgent) as client:
        with pytest.raises(PeerError, match="Resource not found"):
            await client.prompt("hi", session_id="no-such-session")
