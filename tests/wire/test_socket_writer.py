"""`SocketWriter`: frames go straight to a plain TCP socket with no checkpoint when it takes
them at once; what it does not take waits for it, in order, with the control frames queued
behind; a stream with no reachable socket is written through; a broken socket is an error, and
so is a write once the socket is being closed."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpcore
import pytest
import sniffio

from acpwire.streams.socket_writer import SocketWriter

pytestmark = pytest.mark.usefixtures("loop")

BIG = b"x" * (16 << 20)  # more than the socket buffers take at once


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[httpcore.AsyncNetworkStream, socket.socket]]:
    """An httpcore network stream (as httpx's connections are, on this loop) and its peer: a
    bare socket, read only when the test reads it (a loop's transport would read ahead)."""
    backend: httpcore.AsyncNetworkBackend = (
        httpcore.TrioBackend()
        if sniffio.current_async_library() == "trio"
        else httpcore.AnyIOBackend()
    )
    with socket.create_server(("127.0.0.1", 0)) as listener:
        stream = await backend.connect_tcp("127.0.0.1", listener.getsockname()[1])
        peer = listener.accept()[0]  # connected: no wait
        peer.setblocking(False)
        try:
            yield stream, peer
        finally:
            await stream.aclose()
            peer.close()


async def read(peer: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        try:
            data += peer.recv(1 << 20)
        except BlockingIOError:
            await anyio.wait_readable(peer)
    return bytes(data)


async def test_a_frame_the_socket_takes_is_written_without_a_checkpoint() -> None:
    """Inside a cancelled scope: a checkpoint would raise; the frame goes out."""
    with anyio.fail_after(5):
        async with connected() as (stream, peer):
            writer = SocketWriter(stream)
            assert writer.direct
            with anyio.CancelScope() as scope:
                scope.cancel()
                await writer.send(b"one frame")
                await writer.send_or_queue(b", a pong")
            assert not scope.cancelled_caught
            assert await read(peer, 17) == b"one frame, a pong"


async def test_what_the_socket_does_not_take_waits_and_keeps_its_order() -> None:
    """A write bigger than the socket's buffers waits for the peer to read; a frame sent
    meanwhile goes after it, and a control frame is queued behind it without waiting."""
    with anyio.fail_after(10):
        async with connected() as (stream, peer), anyio.create_task_group() as tasks:
            writer = SocketWriter(stream)
            done: list[str] = []

            async def send(data: bytes, name: str) -> None:
                await writer.send(data)
                done.append(name)

            tasks.start_soon(send, BIG, "big")
            await anyio.sleep(0.1)
            assert done == []  # waiting for the peer
            tasks.start_soon(send, b"after", "after")
            await anyio.sleep(0.05)
            with anyio.CancelScope() as scope:
                scope.cancel()
                await writer.send_or_queue(b"pong")  # queued: returns at once
            assert not scope.cancelled_caught
            assert await read(peer, len(BIG) + 9) == BIG + b"pong" + b"after"
            await anyio.sleep(0.05)
            assert done == ["big", "after"]


class Unreachable(httpcore.AsyncNetworkStream):
    """A network stream whose socket is not reachable (as over TLS)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await anyio.lowlevel.checkpoint()
        self.written.append(buffer)

    def get_extra_info(self, info: str) -> Any:
        return None


async def test_a_stream_without_a_reachable_socket_is_written_through() -> None:
    stream = Unreachable()
    writer = SocketWriter(stream)
    assert not writer.direct
    await writer.send(b"a")
    await writer.send_or_queue(b"b")
    assert stream.written == [b"a", b"b"]


async def test_a_broken_socket_is_a_write_error() -> None:
    with anyio.fail_after(5):
        async with connected() as (stream, peer):
            writer = SocketWriter(stream)
            peer.close()
            with pytest.raises(httpcore.WriteError):
                for _ in range(
                    100
                ):  # the first write may still be taken (the peer's reset follows)
                    await writer.send(b"x" * 65536)
                    await anyio.sleep(0.01)
            with pytest.raises(httpcore.WriteError):
                await writer.send(b"again")


async def test_try_send_commits_a_frame_and_owes_what_the_socket_did_not_take() -> None:
    """`try_send` writes without waiting: a frame the socket takes in part is committed, its
    rest owed and written first by the next `send`; nothing else goes out before it."""
    chunk = bytes(range(256)) * 4096  # 1 MiB: the socket's buffers soon take part of one
    with anyio.fail_after(10):
        async with connected() as (stream, peer), anyio.create_task_group() as tasks:
            writer = SocketWriter(stream)
            sent = 0
            while not writer.owed:
                assert writer.try_send(chunk)
                sent += 1
            assert not writer.try_send(b"refused")  # nothing written past what is owed
            tasks.start_soon(writer.send, b"tail")
            assert await read(peer, sent * len(chunk) + 4) == chunk * sent + b"tail"


async def test_a_closed_writer_writes_nothing() -> None:
    """Once its socket is being closed a write is a `WriteError`: the descriptor's number may
    be another file's by then."""
    with anyio.fail_after(5):
        async with connected() as (stream, _):
            writer = SocketWriter(stream)
            writer.close()
            assert not writer.direct
            assert not writer.try_send(b"frame")
            with pytest.raises(httpcore.WriteError):
                await writer.send(b"frame")
