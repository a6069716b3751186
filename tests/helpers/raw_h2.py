"""An HTTP/2 client written by hand (h2 over a TCP socket, cleartext by prior knowledge), for
what httpx does not do: `reset` a stream (RST_STREAM) while its connection stays open, or
`drop` the connection (the socket closed, no GOAWAY) with streams open."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h2.config
import h2.connection
import h2.errors
import h2.events


class RawH2:
    """One HTTP/2 connection to a server (`connected(url)` opens it)."""

    def __init__(self, sock: anyio.abc.SocketStream, authority: str) -> None:
        self._sock = sock
        self._authority = authority
        self._h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))

    async def start(self) -> None:
        self._h2.initiate_connection()
        await self._flush()

    async def get(self, path: str, headers: Mapping[str, str]) -> tuple[int, int]:
        """A GET of `path` with `headers`, its request ended: its stream id and the status of
        its response, once the response's headers came (its body is left unread)."""
        stream_id = self._h2.get_next_available_stream_id()
        pseudo = {":method": "GET", ":scheme": "http", ":authority": self._authority}
        self._h2.send_headers(
            stream_id, [*pseudo.items(), (":path", path), *headers.items()], end_stream=True
        )
        await self._flush()
        while True:
            for event in self._h2.receive_data(await self._sock.receive()):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream_id:
                    status = dict(event.headers)[b":status"]
                    await self._flush()
                    return stream_id, int(status)
            await self._flush()

    async def reset(self, stream_id: int) -> None:
        """Reset the stream (RST_STREAM, CANCEL), as a client that no longer wants it does."""
        self._h2.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
        await self._flush()

    async def drop(self) -> None:
        """Close the socket: no GOAWAY, no RST_STREAM (a client gone from the network)."""
        await self._sock.aclose()

    async def _flush(self) -> None:
        data = self._h2.data_to_send()
        if data:
            await self._sock.send(data)


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[RawH2]:
    """An HTTP/2 connection to the server of `url` (`http://host:port/...`), open while the
    block runs (then closed, unless `drop` closed it)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    async with await anyio.connect_tcp(parts.hostname, parts.port) as sock:
        client = RawH2(sock, parts.netloc)
        await client.start()
        yield client
