"""A warning that the peer can cause again and again (lines that are not JSON, answers it
cannot tie to a message): the first few are logged whole, later ones only as a count at 10,
100, 1000, ... so that a flood from the peer does not flood the log too."""

from __future__ import annotations

import logging

QUOTED = 3
"""How many of one kind of warning are logged whole."""

log = logging.getLogger("acpwire")


class WarningFlood:
    """Logs one kind of warning about one peer: whole, then as a count."""

    __slots__ = ("_counted", "_next_count", "_peer", "seen")

    def __init__(self, peer: str, counted: str) -> None:
        """The count's message is the peer's name, then `counted` % the number seen so far,
        e.g. `"has written %d lines that are not JSON"` (a constant: one string for every
        connection, the message is built when a count is logged)."""
        self._peer = peer
        self._counted = counted
        self.seen = 0
        self._next_count = 10

    def warn(self, message: str, *args: object) -> None:
        """Count one more; log `message % args` for the first few, then the count at 10, 100,
        1000, ... (None else)."""
        self.seen += 1
        if self.seen <= QUOTED:
            log.warning(message, *args)
        elif self.seen == self._next_count:
            self._next_count *= 10
            counted = f"%s {self._counted} (the first %d are quoted above)"
            log.warning(counted, self._peer, self.seen, QUOTED)
