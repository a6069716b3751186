"""The remote server under bad input and load (an `agent_app` served by Hypercorn, on each
test loop): text that is not JSON and answers nobody asked for keep the connection going; a
client that vanishes mid-turn (killed: no close frame, no DELETE) has its turn cancelled and
leaves no task behind; a WebSocket client that stops reading slows its own agent only; 200
clients at once each run a turn, every request answered. (Status codes, the limits and a
stalled event stream are in tests/agent/test_remote_server.py.)"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import anyio
import httpx
import httpx_ws
import pytest

from acp_schema import v2
from acpwire import ClientConnection, RemoteOptions, agent_app, open_remote
from acpwire.agent import AgentApp, turn_agents
from acpwire.agent.remote.serving import BACKLOG
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from helpers.constants import RAW_INITIALIZE
from helpers.hello_turns import HELLO_TURN, hello_turn
from helpers.loops import acpwire_tasks, run_async, until
from helpers.processes import PYTHONPATH, loop_script, python
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

INFO = v2.Implementation(name="load-test", version="1.0")


# ------------------------------------------------------------------ bad input


async def test_text_that_is_not_json_over_websocket_is_answered_and_the_connection_goes_on() -> (
    None
):
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url, raw_client(http2=False) as client:
            async with httpx_ws.aconnect_ws(url, client) as socket:
                await socket.send_text(json.dumps(RAW_INITIALIZE))
                assert json.loads(await socket.receive_text())["id"] == 0
                await socket.send_text("{not json")
                error = json.loads(await socket.receive_text())
                assert (error["id"], error["error"]["code"]) == (None, -32700)
                await socket.send_bytes(b"\x00\x01 binary frames are ignored")
                listed = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}
                await socket.send_text(json.dumps(listed))
                assert json.loads(await socket.receive_text())["id"] == 1


@pytest.mark.parametrize("transport", ["websocket", "http"])
async def test_answers_to_ids_nobody_asked_are_dropped_and_the_connection_goes_on(
    transport: str,
) -> None:
    """A response to an id the agent never used, and `$/cancel_request` of an unknown id:
    accepted (202 / nothing), ignored, and the next request is answered as usual."""
    stray = {"jsonrpc": "2.0", "id": "never-asked", "result": {}}
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 999}}
    listed = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url, raw_client() as client:
            if transport == "websocket":
                async with raw_client(http2=False) as ws_client:
                    async with httpx_ws.aconnect_ws(url, ws_client) as socket:
                        await socket.send_text(json.dumps(RAW_INITIALIZE))
                        await socket.receive_text()
                        for message in (stray, cancel, listed):
                            await socket.send_text(json.dumps(message))
                        assert json.loads(await socket.receive_text())["id"] == 1
                return
            answered = await client.post(url, json=RAW_INITIALIZE)
            headers = {"acp-connection-id": answered.headers["acp-connection-id"]}
            for message in (stray, cancel):
                assert (await client.post(url, json=message, headers=headers)).status_code == 202
            events = {**headers, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=events) as stream:
                assert (await client.post(url, json=listed, headers=headers)).status_code == 202
                async for chunk in stream.aiter_raw():
                    if chunk.strip():
                        assert json.loads(chunk.decode().removeprefix("data: "))["id"] == 1
                        break


# ------------------------------------------------------------------ clients that go away

VANISHING_CLIENT = """
import sys

from acp_schema import v2
from acpwire import open_remote
from acpwire.examples.hello_client import HelloClient

async def main(url, transport):
    async with open_remote(url, v2=HelloClient, transport=transport) as conn:
        info = v2.Implementation(name="vanishing", version="1")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
        prompt = v2.PromptRequest(session_id=session.session_id, prompt=[v2.TextContent(text="x")])
        await conn.v2.peer.session_prompt(prompt)
        print("prompted", flush=True)
        await anyio.sleep(60)

run_on(sys.argv[1], main, sys.argv[2], sys.argv[3])
"""


@pytest.mark.parametrize("transport", ["websocket", "http"])
async def test_a_client_killed_mid_turn_has_its_turn_cancelled_and_leaves_nothing(
    transport: str, loop: str
) -> None:
    """The client's process is killed while its turn streams: no close frame, no DELETE.
    WebSocket: the socket's end ends the connection. Streamable HTTP: the connection outlives
    its streams (the client may open them again), so the agent's output fills the stream's
    bound and, unread for `stall_timeout`, closes the connection. Either way the turn runs on
    for `idle_timeout` (a client may come back and resume it: test_remote_durable.py), then
    ends without finishing: cancelled, or, when its write is the one that meets the closed
    connection, with `ConnectionClosed`; and no task of acpwire is left."""
    fate: list[str] = []

    async def work(turn: Any) -> str:
        fate.append("started")
        try:
            for i in range(2000):
                await turn.say(f"chunk {i} " + "x" * 200)
                await anyio.sleep(0.002)
        except BaseException as exc:
            fate.append(type(exc).__name__)
            raise
        fate.append("finished")
        return "end_turn"

    agent_v2, agent_v1 = turn_agents(work, name="slow", version="1")
    remote = RemoteOptions(max_stream_bytes=16 * 1024, stall_timeout=0.5, idle_timeout=0.5)
    app = agent_app(agent_v2, v1=agent_v1, remote=remote)
    with anyio.fail_after(9):
        async with served(app) as url:
            before = acpwire_tasks()
            command = [*python(loop_script(VANISHING_CLIENT)), loop, url, transport]
            async with await anyio.open_process(
                command, env={**os.environ, **PYTHONPATH}
            ) as client:
                assert client.stdout is not None
                assert b"prompted" in await client.stdout.receive()
                await until(lambda: fate == ["started"])
                client.send_signal(signal.SIGKILL)
            await until(lambda: app.open_connections == 0, 5)
            await until(lambda: len(fate) == 2, 2)
            assert fate[1] in ("Cancelled", "CancelledError", "ConnectionClosed")
            await until(lambda: acpwire_tasks() == before, 2)


async def test_a_websocket_reader_that_stops_reading_slows_only_its_own_agent() -> None:
    """Client A prompts a turn of 40 MB and reads nothing: its agent waits on the socket
    (back-pressure) instead of queueing, while client B runs a whole turn meanwhile."""
    fate: list[str] = []

    async def flood(turn: Any) -> str:
        for _ in range(5000):
            await turn.say("y" * 8000)
        fate.append("flooded")
        return "end_turn"

    agent_v2, agent_v1 = turn_agents(flood, name="flood", version="1")
    with anyio.fail_after(9):
        async with served(agent_app(agent_v2, v1=agent_v1)) as flooding:
            async with served(agent_app(HelloAgent)) as hello:
                async with raw_client(http2=False) as client:
                    async with httpx_ws.aconnect_ws(flooding, client) as socket:
                        await socket.send_text(json.dumps(RAW_INITIALIZE))
                        await socket.receive_text()
                        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new"}
                        new["params"] = {"cwd": "/", "mcpServers": []}  # type: ignore[assignment]
                        await socket.send_text(json.dumps(new))
                        session = json.loads(await socket.receive_text())["result"]["sessionId"]
                        prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt"}
                        prompt["params"] = {"sessionId": session, "prompt": []}  # type: ignore[assignment]
                        await socket.send_text(json.dumps(prompt))
                        # ... and A reads nothing more; B, on another server's agent:
                        async with open_remote(hello, v2=HelloClient) as conn:
                            assert await hello_turn(conn) == HELLO_TURN
                        await anyio.sleep(0.3)
                        assert fate == []  # A's agent still waits for A to read


# ------------------------------------------------------------------ load


async def many_turns(app: AgentApp, url: str, transport: str, count: int) -> list[list[str]]:
    results: list[list[str]] = []

    async def client() -> None:
        async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
            results.append(await hello_turn(conn))

    async with anyio.create_task_group() as tasks:
        for _ in range(count):
            tasks.start_soon(client)
    return results


CLIENTS = 200
LOAD_TIMEOUT = 60.0
"""Seconds for the 200 turns (a sync test: beyond the 10 s of an async test; about 10 s on a
shared 2-core machine)."""


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_200_clients_at_once_each_run_a_turn(transport: str, loop: str) -> None:
    async def scenario() -> None:
        app = agent_app(HelloAgent)
        with anyio.fail_after(LOAD_TIMEOUT):
            async with served(app) as url:
                results = await many_turns(app, url, transport, CLIENTS)
                assert results == [HELLO_TURN] * CLIENTS
                await until(lambda: app.open_connections == 0, 5)

    run_async(scenario, loop)


async def test_serve_remote_keeps_an_idle_connection_longer_than_the_client_does() -> None:
    """Hypercorn closes an idle HTTP connection after 5 s by default, as long as httpx keeps
    one: a POST sent as the server closed it failed under load ("Server disconnected"). Our
    server keeps it 30 s (`KEEP_ALIVE_TIMEOUT`): a POST after 5.5 s idle reuses it."""
    limits = httpx.Limits(keepalive_expiry=None)
    with anyio.fail_after(9):
        async with served(agent_app(HelloAgent)) as url:
            async with httpx.AsyncClient(http1=False, http2=True, limits=limits) as client:
                first = await client.post(url, json=RAW_INITIALIZE)
                await anyio.sleep(5.5)
                again = await client.post(url, json=RAW_INITIALIZE)
                assert again.status_code == 200
                local = [
                    response.extensions["network_stream"].get_extra_info("client_addr")
                    for response in (first, again)
                ]
                assert local[0] == local[1]  # the same connection


MESSAGES = 1100
SENDERS = 10


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_more_than_a_thousand_messages_on_one_connection(transport: str, loop: str) -> None:
    """Every message a Streamable HTTP client sends is a POST: Hypercorn's default closes an
    HTTP/2 connection after 1000 requests (a GOAWAY httpx fails the request in flight on).
    `serve_remote` lifts that limit. (10 senders at once; a sync test for the time a loaded
    machine takes.)"""

    async def scenario() -> None:
        answered = 0

        async def sender(conn: ClientConnection) -> None:
            nonlocal answered
            for _ in range(MESSAGES // SENDERS):
                await conn.v2.peer.session_list(v2.ListSessionsRequest())
                answered += 1

        with anyio.fail_after(LOAD_TIMEOUT):
            async with served(agent_app(HelloAgent)) as url:
                async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                    async with anyio.create_task_group() as tasks:
                        for _ in range(SENDERS):
                            tasks.start_soon(sender, conn)
        assert answered == MESSAGES

    run_async(scenario, loop)


async def test_serve_remote_listens_with_its_backlog_not_hypercorns() -> None:
    """Hypercorn listens again on the socket it is given, with its own backlog (100): a burst of
    200 clients (600 TCP connections over Streamable HTTP) overflowed it. `ss` shows a
    listening socket's backlog as its Send-Q."""
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url:
            await anyio.sleep(0.2)  # Hypercorn's listen() follows the URL's report
            port = url.split(":")[2].split("/")[0]
            shown = await anyio.run_process(["ss", "-Hltn", f"sport = :{port}"])
    [_, _, backlog, *_] = shown.stdout.decode().split()
    assert int(backlog) == BACKLOG
