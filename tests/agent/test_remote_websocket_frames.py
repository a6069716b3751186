"""Malformed WebSocket frames from a client (RFC 6455: 1002 protocol error, 1007 invalid
payload), sent by hand to an `agent_app` served by Hypercorn (trio and asyncio workers) and by
uvicorn (`--ws websockets-sansio`). The frame is the engine's to refuse (the app only ever
sees whole text messages): Hypercorn, whose wsproto finds the fault, closes the TCP
connection without a close frame (a client reads 1006); uvicorn's websockets-sansio sends the
RFC's close code first. Ours: the app reads the socket's end as a client that left, so that
connection ends, its sessions stay (resumed on a new connection), and other connections go on."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Literal

import anyio
import pytest

from acp_schema import v2
from acpwire import agent_app, open_remote, open_session
from acpwire.agent import AgentApp, AgentTurn, turn_agents
from acpwire.examples.hello_client import HelloClient
from helpers.asgi_servers import uvicorn_serving
from helpers.constants import RAW_INITIALIZE
from helpers.hello_turns import said
from helpers.loops import run_async
from helpers.raw_websocket import CLOSE, TEXT, RawWebSocket, close_payload, frame
from helpers.remote import served

pytestmark = pytest.mark.usefixtures("loop")

INFO = v2.Implementation(name="frames-test", version="1.0")
NEW_SESSION = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "session/new",
    "params": {"cwd": os.getcwd(), "mcpServers": []},
}
MESSAGE = b'{"jsonrpc":"2.0","method":"x","params":{}}'
PROTOCOL_ERROR, INVALID_PAYLOAD = 1002, 1007

MALFORMED = {
    "unmasked": (frame(MESSAGE, masked=False), PROTOCOL_ERROR),
    "reserved bit": (frame(MESSAGE, rsv=4), PROTOCOL_ERROR),
    "unknown opcode": (frame(MESSAGE, opcode=0x3), PROTOCOL_ERROR),
    "text not UTF-8": (frame(b'{"text":"\xff\xfe"}', opcode=TEXT), INVALID_PAYLOAD),
    "close reason not UTF-8": (frame(close_payload(1000, b"\xc3\x28"), CLOSE), INVALID_PAYLOAD),
}


async def work(turn: AgentTurn) -> Literal["end_turn"]:
    await turn.say("echo")
    return "end_turn"


def turns_app() -> AgentApp:
    agent_v2, agent_v1 = turn_agents(work, name="turns", version="1")
    return agent_app(agent_v2, v1=agent_v1)


Serving = Callable[[AgentApp], AbstractAsyncContextManager[str]]


async def malformed_frames_end_only_their_connections(
    serving: Serving, close_codes: Callable[[int], list[int]]
) -> None:
    """Each of `MALFORMED` on a connection of its own, with a session open; another
    connection open meanwhile. `close_codes(rfc_code)`: those of the close frames the engine
    sends before it closes the socket."""
    app = turns_app()
    sessions: list[str] = []
    with anyio.fail_after(15):
        async with serving(app) as url:
            async with open_remote(url, v2=HelloClient) as other:
                await other.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                for case, (malformed, code) in MALFORMED.items():
                    raw = await RawWebSocket.connect(url)
                    assert (await raw.call(RAW_INITIALIZE))["result"]["protocolVersion"] == 2
                    sessions.append((await raw.call(NEW_SESSION))["result"]["sessionId"])
                    assert app.open_connections == 2
                    await raw.send(malformed)
                    received = await raw.until_closed()
                    closes = [code for code, _ in received.closes()]
                    assert (case, closes) == (case, close_codes(code))
                    assert [opcode for opcode, _ in received.frames if opcode == TEXT] == []
                    await until_open(app, 1)  # it ended, as a client that left
                assert await said(other) == ["echo"]  # the other one went on
            async with open_remote(url, v2=HelloClient) as again:
                await again.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                for session_id in sessions:
                    resumed = await open_session(again.v2, cwd=os.getcwd(), session_id=session_id)
                    assert (resumed.session_id, resumed.how) == (session_id, "resumed")
            await until_open(app, 0)


async def until_open(app: AgentApp, connections: int) -> None:
    while app.open_connections > connections:
        await anyio.sleep(0.02)
    assert app.open_connections == connections


async def test_hypercorn_closes_the_socket_of_a_malformed_frame_without_a_close_frame() -> None:
    await malformed_frames_end_only_their_connections(served, lambda _: [])


def test_uvicorn_websockets_sansio_closes_a_malformed_frame_with_the_rfc_code() -> None:
    def serving(app: AgentApp) -> AbstractAsyncContextManager[str]:
        return uvicorn_serving(app, ws="websockets-sansio")

    async def scenario() -> None:
        await malformed_frames_end_only_their_connections(serving, lambda code: [code])

    run_async(scenario, "asyncio")  # uvicorn runs on asyncio only
