"""What the README says about timeouts: a call has none of its own (but `initialize`), and the
loop's own deadline bounds any call: trio's `move_on_after` / `fail_after`, asyncio's
`timeout`, anyio's `fail_after` on either. The call is then cancelled on the wire
(`$/cancel_request`: the agent's handler stops) and the connection goes on."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import anyio
import pytest
import sniffio
import trio

import acp_schema.v1 as v1
from acpwire import connect, serve_agent
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV1
from helpers.loops import until

pytestmark = pytest.mark.usefixtures("loop")


class InteractiveAgent(v1.AgentBase):
    """`authenticate` waits for a login that never comes (a browser flow, a device code)."""

    stopped: ClassVar[list[str]] = []

    def __init__(self, client: v1.ClientPeer) -> None:
        pass

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def authenticate(self, params: v1.AuthenticateRequest) -> v1.AuthenticateResponse:
        try:
            await anyio.sleep_forever()
        finally:
            self.stopped.append(params.method_id)
        raise AssertionError("unreachable")

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")


@pytest.mark.parametrize("how", ["the loop's own", "anyio.fail_after"])
async def test_a_call_bounded_by_the_loops_deadline_is_cancelled_on_the_wire(how: str) -> None:
    InteractiveAgent.stopped = []
    agent_end, client_end = memory_stream_pair()
    login = v1.AuthenticateRequest(method_id="browser")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_agent(v1=InteractiveAgent, stream=agent_end))
        async with connect(client_end, v1=ClientV1) as conn:
            await conn.initialize(v1.InitializeRequest(protocol_version=1))
            if how == "anyio.fail_after":
                with pytest.raises(TimeoutError), anyio.fail_after(0.1):
                    await conn.v1.peer.authenticate(login)
            elif sniffio.current_async_library() == "trio":
                with trio.move_on_after(0.1) as scope:
                    await conn.v1.peer.authenticate(login)
                assert scope.cancelled_caught
            else:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.1):
                        await conn.v1.peer.authenticate(login)
            await until(lambda: InteractiveAgent.stopped == ["browser"])  # $/cancel_request
            session = await conn.v1.peer.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
            assert session.session_id == "s1"
        await client_end.aclose()
