"""The client's WebSocket is read by the connection's reader itself (`WebSocketSession`),
against a server written by hand: the frames of one read come in one call, a frame split over
reads makes one line, a ping or a close arriving while the reader waits is answered at once
(the close with its code), every read is the reader's own while it keeps reading, and while
it stays away the watcher answers pings in its place, keeping the lines for it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import anyio.streams.buffered
import pytest
from httpcore._async.http11 import AsyncHTTP11UpgradeStream
from websockets.utils import accept_key

from acpwire.streams import websocket_session
from acpwire.streams.websocket import WebSocketStream, open_websocket
from helpers.hand_websocket_server import hand_server, read_client_frame, upgraded
from helpers.raw_websocket import CLOSE, PING, PONG, TEXT, close_payload, frame

pytestmark = pytest.mark.usefixtures("loop")

Buffered = anyio.streams.buffered.BufferedByteReceiveStream


def text(payload: bytes) -> bytes:
    return frame(payload, TEXT, masked=False)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, int]]:
    """The socket reads of the client's WebSocket after the 101: the task that made each,
    and the bytes it returned."""
    made: list[tuple[object, int]] = []
    read = AsyncHTTP11UpgradeStream.read

    async def recording(
        self: AsyncHTTP11UpgradeStream, max_bytes: int, timeout: float | None = None
    ) -> bytes:
        data = await read(self, max_bytes, timeout)
        made.append((anyio.get_current_task().id, len(data)))
        return data

    monkeypatch.setattr(AsyncHTTP11UpgradeStream, "read", recording)
    return made


async def served(
    serve: Callable[[anyio.abc.SocketStream, Buffered], Awaitable[None]],
    client: Callable[[WebSocketStream], Awaitable[None]],
) -> None:
    """`client` on a WebSocket to a hand-written server that runs `serve` after the 101 (the
    server first waits for the client's `go` frame: nothing coalesces with the 101)."""

    async def accept(sock: anyio.abc.SocketStream) -> None:
        buffered = await upgraded(sock, accept_key)
        assert await read_client_frame(buffered) == (TEXT, b"go")
        await serve(sock, buffered)
        await anyio.sleep_forever()

    with anyio.fail_after(8):
        async with (
            hand_server(accept) as url,
            open_websocket(url, max_message_bytes=1 << 20, keepalive_interval=None) as stream,
        ):
            await stream.send_all(b"go\n")
            await client(stream)


async def test_the_frames_of_one_read_come_in_one_call(reads: list[tuple[object, int]]) -> None:
    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        await sock.send(b"".join(text(b'{"n": %d}' % i) for i in range(5)))

    async def client(stream: WebSocketStream) -> None:
        received = await stream.receive_some()
        assert received == b"".join(b'{"n": %d}\n' % i for i in range(5))
        assert len(reads) == 1

    await served(serve, client)


async def test_a_frame_split_over_reads_makes_one_line(reads: list[tuple[object, int]]) -> None:
    whole = text(b'{"split": "' + b"s" * 100 + b'"}')

    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        for at in (0, 1, 7, 60):  # inside the header, then the payload
            await sock.send(whole[at : {0: 1, 1: 7, 7: 60, 60: None}[at]])
            await anyio.sleep(0.05)

    async def client(stream: WebSocketStream) -> None:
        assert await stream.receive_some() == b'{"split": "' + b"s" * 100 + b'"}\n'
        assert len(reads) == 4

    await served(serve, client)


async def test_the_reader_reads_the_socket_itself(reads: list[tuple[object, int]]) -> None:
    """No task reads between the socket and the reader while it keeps reading."""

    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        for i in range(20):
            await sock.send(text(b'{"n": %d}' % i))
            await anyio.sleep(0.01)

    async def client(stream: WebSocketStream) -> None:
        received = b""
        while received.count(b"\n") < 20:
            received += await stream.receive_some()
        assert {task for task, _ in reads} == {anyio.get_current_task().id}

    await served(serve, client)


async def test_a_ping_while_the_reader_waits_is_answered_at_once() -> None:
    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        await anyio.sleep(0.1)  # the reader waits in the socket
        await sock.send(frame(b"are you there", PING, masked=False))
        assert await read_client_frame(buffered) == (PONG, b"are you there")
        await sock.send(text(b'{"after": "pong"}'))

    async def client(stream: WebSocketStream) -> None:
        assert await stream.receive_some() == b'{"after": "pong"}\n'

    await served(serve, client)


async def test_a_close_while_the_reader_waits_is_answered_with_its_code() -> None:
    answered: list[tuple[int, bytes]] = []

    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        await anyio.sleep(0.1)
        await sock.send(frame(close_payload(4001, b"bye"), CLOSE, masked=False))
        answered.append(await read_client_frame(buffered))

    async def client(stream: WebSocketStream) -> None:
        assert await stream.receive_some() == b""
        assert stream.what() == "the server closed the WebSocket (code 4001: 'bye')"
        while not answered:
            await anyio.sleep(0.01)
        assert answered == [(CLOSE, close_payload(4001))]

    await served(serve, client)


async def test_a_reader_away_has_pings_answered_and_its_lines_kept(
    monkeypatch: pytest.MonkeyPatch, reads: list[tuple[object, int]]
) -> None:
    monkeypatch.setattr(websocket_session, "AWAY_SECONDS", 0.1)

    async def serve(sock: anyio.abc.SocketStream, buffered: Buffered) -> None:
        await sock.send(text(b'{"n": 0}'))
        await anyio.sleep(0.3)  # the reader took it and went away
        await sock.send(text(b'{"n": 1}') + frame(b"still there?", PING, masked=False))
        with anyio.fail_after(2):
            assert await read_client_frame(buffered) == (PONG, b"still there?")
        await sock.send(text(b'{"n": 2}'))

    async def client(stream: WebSocketStream) -> None:
        assert await stream.receive_some() == b'{"n": 0}\n'
        reader = anyio.get_current_task().id
        await anyio.sleep(1.5)  # away: reads nothing
        assert any(task != reader for task, _ in reads)  # the watcher read in its place
        received = b""
        while received.count(b"\n") < 2:
            received += await stream.receive_some()
        assert received == b'{"n": 1}\n{"n": 2}\n'

    await served(serve, client)
