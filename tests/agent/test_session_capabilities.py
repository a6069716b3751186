"""v2's `capabilities.session` advertises six methods at once (`session/new`, `list`, `resume`,
`close`, `prompt`, `cancel`: the schema's "Supplying `{}` means the agent supports the
baseline session methods"). `agent_capabilities` and the endpoint's warning agree on it and
name the fix for an agent that serves only some of them."""

from __future__ import annotations

import json
import logging

import pytest

import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from acpwire.agent import PromptTurns, StopReason, Turn, agent_capabilities
from acpwire.examples.hello_agent import HelloAgent
from acpwire.fixtures.echo_agent import EchoAgentV2
from helpers.constants import RAW_INIT_V2
from helpers.paths import ROOT
from helpers.serving import raw_client

pytestmark = pytest.mark.usefixtures("loop")

BASELINE = json.loads((ROOT / "schema" / "v2" / "schema.json").read_text())["$defs"][
    "AgentCapabilities"
]["properties"]["session"]["description"]


class FirstAgent(v2.AgentBase):
    """What a newcomer writes first: new, prompt and cancel (no list, resume, close)."""

    def __init__(self, client: v2.ClientPeer) -> None:
        self.turns = PromptTurns(client)

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2,
            info=v2.Implementation(name="first", version="1"),
            capabilities=v2.AgentCapabilities(session=v2.SessionCapabilities()),
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)

    async def work(self, turn: Turn) -> StopReason:
        return "end_turn"


class OnlyStatus(v2u.AgentBase):
    async def session_status(self, params: v2u.SessionStatusRequest) -> v2u.SessionStatusResponse:
        return v2u.SessionStatusResponse(status="active")


def test_the_schema_still_says_session_means_all_six() -> None:
    for method in ("new", "list", "resume", "close", "prompt", "cancel"):
        assert f"`session/{method}`" in BASELINE


def test_agent_capabilities_refuse_a_partial_session_set_naming_the_fix() -> None:
    with pytest.raises(TypeError) as raised:
        agent_capabilities(FirstAgent)
    message = str(raised.value)
    assert message.startswith(
        "FirstAgent does not implement session/list, session/resume, session/close: in ACP v2, "
        "`capabilities.session` advertises session/new, session/list, session/resume, "
        "session/close, session/prompt, session/cancel together"
    )
    assert "Implement session_list, session_resume, session_close" in message
    assert "`return await self.turns.close(params.session_id)`" in message
    assert "acpwire.serve_turns" in message


def test_a_session_method_inside_session_needs_the_baseline_too() -> None:
    with pytest.raises(TypeError, match="OnlyStatus does not implement session/new, session/list"):
        agent_capabilities(OnlyStatus)


def test_agents_with_the_whole_set_or_none_of_it_are_advertised_as_before() -> None:
    assert agent_capabilities(HelloAgent) == v2.AgentCapabilities(session=v2.SessionCapabilities())
    assert agent_capabilities(EchoAgentV2) == v2.AgentCapabilities(session=v2.SessionCapabilities())
    assert agent_capabilities(v2.AgentBase) == v2.AgentCapabilities()


async def test_the_warning_names_the_missing_handlers_not_agent_capabilities(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The response built by hand (`session: {}`): the warning says what to implement; it no
    longer suggests `agent_capabilities`, which cannot fix a partial set."""
    caplog.set_level(logging.WARNING, logger="acpwire")
    async with raw_client(FirstAgent) as peer:
        answer = await peer.call(1, "initialize", RAW_INIT_V2)
        assert answer["result"]["capabilities"] == {"session": {}}
    (record,) = caplog.records
    message = record.getMessage()
    assert "`capabilities.session` advertises session/list, which is not implemented" in message
    assert "FirstAgent does not implement session/list, session/resume, session/close" in message
    assert "Implement session_list, session_resume, session_close" in message
    assert "agent_capabilities(FirstAgent)" not in message


class FirstAgentBuilt(FirstAgent):
    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2,
            info=v2.Implementation(name="first", version="1"),
            capabilities=agent_capabilities(FirstAgentBuilt),
        )


async def test_the_client_of_such_an_agent_is_told_why_initialize_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with raw_client(FirstAgentBuilt) as peer:
        error = (await peer.call(1, "initialize", RAW_INIT_V2))["error"]
    assert error["code"] == -32603
    assert "TypeError: FirstAgentBuilt does not implement session/list" in error["message"]
