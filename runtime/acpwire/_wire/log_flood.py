"""A warning that the peer can cause again and again (lines that are not JSON, answers it
cannot tie to a message): the first few are logged whole, later ones only as a count at 10,
100, 1000, ... so that a flood from the peer does not flood the log too."""

from __future__ import annotations

from typing import Literal

QUOTED = 3
"""How many of one kind of warning are logged whole."""


class WarningFlood:
    """Counts one kind of warning about one peer and says how to log the next one."""

    __slots__ = ("_next_count", "seen")

    def __init__(self) -> None:
        self.seen = 0
        self._next_count = 10

    def one_more(self) -> Literal["whole", "count", "quiet"]:
        """Count one more: log it `"whole"`, log the `"count"` so far, or stay `"quiet"`."""
        self.seen += 1
        if self.seen <= QUOTED:
            return "whole"
        if self.seen == self._next_count:
            self._next_count *= 10
            return "count"
        return "quiet"
