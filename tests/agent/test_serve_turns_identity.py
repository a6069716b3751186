"""`serve_turns` reports the agent's own name and version in `initialize`: both are required
(before, an agent that left them out introduced itself as `acpwire-agent` with acpwire's
version)."""

from __future__ import annotations

import functools
import inspect

import anyio
import pytest

from acpwire import serve_turns
from acpwire.agent import turn_agents
from acpwire.examples import tool_agent
from acpwire.testing import memory_stream_pair
from helpers.raw import RawPeer

pytestmark = pytest.mark.usefixtures("loop")


@pytest.mark.parametrize("function", [serve_turns, turn_agents])
def test_name_and_version_are_required(function: object) -> None:
    parameters = inspect.signature(function).parameters  # type: ignore[arg-type]
    for name in ("name", "version"):
        assert parameters[name].default is inspect.Parameter.empty
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError, match="'name' and 'version'"):
        turn_agents(tool_agent.work)  # type: ignore[call-arg]


async def test_initialize_reports_them_over_both_versions() -> None:
    for init, info in (
        ({"protocolVersion": 2, "info": {"name": "c", "version": "0"}}, "info"),
        ({"protocolVersion": 1}, "agentInfo"),
    ):
        agent_end, client_end = memory_stream_pair()
        async with anyio.create_task_group() as tasks:
            serve = functools.partial(serve_turns, name="notes", version="2.1", stream=agent_end)
            tasks.start_soon(serve, tool_agent.work)
            answer = await RawPeer(client_end).call(1, "initialize", init)
            await client_end.aclose()
        assert answer["result"][info] == {"name": "notes", "version": "2.1"}
