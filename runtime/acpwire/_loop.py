"""The event-loop primitives the runtime uses, for the loop it runs on: trio or asyncio.

The runtime is written against trio's API, through a `Loop` found once per object that
needs one (`current_loop()`). On trio the primitives are trio's own objects: nothing sits
between the runtime and trio, so trio keeps its speed. On asyncio they are anyio's, which
gives asyncio trio's semantics (cancel scopes with shields and deadlines, task groups that
wait for their children, level-triggered cancellation): the protocol logic above exists
once and behaves the same on both loops.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import sniffio
import trio


class Event(Protocol):
    def set(self) -> None: ...
    def is_set(self) -> bool: ...
    async def wait(self) -> None: ...


class CancelScope(Protocol):
    """trio.CancelScope / anyio.CancelScope: what the runtime uses of them."""

    @property
    def cancelled_caught(self) -> bool: ...
    @property
    def cancel_called(self) -> bool: ...
    def cancel(self) -> None: ...
    def __enter__(self) -> Any: ...
    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...


class ReadableFd(Protocol):
    """Waiting for one file descriptor to become readable, again and again."""

    async def wait(self) -> None:
        """Until the fd is readable; the loop's ClosedResourceError once `close` was called."""
        ...

    def close(self) -> None:
        """Wake a waiting task with ClosedResourceError (before the fd itself is closed)."""
        ...


class FdReader(Protocol):
    """Reading one non-blocking file descriptor (a pipe) once it has data, again and again."""

    async def read(self, max_bytes: int) -> bytes:
        """The next bytes (at most `max_bytes`; `b""` at EOF), waiting until there are some;
        the OSError of `os.read`, or the loop's ClosedResourceError once `close` was called."""
        ...

    def close(self) -> None:
        """Wake a waiting task with ClosedResourceError (before the fd itself is closed)."""
        ...


class TaskStatus(Protocol):
    def started(self) -> None: ...


TASK_STATUS_IGNORED: TaskStatus = trio.TASK_STATUS_IGNORED
"""The task status of a task started with `start_soon` (either loop's `start` passes one)."""


class Nursery(Protocol):
    """trio.Nursery / anyio.abc.TaskGroup: what the runtime uses of them."""

    @property
    def cancel_scope(self) -> CancelScope: ...
    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> object: ...
    async def start(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any: ...


class OpenNursery(Protocol):
    async def __aenter__(self) -> Any: ...  # a Nursery (each loop's own type)
    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None: ...


_NewEvent = Callable[[], Event]
_NewCancelScope = Callable[..., CancelScope]  # (*, shield=False, deadline=inf)
_NewTimeout = Callable[[float], CancelScope]


@dataclass(frozen=True, eq=False)
class Loop:
    name: str
    Event: _NewEvent
    CancelScope: _NewCancelScope
    open_nursery: Callable[[], OpenNursery]
    move_on_after: _NewTimeout
    sleep: Callable[[float], Awaitable[None]]
    checkpoint: Callable[[], Awaitable[None]]
    checkpoint_if_cancelled: Callable[[], Awaitable[None]]
    current_effective_deadline: Callable[[], float]
    readable_fd: Callable[[int], ReadableFd]
    fd_reader: Callable[[int], FdReader]
    wait_writable: Callable[[int], Awaitable[None]]
    notify_closing: Callable[[int], None]
    Cancelled: type[BaseException]
    BrokenResourceError: type[Exception]
    ClosedResourceError: type[Exception]

    def is_cancelled(self) -> bool:
        """Whether the calling task is being cancelled (its deadline is in the past)."""
        return self.current_effective_deadline() == -math.inf


class _TrioReadableFd:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def wait(self) -> None:
        await trio.lowlevel.wait_readable(self.fd)

    def close(self) -> None:
        trio.lowlevel.notify_closing(self.fd)


class _TrioFdReader:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def read(self, max_bytes: int) -> bytes:
        while True:
            await trio.lowlevel.wait_readable(self.fd)
            try:
                return os.read(self.fd, max_bytes)
            except BlockingIOError:  # another reader of the pipe came first
                continue

    def close(self) -> None:
        trio.lowlevel.notify_closing(self.fd)


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

    async def read(self, max_bytes: int) -> bytes:
        if self.unread:
            data, self.unread = self.unread, b""
            return data
        if not self.registered:
            self.events.add_reader(self.fd, self._readable)
            self.registered = True
        self.size = max_bytes
        waiter: asyncio.Future[bytes] = self.events.create_future()
        self.waiter = waiter
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self.unread = waiter.result()
            raise
        finally:
            self.waiter = None

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


TRIO = Loop(
    name="trio",
    Event=trio.Event,
    CancelScope=trio.CancelScope,
    open_nursery=trio.open_nursery,
    move_on_after=trio.move_on_after,
    sleep=trio.sleep,
    checkpoint=trio.lowlevel.checkpoint,
    checkpoint_if_cancelled=trio.lowlevel.checkpoint_if_cancelled,
    current_effective_deadline=trio.current_effective_deadline,
    readable_fd=_TrioReadableFd,
    fd_reader=_TrioFdReader,
    wait_writable=trio.lowlevel.wait_writable,
    notify_closing=trio.lowlevel.notify_closing,
    Cancelled=trio.Cancelled,
    BrokenResourceError=trio.BrokenResourceError,
    ClosedResourceError=trio.ClosedResourceError,
)


def _asyncio_loop() -> Loop:
    """anyio's primitives for asyncio, bound to its asyncio backend once: anyio's module
    functions (`anyio.Event()`, `anyio.lowlevel.checkpoint_if_cancelled()`, ...) look the
    running backend up on every call, ~1-2 µs each, several times per message."""
    backend = anyio.lowlevel.current_token().backend_class

    def move_on_after(seconds: float) -> CancelScope:
        return backend.create_cancel_scope(deadline=backend.current_time() + seconds)

    return Loop(
        name="asyncio",
        Event=backend.create_event,
        CancelScope=backend.create_cancel_scope,
        open_nursery=backend.create_task_group,
        move_on_after=move_on_after,
        sleep=backend.sleep,
        checkpoint=backend.checkpoint,
        checkpoint_if_cancelled=backend.checkpoint_if_cancelled,
        current_effective_deadline=backend.current_effective_deadline,
        readable_fd=_AsyncioReadableFd,
        fd_reader=_AsyncioFdReader,
        wait_writable=backend.wait_writable,
        notify_closing=backend.notify_closing,
        Cancelled=asyncio.CancelledError,
        BrokenResourceError=anyio.BrokenResourceError,
        ClosedResourceError=anyio.ClosedResourceError,
    )


_LOOPS = {"trio": TRIO}  # asyncio's is added at its first use


def current_loop() -> Loop:
    """The primitives of the loop running the calling task."""
    try:
        name = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        raise RuntimeError(
            "acpwire must be used from a running trio or asyncio event loop "
            "(trio.run(main), asyncio.run(main()), or `await` inside a running loop)"
        ) from None
    loop = _LOOPS.get(name)
    if loop is None:
        if name != "asyncio":
            raise RuntimeError(f"acpwire runs on trio or asyncio, not on {name}")
        loop = _LOOPS[name] = _asyncio_loop()
    return loop


CANCELLED = (trio.Cancelled, asyncio.CancelledError)
"""What a cancelled task raises, on either loop."""

STREAM_ERRORS = (
    trio.BrokenResourceError,
    trio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)
"""The errors of a broken or closed stream, of either loop (a stream may be trio's or anyio's)."""


def new_event() -> Event:
    """An Event of the running loop (for dataclass defaults)."""
    return current_loop().Event()


def new_cancel_scope() -> CancelScope:
    """A CancelScope of the running loop (for dataclass defaults)."""
    return current_loop().CancelScope()


def is_cancelled() -> bool:
    """Whether the calling task is being cancelled."""
    return current_loop().is_cancelled()
