"""WebSocket frames by hand (RFC 6455), to send what no library sends: `frame(...)` builds one,
malformed on request (unmasked from a client, reserved bits set, any opcode, any payload);
`parse_frames` reads a server's (unmasked) frames; `RawWebSocket.connect(url)` opens a
client WebSocket on a plain TCP socket (the upgrade, then frames both ways)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream
from websockets.utils import accept_key

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
MASK = b"\x5a\x17\xc3\x81"


def frame(
    payload: bytes, opcode: int = TEXT, *, fin: bool = True, rsv: int = 0, masked: bool = True
) -> bytes:
    """One frame; `rsv`: the three reserved bits (0 to 7); `masked`: as a client must."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    mask_bit = 0x80 if masked else 0
    size = len(payload)
    if size < 126:
        head = bytes([first, mask_bit | size])
    elif size < 1 << 16:
        head = bytes([first, mask_bit | 126]) + struct.pack("!H", size)
    else:
        head = bytes([first, mask_bit | 127]) + struct.pack("!Q", size)
    if not masked:
        return head + payload
    return head + MASK + bytes(byte ^ MASK[i % 4] for i, byte in enumerate(payload))


def close_payload(code: int, reason: bytes = b"") -> bytes:
    return struct.pack("!H", code) + reason


@dataclass
class Frames:
    """Frames parsed from a byte stream (either side's: masked payloads are unmasked):
    `frames` (opcode, payload) so far."""

    frames: list[tuple[int, bytes]]
    rest: bytes = b""

    def feed(self, data: bytes) -> list[bytes]:
        """Parse `data` (after what was fed before); the frames it completed, as sent."""
        data = self.rest + data
        whole: list[bytes] = []
        while len(data) >= 2:
            size, start = data[1] & 0x7F, 2
            if size == 126:
                size, start = struct.unpack("!H", data[2:4])[0], 4
            elif size == 127:
                size, start = struct.unpack("!Q", data[2:10])[0], 10
            mask = data[start : start + 4] if data[1] & 0x80 else b""
            end = start + len(mask) + size
            if len(data) < end:
                break
            payload = data[start + len(mask) : end]
            if mask:
                payload = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
            self.frames.append((data[0] & 0x0F, payload))
            whole.append(data[:end])
            data = data[end:]
        self.rest = data
        return whole

    def closes(self) -> list[tuple[int, bytes]]:
        """The close frames: (code, reason)."""
        return [
            (struct.unpack("!H", payload[:2])[0], payload[2:])
            for opcode, payload in self.frames
            if opcode == CLOSE
        ]


class RawWebSocket:
    """A client WebSocket over a bare TCP socket: `send` frames (`frame`), read the server's."""

    def __init__(self, sock: anyio.abc.SocketStream, rest: bytes) -> None:
        self.sock = sock
        self.received = Frames([])
        self.received.feed(rest)
        self.ended = False
        """Whether the server closed the TCP connection."""

    @classmethod
    async def connect(cls, url: str) -> RawWebSocket:
        where = urlsplit(url)
        assert where.hostname is not None and where.port is not None
        sock = await anyio.connect_tcp(where.hostname, where.port)
        key = base64.b64encode(os.urandom(16))
        await sock.send(
            f"GET {where.path} HTTP/1.1\r\nHost: {where.netloc}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n".encode()
            + b"Sec-WebSocket-Key: "
            + key
            + b"\r\n\r\n"
        )
        buffered = BufferedByteReceiveStream(sock)
        head = await buffered.receive_until(b"\r\n\r\n", 8192)
        status, *lines = head.split(b"\r\n")
        assert status.startswith(b"HTTP/1.1 101 "), head
        fields = dict(line.split(b": ", 1) for line in lines)
        assert {name.lower(): value for name, value in fields.items()}[
            b"sec-websocket-accept"
        ] == accept_key(key.decode()).encode()
        return cls(sock, buffered.buffer)

    async def send(self, data: bytes) -> None:
        await self.sock.send(data)

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request (a masked text frame); its answer (the text frames before are dropped)."""
        await self.send(frame(json.dumps(message).encode()))
        while True:
            for opcode, payload in self.received.frames:
                if opcode == TEXT and json.loads(payload).get("id") == message["id"]:
                    self.received.frames.clear()
                    return json.loads(payload)  # type: ignore[no-any-return]
            self.received.feed(await self.sock.receive())

    async def until_closed(self) -> Frames:
        """Read until the server closes the TCP connection; the frames it sent meanwhile."""
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            while True:
                self.received.feed(await self.sock.receive())
        self.ended = True
        await self.sock.aclose()
        return self.received
