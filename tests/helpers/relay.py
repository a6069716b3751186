"""A TCP relay between a client and a server on loopback that a test can cut: every
connection through it closes at once, as when a network drops (no WebSocket close frame, no
DELETE), while the relay keeps accepting new connections."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
from anyio.abc import ByteStream, SocketStream


class Relay:
    """Forwards connections on `port` to `target_port` (both on 127.0.0.1)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._scopes: set[anyio.CancelScope] = set()
        self.down = False
        """True from `cut` until `heal`: new connections are closed at once."""
        self.dropping = False
        """True from `drop`: what the server sends is lost on the way (connections stay up)."""

    def url(self, server_url: str) -> str:
        """`server_url` (the server's endpoint) reached through the relay."""
        return server_url.replace(f":{self.target_port}/", f":{self.port}/")

    def cut(self) -> None:
        """Close every connection through the relay now, and the new ones until `heal` (a
        client's goodbye, a DELETE, is lost too)."""
        self.down = True
        for scope in list(self._scopes):
            scope.cancel()

    def heal(self) -> None:
        """Let new connections through again (and what the server sends)."""
        self.down = False
        self.dropping = False

    def drop(self) -> None:
        """Lose what the server sends from now on, as a network that fails one way; the
        server's writes still succeed."""
        self.dropping = True

    async def _handle(self, client: SocketStream) -> None:
        if self.down:
            await client.aclose()
            return
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                async with client, await anyio.connect_tcp("127.0.0.1", self.target_port) as server:
                    async with anyio.create_task_group() as pumps:
                        pumps.start_soon(_pump, client, server)
                        pumps.start_soon(_pump, server, client, self)
            finally:
                self._scopes.discard(scope)


async def _pump(source: ByteStream, sink: ByteStream, lossy: Relay | None = None) -> None:
    with contextlib.suppress(
        anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError
    ):
        while True:
            data = await source.receive()
            if lossy is None or not lossy.dropping:
                await sink.send(data)


@contextlib.asynccontextmanager
async def relay(server_url: str) -> AsyncIterator[tuple[Relay, str]]:
    """A relay to the server at `server_url` while the block runs: it and its URL."""
    target = int(server_url.rsplit(":", 1)[1].split("/", 1)[0])
    forward = Relay(target)
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        forward.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(listener.serve, forward._handle)
            try:
                yield forward, forward.url(server_url)
            finally:
                forward.cut()
                tasks.cancel_scope.cancel()
