"""A WebSocket tap: a TCP relay on loopback between a WebSocket client and a real server that
reads the frames both ways (`from_client`) and puts frames of its own before the client,
between the server's: pings (`ping` waits for the pong), a malformed frame or a close
(`send_to_client`), or holds the server's back (`held`). One client connection at a time:
each starts afresh."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit

import anyio
import anyio.abc

from helpers.raw_websocket import PING, PONG, TEXT, Frames, frame

HEAD_END = b"\r\n\r\n"
BROKEN = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)


class WebSocketTap:
    def __init__(self, server_url: str) -> None:
        where = urlsplit(server_url)
        assert where.port is not None
        self.server_url = server_url
        self.target_port = where.port
        self.port = 0
        self.from_client = Frames([])
        """What the client sent (after the upgrade request), unmasked."""
        self.server_texts = 0
        """Text frames of the server passed on to the client."""
        self.ping_every: int | None = None
        """Set: after each that many text frames of the server, a ping, and the next frame
        only once its pong came back (the client answers while it reads a stream)."""
        self.pings = 0
        self.held = False
        """True: the server's frames are dropped (an answer that never comes)."""
        self._lock = anyio.Lock()  # the client's side is written a whole frame at a time
        self._client: anyio.abc.SocketStream | None = None
        self._server: anyio.abc.SocketStream | None = None

    @property
    def url(self) -> str:
        """The server's endpoint, reached through the tap."""
        return self.server_url.replace(f":{self.target_port}/", f":{self.port}/")

    async def run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Accept connections until cancelled (`task_group.start(tap.run)`)."""
        async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
            self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
            task_status.started()
            await listener.serve(self._relay)

    async def _relay(self, client: anyio.abc.SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.target_port) as server:
            self._client, self._server = client, server
            self.from_client, self.server_texts, self.held = Frames([]), 0, False
            async with anyio.create_task_group() as pumps:
                pumps.start_soon(self._upstream, client, server)
                pumps.start_soon(self._downstream, server, client)

    async def _upstream(
        self, client: anyio.abc.SocketStream, server: anyio.abc.SocketStream
    ) -> None:
        head = b""
        with contextlib.suppress(*BROKEN):
            while True:
                data = await client.receive()
                if server is self._server:  # (not detached)
                    await server.send(data)
                if HEAD_END not in head:
                    head += data
                    if HEAD_END not in head:
                        continue
                    data = head.split(HEAD_END, 1)[1]
                self.from_client.feed(data)
        await self.detach()

    async def _downstream(
        self, server: anyio.abc.SocketStream, client: anyio.abc.SocketStream
    ) -> None:
        head = b""
        frames = Frames([])
        with contextlib.suppress(*BROKEN):
            while True:
                data = await server.receive()
                if HEAD_END not in head:
                    head += data
                    if HEAD_END not in head:
                        continue
                    upgrade, data = head.split(HEAD_END, 1)
                    await client.send(upgrade + HEAD_END)
                for whole in frames.feed(data):
                    await self._pass_on(whole, client)

    async def _pass_on(self, whole: bytes, client: anyio.abc.SocketStream) -> None:
        if self.held:
            return
        async with self._lock:
            await client.send(whole)
        if whole[0] & 0x0F == TEXT:
            self.server_texts += 1
            if self.ping_every and self.server_texts % self.ping_every == 0:
                await self.ping(b"streaming %d" % self.server_texts)

    async def ping(self, payload: bytes, timeout: float = 5.0) -> None:
        """Ping the client; return once its pong (with `payload`) came back."""
        self.pings += 1
        await self.send_to_client(frame(payload, PING, masked=False))
        with anyio.fail_after(timeout):
            await self.until(lambda: (PONG, payload) in self.from_client.frames)

    async def send_to_client(self, data: bytes) -> None:
        """Put `data` before the client, between the server's frames."""
        assert self._client is not None
        async with self._lock:
            await self._client.send(data)

    async def detach(self) -> None:
        """Close the connection to the server (it reads the end of its socket); what the
        client sends from then on is only read."""
        server, self._server = self._server, None
        if server is not None:
            await server.aclose()

    async def until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            await anyio.sleep(0.01)
