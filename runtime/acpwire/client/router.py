"""A client's session updates, routed to their subscribers in wire order (client side).

`UpdateRouter` keeps the subscribers of each session (`subscribe` gives an `UpdateStream`) and
routes the calls of a negotiated connection: a `session/update` goes to the session's
subscribers first (waiting while one of them is full: back-pressure), then to the client's
handler; a request of a session (permission, fs, terminal) waits at a gate until every
subscriber of the session took the updates received before it, or is queued among them as a
`HeldRequest` in a stream that holds requests (`acpwire.prompt`).
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

import msgspec

from acp_schema import MethodSpec

from .._loop import Event, current_loop
from .._wire.dispatch import DirectRoute, Dispatch, Handler
from .._wire.jsonrpc import Call, RequestId

UPDATE_BUFFER = 1024
"""Updates a per-session iterator may hold before the connection waits for its reader."""

Update = TypeVar("Update")


class _Gate:
    """A request held until `remaining` more updates were taken (counted from the gate
    before it in the stream, so taking an update counts down the first gate only)."""

    __slots__ = ("opened", "remaining")

    def __init__(self, remaining: int, opened: Event) -> None:
        self.remaining = remaining
        self.opened = opened


class HeldRequest:
    """A request of the session, queued among its updates in a stream that holds requests
    (`UpdateRouter.subscribe(..., holds_requests=True)`): its handler runs once the reader took it and set
    `released`."""

    __slots__ = ("call", "released")

    def __init__(self, call: Call, released: Event) -> None:
        self.call = call
        self.released = released


Failure = Callable[[], Awaitable[BaseException]]
"""Why the connection ended, in the best words it has (`Connection.failure`)."""


class UpdateStream(Generic[Update]):
    """The updates of one session, in order, as an async iterator.

    Items are handed over through a deque, not a channel: a channel costs a scheduler
    round trip per item, which at tens of thousands of updates a second is most of the cost.
    The connection waits (back-pressure) while `UPDATE_BUFFER` updates are unread.

    A request of the session waits at a gate until the updates queued before it were taken.
    Iterating ends once the `subscribe` block is left; when the connection ends, it raises
    the connection's error after the updates queued before.
    """

    def __init__(self, *, holds_requests: bool = False) -> None:
        self._loop = current_loop()
        self._items: collections.deque[Update] = collections.deque()
        self._reader: Event | None = None  # set to wake a reader waiting for an item
        self._writer: Event | None = None  # set to wake a writer waiting for room
        self._closed = False
        self._failure: Failure | None = None  # why the connection ended, raised at the end
        self._gates: collections.deque[_Gate] = collections.deque()  # in arrival order
        # True: the session's requests are queued among the updates as `HeldRequest`s, in
        # wire order, their handlers held until the reader sets `released` (client/turns.py)
        self._holds_requests = holds_requests

    def _offer(self, update: Update) -> bool:
        """Add an update unless the buffer is full (False); once closed, updates are dropped."""
        if self._closed:
            return True
        if len(self._items) >= UPDATE_BUFFER:
            return False
        self._items.append(update)
        if self._reader is not None:
            self._reader.set()
            self._reader = None
        return True

    async def _put(self, update: Update) -> None:
        """Add an update, waiting for room."""
        while not self._offer(update):
            self._writer = self._writer or self._loop.Event()
            await self._writer.wait()

    def _gate(self) -> Event | None:
        """An event set once the updates queued now were taken (None: nothing is queued)."""
        if not self._items or self._closed:
            return None
        waiting = len(self._items) - sum(gate.remaining for gate in self._gates)
        gate = _Gate(waiting, self._loop.Event())
        self._gates.append(gate)
        return gate.opened

    def _take_past_gates(self) -> Update:
        update = self._items.popleft()
        gates = self._gates
        gates[0].remaining -= 1
        while gates and gates[0].remaining <= 0:
            gates.popleft().opened.set()
        return update

    def _hold(self, call: Call) -> Event | None:
        """Queue a request among the updates (beyond the buffer limit: requests are few);
        None once closed (nobody will take it)."""
        if self._closed:
            return None
        held = HeldRequest(call, self._loop.Event())
        self._items.append(held)  # type: ignore[arg-type]
        if self._reader is not None:
            self._reader.set()
            self._reader = None
        return held.released

    def close(self, failure: Failure | None = None) -> None:
        """Take no more updates: iterating ends after the ones already queued (leaving the
        `subscribe` block does this), or raises `failure()` then (the connection ended)."""
        self._failure = failure
        for item in self._items:
            if isinstance(item, HeldRequest):
                item.released.set()
        self._closed = True
        for waiting in (self._reader, self._writer):
            if waiting is not None:
                waiting.set()
        for gate in self._gates:
            gate.opened.set()
        self._gates.clear()

    def __aiter__(self) -> UpdateStream[Update]:
        return self

    async def __anext__(self) -> Update:
        items = self._items
        while not items:
            if self._closed:
                if self._failure is not None:
                    raise await self._failure()
                raise StopAsyncIteration
            self._reader = self._reader or self._loop.Event()
            await self._reader.wait()
        if self._writer is not None and len(items) <= UPDATE_BUFFER // 2:
            self._writer.set()
            self._writer = None
        if self._gates:
            return self._take_past_gates()
        return items.popleft()


class UpdateRouter:
    """The subscribers of each session, and the routing of the calls that concern them."""

    def __init__(self) -> None:
        self._subscribers: dict[str, list[UpdateStream[Any]]] = {}
        self._gates: dict[RequestId, list[Event]] = {}  # a held request's id -> its gates
        self._closed = False
        self._failure: Failure | None = None

    # set by `routing`
    _dispatch: Dispatch
    _update_spec: MethodSpec[Any, None]
    _on_update: Handler | None

    @asynccontextmanager
    async def subscribe(
        self, session_id: str, *, holds_requests: bool = False
    ) -> AsyncIterator[UpdateStream[Any]]:
        """A stream of the session's updates while the block runs (`ClientConnection.subscribe`
        says how to read it); `holds_requests`: the session's requests come in among the
        updates as `HeldRequest`s (a turn's event stream)."""
        stream: UpdateStream[Any] = UpdateStream(holds_requests=holds_requests)
        if self._closed:
            stream.close(self._failure)
        self._subscribers.setdefault(session_id, []).append(stream)
        try:
            yield stream
        finally:
            self._subscribers[session_id].remove(stream)
            stream.close()

    def close(self, failure: Failure | None = None) -> None:
        """The connection closed: every stream ends after its queued updates by raising
        `failure()` (held requests released), and streams subscribed from now on at once."""
        self._closed = True
        self._failure = failure
        for streams in self._subscribers.values():
            for stream in streams:
                stream.close(failure)

    def on_request(self, call: Call) -> None:
        """On arrival of a request (on the reader, in wire order): when it belongs to a
        session whose subscribers have not taken every earlier update, hold its handler."""
        session_id = getattr(call.params, "session_id", None) if call.spec else None
        streams = self._subscribers.get(session_id) if isinstance(session_id, str) else None
        if not streams:
            return
        gates = [
            gate
            for stream in streams
            if (gate := stream._hold(call) if stream._holds_requests else stream._gate())
            is not None
        ]
        if gates:
            assert not isinstance(call.id, msgspec.UnsetType)
            self._gates[call.id] = gates

    def routing(
        self, dispatch: Dispatch, update_spec: MethodSpec[Any, None], on_update: Handler | None
    ) -> tuple[Dispatch, DirectRoute]:
        """The dispatch of a negotiated connection: a `session/update` (`update_spec`) goes to
        the session's subscribers first, then to `on_update` (the client's `session_update`
        handler, None when it has none), called directly: the most frequent call skips the
        generic dispatch; a request held by `on_request` waits for its gates; every other call
        goes to `dispatch` at once. With it, the same delivery of a `session/update`, given
        its params: the connection's direct route (`Connection.switch_to`).

        Both are bound methods of the router, not closures: one connection holds them (two
        closures and their cells were ~0.3 KiB per connection)."""
        self._dispatch, self._update_spec, self._on_update = dispatch, update_spec, on_update
        return self._route, DirectRoute(update_spec, self._deliver)

    def _deliver(self, notification: Any) -> Awaitable[Any] | None:
        """A `session/update`'s params to the subscribers, then to the handler."""
        streams = self._subscribers.get(notification.session_id)
        if streams:
            update = notification.update
            for stream in streams:
                if not stream._offer(update):
                    return _publish_waiting(self._on_update, streams, stream, notification)
        on_update = self._on_update
        return None if on_update is None else on_update(notification)

    def _route(self, call: Call) -> Awaitable[Any] | None:
        if call.spec is self._update_spec:
            return self._deliver(call.message.params)  # type: ignore[union-attr]
        gates = self._gates
        if gates and call.id in gates:
            return _after_gates(self._dispatch, gates.pop(call.id), call)
        return self._dispatch(call)


async def _publish_waiting(
    on_update: Handler | None,
    streams: list[UpdateStream[Any]],
    full: UpdateStream[Any],
    notification: Any,
) -> Any:
    """Back-pressure: wait until `full` and the subscribers after it have room."""
    for stream in streams[streams.index(full) :]:
        await stream._put(notification.update)
    return None if on_update is None else await on_update(notification)


async def _after_gates(dispatch: Dispatch, gates: list[Event], call: Call) -> Any:
    for gate in gates:
        await gate.wait()
    pending = dispatch(call)
    return None if pending is None else await pending
