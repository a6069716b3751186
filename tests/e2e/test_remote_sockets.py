"""The server's sockets once Streamable HTTP clients leave, over HTTP/1.1 under Hypercorn
(`serve_remote`): Hypercorn closes an idle keep-alive socket only when its keep-alive timeout
(30 s) runs out, even after the client closed its end, so the responses that end an ACP
connection (the DELETE's, the event streams) say `Connection: close` and the socket goes with
them. Counted as the sockets of this process (the server runs in it) bound to the server's
port, from /proc (Linux)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import httpx
import pytest

from acpwire import agent_app, open_remote
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from helpers.constants import RAW_INITIALIZE
from helpers.hello_turns import HELLO_TURN, hello_turn
from helpers.remote import served

pytestmark = pytest.mark.usefixtures("loop")

CLIENTS = 5
LISTENING = "0A"  # the state column of /proc/net/tcp


def server_sockets(url: str) -> int:
    """The open sockets of this process on the server's side of a connection to `url`."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    inodes = set()
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] != LISTENING:
            inodes.add(f"socket:[{fields[9]}]")
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            held += os.readlink(f"/proc/self/fd/{fd}") in inodes
    return held


async def until_no_server_sockets(url: str) -> None:
    """Wait (2 s at most, far below the keep-alive timeout) for the server to let go."""
    with anyio.move_on_after(2):
        while server_sockets(url):
            await anyio.sleep(0.05)
    assert server_sockets(url) == 0


async def test_clients_that_leave_leave_no_sockets_on_the_server() -> None:
    app = agent_app(HelloAgent)
    with anyio.fail_after(15):
        async with served(app) as url:
            for _ in range(CLIENTS):
                opening = open_remote(url, v2=HelloClient, transport="http", http2=False)
                async with opening as conn:
                    assert await hello_turn(conn) == HELLO_TURN
            assert app.open_connections == 0
            await until_no_server_sockets(url)


async def test_a_delete_lets_the_sockets_go_while_the_client_keeps_its_pool() -> None:
    """A client that keeps its HTTP client (and its pool of idle connections) after the
    DELETE: the server closes the sockets of the DELETE and of the ended event stream."""
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url:
            async with httpx.AsyncClient(http1=True, http2=False, timeout=5.0) as client:
                answered = await client.post(url, json=RAW_INITIALIZE)
                connection = {"acp-connection-id": answered.headers["acp-connection-id"]}
                stream_headers = {**connection, "accept": "text/event-stream"}
                async with client.stream("GET", url, headers=stream_headers) as stream:
                    deleted = await client.delete(url, headers=connection)
                    assert deleted.status_code == 202
                    assert [chunk async for chunk in stream.aiter_raw()] == []
                assert server_sockets(url) <= 2  # (the client may not have seen the ends yet)
                await until_no_server_sockets(url)
