"""The client's WebSocket against a server that answers the upgrade and then reads nothing
(`deaf_server`): what the client writes soon waits for the socket, and that wait ends when
the connection does, on either loop: the server closes the socket (a reset, or a half-close
it still reads nothing after), the program leaves (its close frame is not waited for
forever), or the keepalive finds the server dead (its ping cannot even be written)."""

from __future__ import annotations

import socket

import anyio
import pytest

from acpwire.streams.websocket import WebSocketStream, open_websocket
from helpers.hand_websocket_server import DEAF_BUFFER, deaf_server

pytestmark = pytest.mark.usefixtures("loop")

BIG = b"x" * (16 << 20) + b"\n"
"""A line more than the socket buffers take: its write waits for the server."""
LINE = b"y" * 4096 + b"\n"
BOUND = 5.0
"""Seconds the client may take to end what waits (a hang runs into it)."""


async def fill(stream: WebSocketStream) -> None:
    """Write lines without waiting until the socket takes no more: nothing is being written
    (no task holds the writer), the socket is full, the rest of a frame may be owed. (Its send
    buffer is made small and fixed: the kernel would grow it as it fills.)"""
    sock = stream._session.stream.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, DEAF_BUFFER)
    taken = True
    while taken:
        taken = False
        while stream.try_send([LINE]):
            taken = True
        await anyio.sleep(0.05)  # what the kernel moves on meanwhile makes room


def close(sock: socket.socket, how: str) -> None:
    if how == "reset":
        sock.close()  # with data unread: the kernel resets the connection
    else:
        sock.shutdown(socket.SHUT_WR)  # the server's end of the stream; it still reads nothing


@pytest.mark.parametrize("how", ["reset", "half-close"])
async def test_a_write_waiting_on_the_socket_fails_when_the_server_closes(how: str) -> None:
    failures: list[str] = []
    with anyio.fail_after(BOUND):
        async with (
            deaf_server() as (url, accepted),
            open_websocket(url, max_message_bytes=1 << 20, keepalive_interval=None) as stream,
            anyio.create_task_group() as tasks,
        ):

            async def write() -> None:
                with pytest.raises(anyio.BrokenResourceError) as failed:
                    await stream.send_all(BIG)
                failures.append(str(failed.value))

            tasks.start_soon(write)
            await anyio.sleep(0.3)
            assert failures == []  # waiting for the server to read
            close(accepted[0], how)
            assert await stream.receive_some() == b""
    assert len(failures) == 1


@pytest.mark.parametrize("filled", ["without waiting", "by a write cancelled"])
async def test_leaving_while_the_server_reads_nothing_does_not_hang(filled: str) -> None:
    """The close frame waits at most `CLOSE_FRAME_SECONDS` for a socket the server no longer
    reads, then the socket closes. (With the socket full and no write in progress it waited
    forever, shielded: leaving `open_remote` hung. A write cancelled midway leaves the socket
    broken: no close frame is tried.)"""
    with anyio.fail_after(BOUND):
        async with deaf_server() as (url, _):
            async with open_websocket(
                url, max_message_bytes=1 << 20, keepalive_interval=None
            ) as stream:
                if filled == "without waiting":
                    await fill(stream)
                else:  # as `open_remote` cancels its writer, then closes
                    with anyio.move_on_after(0.3):
                        await stream.send_all(BIG)


async def test_a_half_close_while_a_frame_is_owed_ends_the_connection() -> None:
    """The server half-closes while the rest of a frame waits for the socket: the reader reads
    the end and closes, its close frame not waited for forever."""
    with anyio.fail_after(BOUND):
        async with (
            deaf_server() as (url, accepted),
            open_websocket(url, max_message_bytes=1 << 20, keepalive_interval=None) as stream,
        ):
            await fill(stream)
            close(accepted[0], "half-close")
            assert await stream.receive_some() == b""
            assert "EndOfStream" in stream.what()


async def test_a_server_that_reads_nothing_is_found_dead_by_the_keepalive() -> None:
    """The socket is full with nothing being written: the watcher's ping cannot be written, and
    it counts as unanswered after the keepalive timeout (the watcher waited on the socket
    forever, and the reader with it)."""
    with anyio.fail_after(BOUND):
        async with (
            deaf_server() as (url, _),
            open_websocket(
                url, max_message_bytes=1 << 20, keepalive_interval=0.1, keepalive_timeout=0.3
            ) as stream,
        ):
            await fill(stream)
            assert await stream.receive_some() == b""
            assert stream.what() == "the server did not answer a ping within 0.3 s"
