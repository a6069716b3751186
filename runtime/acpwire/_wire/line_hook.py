"""Calling a connection's line hook (`ConnectionOptions.on_line`) for each line read
(`LineHook.read`) and written (`HookedOutbox`), without ever letting it break the connection.

A connection without a hook pays nothing per line written (it has a plain `Outbox`) and one
`is None` test per read (not per line)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import monotonic

from ..errors import ConnectionClosed
from ..streams.byte_stream import ByteStream
from .framing import OversizedLine
from .outbox import Outbox
from .wire_line import Direction, WireLine

__all__ = ["HookedOutbox", "LineHook"]

log = logging.getLogger("acpwire")


class LineHook:
    """The hook of one connection: a hook that raises is logged once, and called on."""

    __slots__ = ("_connection", "_failed", "_hook", "_peer")

    def __init__(self, hook: Callable[[WireLine], None], peer: str, connection: str = "") -> None:
        self._hook = hook
        self._peer = peer
        self._connection = connection
        self._failed = False

    def read(self, items: list[bytes | OversizedLine]) -> None:
        """The lines of one read (an oversized line was dropped unread: not reported)."""
        now = monotonic()
        for item in items:
            if type(item) is bytes:
                self.call("in", item, now)

    def call(self, direction: Direction, line: bytes, now: float) -> None:
        try:
            self._hook(WireLine(direction, line, now, self._connection))
        except Exception:
            if not self._failed:
                self._failed = True
                log.exception(
                    "the on_line hook of the connection with %s raised: the connection goes "
                    "on, and the hook is still called (its next failures are not logged)",
                    self._peer,
                )


class HookedOutbox(Outbox):
    """An `Outbox` that reports each message it accepts to a `LineHook`."""

    __slots__ = ("line_hook",)

    def __init__(
        self,
        line_hook: LineHook,
        stream: ByteStream,
        max_buffered_bytes: int,
        on_failure: Callable[[ConnectionClosed], None],
    ) -> None:
        super().__init__(stream, max_buffered_bytes, on_failure)
        self.line_hook = line_hook

    def offer(self, message: bytes, bounded: bool = True) -> bool:
        # raises, and nothing is reported, once writing failed
        if not Outbox.offer(self, message, bounded):
            return False
        self.line_hook.call("out", message, monotonic())
        return True
