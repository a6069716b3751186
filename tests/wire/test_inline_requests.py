"""How the Connection runs the peer's requests (issue 18): a handler starts on the reader as
soon as the lines read with its request were processed, in wire order and in a copy of the
reader's context; one that finishes without waiting needs no task of its own, one that waits
takes the task it runs in and a new reader carries on."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import msgspec
import pytest
import sniffio
import trio
import trio.lowlevel

from acpwire._wire.connection import Connection
from acpwire._wire.jsonrpc import Call
from helpers.connection import Handlers, serving
from helpers.loops import until
from helpers.raw import CANCELLED, cancel_request, notification, request, response

pytestmark = pytest.mark.usefixtures("loop")

REQUEST_ID: contextvars.ContextVar[object] = contextvars.ContextVar("request_id", default=None)


class Counting(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


@contextmanager
def tasks_started() -> Iterator[list[int]]:
    """Counts the tasks started in the block, on either loop: `[count]` once it ends."""
    counted = [0]
    if sniffio.current_async_library() == "trio":
        instrument = Counting()
        trio.lowlevel.add_instrument(instrument)
        try:
            yield counted
        finally:
            trio.lowlevel.remove_instrument(instrument)
            counted[0] = instrument.spawned
        return
    events = asyncio.get_running_loop()
    before = events.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        counted[0] += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    events.set_task_factory(factory)
    try:
        yield counted
    finally:
        events.set_task_factory(before)


async def test_a_handler_that_does_not_wait_runs_without_a_task_of_its_own() -> None:
    async with serving() as s:
        assert await s.peer.call(0, "_echo", "warm") == response(0, "warm")
        with tasks_started() as started:
            for i in range(1, 21):
                assert await s.peer.call(i, "_echo", i) == response(i, i)
        assert started == [0]


async def test_a_handler_that_waits_takes_its_task_and_the_reader_reads_on() -> None:
    async with serving() as s:
        assert await s.peer.call(0, "_echo", "warm") == response(0, "warm")
        with tasks_started() as started:  # the new reader: one task per handler that waited
            await s.peer.send(request(1, "_wait"))
            await until(lambda: s.handlers.started == [1])
            assert await s.peer.call(2, "_echo", 2) == response(2, 2)
        assert started == [1]
        s.handlers.gate.set()
        assert await s.peer.receive() == response(1, "released")
        assert await s.peer.call(3, "_echo", 3) == response(3, 3)


class Ordered(Handlers):
    """Records the order its handlers start in; `_wait` handlers then wait on the gate."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(connection)
        self.order: list[Any] = []

    def __call__(self, call: Call) -> Awaitable[Any]:
        if call.id is not msgspec.UNSET:
            self.order.append(call.id)
        return super().__call__(call)


async def test_requests_read_together_start_in_wire_order() -> None:
    for _ in range(10):  # before: each in a task of its own, started in either order
        async with serving(Ordered) as s:
            await s.peer.send(
                b"".join(
                    msgspec.json.encode(request(i, "_wait" if i % 2 else "_echo", i)) + b"\n"
                    for i in range(1, 7)
                )
            )
            answers = [await s.peer.receive() for _ in range(3)]
            assert answers == [response(2, 2), response(4, 4), response(6, 6)]
            assert s.handlers.order == [1, 2, 3, 4, 5, 6]
            s.handlers.gate.set()
            finished = [await s.peer.receive() for _ in range(3)]
            assert sorted(answer["id"] for answer in finished) == [1, 3, 5]


class ContextSetting(Handlers):
    """`_set` sets a context variable and reports what it saw before, after waiting once when
    its params say so."""

    def __call__(self, call: Call) -> Awaitable[Any]:
        if call.method == "_set":
            return self._set(call)
        return super().__call__(call)

    async def _set(self, call: Call) -> Any:
        wait = msgspec.json.decode(call.params)
        seen = REQUEST_ID.get()
        REQUEST_ID.set(call.id)
        if wait:
            await anyio.sleep(0)
        return {"seen": seen, "now": REQUEST_ID.get()}


async def test_each_request_handler_runs_in_a_copy_of_the_context() -> None:
    async with serving(ContextSetting) as s:
        assert await s.peer.call(1, "_set", False) == response(1, {"seen": None, "now": 1})
        assert await s.peer.call(2, "_set", True) == response(2, {"seen": None, "now": 2})
        assert await s.peer.call(3, "_set", False) == response(3, {"seen": None, "now": 3})
    assert REQUEST_ID.get() is None


async def test_cancel_request_stops_a_handler_that_waited_after_starting_on_the_reader() -> None:
    async with serving() as s:
        await s.peer.send(request(1, "_wait"), request(2, "_wait"))
        await until(lambda: s.handlers.started == [1, 2])
        await s.peer.send(cancel_request(1))
        assert await s.peer.receive() == {"jsonrpc": "2.0", "id": 1, "error": CANCELLED}
        await s.peer.send(cancel_request(2))
        assert await s.peer.receive() == {"jsonrpc": "2.0", "id": 2, "error": CANCELLED}
        assert s.handlers.cancelled == [1, 2]
        assert await s.peer.call(3, "_echo", 3) == response(3, 3)


class SelfCancelling(Handlers):
    """`_self_cancel` cancels its own request while it runs on the reader, then waits."""

    def __call__(self, call: Call) -> Awaitable[Any]:
        if call.method == "_self_cancel":
            return self._self_cancel(call)
        return super().__call__(call)

    async def _self_cancel(self, call: Call) -> Any:
        self.connection.cancel_requests(lambda other: other.id == call.id)
        await anyio.sleep(0)
        return "not cancelled"


async def test_a_handler_cancelled_before_it_first_waits_is_cancelled_when_it_waits() -> None:
    async with serving(SelfCancelling) as s:
        assert await s.peer.call(1, "_self_cancel") == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": CANCELLED,
        }
        assert await s.peer.call(2, "_echo", 2) == response(2, 2)


class _Ready:
    """An awaitable that is not a coroutine."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        if False:  # pragma: no cover - a generator that finishes at once
            yield
        return self.value


class NotCoroutines(Handlers):
    def __call__(self, call: Call) -> Awaitable[Any]:
        if call.method == "_ready":
            return _Ready(msgspec.json.decode(call.params))
        return super().__call__(call)


async def test_a_handler_giving_another_awaitable_is_answered_with_its_result() -> None:
    async with serving(NotCoroutines) as s:
        assert await s.peer.call(1, "_ready", {"a": 1}) == response(1, {"a": 1})
        assert await s.peer.call(2, "_echo", 2) == response(2, 2)


class NotesSeen(Handlers):
    """`_notes_seen` answers with the notes its handler saw when it started."""

    def __call__(self, call: Call) -> Awaitable[Any]:
        if call.method == "_notes_seen":
            return self._notes_seen()
        return super().__call__(call)

    async def _notes_seen(self) -> Any:
        return list(self.notes)


async def test_a_request_starts_after_the_notifications_read_with_it() -> None:
    async with serving(NotesSeen) as s:
        await s.peer.send(
            msgspec.json.encode(request(1, "_notes_seen"))
            + b"\n"
            + msgspec.json.encode(notification("_note", {"seq": 3}))
            + b"\n"
        )
        assert await s.peer.receive() == response(1, [3])
