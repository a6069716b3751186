"""`acpwire check --client`'s side of the wire: the client spoken to in raw JSON-RPC lines over
a pair of byte streams (the client's stdio, or the socket of `--serve`), every line kept in the
transcript (`->` sent to the client, `<-` from it)."""

from __future__ import annotations

import json
import math

import trio

from .check_peer import Incoming, JsonObject, Transcript, WireLine

__all__ = ["ClientWire", "request_key"]


def request_key(request_id: object) -> tuple[str, object]:
    """A request id as a dict key that tells 1 from "1" (and True from 1)."""
    return (type(request_id).__name__, request_id)


class ClientWire:
    """Lines to and from one client. Writes are serialized (the scripted agent writes from
    several tasks); `send` gives up after `timeout` seconds of a client that reads nothing."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        transcript: Transcript,
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self.transcript = transcript
        self._lock = trio.Lock()
        self._lines_send, self.lines = trio.open_memory_channel[Incoming](math.inf)
        self.broken = False
        """Whether a write failed (the client is gone) or was abandoned mid-line."""

    async def send(self, message: JsonObject) -> WireLine:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        async with self._lock:
            line = self.transcript.add(1, True, text)
            if self.broken:
                return line
            try:
                await self._send_stream.send_all(text.encode() + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self.broken = True
            except trio.Cancelled:
                self.broken = True  # a partial line: nothing more can be written after it
                raise
            return line

    async def read(self) -> None:
        """Deliver the client's lines to `lines` until it closes its side."""
        buffer = b""
        async with self._lines_send:
            while True:
                try:
                    chunk = await self._receive_stream.receive_some()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    chunk = b""
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    if raw.strip():
                        await self._deliver(raw)
            if buffer.strip():
                await self._deliver(buffer)

    async def _deliver(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        line = self.transcript.add(1, False, text)
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        await self._lines_send.send(Incoming(parsed if isinstance(parsed, dict) else None, line))
