"""A WebSocket server written by hand, for what no server library sends: `hand_server(serve)`
runs `serve(socket)` for each connection on a loopback port; `upgraded(socket, accepting)`
answers the client's upgrade (with any `Sec-WebSocket-Accept`) and returns the socket to read
the client's frames from (`read_client_frame`). Frames to send: `helpers.raw_websocket.frame(...,
masked=False)`. `deaf_server()`: one that answers the upgrade and then reads nothing."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import anyio.streams.buffered
from websockets.utils import accept_key


async def read_client_frame(
    buffered: anyio.streams.buffered.BufferedByteReceiveStream,
) -> tuple[int, bytes]:
    """The next frame the client sent (masked, under 126 bytes): its opcode and payload."""
    head = await buffered.receive_exactly(2)
    size = head[1] & 0x7F
    mask, payload = await buffered.receive_exactly(4), await buffered.receive_exactly(size)
    return head[0] & 0x0F, bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


async def upgraded(
    sock: anyio.abc.SocketStream, accepting: Callable[[str], str]
) -> anyio.streams.buffered.BufferedByteReceiveStream:
    """Read the client's upgrade request, answer 101 with `accepting(its key)` for
    `Sec-WebSocket-Accept`; the socket, buffered, to read the client's frames from."""
    buffered = anyio.streams.buffered.BufferedByteReceiveStream(sock)
    head = await buffered.receive_until(b"\r\n\r\n", 8192)
    key = next(
        line.split(b":", 1)[1].strip()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    await sock.send(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Accept: "
        + accepting(key.decode()).encode()
        + b"\r\n\r\n"
    )
    return buffered


@asynccontextmanager
async def hand_server(
    serve: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> AsyncIterator[str]:
    """`serve` each connection on a free loopback port while the block runs; yields a ws:// URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, serve)
        yield f"ws://127.0.0.1:{port}/acp"
        tasks.cancel_scope.cancel()


DEAF_BUFFER = 1 << 14
"""The receive buffer of a `deaf_server`'s sockets: the client's writes soon wait."""


@asynccontextmanager
async def deaf_server() -> AsyncIterator[tuple[str, list[socket.socket]]]:
    """A WebSocket server that answers each upgrade and then reads nothing (bare sockets: a
    loop's transport would read ahead), on a free loopback port while the block runs; yields a
    ws:// URL and the sockets accepted so far (a test closes or shuts one: with data unread, a
    close resets the connection)."""
    accepted: list[socket.socket] = []

    async def handshake(sock: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            await anyio.wait_readable(sock)
            head += sock.recv(8192)
        key = next(
            line.split(b":", 1)[1].strip()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        sock.send(  # small: the empty send buffer takes it whole
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: "
            + accept_key(key.decode()).encode()
            + b"\r\n\r\n"
        )

    async def serve(listener: socket.socket) -> None:
        while True:
            await anyio.wait_readable(listener)
            sock = listener.accept()[0]
            sock.setblocking(False)
            accepted.append(sock)
            await handshake(sock)

    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, DEAF_BUFFER)  # inherited
        listener.setblocking(False)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(serve, listener)
                yield f"ws://127.0.0.1:{listener.getsockname()[1]}/acp", accepted
                tasks.cancel_scope.cancel()
        finally:
            for sock in accepted:
                sock.close()
