"""The remote server by raw HTTP and WebSocket requests: every status code and header rule of
the RFD's transport section, where each message goes, the checks and the limits (an
`agent_app` served by Hypercorn on the test's loop)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx_ws
import pytest
import wsproto.events

from acpwire import RemoteOptions, agent_app, bearer_token
from acpwire.agent import AgentApp
from acpwire.examples.hello_agent import HelloAgent
from acpwire.streams.sse import SseParser
from helpers.constants import RAW_INITIALIZE
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

JSON = {"content-type": "application/json"}


def rpc(id: int | None, method: str, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return message


@asynccontextmanager
async def server(app: AgentApp | None = None) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    with anyio.fail_after(8):
        async with served(app or agent_app(HelloAgent)) as url, raw_client() as client:
            yield url, client


async def initialized(url: str, client: httpx.AsyncClient) -> str:
    response = await client.post(url, json=RAW_INITIALIZE, headers=JSON)
    assert response.status_code == 200, response.text
    return response.headers["acp-connection-id"]


class Events:
    """One event stream, read by hand."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._chunks = response.aiter_raw()
        self._parser = SseParser(1 << 20)
        self._ready: list[bytes] = []

    async def next(self) -> dict[str, Any]:
        while not self._ready:
            self._ready.extend(self._parser.feed(await self._chunks.__anext__()))
        return json.loads(self._ready.pop(0))  # type: ignore[no-any-return]


@asynccontextmanager
async def events(
    client: httpx.AsyncClient, url: str, connection: str, session: str | None = None
) -> AsyncIterator[Events]:
    headers = {"accept": "text/event-stream", "acp-connection-id": connection}
    if session is not None:
        headers["acp-session-id"] = session
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        assert response.headers["content-type"] == "text/event-stream"
        yield Events(response)


# ------------------------------------------------------------------ status codes


async def test_initialize_is_answered_200_with_the_connection_id_over_http2() -> None:
    async with server() as (url, client):
        response = await client.post(url, json=RAW_INITIALIZE, headers=JSON)
        assert response.http_version == "HTTP/2"
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json()["result"]["protocolVersion"] == 2
        assert len(response.headers["acp-connection-id"]) >= 32


async def test_415_for_a_post_that_is_not_json() -> None:
    async with server() as (url, client):
        response = await client.post(
            url, content=json.dumps(RAW_INITIALIZE), headers={"content-type": "text/plain"}
        )
        assert response.status_code == 415
        response = await client.post(url, content=json.dumps(RAW_INITIALIZE))
        assert response.status_code == 415
        # parameters of the media type are fine
        response = await client.post(
            url, json=RAW_INITIALIZE, headers={"content-type": "application/json; charset=utf-8"}
        )
        assert response.status_code == 200


async def test_501_for_a_batch_and_400_for_what_is_not_a_message() -> None:
    async with server() as (url, client):
        assert (await client.post(url, json=[RAW_INITIALIZE], headers=JSON)).status_code == 501
        broken = await client.post(url, content=b"{not json", headers=JSON)
        assert broken.status_code == 400
        assert broken.json()["error"]["code"] == -32700
        assert (await client.post(url, json=42, headers=JSON)).status_code == 400


async def test_400_without_and_404_with_an_unknown_connection_id() -> None:
    async with server() as (url, client):
        new = rpc(1, "session/new", cwd="/", mcpServers=[])
        assert (await client.post(url, json=new, headers=JSON)).status_code == 400
        unknown = {**JSON, "acp-connection-id": "nope"}
        assert (await client.post(url, json=new, headers=unknown)).status_code == 404
        get = {"accept": "text/event-stream"}
        assert (await client.get(url, headers=get)).status_code == 400
        assert (
            await client.get(url, headers={**get, "acp-connection-id": "nope"})
        ).status_code == 404
        assert (await client.delete(url)).status_code == 400
        assert (await client.delete(url, headers={"acp-connection-id": "nope"})).status_code == 404


async def test_400_for_a_message_of_a_session_without_its_session_header() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        prompt = rpc(5, "session/prompt", sessionId="s1", prompt=[])
        missing = await client.post(url, json=prompt, headers=headers)
        assert missing.status_code == 400 and "Acp-Session-Id" in missing.text
        other = await client.post(url, json=prompt, headers={**headers, "acp-session-id": "s2"})
        assert other.status_code == 400 and "does not match" in other.text
        cancel = rpc(None, "session/cancel", sessionId="s1")
        assert (await client.post(url, json=cancel, headers=headers)).status_code == 400


async def test_406_for_a_get_that_does_not_accept_an_event_stream() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        for accept in (None, "application/json", "*/*"):
            headers = {"acp-connection-id": connection}
            if accept:
                headers["accept"] = accept
            assert (await client.get(url, headers=headers)).status_code == 406


async def test_404_for_a_session_stream_the_server_does_not_know() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {
            "accept": "text/event-stream",
            "acp-connection-id": connection,
            "acp-session-id": "never-named",
        }
        assert (await client.get(url, headers=headers)).status_code == 404


async def test_delete_ends_the_connection_and_its_streams() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        async with events(client, url, connection) as stream:
            assert (
                await client.delete(url, headers={"acp-connection-id": connection})
            ).status_code == 202
            with pytest.raises(StopAsyncIteration):  # the stream ends
                await stream.next()
        new = rpc(1, "session/new", cwd="/", mcpServers=[])
        headers = {**JSON, "acp-connection-id": connection}
        assert (await client.post(url, json=new, headers=headers)).status_code == 404


async def test_other_methods_and_paths() -> None:
    async with server() as (url, client):
        put = await client.put(url, json=RAW_INITIALIZE, headers=JSON)
        assert put.status_code == 405 and put.headers["allow"] == "POST, GET, DELETE"
        elsewhere = url.replace("/acp", "/other")
        assert (await client.post(elsewhere, json=RAW_INITIALIZE, headers=JSON)).status_code == 404


# ------------------------------------------------------------------ where messages go


async def test_each_message_goes_to_its_stream() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        async with events(client, url, connection) as connection_stream:
            new = rpc(1, "session/new", cwd="/", mcpServers=[])
            assert (await client.post(url, json=new, headers=headers)).status_code == 202
            answer = await connection_stream.next()  # session/new: connection-scoped
            assert answer["id"] == 1
            session = answer["result"]["sessionId"]
            scoped = {**headers, "acp-session-id": session}
            async with events(client, url, connection, session) as session_stream:
                prompt = rpc(
                    2, "session/prompt", sessionId=session, prompt=[{"type": "text", "text": "hi"}]
                )
                assert (await client.post(url, json=prompt, headers=scoped)).status_code == 202
                seen: list[str] = []
                while True:
                    message = await session_stream.next()
                    if message.get("method") == "session/request_permission":
                        break
                    seen.append(message.get("method") or f"answer {message['id']}")
                assert "answer 2" in seen and "session/update" in seen
                answer = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
                }
                # the answer to a request of the session: another session id is refused, none
                # is accepted (the request's id names the session; see routes.py)
                wrong = {**headers, "acp-session-id": "another"}
                assert (await client.post(url, json=answer, headers=wrong)).status_code == 400
                assert (await client.post(url, json=answer, headers=headers)).status_code == 202
                while (await session_stream.next())["params"]["update"].get("state") != "idle":
                    pass
                listed = rpc(3, "session/list")
                assert (await client.post(url, json=listed, headers=headers)).status_code == 202
                assert (await connection_stream.next())["id"] == 3


async def test_messages_wait_for_a_stream_opened_late() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        new = rpc(1, "session/new", cwd="/", mcpServers=[])
        assert (await client.post(url, json=new, headers=headers)).status_code == 202
        async with events(client, url, connection) as stream:
            assert (await stream.next())["id"] == 1


async def test_a_request_of_a_session_unknown_to_the_connection_is_answered_on_its_stream() -> None:
    """A POST naming (header and params alike) a session this connection never opened is
    taken (202), not 404: the agent answers it (-32002 here), on the connection-scoped stream,
    since the client cannot open that session's stream (404, above). A session of the store
    (another connection's, a restarted server's) is loaded or resumed this way."""
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection, "acp-session-id": "never-named"}
        prompt = rpc(4, "session/prompt", sessionId="never-named", prompt=[])
        async with events(client, url, connection) as stream:
            assert (await client.post(url, json=prompt, headers=headers)).status_code == 202
            answer = await stream.next()
            assert answer["id"] == 4 and "error" in answer, answer


async def test_malformed_json_on_a_connection_is_answered_and_the_connection_goes_on() -> None:
    async with server() as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": 7}', b"\xff\xfe"):
            broken = await client.post(url, content=body, headers=headers)
            assert broken.status_code == 400, (body, broken.text)
        async with events(client, url, connection) as stream:
            listed = rpc(2, "session/list")
            assert (await client.post(url, json=listed, headers=headers)).status_code == 202
            assert (await stream.next())["id"] == 2


# ------------------------------------------------------------------ checks and limits


async def test_origin_and_host_checks() -> None:
    async with server() as (url, client):
        evil = await client.post(
            url, json=RAW_INITIALIZE, headers={**JSON, "origin": "https://evil.example"}
        )
        assert evil.status_code == 403 and "Origin" in evil.text
        local = await client.post(
            url, json=RAW_INITIALIZE, headers={**JSON, "origin": "http://localhost:3000"}
        )
        assert local.status_code == 200
        rebound = await client.post(
            url, json=RAW_INITIALIZE, headers={**JSON, "host": "evil.example:80"}
        )
        assert rebound.status_code == 403 and "DNS rebinding" in rebound.text
    app = agent_app(HelloAgent, remote=RemoteOptions(allowed_origins=["https://app.example"]))
    async with server(app) as (url, client):
        allowed = await client.post(
            url, json=RAW_INITIALIZE, headers={**JSON, "origin": "https://app.example"}
        )
        assert allowed.status_code == 200


async def test_the_authentication_hook_guards_every_request() -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(authorize=bearer_token("t0ken")))
    async with server(app) as (url, client):
        anonymous = await client.post(url, json=RAW_INITIALIZE, headers=JSON)
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == 'Bearer realm="acp"'
        wrong = await client.post(
            url, json=RAW_INITIALIZE, headers={**JSON, "authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401 and "invalid_token" in wrong.headers["www-authenticate"]
        auth = {"authorization": "Bearer t0ken"}
        connection = (
            await client.post(url, json=RAW_INITIALIZE, headers={**JSON, **auth})
        ).headers["acp-connection-id"]
        get = {"accept": "text/event-stream", "acp-connection-id": connection}
        assert (await client.get(url, headers=get)).status_code == 401
        assert (
            await client.delete(url, headers={"acp-connection-id": connection})
        ).status_code == 401
        assert (
            await client.delete(url, headers={"acp-connection-id": connection, **auth})
        ).status_code == 202
        with pytest.raises(httpx_ws.WebSocketUpgradeError) as refused:
            async with raw_client(http2=False) as http1, httpx_ws.aconnect_ws(url, http1):
                pass
        assert refused.value.response.status_code == 401


async def test_413_for_a_message_over_the_limit() -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(max_message_bytes=1000))
    async with server(app) as (url, client):
        big = {
            **RAW_INITIALIZE,
            "params": {**RAW_INITIALIZE["params"], "_meta": {"pad": "x" * 2000}},
        }  # type: ignore[dict-item]
        assert (await client.post(url, json=big, headers=JSON)).status_code == 413


async def test_413_for_a_streamed_body_over_the_limit_and_the_connection_goes_on() -> None:
    """A body without a length (streamed in chunks) is kept only up to the limit: 413, which
    the client reads (the rest is read and dropped: over HTTP/1.1 the client would meet a
    closed connection, and Hypercorn fails on HTTP/2 data for a stream it answered); a big
    message on a connection is refused alone (every POST answered), the next one taken."""
    app = agent_app(HelloAgent, remote=RemoteOptions(max_message_bytes=1000))

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"_meta": "'
        for _ in range(25):  # 2.5 KB: over the limit, within what is drained (4 limits)
            yield b"x" * 100

    with anyio.fail_after(8):
        for http2 in (False, True):
            async with served(app) as url, raw_client(http2=http2) as client:
                await _over_the_limit(url, client, chunks())


async def _over_the_limit(url: str, client: httpx.AsyncClient, body: AsyncIterator[bytes]) -> None:
    assert (await client.post(url, content=body, headers=JSON)).status_code == 413
    connection = await initialized(url, client)
    headers = {**JSON, "acp-connection-id": connection}
    big = rpc(1, "session/list", cursor="x" * 2000)
    assert (await client.post(url, json=big, headers=headers)).status_code == 413
    async with events(client, url, connection) as stream:
        listed = rpc(2, "session/list")
        assert (await client.post(url, json=listed, headers=headers)).status_code == 202
        assert (await stream.next())["id"] == 2


async def test_503_past_the_connection_limit() -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(max_connections=1))
    async with server(app) as (url, client):
        await initialized(url, client)
        full = await client.post(url, json=RAW_INITIALIZE, headers=JSON)
        assert full.status_code == 503 and full.headers["retry-after"]
        with pytest.raises(httpx_ws.WebSocketUpgradeError) as refused:
            async with raw_client(http2=False) as http1, httpx_ws.aconnect_ws(url, http1):
                pass
        assert refused.value.response.status_code == 503


async def test_an_idle_stream_sends_keepalive_comments() -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(keepalive_interval=0.05))
    async with server(app) as (url, client):
        connection = await initialized(url, client)
        headers = {"accept": "text/event-stream", "acp-connection-id": connection}
        async with client.stream("GET", url, headers=headers) as response:
            chunk = await response.aiter_raw().__anext__()
            assert chunk.startswith(b":")


async def test_a_reader_that_stalls_gets_its_connection_closed() -> None:
    """The agent's messages wait for a reader that never comes: past `max_stream_bytes` the
    agent waits, and after `stall_timeout` the connection ends (memory stays bounded)."""
    app = agent_app(HelloAgent, remote=RemoteOptions(max_stream_bytes=1, stall_timeout=0.2))
    async with server(app) as (url, client):
        connection = await initialized(url, client)
        headers = {**JSON, "acp-connection-id": connection}
        for index in range(1, 4):  # answers nobody reads (no connection-scoped GET)
            new = rpc(index, "session/new", cwd="/", mcpServers=[])
            await client.post(url, json=new, headers=headers)
        with anyio.fail_after(3):
            while app.open_connections:
                await anyio.sleep(0.05)
        assert (
            await client.post(url, json=rpc(9, "session/list"), headers=headers)
        ).status_code == 404


# ------------------------------------------------------------------ WebSocket


@asynccontextmanager
async def websocket(url: str) -> AsyncIterator[httpx_ws.AsyncWebSocketSession]:
    async with raw_client(http2=False) as client, httpx_ws.aconnect_ws(url, client) as socket:
        yield socket


async def test_websocket_101_names_the_connection_and_text_frames_carry_messages() -> None:
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url, websocket(url) as socket:
            assert socket.response is not None
            assert len(socket.response.headers["acp-connection-id"]) >= 32
            await socket.send_bytes(b"ignored: binary frames carry nothing")
            await socket.send_text(json.dumps(rpc(1, "session/new", cwd="/", mcpServers=[])))
            early = json.loads(await socket.receive_text())
            assert early["id"] == 1 and early["error"]["code"] == -32600  # initialize first
            await socket.send_text(json.dumps(RAW_INITIALIZE, indent=2))  # line breaks are fine
            assert json.loads(await socket.receive_text())["result"]["protocolVersion"] == 2


async def test_websocket_message_over_the_limit_closes_with_1009() -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(max_message_bytes=1000))
    with anyio.fail_after(8):
        async with served(app) as url, websocket(url) as socket:
            await socket.send_text("x" * 2000)
            with pytest.raises(httpx_ws.WebSocketDisconnect) as closed:
                while True:
                    event = await socket.receive()
                    assert not isinstance(event, wsproto.events.TextMessage)
            assert closed.value.code == 1009
