"""The remote transport beyond acpwire's own `serve_remote`: cookies the client keeps for the
connection (the RFD's MUST, for servers behind a load balancer with cookie affinity), and
`agent_app` under uvicorn (HTTP/1.1 and WebSocket: uvicorn has no HTTP/2)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import anyio
import pytest

from acp_schema import v2
from acpwire import RemoteConnectionError, agent_app, open_remote
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from helpers.asgi_servers import (
    CookieAffinity,
    UvicornWebSocket,
    hypercorn_serving,
    uvicorn_serving,
)
from helpers.hello_turns import HELLO_TURN, hello_turn
from helpers.loops import run_async
from helpers.processes import PYTHONPATH

INFO = v2.Implementation(name="servers-test", version="1.0")


@pytest.mark.usefixtures("loop")
async def test_the_client_returns_the_servers_cookies_for_the_connection() -> None:
    app = CookieAffinity(agent_app(HelloAgent))
    with anyio.fail_after(8):
        async with hypercorn_serving(app) as url:
            async with open_remote(url, v2=HelloClient, transport="http") as conn:
                assert await hello_turn(conn) == HELLO_TURN
    # the event streams, the POSTs after initialize and the DELETE all carried it
    assert app.with_cookie >= 6


@pytest.mark.parametrize(
    ("transport", "ws"),
    [
        ("websocket", "wsproto"),
        ("websocket", "websockets"),
        ("websocket", "websockets-sansio"),
        ("http", "wsproto"),
    ],
)
def test_uvicorn_serves_websocket_and_streamable_http_over_http1(
    transport: str, ws: UvicornWebSocket
) -> None:
    """Under uvicorn, with either of its WebSocket implementations."""

    async def scenario() -> None:
        app = agent_app(HelloAgent)
        with anyio.fail_after(8):
            async with uvicorn_serving(app, ws=ws) as url:
                opening = open_remote(url, v2=HelloClient, transport=transport, http2=False)  # type: ignore[arg-type]
                async with opening as conn:
                    assert await hello_turn(conn) == HELLO_TURN

    run_async(scenario, "asyncio")  # uvicorn runs on asyncio only


def test_cleartext_http2_against_an_http1_server_names_the_fix() -> None:
    async def scenario() -> None:
        with anyio.fail_after(8):
            async with uvicorn_serving(agent_app(HelloAgent)) as url:
                with pytest.raises(RemoteConnectionError) as failed:
                    async with open_remote(url, v2=HelloClient, transport="http") as conn:
                        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                assert "http2=False" in str(failed.value) and url in str(failed.value)

    run_async(scenario, "asyncio")


def test_the_readme_command_serves_the_hello_agent_under_uvicorn() -> None:
    """`uvicorn --ws websockets-sansio acpwire.examples.hello_remote:app`, as the README's
    "Interop and speed" gives it, reached by the hello client over WebSocket."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, **PYTHONPATH}
    server = [
        *(sys.executable, "-m", "uvicorn", "--ws", "websockets-sansio", "--port", str(port)),
        "acpwire.examples.hello_remote:app",
    ]
    with subprocess.Popen(server, env=env, stderr=subprocess.PIPE, text=True) as serving:
        try:
            assert serving.stderr is not None
            while "Uvicorn running on" not in (line := serving.stderr.readline()):
                assert line, "uvicorn exited before it listened"
            url = f"http://127.0.0.1:{port}/acp"
            client = [sys.executable, "-m", "acpwire.examples.hello_client", "--url", url]
            done = subprocess.run(client, env=env, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, done.stderr
            assert "agent: acpwire! \nturn ended: end_turn\n" in done.stdout
        finally:
            serving.terminate()
