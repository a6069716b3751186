"""`ConnectionOptions.on_line` over the remote transports: `agent_app` and `open_remote` pass
it to their connections, and what one side writes is what the other reads, byte for byte."""

from __future__ import annotations

import os

import anyio
import pytest

from acp_schema import v2
from acpwire import ConnectionOptions, WireLine, agent_app, open_remote
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from helpers.remote import served

pytestmark = pytest.mark.usefixtures("loop")


def lines(seen: list[WireLine], direction: str) -> list[bytes]:
    return sorted(line.line for line in seen if line.direction == direction)


@pytest.mark.parametrize("transport", ["websocket", "http"])
async def test_both_ends_see_the_lines_the_other_end_sent(transport: str) -> None:
    agent_seen: list[WireLine] = []
    client_seen: list[WireLine] = []
    app = agent_app(HelloAgent, options=ConnectionOptions(on_line=agent_seen.append))
    with anyio.fail_after(8):
        async with served(app) as url:
            async with open_remote(
                url,
                v2=HelloClient,
                transport=transport,  # type: ignore[arg-type]
                options=ConnectionOptions(on_line=client_seen.append),
            ) as conn:
                info = v2.Implementation(name="remote-test", version="1.0")
                await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
                peer = conn.v2.peer
                session = await peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
                await peer.session_close(v2.CloseSessionRequest(session_id=session.session_id))
    assert client_seen[0].direction == "out" and b'"initialize"' in client_seen[0].line
    assert agent_seen[0].direction == "in" and agent_seen[0].line == client_seen[0].line
    # over HTTP each message is a POST or an event of its own: compared as sets of lines
    assert lines(agent_seen, "in") == lines(client_seen, "out")
    assert lines(agent_seen, "out") == lines(client_seen, "in")
    assert len(client_seen) == 6  # initialize, session/new, session/close and their answers
