"""Resumable event streams (`RemoteOptions.resumable`): a `Mailbox` that numbers the messages
of its stream (the cursor: an SSE `id:`, a WebSocket frame's number, from 1) and keeps the
ones its reader took, so a client that reconnects with the last cursor it read
(`Last-Event-ID`) gets what it missed; and the capability the `initialize` result
advertises.

What is kept: every message not read yet (bounded by the mailbox's `max_bytes`, as without
resumption), and of those read, the newest `ResumeOptions.max_events` / `max_bytes`. A
cursor older than that is `CursorGone` (the client falls back to `session/resume`); one past
the last message sent, or not a number, is `UnknownCursor`.
"""

from __future__ import annotations

import itertools

import msgspec

from ..._loop import Loop
from .mailbox import Mailbox
from .options import ResumeOptions

LAST_EVENT_ID = "last-event-id"
"""The request header carrying the client's cursor (SSE's; the WebSocket upgrade too)."""


class CursorGone(Exception):
    """The cursor's successors are no longer kept: the stream cannot be resumed (409)."""


class UnknownCursor(Exception):
    """The cursor names no message this stream sent (400)."""


def cursor_of(value: str) -> int:
    """A `Last-Event-ID` value as a cursor; `UnknownCursor` when it is not one."""
    if not value.isdigit() or len(value) > 18:
        raise UnknownCursor(f"Last-Event-ID {value[:40]!r} is not a cursor of this server")
    return int(value)


class RetainingMailbox(Mailbox):
    """A `Mailbox` whose messages stay after they were taken, up to the retention bounds."""

    def __init__(
        self,
        loop: Loop,
        name: str,
        *,
        max_bytes: int,
        stall_timeout: float,
        retention: ResumeOptions,
    ) -> None:
        super().__init__(loop, name, max_bytes=max_bytes, stall_timeout=stall_timeout)
        self._keep_events = retention.max_events
        self._keep_bytes = retention.max_bytes
        self._first = 1  # the cursor of _queue[0]
        self._kept_bytes = 0  # of the whole _queue, read or not
        self.taken = 0
        """The cursor of the last message a reader took (0: none yet)."""

    @property
    def last(self) -> int:
        """The cursor of the newest message (0: none yet)."""
        return self._first + len(self._queue) - 1

    async def put(self, message: bytes) -> None:
        await super().put(message)
        if not self.closed:  # it was queued
            self._kept_bytes += len(message)
            self._evict()

    def _next(self) -> bytes | None:
        if self.taken >= self.last:
            return None
        message = self._queue[self.taken + 1 - self._first]
        self.taken += 1
        self._size -= len(message)
        self._evict()
        return message

    def _evict(self) -> None:
        queue = self._queue
        while (
            len(queue) > self._keep_events or self._kept_bytes > self._keep_bytes
        ) and self._first <= self.taken:
            self._kept_bytes -= len(queue.popleft())
            self._first += 1

    def resume(self, cursor: int) -> int:
        """A new reader that goes on after `cursor` (the last message its client read);
        `CursorGone` / `UnknownCursor` when it cannot."""
        if cursor > self.last:
            raise UnknownCursor(
                f"Last-Event-ID {cursor} is past the last message of this stream ({self.last})"
            )
        if cursor < self._first - 1:
            raise CursorGone(
                f"the messages after Last-Event-ID {cursor} are no longer kept (the oldest "
                f"kept is {self._first}): resume the session with session/resume or "
                "session/load on a new connection"
            )
        self.taken = cursor
        unread = itertools.islice(self._queue, cursor + 1 - self._first, None)
        self._size = sum(map(len, unread))
        return self.attach()


def advertised(answer: bytes, retention: ResumeOptions) -> bytes:
    """The agent's `initialize` answer with the capability added to its result's `_meta`:
    `{"transport": {"resumable": {"maxEvents": ..., "maxBytes": ...}}}` (an error answer is
    left as it is)."""
    decoded = msgspec.json.decode(answer)
    result = decoded.get("result") if isinstance(decoded, dict) else None
    if not isinstance(result, dict):
        return answer
    meta = result.get("_meta")
    if not isinstance(meta, dict):
        meta = result["_meta"] = {}
    transport = meta.get("transport")
    if not isinstance(transport, dict):
        transport = meta["transport"] = {}
    transport["resumable"] = {"maxEvents": retention.max_events, "maxBytes": retention.max_bytes}
    return msgspec.json.encode(decoded)
