"""Event streams a client abandoned over HTTP/2 (Hypercorn, each loop): the connection counts
as attached while one is open, and once the client is gone it is reaped after `idle_timeout`
(logged), its tasks ended: the client resets the stream (RST_STREAM: Hypercorn tells the app
it disconnected), drops its TCP connection, or (httpx) closes the response without a reset
while its HTTP/2 connection stays open: then nothing tells the server, and the stream ends
once a write to it waits `stall_timeout` for the client (the client reads nothing of it)."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest

from acpwire import RemoteOptions, agent_app
from acpwire.agent import AgentApp, AgentTurn, turn_agents
from acpwire.examples.hello_agent import HelloAgent
from acpwire.streams.sse import SseParser
from helpers import raw_h2
from helpers.constants import RAW_INITIALIZE
from helpers.loops import acpwire_tasks, until
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

IDLE = 0.5
STREAM = "text/event-stream"


def reaped(app: AgentApp, connection: str) -> bool:
    return connection not in app._hub.connections


@pytest.mark.parametrize("how", ["reset", "drop"])
async def test_a_stream_reset_or_dropped_detaches_and_its_connection_is_reaped(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(idle_timeout=IDLE))
    with anyio.fail_after(8), caplog.at_level(logging.INFO, logger="acpwire"):
        async with served(app) as url, raw_client() as client:
            before = acpwire_tasks()
            connection = (await client.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            headers = {"accept": STREAM, "acp-connection-id": connection}
            async with raw_h2.connected(url) as h2:
                stream_id, status = await h2.get("/acp", headers)
                assert status == 200
                await anyio.sleep(2 * IDLE)
                assert not reaped(app, connection)  # its stream is open: it stays
                await (h2.reset(stream_id) if how == "reset" else h2.drop())
                await until(lambda: reaped(app, connection), IDLE + 3)
            await until(lambda: acpwire_tasks() == before)
    assert f"ending remote ACP connection {connection}: no client for {IDLE:g} s" in caplog.text


CHUNKS = 2500
"""Messages of the turn in the abandoned-stream test, 8 KB each: 20 MB, more than what the
client takes without reading (httpx's HTTP/2 stream window is 16 MiB; its socket's buffers
fill first on loopback), less than `MAX_STREAM_BYTES` (the agent's turn ends, nothing
closes the connection but the idle timeout)."""
MAX_STREAM_BYTES = 32 << 20


async def flood(turn: AgentTurn) -> str:
    for _ in range(CHUNKS):
        await turn.say("x" * 8000)
    return "end_turn"


async def first_event(events: Any) -> dict[str, Any]:
    parser = SseParser(1 << 20)
    async for chunk in events.aiter_raw():
        for data in parser.feed(chunk):
            return json.loads(data)  # type: ignore[no-any-return]
    raise AssertionError("the event stream ended")


async def test_a_stream_closed_without_a_reset_is_ended_once_its_writes_stall(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """httpx closes an HTTP/2 response without RST_STREAM and keeps the connection: the
    server's writes go on until what the client does not read fills its socket (or the
    stream's window), then wait. After `stall_timeout` the stream ends (its client took
    nothing: logged), and the connection, without a client, is reaped after `idle_timeout`
    (the write waited forever: the stream attached, the connection never reaped, the
    request's task left)."""
    agent_v2, agent_v1 = turn_agents(flood, name="flood", version="1")
    remote = RemoteOptions(stall_timeout=IDLE, idle_timeout=IDLE, max_stream_bytes=MAX_STREAM_BYTES)
    app = agent_app(agent_v2, v1=agent_v1, remote=remote)
    with anyio.fail_after(9), caplog.at_level(logging.INFO, logger="acpwire"):
        async with served(app) as url, raw_client(http2=False) as posts, raw_client() as h2:
            before = acpwire_tasks()
            connection = (await posts.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            headers = {"acp-connection-id": connection}
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new"}
            new["params"] = {"cwd": "/", "mcpServers": []}
            # the connection-scoped stream over HTTP/1.1: leaving it closes its socket
            async with posts.stream("GET", url, headers={**headers, "accept": STREAM}) as events:
                assert (await posts.post(url, json=new, headers=headers)).status_code == 202
                session = (await first_event(events))["result"]["sessionId"]
            scoped = {**headers, "acp-session-id": session}
            async with h2.stream("GET", url, headers={**scoped, "accept": STREAM}) as abandoned:
                assert (abandoned.status_code, abandoned.http_version) == (200, "HTTP/2")
            prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt"}
            prompt["params"] = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
            assert (await posts.post(url, json=prompt, headers=scoped)).status_code == 202
            await until(lambda: reaped(app, connection), 6)
            await until(lambda: acpwire_tasks() == before)
    assert f"session {session}: its client took nothing for {IDLE:g} s" in caplog.text
    assert f"ending remote ACP connection {connection}: no client for {IDLE:g} s" in caplog.text
