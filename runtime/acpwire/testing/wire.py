"""What went over a fake agent's connection, line by line, with the questions a test asks of
it (`Wire`), and the stream wrapper that records it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import msgspec

import acp_schema.v2.methods as v2_methods
from acpwire.streams import ByteStream

__all__ = ["Line", "Wire"]

Sender = Literal["client", "agent"]


@dataclass(frozen=True)
class Line:
    """One line of the connection, as it was sent."""

    sender: Sender
    """Who sent it: `client` or `agent`."""
    data: bytes
    """The line's bytes (without the newline)."""

    @cached_property
    def message(self) -> dict[str, Any]:
        """The JSON-RPC message, decoded as plain JSON (an empty dict for a line that is no
        JSON object)."""
        try:
            decoded = msgspec.json.decode(self.data)
        except msgspec.DecodeError:
            return {}
        return decoded if isinstance(decoded, dict) else {}


@dataclass
class Wire:
    """The lines of a fake agent's connections, in the order they were sent or received.
    Messages are plain JSON (`dict`), as the client wrote them: one record for v1 and v2."""

    lines: list[Line] = field(default_factory=list)
    """Every line, both directions."""

    def from_client(self) -> Iterator[dict[str, Any]]:
        """The client's messages, in order."""
        return (line.message for line in self.lines if line.sender == "client")

    def methods(self) -> list[str]:
        """The methods the client called or notified, in order (`initialize`,
        `session/new`, `session/prompt`, `session/cancel`, ...)."""
        return [m["method"] for m in self.from_client() if isinstance(m.get("method"), str)]

    def params(self, method: str) -> list[dict[str, Any]]:
        """The params of each of the client's `method` messages, in order."""
        return [m.get("params") or {} for m in self.from_client() if m.get("method") == method]

    def prompts(self) -> list[str]:
        """The text of each `session/prompt` (its text blocks joined by newlines)."""
        return [
            "\n".join(
                block["text"]
                for block in params.get("prompt", [])
                if isinstance(block, dict) and block.get("type") == "text"
            )
            for params in self.params(v2_methods.SESSION_PROMPT.name)
        ]

    def cancelled_sessions(self) -> list[str]:
        """The session id of each `session/cancel` the client sent."""
        return [
            params.get("sessionId", "") for params in self.params(v2_methods.SESSION_CANCEL.name)
        ]

    def permission_answers(self) -> list[str | None]:
        """The client's answer to each `session/request_permission` the agent sent, in the
        order of the requests: the selected option's id, None for `cancelled`. A request not
        answered (yet), or answered with an error, is left out."""
        asked = [
            line.message.get("id")
            for line in self.lines
            if line.sender == "agent" and line.message.get("method") == PERMISSION
        ]
        answers: dict[object, str | None] = {}
        for message in self.from_client():
            if "method" not in message and message.get("id") in asked:
                outcome = (message.get("result") or {}).get("outcome") or {}
                if outcome.get("outcome") == "selected":
                    answers[message["id"]] = outcome.get("optionId")
                elif outcome.get("outcome") == "cancelled":
                    answers[message["id"]] = None
        return [answers[request_id] for request_id in asked if request_id in answers]

    @classmethod
    def read(cls, path: Path) -> Wire:
        """The lines a fake agent process recorded in `path` (nothing when it has not
        written the file yet)."""
        if not path.exists():
            return cls()
        records = msgspec.json.Decoder(_Record).decode_lines(path.read_bytes())
        return cls([Line(record.sender, record.line.encode()) for record in records])


PERMISSION = v2_methods.SESSION_REQUEST_PERMISSION.name  # the same name in v1


class _Record(msgspec.Struct, array_like=True):
    """A recorded line in a file: `["client", "<line>"]`."""

    sender: Sender
    line: str


def record_line(sender: Sender, data: bytes) -> bytes:
    """The file record of a line (see `Wire.read`)."""
    return msgspec.json.encode(_Record(sender, data.decode(errors="replace"))) + b"\n"


class RecordingStream:
    """A byte stream that passes everything through and hands each complete line to
    `record(sender, line)`: what it receives as the client's, what it sends as the agent's."""

    def __init__(self, stream: ByteStream, record: Callable[[Sender, bytes], None]) -> None:
        self._stream = stream
        self._record = record
        self._partial: dict[Sender, bytearray] = {"client": bytearray(), "agent": bytearray()}

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self._stream.receive_some(max_bytes)
        self._lines("client", data)
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)
        self._lines("agent", bytes(data))

    async def aclose(self) -> None:
        await self._stream.aclose()

    def _lines(self, sender: Sender, data: bytes | bytearray) -> None:
        partial = self._partial[sender]
        partial += data
        *complete, rest = partial.split(b"\n")
        for line in complete:
            if line.strip():
                self._record(sender, bytes(line))
        self._partial[sender] = bytearray(rest)
