"""Resumable streams on the server, by raw HTTP and WebSocket requests
(`RemoteOptions(resumable=ResumeOptions(...))`): the capability in the `initialize` result,
an `id:` on every event of each stream, `Last-Event-ID` replaying what followed, 409 for a
cursor no longer kept, 400 for one never sent, the retention bounds, a retried POST taken
once, a WebSocket resumed with its connection id and cursor; and without the option, none of
it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx_ws
import pytest

from acpwire import RemoteOptions, ResumeOptions, agent_app
from acpwire._loop import current_loop
from acpwire.agent import AgentApp
from acpwire.agent.remote.replay import CursorGone, RetainingMailbox, UnknownCursor
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_v1_agent import HelloV1Agent
from acpwire.streams.sse import SseParser
from helpers.constants import RAW_INITIALIZE
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

JSON = {"content-type": "application/json"}
CAPABILITY = {"maxEvents": 4096, "maxBytes": 4 * 1024 * 1024}


def resumable(**retention: int) -> AgentApp:
    return agent_app(HelloAgent, remote=RemoteOptions(resumable=ResumeOptions(**retention)))


def listing(id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": "session/list", "params": {}}


@asynccontextmanager
async def server(app: AgentApp) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    with anyio.fail_after(8):
        async with served(app) as url, raw_client() as client:
            yield url, client


async def initialized(url: str, client: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    """A new connection: its id and the `initialize` result."""
    response = await client.post(url, json=RAW_INITIALIZE, headers=JSON)
    assert response.status_code == 200, response.text
    return response.headers["acp-connection-id"], response.json()["result"]


async def listed(url: str, client: httpx.AsyncClient, connection: str, *ids: int) -> None:
    """POST a `session/list` for each id (each answered on the connection-scoped stream)."""
    for id in ids:
        headers = {**JSON, "acp-connection-id": connection}
        assert (await client.post(url, json=listing(id), headers=headers)).status_code == 202


async def read_events(
    url: str,
    client: httpx.AsyncClient,
    connection: str,
    count: int,
    *,
    then_list: tuple[int, ...] = (),
    last_event_id: str | None = None,
) -> list[tuple[str | None, int]]:
    """Open the connection-scoped stream (from `last_event_id`), list `then_list` once it is
    open, read `count` events: each one's `id` (None without) and the id of the answer it
    carries."""
    request = {"accept": "text/event-stream", "acp-connection-id": connection}
    if last_event_id is not None:
        request["last-event-id"] = last_event_id
    found: list[tuple[str | None, int]] = []
    async with client.stream("GET", url, headers=request) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        await listed(url, client, connection, *then_list)
        parser = SseParser(1 << 20)
        chunks = response.aiter_raw()
        while len(found) < count:
            for line in chunk_lines(await chunks.__anext__()):
                data = parser.feed(line)
                found.extend((parser.last_event_id, json.loads(item)["id"]) for item in data)
    return found


def chunk_lines(chunk: bytes) -> list[bytes]:
    """A chunk cut after each line, so each event's own `id` is seen by the parser."""
    return [line + b"\n" for line in chunk.split(b"\n")[:-1]]


async def status_of_get(url: str, client: httpx.AsyncClient, connection: str, cursor: str) -> int:
    headers = {"accept": "text/event-stream", "acp-connection-id": connection}
    async with client.stream("GET", url, headers={**headers, "last-event-id": cursor}) as reply:
        await reply.aread()
        return reply.status_code


# ------------------------------------------------------------------ Streamable HTTP


async def test_events_carry_ids_and_the_capability_is_advertised() -> None:
    async with server(resumable()) as (url, client):
        connection, result = await initialized(url, client)
        assert result["_meta"]["transport"]["resumable"] == CAPABILITY
        await listed(url, client, connection, 1, 2, 3)
        assert await read_events(url, client, connection, 3) == [("1", 1), ("2", 2), ("3", 3)]


async def test_the_capability_is_advertised_to_v1_clients_too() -> None:
    app = agent_app(HelloAgent, v1=HelloV1Agent, remote=RemoteOptions(resumable=ResumeOptions()))
    async with server(app) as (url, client):
        v1_init = {**RAW_INITIALIZE, "params": {"protocolVersion": 1, "clientCapabilities": {}}}
        response = await client.post(url, json=v1_init, headers=JSON)
        result = response.json()["result"]
        assert result["protocolVersion"] == 1
        assert result["_meta"]["transport"]["resumable"] == CAPABILITY


async def test_without_the_option_no_ids_no_capability_and_the_cursor_is_ignored() -> None:
    async with server(agent_app(HelloAgent)) as (url, client):
        connection, result = await initialized(url, client)
        assert "transport" not in (result.get("_meta") or {})
        await listed(url, client, connection, 1, 2)
        # a cursor means nothing here (a resumable server would answer this one 400)
        events = await read_events(url, client, connection, 2, last_event_id="5")
        assert events == [(None, 1), (None, 2)]


async def test_last_event_id_replays_what_followed_on_that_stream() -> None:
    async with server(resumable()) as (url, client):
        connection, _ = await initialized(url, client)
        await listed(url, client, connection, 1, 2, 3)
        await read_events(url, client, connection, 3)  # read, then the stream broke
        await listed(url, client, connection, 4)
        events = await read_events(url, client, connection, 3, last_event_id="1")
        assert events == [("2", 2), ("3", 3), ("4", 4)]


async def test_a_cursor_no_longer_kept_is_409_and_one_never_sent_400() -> None:
    async with server(resumable(max_events=2)) as (url, client):
        connection, _ = await initialized(url, client)
        await listed(url, client, connection, 1, 2, 3, 4, 5)
        await read_events(url, client, connection, 5)
        assert await status_of_get(url, client, connection, "2") == 409  # 3 is gone
        for never in ("6", "-1", "x", ""):
            assert await status_of_get(url, client, connection, never) == 400, never
        events = await read_events(url, client, connection, 2, last_event_id="3")
        assert events == [("4", 4), ("5", 5)]


async def test_retention_is_bounded_by_bytes_too() -> None:
    async with server(resumable(max_bytes=1)) as (url, client):
        connection, _ = await initialized(url, client)
        await listed(url, client, connection, 1, 2)
        await read_events(url, client, connection, 2)
        assert await status_of_get(url, client, connection, "1") == 409
        events = await read_events(url, client, connection, 1, then_list=(3,), last_event_id="2")
        assert events == [("3", 3)]


async def test_a_retried_post_is_taken_once() -> None:
    async with server(resumable()) as (url, client):
        connection, _ = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        for id, seq in ((1, "1"), (1, "1"), (2, "2")):
            retried = {**headers, "acp-message-seq": seq}
            assert (await client.post(url, json=listing(id), headers=retried)).status_code == 202
        assert await read_events(url, client, connection, 2) == [("1", 1), ("2", 2)]


async def test_messages_not_read_yet_are_kept_past_the_bounds() -> None:
    mailbox = RetainingMailbox(
        current_loop(),
        "a stream",
        max_bytes=1 << 20,
        stall_timeout=1.0,
        retention=ResumeOptions(max_events=1, max_bytes=1),
    )
    for message in (b"a", b"b", b"c"):
        await mailbox.put(message)
    reader = mailbox.resume(0)
    assert [await mailbox.take(reader, 1.0) for _ in range(2)] == [b"a", b"b"]
    with pytest.raises(CursorGone):
        mailbox.resume(1)  # a and b were read: beyond one kept message
    with pytest.raises(UnknownCursor):
        mailbox.resume(4)
    reader = mailbox.resume(2)  # b, the newest read, is kept
    assert await mailbox.take(reader, 1.0) == b"c"


# ------------------------------------------------------------------ WebSocket


@asynccontextmanager
async def websocket(
    url: str, **headers: str
) -> AsyncIterator[tuple[httpx_ws.AsyncWebSocketSession, httpx.Headers]]:
    async with raw_client(http2=False) as client:
        async with httpx_ws.aconnect_ws(url, client, headers=headers) as socket:
            assert socket.response is not None
            yield socket, socket.response.headers


async def upgrade_status(url: str, **headers: str) -> int:
    with pytest.raises(httpx_ws.WebSocketUpgradeError) as refused:
        async with websocket(url, **headers):
            pass
    return refused.value.response.status_code


async def test_a_websocket_resumes_with_its_connection_id_and_cursor() -> None:
    with anyio.fail_after(8):
        async with served(resumable(max_events=2)) as url:
            async with websocket(url, **{"last-event-id": "0"}) as (socket, headers):
                connection = headers["acp-connection-id"]
                await socket.send_text(json.dumps(RAW_INITIALIZE))
                answer = json.loads(await socket.receive_text())  # frame 1
                assert answer["result"]["_meta"]["transport"]["resumable"]["maxEvents"] == 2
                for id in (1, 2):
                    await socket.send_text(json.dumps(listing(id)))
                assert json.loads(await socket.receive_text())["id"] == 1  # frame 2
            # the socket is gone; the connection waits for a resume
            resume = {"acp-connection-id": connection}
            async with websocket(url, **resume, **{"last-event-id": "2"}) as (socket, headers):
                assert headers["acp-connection-id"] == connection
                assert headers["acp-received"] == "3"  # initialize and two lists
                assert json.loads(await socket.receive_text())["id"] == 2  # frame 3, again
                await socket.send_text(json.dumps(listing(3)))
                assert json.loads(await socket.receive_text())["id"] == 3
            assert await upgrade_status(url, **resume, **{"last-event-id": "1"}) == 409
            assert await upgrade_status(url, **resume, **{"last-event-id": "9"}) == 400
            assert await upgrade_status(url, **resume) == 400  # no cursor
            unknown = {"acp-connection-id": "nope", "last-event-id": "0"}
            assert await upgrade_status(url, **unknown) == 404
            async with raw_client(http2=False) as client:
                assert (await client.delete(url, headers=resume)).status_code == 202
            assert await upgrade_status(url, **resume, **{"last-event-id": "4"}) == 404


@pytest.mark.parametrize("option", [False, True])
async def test_a_websocket_that_does_not_ask_advertises_nothing_and_cannot_resume(
    option: bool,
) -> None:
    """Without the option, or with it but a client that does not ask (no `Last-Event-ID` on
    its first upgrade): no capability, and the connection ends with its socket."""
    with anyio.fail_after(8):
        async with served(resumable() if option else agent_app(HelloAgent)) as url:
            async with websocket(url) as (socket, headers):
                connection = headers["acp-connection-id"]
                assert "acp-received" not in headers
                await socket.send_text(json.dumps(RAW_INITIALIZE))
                result = json.loads(await socket.receive_text())["result"]
                assert "transport" not in (result.get("_meta") or {})
            resume = {"acp-connection-id": connection, "last-event-id": "1"}
            if option:
                assert await upgrade_status(url, **resume) == 404
            else:  # the headers are not read: this opens a new connection
                async with websocket(url, **resume) as (_, headers):
                    assert headers["acp-connection-id"] != connection
