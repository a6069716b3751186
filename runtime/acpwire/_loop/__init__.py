"""The event-loop primitives the runtime uses, for the loop it runs on: trio or asyncio.

The runtime is written against trio's API, through a `Loop` found once per object that
needs one (`current_loop()`). On trio the primitives are trio's own objects: nothing sits
between the runtime and trio, so trio keeps its speed. On asyncio they are anyio's, which
gives asyncio trio's semantics (cancel scopes with shields and deadlines, task groups that
wait for their children, level-triggered cancellation): the protocol logic above exists
once and behaves the same on both loops.

Each loop's `Loop` is built by its own module (`on_trio`, `on_asyncio`), imported the first
time a task of that loop asks: an asyncio program never imports trio, a trio program never
imports asyncio or anyio.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Protocol

import msgspec
import sniffio


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
    """Reading one non-blocking file descriptor (a pipe) once it has data, again and again:
    a loop's own reader (asyncio: its callback reads)."""

    def read(self, max_bytes: int) -> Awaitable[bytes]:
        """What gives the next bytes (at most `max_bytes`; `b""` at EOF) once there are some:
        awaited by the caller itself (no coroutine of the reader's to resume on a wake-up); it
        raises the OSError of `os.read`, or the loop's ClosedResourceError once `close` was
        called. A caller that stops waiting for it (cancelled) hands it to `abandon`."""
        ...

    def abandon(self, reading: Awaitable[bytes]) -> None:
        """The caller of `read` stopped waiting for `reading`: the bytes already read for it,
        if any, are what the next `read` gives."""
        ...

    def close(self) -> None:
        """Wake a waiting task with ClosedResourceError (before the fd itself is closed)."""
        ...


class TaskStatus(Protocol):
    def started(self) -> None: ...


class _StatusIgnored:
    def started(self, value: object = None) -> None:
        pass

    def __repr__(self) -> str:
        return "TASK_STATUS_IGNORED"


TASK_STATUS_IGNORED: TaskStatus = _StatusIgnored()
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


class Loop(msgspec.Struct, frozen=True, eq=False, kw_only=True):
    """What the runtime uses of one loop, built once per loop (`current_loop()`). A Struct, not a
    dataclass: defining it costs a few microseconds at import, a dataclass of these 18 fields
    over a millisecond of every program's start (each attribute read is a slot's either way)."""

    name: str
    Event: _NewEvent
    SingleWaiterEvent: _NewEvent
    """An Event that at most one task waits for at a time (a call waiting for its answer):
    trio's Event on trio; on asyncio a bare future, not anyio's Event around asyncio's."""
    CancelScope: _NewCancelScope
    open_nursery: Callable[[], OpenNursery]
    move_on_after: _NewTimeout
    sleep: Callable[[float], Awaitable[None]]
    checkpoint: Callable[[], Awaitable[None]]
    checkpoint_if_cancelled: Callable[[], Awaitable[None]]
    current_effective_deadline: Callable[[], float]
    readable_fd: Callable[[int], ReadableFd]
    fd_reader: Callable[[int], FdReader] | None
    """The loop's own reader of a non-blocking fd (asyncio: its callback reads); None where a
    task waits with `wait_readable`, then reads (trio: no coroutine of a reader's between)."""
    wait_readable: Callable[[int], Awaitable[None]]
    wait_writable: Callable[[int], Awaitable[None]]
    notify_closing: Callable[[int], None]
    current_task: Callable[[], object]
    """The calling task (compared by identity only)."""
    Cancelled: type[BaseException]
    BrokenResourceError: type[Exception]
    ClosedResourceError: type[Exception]

    def is_cancelled(self) -> bool:
        """Whether the calling task is being cancelled (its deadline is in the past)."""
        return self.current_effective_deadline() == -math.inf


_LOOPS: dict[str, Loop] = {}  # each added at its first use


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
        if name == "trio":
            from .on_trio import trio_loop as build
        elif name == "asyncio":
            from .on_asyncio import asyncio_loop as build
        else:
            raise RuntimeError(f"acpwire runs on trio or asyncio, not on {name}")
        loop = _LOOPS[name] = build()
    return loop


def cancellations() -> tuple[type[BaseException], ...]:
    """What a cancelled task raises, on the loops imported (`trio.Cancelled`,
    `asyncio.CancelledError`)."""
    found: list[type[BaseException]] = []
    trio = sys.modules.get("trio")
    if trio is not None:
        found.append(trio.Cancelled)
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        found.append(asyncio.CancelledError)
    return tuple(found)


def stream_errors(loop: Loop) -> tuple[type[Exception], ...]:
    """The errors of a broken or closed stream on `loop`: its own, and anyio's once anyio is
    imported (an anyio stream may run on trio). One tuple per case, shared."""
    anyio = sys.modules.get("anyio") if loop.name != "asyncio" else None  # asyncio: anyio's
    key = (loop.name, anyio is not None)
    errors = _STREAM_ERRORS.get(key)
    if errors is None:
        errors = (loop.BrokenResourceError, loop.ClosedResourceError)
        if anyio is not None:
            errors += (anyio.BrokenResourceError, anyio.ClosedResourceError)
        _STREAM_ERRORS[key] = errors
    return errors


_STREAM_ERRORS: dict[tuple[str, bool], tuple[type[Exception], ...]] = {}


def new_event() -> Event:
    """An Event of the running loop (for dataclass defaults)."""
    return current_loop().Event()


def new_cancel_scope() -> CancelScope:
    """A CancelScope of the running loop (for dataclass defaults)."""
    return current_loop().CancelScope()


def is_cancelled() -> bool:
    """Whether the calling task is being cancelled."""
    return current_loop().is_cancelled()
