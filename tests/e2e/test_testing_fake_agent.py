"""`acpwire.testing`'s fake agent: scenarios checked as data, played over v2 and v1 in-process
and as a command, to acpwire's fixture client and to the fake client, and what it records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acpwire import PeerError
from acpwire.testing import AgentScenario, FakeAgent, ScenarioError, Wire, client_for
from helpers.processes import PYTHONPATH

pytestmark = pytest.mark.usefixtures("loop")

READ_THEN_SAY: dict[str, Any] = {
    "steps": [
        {"type": "say", "text": "Reading. "},
        {"type": "tool_call", "id": "read", "title": "Read a.txt", "kind": "read"},
        {
            "type": "ask",
            "tool_call": "read",
            "title": "Read a.txt?",
            "then": {
                "reject": [
                    {"type": "tool_update", "id": "read", "status": "failed"},
                    {"type": "stop", "reason": "refusal"},
                ],
                "cancelled": [{"type": "stop", "reason": "cancelled"}],
            },
        },
        {"type": "tool_update", "id": "read", "status": "completed", "output": "hi"},
        {"type": "say", "text": "Done."},
    ]
}
CANCELLABLE: dict[str, Any] = {
    "steps": [
        *({"type": "say", "text": f"chunk {n} "} for n in range(4)),
        {"type": "wait_for_cancel"},
    ]
}


# -- scenarios are checked before anything runs


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            {"turns": [{"steps": [{"type": "sya", "text": "hi"}]}]},
            "scenario turns[0].steps[0].type: Invalid value 'sya' (a step's type is one of say, "
            "tool_call, tool_update, diff, ask, sleep, wait_for_cancel, stop)",
        ),
        (
            {"turns": [{"steps": [{"type": "say"}]}]},
            "scenario turns[0].steps[0]: Object missing required field `text`",
        ),
        (
            {"turns": [{"steps": [{"type": "tool_update", "id": "x", "status": "done"}]}]},
            "scenario turns[0].steps[0].status: Invalid enum value 'done'",
        ),
        (
            {"turns": [{}, {"steps": [{"type": "tool_update", "id": "edit"}]}]},
            "turns[1].steps[0] (tool_update): no tool_call step with id 'edit' (none is before "
            "it); announce it first",
        ),
        (
            {
                "turns": [
                    {
                        "steps": [
                            {"type": "tool_call", "id": "t", "title": "T"},
                            {"type": "ask", "tool_call": "t", "title": "?", "then": {"alow": []}},
                        ]
                    }
                ]
            },
            "turns[0].steps[1] (ask): then['alow'] is no answer the client can give: one of the "
            "option ids ['allow', 'reject'] or 'cancelled'",
        ),
        (
            {
                "turns": [
                    {
                        "steps": [
                            {"type": "tool_call", "id": "t", "title": "T"},
                            {
                                "type": "ask",
                                "tool_call": "t",
                                "title": "?",
                                "then": {"allow": [{"type": "stop", "reason": "done"}]},
                            },
                        ]
                    }
                ]
            },
            "turns[0].steps[1].then['allow'][0] (stop): stop reason 'done' is not ACP's",
        ),
        (
            {"turns": [{"stop_reason": "paused"}]},
            "turns[0].stop_reason: stop reason 'paused' is not ACP's",
        ),
        (
            {"errors": {"session/cancel": {"code": -32603, "message": "x"}}},
            "scenario errors: 'session/cancel' is not a request a client sends an agent",
        ),
        ({"protocols": [3]}, "scenario protocols[0]: Invalid enum value 3"),
        ({"protocols": []}, "scenario protocols: give at least one of 2, 1"),
        ({"turn": []}, "scenario: Object contains unknown field `turn`"),
    ],
)
def test_a_bad_scenario_is_refused_naming_the_step(scenario: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        FakeAgent(scenario)
    assert str(raised.value).startswith(message)


def test_a_scenario_round_trips_through_its_structs_and_json(tmp_path: Path) -> None:
    parsed = AgentScenario.parse({"turns": [READ_THEN_SAY, CANCELLABLE]})
    assert AgentScenario.parse(parsed) == parsed
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"turns": [READ_THEN_SAY, CANCELLABLE]}))
    assert AgentScenario.parse(path) == parsed


# -- played to acpwire's fixture client (a process talking to a process)


@pytest.mark.parametrize("protocol", [2, 1])
def test_the_fixture_client_against_the_fake_agent_command(
    loop: str, protocol: int, tmp_path: Path
) -> None:
    """The fixture client prompts (allowing what it is asked), then prompts again and
    cancels after three chunks, then closes the session: the fake agent plays both turns and
    records what the client did."""
    agent = FakeAgent({"turns": [READ_THEN_SAY, CANCELLABLE]}, directory=tmp_path)
    client = [sys.executable, "-m", "acpwire.fixtures.client", "--protocol", str(protocol)]
    done = subprocess.run(
        [*client, "--loop", loop, "--", *agent.command(), "--loop", loop],
        env={**PYTHONPATH, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"'protocol': {protocol}, 'first': 'end_turn', 'second': 'cancelled'" in done.stdout
    wire = agent.wire
    assert wire.methods() == [
        "initialize",
        "session/new",
        "session/prompt",
        "session/prompt",
        "session/cancel",
        "session/close",
    ]
    assert wire.permission_answers() == ["allow"]
    assert len(wire.cancelled_sessions()) == 1
    assert wire.prompts()[0] == "hello from the acpwire example client"


# -- played in-process to the fake client


@pytest.mark.parametrize("protocol", [2, 1])
@pytest.mark.parametrize(
    ("answer", "stop_reason", "status", "text"),
    [
        ("allow", "end_turn", "completed", "Reading. Done."),
        ("reject", "refusal", "failed", "Reading. "),
        (None, "cancelled", "pending", "Reading. "),
    ],
)
async def test_an_ask_step_branches_on_the_answer(
    protocol: int, answer: str | None, stop_reason: str, status: str, text: str
) -> None:
    agent = FakeAgent({"turns": [READ_THEN_SAY]})
    async with agent.connected() as stream, client_for(stream=stream, protocol=protocol) as client:
        turn = await client.prompt("read it", answers=[answer])
    assert (turn.stop_reason, turn.text) == (stop_reason, text)
    (call,) = turn.state.tool_calls.values()
    assert (call.title, call.kind, call.status) == ("Read a.txt", "read", status)
    assert agent.wire.permission_answers() == [answer]
    assert agent.wire.prompts() == ["read it"]


@pytest.mark.parametrize("protocol", [2, 1])
async def test_wait_for_cancel_ends_cancelled_once_the_client_cancels(protocol: int) -> None:
    agent = FakeAgent({"turns": [CANCELLABLE]})
    async with agent.connected() as stream, client_for(stream=stream, protocol=protocol) as client:
        turn = await client.prompt("go", cancel_after=5 if protocol == 2 else 3)
    assert turn.stop_reason == "cancelled"
    assert turn.text.startswith("chunk 0 chunk 1 chunk 2 ")
    assert len(agent.wire.cancelled_sessions()) == 1


@pytest.mark.parametrize(("protocol", "custom"), [(2, "_paused"), (1, "max_tokens")])
async def test_diffs_stop_reasons_and_the_turn_order(protocol: int, custom: str) -> None:
    """Custom stop reasons (`_`-prefixed) are v2's: v1 has none."""
    agent = FakeAgent(
        {
            "turns": [
                {
                    "steps": [
                        {"type": "tool_call", "id": "e", "title": "Edit", "kind": "edit"},
                        {"type": "diff", "id": "e", "path": "/a.txt", "old": "x\n", "new": "y\n"},
                        {"type": "sleep", "seconds": 0.01},
                    ],
                    "stop_reason": custom,
                    "expect_prompt": "first",
                },
                {"steps": [{"type": "say", "text": "second"}]},
            ]
        }
    )
    async with agent.connected() as stream, client_for(stream=stream, protocol=protocol) as client:
        first = await client.prompt("first")
        second = await client.prompt("anything")
        with pytest.raises(PeerError, match="the fake agent's scenario has 2 turn"):
            await client.prompt("a third")
    assert first.stop_reason == custom
    (call,) = first.state.tool_calls.values()
    assert call.kind == "edit" and len(call.content) == 1
    assert (second.stop_reason, second.text) == ("end_turn", "second")


async def test_an_unexpected_prompt_is_refused_naming_both() -> None:
    agent = FakeAgent({"turns": [{"expect_prompt": "fix the bug"}]})
    async with agent.connected() as stream, client_for(stream=stream) as client:
        with pytest.raises(
            PeerError, match="turns\\[0\\] expects the prompt 'fix the bug', got 'hi'"
        ):
            await client.prompt("hi")


@pytest.mark.parametrize("protocol", [2, 1])
async def test_errors_answer_their_method(protocol: int) -> None:
    agent = FakeAgent(
        {
            "errors": {
                "session/new": {"code": -32000, "message": "Authentication required"},
                "session/prompt": {"code": -32603, "message": "out of tokens", "data": "quota"},
            }
        }
    )
    async with agent.connected() as stream, client_for(stream=stream, protocol=protocol) as client:
        with pytest.raises(PeerError) as new:
            await client.new_session()
    assert (new.value.code, new.value.message) == (-32000, "Authentication required")
    agent = FakeAgent({"errors": {"initialize": {"code": -32603, "message": "broken"}}})
    with pytest.raises(PeerError, match="broken"):
        async with agent.connected() as stream, client_for(stream=stream, protocol=protocol):
            pass


async def test_the_versions_it_speaks() -> None:
    agent = FakeAgent({"protocols": [1], "name": "old-agent", "version": "9"})
    async with agent.connected() as stream, client_for(stream=stream, protocol=2) as client:
        assert client.protocol_version == 1
        response = client.conn.v1.initialize_response
    assert response.agent_info is not None and response.agent_info.name == "old-agent"
    agent = FakeAgent({"protocols": [2]})
    with pytest.raises(PeerError, match="Unsupported protocol version"):
        async with agent.connected() as stream, client_for(stream=stream, protocol=1):
            pass


async def test_each_connection_records_and_the_turns_count_on() -> None:
    agent = FakeAgent(
        {"turns": [{"steps": [{"type": "say", "text": f"turn {n}"}]} for n in (1, 2)]}
    )
    for expected in ("turn 1", "turn 2"):
        async with agent.connected() as stream, client_for(stream=stream) as client:
            assert (await client.prompt("x")).text == expected
    assert agent.wire.methods().count("initialize") == 2
    assert [line.sender for line in agent.wire.lines[:2]] == ["client", "agent"]


def test_command_needs_a_directory() -> None:
    with pytest.raises(TypeError, match=r"agent.command\(tmp_path\)"):
        FakeAgent({}).command()


def test_the_command_refuses_a_bad_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"turns": [{"steps": [{"type": "stop", "reason": "nope"}]}]}))
    done = subprocess.run(
        [sys.executable, "-m", "acpwire.testing", str(path)],
        env={**PYTHONPATH, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "turns[0].steps[0] (stop): stop reason 'nope' is not ACP's" in done.stderr


def test_a_record_not_written_yet_reads_as_nothing(tmp_path: Path) -> None:
    assert Wire.read(tmp_path / "missing.ndjson").lines == []
    assert FakeAgent({}, directory=tmp_path).wire.lines == []


async def test_two_connections_at_once_end_each_on_its_own() -> None:
    agent = FakeAgent({"turns": [{"steps": [{"type": "say", "text": "hi"}]}] * 2})
    async with agent.connected() as first, client_for(stream=first) as one:
        async with agent.connected() as second, client_for(stream=second) as other:
            assert (await other.prompt("a")).text == "hi"
        assert (await one.prompt("b")).text == "hi"  # the first connection outlived the second
    assert agent.wire.methods().count("session/prompt") == 2


async def test_the_capabilities_it_advertises() -> None:
    from acp_schema import v1, v2

    agent = FakeAgent(
        {"capabilities": {}, "v1_capabilities": {"promptCapabilities": {"image": True}}}
    )
    async with agent.connected() as stream, client_for(stream=stream) as client:
        assert client.conn.v2.initialize_response.capabilities == v2.AgentCapabilities()
    async with agent.connected() as stream, client_for(stream=stream, protocol=1) as client:
        capabilities = client.conn.v1.initialize_response.agent_capabilities
    assert isinstance(capabilities, v1.AgentCapabilities)
    assert capabilities.prompt_capabilities == v1.PromptCapabilities(image=True)
    async with FakeAgent({}).connected() as stream, client_for(stream=stream) as client:
        implemented = client.conn.v2.initialize_response.capabilities  # what it serves
    assert isinstance(implemented, v2.AgentCapabilities) and implemented.session


def test_bad_capabilities_are_refused_naming_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"^scenario capabilities\.session: Expected `object"):
        FakeAgent({"capabilities": {"session": 5}})
