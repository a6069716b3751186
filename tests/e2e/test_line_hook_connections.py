"""`WireLine.connection`: one hook given to many connections (a server's) tells their lines
apart: every line of a connection carries the same id, and no two connections share one;
under `agent_app` it is the connection's `Acp-Connection-Id`."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict

import anyio
import pytest

from acpwire import ConnectionOptions, WireLine, agent_app, connect, open_remote, serve_agent
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from acpwire.testing import memory_stream_pair
from helpers.hello_turns import HELLO_TURN, hello_turn
from helpers.remote import served

pytestmark = pytest.mark.usefixtures("loop")


def by_connection(seen: list[WireLine]) -> dict[str, list[WireLine]]:
    lines: dict[str, list[WireLine]] = defaultdict(list)
    for line in seen:
        lines[line.connection].append(line)
    return lines


def methods(lines: list[WireLine], direction: str) -> list[str]:
    decoded = [json.loads(line.line) for line in lines if line.direction == direction]
    return [message["method"] for message in decoded if "method" in message]


def test_a_wire_line_made_without_a_connection_still_works() -> None:
    line = WireLine("in", b"{}", 1.0)  # the three fields of earlier releases, by position
    assert line.connection == ""
    assert line == WireLine("in", b"{}", 1.0, "")


async def test_each_connection_has_one_id_of_its_own() -> None:
    """Two clients and two agents in one process, one hook for all four connections."""
    seen: list[WireLine] = []
    options = ConnectionOptions(on_line=seen.append)
    with anyio.fail_after(8):
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                client_side, agent_side = memory_stream_pair()
                tasks.start_soon(
                    lambda stream=agent_side: serve_agent(
                        HelloAgent, stream=stream, options=options
                    )
                )
                async with connect(client_side, v2=HelloClient, options=options) as conn:
                    assert await hello_turn(conn) == HELLO_TURN
            tasks.cancel_scope.cancel()
    connections = by_connection(seen)
    assert len(connections) == 4
    for connection, lines in connections.items():
        uuid.UUID(connection)  # a UUID
        sent = methods(lines, "out")
        received = methods(lines, "in")
        assert sent.count("initialize") + received.count("initialize") == 1, (sent, received)


@pytest.mark.parametrize("transport", ["websocket", "http"])
async def test_agent_app_connections_are_told_apart_by_their_acp_connection_id(
    transport: str,
) -> None:
    seen: list[WireLine] = []
    app = agent_app(HelloAgent, options=ConnectionOptions(on_line=seen.append))
    with anyio.fail_after(10):
        async with served(app) as url:
            for _ in range(2):
                connected = open_remote(url, v2=HelloClient, transport=transport)  # type: ignore[arg-type]
                async with connected as conn:
                    assert await hello_turn(conn) == HELLO_TURN
                    ids = set(app._hub.connections)  # the open connections' Acp-Connection-Ids
                    assert len(ids) == 1
                    [open_id] = ids
                    assert open_id in by_connection(seen)
    connections = by_connection(seen)
    assert len(connections) == 2
    for lines in connections.values():
        assert methods(lines, "in").count("initialize") == 1
        assert methods(lines, "out").count("session/request_permission") == 1
