"""What the Streamable HTTP client does with the events it reads, against a scripted server
(httpx's MockTransport): notifications pass through undecoded, but a request of the server
whose `"id"` key is spelt with escapes is still seen as one, so its answer is POSTed with the
session's `Acp-Session-Id`; a message spread over several `data:` lines reaches the reader as
one line."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx

from acpwire._loop import current_loop
from acpwire.streams.sse import event
from acpwire.streams.streamable_http import StreamableHttpStream

URL = "http://127.0.0.1:9/acp"
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}'
INITIALIZED = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}'
UPDATE = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}'
ASKED = (  # `id` as `\u0069d`: the same key to a JSON reader
    b'{"jsonrpc":"2.0","\\u0069d":5,"method":"session/request_permission",'
    b'"params":{"sessionId":"s1"}}'
)
SPREAD = b'{"jsonrpc":"2.0","method":"session/update",\n"params":{"sessionId":"s1","update":{}}}'
ANSWER = b'{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"cancelled"}}}'


async def _events() -> AsyncIterator[bytes]:
    yield event(UPDATE) + event(ASKED)
    yield event(UPDATE) + b"data: " + SPREAD.replace(b"\n", b"\ndata: ") + b"\n\n"
    await anyio.sleep_forever()


async def _quiet() -> AsyncIterator[bytes]:
    await anyio.sleep_forever()
    yield b""  # pragma: no cover  (an async generator)


async def test_events_reach_the_reader_and_requests_keep_their_session(loop: str) -> None:
    posted: list[httpx.Request] = []
    streams: list[httpx.Request] = []

    async def server(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            streams.append(request)
            if "acp-session-id" in request.headers:
                return httpx.Response(200, content=_quiet())
            return httpx.Response(200, content=_events())
        await request.aread()
        posted.append(request)
        if request.content == INITIALIZE:
            return httpx.Response(200, content=INITIALIZED, headers={"acp-connection-id": "c1"})
        return httpx.Response(202)

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(server)) as client,
        current_loop().open_nursery() as nursery,
    ):
        stream = StreamableHttpStream(
            client, URL, nursery, max_message_bytes=1 << 20, max_buffered_bytes=1 << 20
        )
        await stream.send_all(INITIALIZE + b"\n")
        received = b""
        while received.count(b"\n") < 5:
            received += await stream.receive_some()
        one_line = (
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}'
        )
        assert received == b"\n".join([INITIALIZED, UPDATE, ASKED, UPDATE, one_line]) + b"\n"
        await stream.send_all(ANSWER + b"\n")
        assert posted[-1].content == ANSWER
        assert posted[-1].headers.get("acp-session-id") == "s1"
        # read raw, so asked uncompressed (a proxy may compress text/event-stream otherwise)
        assert {r.headers["accept-encoding"] for r in streams} == {"identity"}
        await stream.aclose()
