"""Byte streams: the protocol a connection needs of one, and anyio streams adapted to it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

if TYPE_CHECKING:
    import anyio.abc

_READ_SIZE = 64 * 1024


@runtime_checkable
class ByteStream(Protocol):
    """A bidirectional byte stream with trio's method names."""

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        """Some bytes once there are any; `b""` once the peer closed its sending side."""
        ...

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Write all of `data`, waiting while the peer is not reading."""
        ...

    async def aclose(self) -> None:
        """Close both directions."""
        ...


@runtime_checkable
class HalfCloseable(Protocol):
    async def send_eof(self) -> None:
        """Close the sending side only: the peer reads EOF and may still answer."""
        ...


class _AnyioByteStream:
    """An anyio ByteStream seen through trio's method names."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        import anyio  # imported already: this is one of its streams

        try:
            return await self.stream.receive(max_bytes or _READ_SIZE)
        except anyio.EndOfStream:
            return b""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send(bytes(data))

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()


AnyByteStream = Union[ByteStream, "anyio.abc.ByteStream"]  # anyio imported lazily


def byte_stream(stream: AnyByteStream) -> ByteStream:
    """`stream` as a `ByteStream` (anyio streams are wrapped); a TypeError naming what is
    accepted for anything else."""
    if isinstance(stream, ByteStream):
        return stream
    anyio_abc = sys.modules.get("anyio.abc")  # an anyio stream exists only once it is imported
    if anyio_abc is not None and isinstance(stream, anyio_abc.ByteStream):
        return _AnyioByteStream(stream)
    raise TypeError(
        f"cannot run a connection over {stream!r}: pass a trio stream, an anyio ByteStream, "
        "or an object with receive_some/send_all/aclose (acpwire.streams.ByteStream)"
    )


async def close_sending(stream: ByteStream) -> None:
    """Close our sending side: half-close where the stream can, else close it."""
    if isinstance(stream, HalfCloseable):
        await stream.send_eof()
    else:
        await stream.aclose()
