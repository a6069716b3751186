"""The far end of a connection in raw JSON lines (`RawPeer`), and the JSON-RPC messages it
sends and expects, as plain dicts."""

from __future__ import annotations

from collections import deque
from typing import Any

import anyio
import msgspec

from acpwire._wire.framing import LineReader


class RawPeer:
    """The far end of a connection, written to and read from as raw JSON lines."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._reader = LineReader()
        self._lines: deque[bytes] = deque()

    async def send(self, *messages: Any) -> None:
        """Send each message as one line: bytes as they are, anything else as JSON."""
        for message in messages:
            data = message if isinstance(message, bytes) else msgspec.json.encode(message)
            await self.stream.send_all(data if data.endswith(b"\n") else data + b"\n")

    async def receive_line(self) -> bytes:
        while not self._lines:
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError("the connection closed")
            self._lines.extend(line for line in self._reader.feed(data) if isinstance(line, bytes))
        return self._lines.popleft()

    async def receive(self) -> Any:
        """The next message, decoded (a dict, or a list for a batch response)."""
        return msgspec.json.decode(await self.receive_line())

    async def call(self, id: Any, method: str, params: Any = None) -> Any:
        """Send a request and return the next message (its response, in these tests)."""
        await self.send(request(id, method, params))
        return await self.receive()

    async def expect_silence(self, seconds: float = 0.05) -> None:
        with anyio.move_on_after(seconds):
            line = await self.receive_line()
            raise AssertionError(f"expected nothing, got {line!r}")

    async def close(self) -> None:
        await self.stream.aclose()


async def receive(peer: RawPeer, count: int) -> list[Any]:
    """The next `count` messages."""
    return [await peer.receive() for _ in range(count)]


def request(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def response(id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


def cancel_request(id: Any) -> dict[str, Any]:
    return notification("$/cancel_request", {"requestId": id})


CANCELLED = error_response(None, -32800, "Request cancelled")["error"]
"""The error a request cancelled with `$/cancel_request` is answered with."""
