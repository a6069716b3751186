"""`acpwire.ConnectionOptions`: one object for a connection's limits and checks, taken as
`options=` by `serve_agent`, `serve_turns`, `connect` and `open_agent`; the keywords of earlier
releases still work, and one call uses one form."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
import pytest

import acpwire
from acpwire import ConnectionOptions
from acpwire.agent import AgentTurn, StopReason
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV2
from helpers.raw import RawPeer, error_response, request

pytestmark = pytest.mark.usefixtures("loop")

LIMIT = ConnectionOptions(max_line_bytes=200)
AGENT = {"name": "options-test", "version": "1"}
LONG_LINE = msgspec.json.encode(request(1, "initialize", {"pad": "x" * 300}))
OVER_THE_LIMIT = error_response(
    1, -32600, f"Invalid request: message of {len(LONG_LINE)} bytes is over the line limit"
)


async def work(turn: AgentTurn) -> StopReason:
    return "end_turn"


async def the_limit_holds(serve: Callable[[Any], Awaitable[None]]) -> None:
    """`serve(stream)` serves an agent there: a line over the limit is answered -32600."""
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(client_end)
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(serve, agent_end)
        await peer.send(LONG_LINE)
        assert await peer.receive() == OVER_THE_LIMIT
        nursery.cancel_scope.cancel()


async def test_serve_agent_takes_options() -> None:
    await the_limit_holds(
        lambda stream: acpwire.serve_agent(EchoAgentV2, stream=stream, options=LIMIT)
    )


async def test_serve_turns_takes_options() -> None:
    await the_limit_holds(
        lambda stream: acpwire.serve_turns(work, **AGENT, stream=stream, options=LIMIT)
    )


async def test_serve_turns_passes_the_keywords_on() -> None:
    await the_limit_holds(
        lambda stream: acpwire.serve_turns(work, **AGENT, stream=stream, max_line_bytes=200)
    )


async def test_connect_takes_options() -> None:
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    async with acpwire.connect(client_end, v2=ClientV2, options=LIMIT):
        await peer.send(LONG_LINE)
        assert await peer.receive() == OVER_THE_LIMIT


async def test_open_agent_takes_options() -> None:
    until_stdin_closes = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    options = ConnectionOptions(max_concurrent_requests=3, eof_grace_period=0.5)
    async with acpwire.open_agent(until_stdin_closes, v2=ClientV2, options=options) as conn:
        assert conn._connection.options is options


async def test_a_keyword_next_to_options_is_refused_before_anything_runs() -> None:
    agent_end, client_end = memory_stream_pair()
    fix = r"max_line_bytes=100 given next to options=.*dataclasses\.replace"
    with pytest.raises(TypeError, match=fix):
        async with acpwire.connect(client_end, v2=ClientV2, options=LIMIT, max_line_bytes=100):
            pass
    with pytest.raises(TypeError, match=r"check_outgoing=True given next to options="):
        await acpwire.serve_agent(EchoAgentV2, stream=agent_end, options=LIMIT, check_outgoing=True)
    with pytest.raises(TypeError, match="eof_grace_period=1 given next to options="):  # not spawned
        async with acpwire.open_agent(
            ["no-such-agent-is-run"], v2=ClientV2, options=LIMIT, eof_grace_period=1
        ):
            pass


async def test_a_keyword_at_its_default_next_to_options_is_no_conflict() -> None:
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    default = ConnectionOptions.max_line_bytes
    async with acpwire.connect(client_end, v2=ClientV2, options=LIMIT, max_line_bytes=default):
        await peer.send(LONG_LINE)
        assert await peer.receive() == OVER_THE_LIMIT


def test_options_are_frozen_and_changed_by_replace() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LIMIT.max_line_bytes = 1  # type: ignore[misc]
    assert dataclasses.replace(LIMIT, check_outgoing=True) == ConnectionOptions(
        max_line_bytes=200, check_outgoing=True
    )


def test_every_public_package_gives_the_same_class() -> None:
    assert acpwire.agent.ConnectionOptions is acpwire.client.ConnectionOptions is ConnectionOptions
