"""`WireLine`: what a connection's line hook (`ConnectionOptions.on_line`) is called with, one
for each line the connection reads or writes (public as `acpwire.WireLine`)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Direction", "WireLine"]

Direction = Literal["in", "out"]


class WireLine(msgspec.Struct, frozen=True, gc=False):
    """One line of a connection, as it went over the wire.

    `ConnectionOptions(on_line=hook)` calls `hook(WireLine(...))` for every line read
    (`direction` "in") and written ("out"), in order, a line that is not JSON or not a valid
    message included. A line over `max_line_bytes` is dropped unread: it is not reported (its
    -32600 answer is). Blank lines are not reported either.
    """

    direction: Direction
    """"in": read from the peer; "out": written to it."""
    line: bytes
    """The line's bytes exactly as on the wire, without its newline (nor the "\\r" of a CRLF)."""
    time: float
    """`time.monotonic()` when it was read (the lines of one read share it) or queued for
    writing."""
    connection: str = ""
    """Which connection it went over, to tell apart the lines of a server's many connections
    (`agent_app` calls one hook for all): under `agent_app` the connection's
    `Acp-Connection-Id`; elsewhere (stdio, any client's connection, `open_remote`'s included) a
    UUID the connection made for itself, the same on all its lines."""
