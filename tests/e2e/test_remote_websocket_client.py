"""`open_remote(..., transport="websocket")` against what a server may send besides text
frames, put between a real server's frames by a tap (helpers/websocket_tap.py): its pings are
answered while a turn streams and while idle; a close (1002, 1007, 1011) or a malformed frame
fails the calls waiting for an answer with a `RemoteConnectionError` naming the URL, the code
and the reason, and the client closes with the RFC's code. Against a server that reads nothing
(`deaf_server`): a call whose message waits for the socket fails, naming the URL, when the
server closes it, and the program leaves such a connection without hanging."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import pytest

from acp_schema import v2
from acpwire import ClientConnection, RemoteConnectionError, agent_app, open_remote
from acpwire.agent import AgentTurn, turn_agents
from acpwire.examples.hello_client import HelloClient
from helpers.hand_websocket_server import deaf_server
from helpers.hello_turns import said
from helpers.raw_websocket import CLOSE, TEXT, close_payload, frame
from helpers.remote import served
from helpers.websocket_tap import WebSocketTap

pytestmark = pytest.mark.usefixtures("loop")

INFO = v2.Implementation(name="tap-test", version="1.0")
CHUNKS = 60
MESSAGE = b'{"jsonrpc":"2.0","method":"x","params":{}}'


async def chunks(turn: AgentTurn) -> Literal["end_turn"]:
    for i in range(CHUNKS):
        await turn.say(f"{i} ")
    return "end_turn"


@asynccontextmanager
async def tap_server() -> AsyncIterator[WebSocketTap]:
    """A tap before an agent that streams `CHUNKS`."""
    agent_v2, agent_v1 = turn_agents(chunks, name="chunks", version="1")
    async with served(agent_app(agent_v2, v1=agent_v1)) as url, anyio.create_task_group() as tasks:
        tap = WebSocketTap(url)
        await tasks.start(tap.run)
        yield tap
        tasks.cancel_scope.cancel()


@asynccontextmanager
async def connected(tap: WebSocketTap) -> AsyncIterator[ClientConnection]:
    async with open_remote(tap.url, v2=HelloClient) as conn:
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
        yield conn


async def test_pings_are_answered_while_a_turn_streams_and_while_idle() -> None:
    """The tap pings after every 5th text frame and passes the next one on only once the
    pong is back: the turn ends only if the client answers while it reads the stream."""
    with anyio.fail_after(15):
        async with tap_server() as tap, connected(tap) as conn:
            tap.ping_every = 5
            assert "".join(await said(conn)) == "".join(f"{i} " for i in range(CHUNKS))
            assert tap.pings >= CHUNKS // 5
            tap.ping_every = None
            for i in range(3):
                await anyio.sleep(0.2)
                await tap.ping(b"idle %d" % i)
            assert "".join(await said(conn)) == "".join(f"{i} " for i in range(CHUNKS))


def closing(code: int, reason: str) -> tuple[bytes, str, int]:
    said = f"the server closed the WebSocket (code {code}: {reason!r})"
    return frame(close_payload(code, reason.encode()), CLOSE, masked=False), said, code


FAULTS = {  # what the server sends: what the error says, the code the client closes with
    "close 1002": closing(1002, "protocol error"),
    "close 1007": closing(1007, "invalid payload"),
    "close 1011": closing(1011, "the agent crashed"),
    "masked": (frame(MESSAGE), "invalid WebSocket frame (incorrect masking)", 1002),
    "reserved bit": (
        frame(MESSAGE, rsv=4, masked=False),
        "invalid WebSocket frame (reserved bits must be 0)",
        1002,
    ),
    "unknown opcode": (
        frame(MESSAGE, opcode=0x3, masked=False),
        "invalid WebSocket frame (invalid opcode)",
        1002,
    ),
    "long ping": (
        frame(b"x" * 126, opcode=0x9, masked=False),
        "invalid WebSocket frame (control frame too long)",
        1002,
    ),
    "text not UTF-8": (
        frame(b'"\xff\xfe"', TEXT, masked=False),
        "text frame that is not UTF-8",
        1007,
    ),
    "close reason not UTF-8": (
        frame(close_payload(1000, b"\xc3\x28"), CLOSE, masked=False),
        "invalid continuation byte",
        1007,
    ),
}


async def test_a_close_or_a_malformed_frame_fails_a_waiting_call_naming_it() -> None:
    """For each of `FAULTS`, on a connection of its own: the call waiting for its answer
    fails with a `RemoteConnectionError` naming the URL and what the server sent (the close
    code and reason; the fault and the code the client closed with); the client's close
    frame goes out at once (before the client leaves), with the server's code or the RFC's."""
    with anyio.fail_after(15):
        async with tap_server() as tap:
            for case, (data, what, code) in FAULTS.items():
                async with connected(tap) as conn:
                    failed = await a_call_failed_by(tap, conn, data)
                    assert failed.url == tap.url
                    assert str(failed) == f"the agent at {tap.url}: {failed.what}"
                    assert what in failed.what, (case, failed.what)
                    if not case.startswith("close "):
                        assert failed.what.endswith(f": closed with code {code}"), case
                    await tap.until(lambda: tap.from_client.closes() != [])
                    assert (case, tap.from_client.closes()[0][0]) == (case, code)


async def a_call_failed_by(
    tap: WebSocketTap, conn: ClientConnection, data: bytes
) -> RemoteConnectionError:
    """Hold the server's frames, make a call, put `data` before the client: how it failed."""
    tap.held = True
    sent = sum(opcode == TEXT for opcode, _ in tap.from_client.frames)
    failures: list[RemoteConnectionError] = []

    async def call() -> None:
        with pytest.raises(RemoteConnectionError) as failed:
            await conn.v2.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
        failures.append(failed.value)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(call)
        await tap.until(lambda: sum(opcode == TEXT for opcode, _ in tap.from_client.frames) > sent)
        await tap.send_to_client(data)
    return failures[0]


BIG_INITIALIZE = v2.InitializeRequest(
    protocol_version=2, info=v2.Implementation(name="x" * (16 << 20), version="1")
)
"""An `initialize` more than the socket buffers take: its write waits for the server."""


@pytest.mark.parametrize("how", ["reset", "half-close"])
async def test_a_call_waiting_on_a_server_that_reads_nothing_fails_when_it_closes(
    how: str,
) -> None:
    failures: list[RemoteConnectionError] = []
    with anyio.fail_after(8):
        async with deaf_server() as (url, accepted), open_remote(url, v2=HelloClient) as conn:

            async def call() -> None:
                with pytest.raises(RemoteConnectionError) as failed:
                    await conn.initialize(BIG_INITIALIZE)
                failures.append(failed.value)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                await anyio.sleep(0.3)
                assert failures == []  # its message waits for the server to read
                if how == "reset":
                    accepted[0].close()  # with data unread: the kernel resets the connection
                else:
                    accepted[0].shutdown(socket.SHUT_WR)
    assert failures[0].url == url and url in str(failures[0])


async def test_leaving_a_connection_whose_server_reads_nothing_does_not_hang() -> None:
    """The program gives up on a call whose message waits for the socket and leaves: its
    write is cancelled midway, the socket closes without a close frame (tests/wire/
    test_websocket_deaf_server.py: the close frame waits 1 s at most for a full socket)."""
    with anyio.fail_after(8):
        async with deaf_server() as (url, _), open_remote(url, v2=HelloClient) as conn:
            with anyio.move_on_after(0.3):
                await conn.initialize(BIG_INITIALIZE)
