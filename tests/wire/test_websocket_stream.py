"""The client's WebSocket byte stream (`open_websocket`) against a bare ASGI server: the text
frames that arrived together are read together (one `receive_some`, one line each), a frame
with line breaks still makes one line, binary frames are ignored, and the server's close is
named; the socket is read a bounded piece at a time, whatever the message size limit."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acpwire.streams import websocket
from acpwire.streams.websocket import open_websocket
from helpers.asgi_servers import hypercorn_serving

pytestmark = pytest.mark.usefixtures("loop")

FRAMES = 50
PRETTY = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"a": [1, 2]}}, indent=2)


async def lifespan(receive: Any, send: Any) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def burst_then_close(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accept, send `FRAMES` text frames, a binary one and a multi-line one, wait for the
    client's word, then close with 4000."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    for i in range(FRAMES):
        await send({"type": "websocket.send", "text": json.dumps({"n": i})})
    await send({"type": "websocket.send", "bytes": b"ignored"})
    await send({"type": "websocket.send", "text": PRETTY})
    assert (await receive())["type"] == "websocket.receive"
    await send({"type": "websocket.close", "code": 4000, "reason": "bye"})


async def test_frames_that_arrived_together_are_read_together() -> None:
    with anyio.fail_after(8):
        async with (
            hypercorn_serving(burst_then_close) as url,
            open_websocket(url, max_message_bytes=1 << 20) as stream,
        ):
            received = b""
            reads = 0
            while received.count(b"\n") < FRAMES + 1:
                await anyio.sleep(0.05)  # let the burst arrive
                received += await stream.receive_some(1 << 16)
                reads += 1
            assert reads < FRAMES // 2  # not one read per frame
            lines = received.splitlines()
            assert [json.loads(line) for line in lines[:FRAMES]] == [
                {"n": i} for i in range(FRAMES)
            ]
            assert json.loads(lines[FRAMES]) == json.loads(PRETTY)
            assert len(lines) == FRAMES + 1
            await stream.send_all(b'{"done": true}\n')
            assert await stream.receive_some() == b""
            assert stream.what() == "the server closed the WebSocket (code 4000: 'bye')"


BIG = json.dumps({"text": "x" * (3 * websocket.READ_BYTES)})


async def one_big_frame(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accept, send one text frame of several reads' worth, wait for the client to leave."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": BIG})
    await receive()


async def test_the_socket_is_read_in_bounded_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read asks `READ_BYTES`, not the message size limit (64 MiB by default: on trio a
    buffer that size was allocated per read), and a message over it still arrives whole."""
    asked: list[int] = []
    read_stream = websocket._BatchingSession._read_stream

    async def recording(self: websocket._BatchingSession, max_bytes: int) -> bytes:
        asked.append(max_bytes)
        return await read_stream(self, max_bytes)

    monkeypatch.setattr(websocket._BatchingSession, "_read_stream", recording)
    with anyio.fail_after(8):
        async with (
            hypercorn_serving(one_big_frame) as url,
            open_websocket(url, max_message_bytes=64 << 20) as stream,
        ):
            received = b""
            while not received.endswith(b"\n"):
                received += await stream.receive_some()
    assert received == BIG.encode() + b"\n"
    assert asked and max(asked) == websocket.READ_BYTES
