"""The client's WebSocket byte stream (`open_websocket`) against a bare ASGI server: the text
frames that arrived together are read together (one `receive_some`, one line each), a frame
with line breaks still makes one line, binary frames are ignored, and the server's close is
named; the socket is read a bounded piece at a time, whatever the message size limit. Against
servers written by hand: frames as the RFC parses them, a 101 that is no handshake."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import anyio
import anyio.abc
import anyio.streams.buffered
import pytest
from httpcore._async.http11 import AsyncHTTP11UpgradeStream
from websockets.utils import accept_key

from acpwire import RemoteConnectionError, open_remote
from acpwire.examples.hello_client import HelloClient
from acpwire.streams import websocket_session
from acpwire.streams.websocket import open_websocket
from helpers.asgi_servers import hypercorn_serving
from helpers.hand_websocket_server import hand_server, read_client_frame, upgraded
from helpers.raw_websocket import BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT, frame

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


FLOOD = 3 * websocket_session.INBOX_BYTES // len(BIG_LINE := json.dumps({"text": "y" * 60_000}))


async def flood_then_echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accept, send `FLOOD` text frames (3 inboxes' worth), then answer each text with it."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    for _ in range(FLOOD):
        await send({"type": "websocket.send", "text": BIG_LINE})
    while (message := await receive())["type"] == "websocket.receive":
        await send({"type": "websocket.send", "text": message["text"]})


async def test_a_reader_that_pauses_is_not_taken_for_a_server_that_went_silent() -> None:
    """While the reader takes nothing, the socket is not read (back-pressure) and the pong to
    the client's keepalive ping waits in it, behind the frames unread: that time does not
    count against the pong, and the connection lives on."""
    with anyio.fail_after(8):
        async with (
            hypercorn_serving(flood_then_echo) as url,
            open_websocket(
                url, max_message_bytes=1 << 20, keepalive_interval=0.1, keepalive_timeout=0.2
            ) as stream,
        ):
            await anyio.sleep(1.5)  # several keepalive rounds, reading nothing
            received = b""
            while received.count(b"\n") < FLOOD:
                data = await stream.receive_some()
                assert data, stream.what()
                received += data
            assert received == (BIG_LINE.encode() + b"\n") * FLOOD
            await stream.send_all(b'{"still": "there"}\n')
            assert await stream.receive_some() == b'{"still": "there"}\n', stream.what()


BIG = json.dumps({"text": "x" * (3 * websocket_session.READ_BYTES)})


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
    read = AsyncHTTP11UpgradeStream.read  # the stream the session reads, after the 101

    async def recording(
        self: AsyncHTTP11UpgradeStream, max_bytes: int, timeout: float | None = None
    ) -> bytes:
        asked.append(max_bytes)
        return await read(self, max_bytes, timeout)

    monkeypatch.setattr(AsyncHTTP11UpgradeStream, "read", recording)
    with anyio.fail_after(8):
        async with (
            hypercorn_serving(one_big_frame) as url,
            open_websocket(url, max_message_bytes=64 << 20) as stream,
        ):
            received = b""
            while not received.endswith(b"\n"):
                received += await stream.receive_some()
    assert received == BIG.encode() + b"\n"
    assert asked and max(asked) == websocket_session.READ_BYTES


async def test_a_101_without_the_answer_to_the_key_is_refused() -> None:
    """RFC 6455 4.1: a 101 whose Sec-WebSocket-Accept does not answer the key sent is no
    WebSocket handshake (httpx-ws took it): the client fails the connection, named."""

    async def serve(sock: anyio.abc.SocketStream) -> None:
        await upgraded(sock, lambda key: accept_key(key[::-1]))
        await anyio.sleep_forever()

    with anyio.fail_after(8):
        async with hand_server(serve) as url:
            with pytest.raises(RemoteConnectionError) as failed:
                async with open_websocket(url, max_message_bytes=1 << 20):
                    pass
            assert url in str(failed.value) and "Sec-WebSocket-Accept" in str(failed.value)
            with pytest.raises(RemoteConnectionError) as failed:  # a resumable connection too
                async with open_remote(url, v2=HelloClient, resume=True):
                    pass
            assert url in str(failed.value) and "Sec-WebSocket-Accept" in str(failed.value)


async def test_a_server_that_answers_no_ping_is_named() -> None:
    async def serve(sock: anyio.abc.SocketStream) -> None:
        buffered = await upgraded(sock, accept_key)
        with contextlib.suppress(anyio.EndOfStream):
            while True:  # reads the client's pings, answers none
                await buffered.receive()

    with anyio.fail_after(8):
        async with (
            hand_server(serve) as url,
            open_websocket(
                url, max_message_bytes=1 << 20, keepalive_interval=0.1, keepalive_timeout=0.2
            ) as stream,
        ):
            assert await stream.receive_some() == b""
            assert stream.what() == "the server did not answer a ping within 0.2 s"


async def test_frames_are_parsed_as_the_protocol_says() -> None:
    """Against a server written by hand: a text message in fragments makes one line, binary
    fragments are ignored, a ping gets its pong, and a text frame that is not UTF-8 ends the
    connection, named, with the client's close code 1007."""
    closed: list[int] = []

    async def serve(sock: anyio.abc.SocketStream) -> None:
        buffered = await upgraded(sock, accept_key)
        await sock.send(
            frame(b'{"a": ', TEXT, fin=False, masked=False)
            + frame(b'"fragmented"}', CONTINUATION, masked=False)
            + frame(b"bin", BINARY, fin=False, masked=False)
            + frame(b"ary", CONTINUATION, masked=False)
            + frame(b"are you there", PING, masked=False)
        )
        assert await read_client_frame(buffered) == (PONG, b"are you there")
        await sock.send(
            frame(b'{"b": 2}', TEXT, masked=False) + frame(b"\xff\xfe", TEXT, masked=False)
        )
        opcode, payload = await read_client_frame(buffered)
        assert opcode == CLOSE
        closed.append(int.from_bytes(payload[:2], "big"))

    with anyio.fail_after(8):
        async with hand_server(serve) as url:
            async with open_websocket(url, max_message_bytes=1 << 20) as stream:
                received = b""
                while (data := await stream.receive_some()) != b"":
                    received += data
                assert received == b'{"a": "fragmented"}\n{"b": 2}\n'
                what = "the server sent a text frame that is not UTF-8: closed with code 1007"
                assert stream.what() == what
            while not closed:
                await anyio.sleep(0.01)
    assert closed == [1007]
