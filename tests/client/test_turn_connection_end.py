"""A turn whose agent goes away before the turn ends raises `ConnectionClosed` out of the
`prompt` block (the mid-turn end of the session's updates), not a RuntimeError about an async
generator, and sends nothing to the closed connection."""

from __future__ import annotations

import anyio
import pytest

from acpwire.client import prompt
from acpwire.errors import ConnectionClosed
from helpers.constants import PROMPT_V1, PROMPT_V2
from helpers.lines import state, user_message
from helpers.raw import response
from helpers.serving import raw_agent

pytestmark = pytest.mark.usefixtures("loop")


@pytest.mark.parametrize("version", [2, 1])
async def test_the_agent_closing_mid_turn_ends_the_turn_with_connection_closed(
    version: int,
) -> None:
    async with raw_agent(version) as (conn, peer):
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                assert call["method"] == "session/prompt"
                if version == 2:
                    await peer.send(response(call["id"], {"messageId": "u1"}), user_message("u1"))
                    await peer.send(state("running"))
                await peer.close()

            nursery.start_soon(agent)
            view = conn.v2 if version == 2 else conn.v1
            params = PROMPT_V2 if version == 2 else PROMPT_V1
            with pytest.raises(ConnectionClosed):
                async with prompt(view, conn.client.requests, params) as turn:  # type: ignore[arg-type, union-attr]
                    async for _ in turn:
                        pass
