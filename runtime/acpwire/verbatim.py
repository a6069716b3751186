"""`Verbatim`: a JSON-RPC line forwarded byte for byte, read typed on demand.

    received = Verbatim(line, v2.CLIENT_CODEC.decode)
    if isinstance(received.message, v2.SessionUpdateMessage):
        show(received.message.params.update)      # typed
    await downstream.send_all(received.line + b"\\n")  # exactly what arrived

The generated types read the fields these bindings know; re-encoding a decoded message drops
the others (a field of the unstable schema such as `sessionCapabilities.fork`, a vendor's
field, a field of a newer schema release) and writes keys in its own order. That is right for
a client that only reads, and wrong for anything that passes messages on (a proxy, a
recorder, a conductor): such code keeps the line it received and forwards that, reading it
through the typed view. Unknown *variants* survive re-encoding (they decode as `OpenVariant`
dicts); unknown *fields* of known types survive only in the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, cast

__all__ = ["Verbatim"]

M = TypeVar("M")

_NOT_DECODED = object()


class Verbatim(Generic[M]):
    """One received line, kept as it arrived (`line`, `bytes(verbatim)`), with its typed
    view (`message`: `decode(line)`, on first access, once).

    `decode` is any decoder of the surface and side: `v2.CLIENT_CODEC.decode` for what an
    agent sends, `v2.AGENT_CODEC.decode` for what a client sends, `v2.decode_message` when
    either may come (v1 alike). A line that does not decode is still forwarded as it is;
    `message` raises the decoder's error (`msgspec.ValidationError` / `DecodeError`).
    """

    __slots__ = ("_decode", "_message", "line")

    def __init__(self, line: bytes, decode: Callable[[bytes], M]) -> None:
        self.line = line
        """The line exactly as received (without its newline)."""
        self._decode = decode
        self._message: object = _NOT_DECODED

    @property
    def message(self) -> M:
        """The line decoded (typed); decoded once, on first access."""
        message = self._message
        if message is _NOT_DECODED:
            message = self._message = self._decode(self.line)
        return cast("M", message)

    def __bytes__(self) -> bytes:
        return self.line

    def __repr__(self) -> str:
        return f"Verbatim({self.line!r})"
