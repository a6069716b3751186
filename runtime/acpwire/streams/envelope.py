"""What a remote transport reads of a JSON-RPC message to carry it: its `id`, `method` and
session (`sessionId` in `params`, or in a response's `result`), without decoding the rest.

Streamable HTTP routes each message by these (which stream, which headers); the transports
never look deeper. `one_line` makes a received message fit the newline-delimited framing the
connection reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from msgspec import UNSET, UnsetType

RequestId = int | str | None
"""A JSON-RPC id (`null` is one: the id of an error answering an unreadable message)."""


class _Fields(msgspec.Struct):
    id: RequestId | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw = msgspec.Raw(b"")
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


class _SessionField(msgspec.Struct):
    sessionId: str | None = None


_DECODE_FIELDS = msgspec.json.Decoder(list[object] | _Fields).decode
_DECODE_SESSION = msgspec.json.Decoder(_SessionField).decode


class NotAMessage(ValueError):
    """The text is not one JSON-RPC message: not JSON, a batch (an array), or not an object."""

    def __init__(self, reason: str, *, batch: bool = False) -> None:
        super().__init__(reason)
        self.batch = batch
        """True for a JSON array (a JSON-RPC batch, which ACP does not use)."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """The routing facts of one message."""

    id: RequestId | UnsetType
    """Its id (UNSET for a notification)."""
    method: str | None
    """Its method (None for a response)."""
    params_session: str | None
    """`params.sessionId` of a request or notification."""
    result_session: str | None
    """`result.sessionId` of a response."""
    failed: bool = False
    """A response carrying an `error`."""

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.id is not UNSET

    @property
    def is_notification(self) -> bool:
        return self.method is not None and self.id is UNSET

    @property
    def is_response(self) -> bool:
        return self.method is None


def envelope(data: bytes | str) -> Envelope:
    """The envelope of one JSON text; `NotAMessage` when it is not a JSON-RPC message."""
    try:
        fields = _DECODE_FIELDS(data)
    except msgspec.ValidationError as exc:
        raise NotAMessage(f"not a JSON-RPC message: {exc}") from None
    except msgspec.DecodeError as exc:
        raise NotAMessage(f"not JSON: {exc}") from None
    if isinstance(fields, list):
        raise NotAMessage("a JSON-RPC batch (ACP does not use batches)", batch=True)
    method = None if isinstance(fields.method, UnsetType) else fields.method
    if method is None and isinstance(fields.id, UnsetType):
        raise NotAMessage("neither a request, a notification nor a response")
    return Envelope(
        fields.id,
        method,
        _session_of(fields.params) if method is not None else None,
        _session_of(fields.result) if method is None else None,
        method is None and bool(fields.error),
    )


def _session_of(raw: msgspec.Raw) -> str | None:
    if not raw:
        return None
    try:
        return _DECODE_SESSION(raw).sessionId
    except msgspec.DecodeError:  # ValidationError too: not an object, or no string id
        return None


def one_line(data: bytes) -> bytes:
    """`data` (one JSON text) without raw line breaks, so it frames as one line: JSON allows
    them only as whitespace between tokens, which compact re-formatting drops. Text that is
    not JSON keeps its bytes with the breaks turned into spaces (the connection answers it
    as unparsable)."""
    if b"\n" not in data and b"\r" not in data:
        return data
    try:
        return msgspec.json.format(data, indent=-1)
    except msgspec.DecodeError:
        return data.replace(b"\r", b" ").replace(b"\n", b" ")
