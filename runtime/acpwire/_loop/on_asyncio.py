"""The `Loop` of asyncio: anyio's primitives on its asyncio backend (imported only by an
asyncio program)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable

import anyio
import anyio.lowlevel

from . import CancelScope, Loop


class _SingleWaiterEvent:
    """An Event at most one task waits for at a time: the waiter's future, set directly (what
    anyio's Event costs on top: an asyncio.Event, its deque of waiters, two more calls)."""

    __slots__ = ("_flag", "_waiter")

    def __init__(self) -> None:
        self._flag = False
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        self._flag = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def is_set(self) -> bool:
        return self._flag

    async def wait(self) -> None:
        if self._flag:
            await anyio.lowlevel.checkpoint()  # as anyio's Event: waiting is a checkpoint
            return
        if self._waiter is not None:
            raise RuntimeError("another task is already waiting for this event")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


class _AsyncioFdReader:
    """The fd stays registered with the asyncio loop between reads, and the loop's callback
    reads it: a readiness the selector reported before the task read the data (it runs in the
    same loop iteration) then finds nothing and keeps waiting, instead of waking the task for
    a read that would fail. The registration is dropped when the fd turns readable while
    nobody waits (no busy loop on unread data), and on close. Bytes the callback read for a
    task that was cancelled before it took them are returned by the next read."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.events = asyncio.get_running_loop()
        self.waiter: asyncio.Future[bytes] | None = None
        self.size = 0
        self.registered = False
        self.unread = b""  # read for a task that was cancelled before it took them

    def _readable(self) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():
            self.events.remove_reader(self.fd)
            self.registered = False
            return
        try:
            data = os.read(self.fd, self.size)
        except BlockingIOError:
            return
        except OSError as exc:
            self.waiter = None
            waiter.set_exception(exc)
            return
        self.waiter = None
        waiter.set_result(data)

    def read(self, max_bytes: int) -> asyncio.Future[bytes]:
        waiter: asyncio.Future[bytes] = self.events.create_future()
        if self.unread:
            waiter.set_result(self.unread)
            self.unread = b""
            return waiter
        if not self.registered:
            self.events.add_reader(self.fd, self._readable)
            self.registered = True
        self.size = max_bytes
        self.waiter = waiter
        return waiter

    def abandon(self, reading: Awaitable[bytes]) -> None:
        if reading is self.waiter:
            self.waiter = None
        assert isinstance(reading, asyncio.Future)  # (what `read` gives)
        if reading.done() and not reading.cancelled() and reading.exception() is None:
            self.unread = reading.result()

    def close(self) -> None:
        if self.registered:
            self.events.remove_reader(self.fd)
            self.registered = False
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(anyio.ClosedResourceError("the pipe was closed"))


class _AsyncioReadableFd:
    """The fd stays registered with the asyncio loop between waits: waiting costs a future,
    not the two epoll_ctl calls of adding and removing a reader per wait (a request/response
    reader waits once per message). The registration is dropped when the fd turns readable
    while nobody waits (no busy loop on unread data), and on close."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.events = asyncio.get_running_loop()
        self.waiter: asyncio.Future[bool] | None = None
        self.registered = False

    def _readable(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is None:
            self.events.remove_reader(self.fd)
            self.registered = False
        elif not waiter.done():
            waiter.set_result(True)

    async def wait(self) -> None:
        if not self.registered:
            self.events.add_reader(self.fd, self._readable)
            self.registered = True
        self.waiter = waiter = self.events.create_future()
        try:
            readable = await waiter
        finally:
            self.waiter = None
        if not readable:
            raise anyio.ClosedResourceError("the pipe was closed")

    def close(self) -> None:
        if self.registered:
            self.events.remove_reader(self.fd)
            self.registered = False
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(False)


def asyncio_loop() -> Loop:
    """anyio's primitives for asyncio, bound to its asyncio backend once: anyio's module
    functions (`anyio.Event()`, `anyio.lowlevel.checkpoint_if_cancelled()`, ...) look the
    running backend up on every call, ~1-2 µs each, several times per message."""
    backend = anyio.lowlevel.current_token().backend_class

    def move_on_after(seconds: float) -> CancelScope:
        return backend.create_cancel_scope(deadline=backend.current_time() + seconds)

    return Loop(
        name="asyncio",
        Event=backend.create_event,
        SingleWaiterEvent=_SingleWaiterEvent,
        CancelScope=backend.create_cancel_scope,
        open_nursery=backend.create_task_group,
        move_on_after=move_on_after,
        sleep=backend.sleep,
        checkpoint=backend.checkpoint,
        checkpoint_if_cancelled=backend.checkpoint_if_cancelled,
        current_effective_deadline=backend.current_effective_deadline,
        readable_fd=_AsyncioReadableFd,
        fd_reader=_AsyncioFdReader,
        wait_readable=backend.wait_readable,
        wait_writable=backend.wait_writable,
        notify_closing=backend.notify_closing,
        current_task=asyncio.current_task,
        Cancelled=asyncio.CancelledError,
        BrokenResourceError=anyio.BrokenResourceError,
        ClosedResourceError=anyio.ClosedResourceError,
    )
