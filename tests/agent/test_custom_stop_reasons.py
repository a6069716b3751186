"""A turn's work that returns a `CustomStopReason` ends the turn with it on the wire, also when
`check_outgoing` checks what is sent (a str subclass msgspec cannot encode must not reach it)."""

from __future__ import annotations

from functools import partial

import anyio
import pytest

from acpwire.agent import CustomStopReason, Turn, serve_agent, turn_agents
from acpwire.testing import memory_stream_pair
from helpers.constants import RAW_INIT_V2
from helpers.lines import new_session, on, text_block
from helpers.raw import RawPeer, receive, request


async def paused(turn: Turn) -> CustomStopReason:
    return CustomStopReason("_paused")


@pytest.mark.parametrize("check_outgoing", [False, True])
async def test_a_custom_stop_reason_ends_the_v2_turn(check_outgoing: bool) -> None:
    agent_v2, agent_v1 = turn_agents(paused, name="a", version="1")
    agent_end, client_end = memory_stream_pair()
    serve = partial(
        serve_agent, agent_v2, v1=agent_v1, stream=agent_end, check_outgoing=check_outgoing
    )
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(serve)
        peer = RawPeer(client_end)
        await peer.call("init", "initialize", RAW_INIT_V2)
        sid = await new_session(peer, 2)
        await peer.send(
            request(1, "session/prompt", {"sessionId": sid, "prompt": [text_block("x")]})
        )
        lines = await receive(peer, 4)
        idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "_paused"}
        assert lines[-1] == on(sid, idle)
        nursery.cancel_scope.cancel()
