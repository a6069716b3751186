"""Waiting in an async test on whichever loop runs it, and running a coroutine on a named one
from a sync test (tests/conftest.py runs `async def` tests per loop); `acpwire_tasks`, the
tasks of acpwire's code running now."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import sniffio
import trio
import trio.testing

from acpwire.fixtures.loops import run_on


def run_async(function: Callable[[], Awaitable[Any]], loop: str = "trio") -> Any:
    """Run `function()` on the event loop named `loop` (one of acpwire.fixtures.loops.LOOPS)."""
    return run_on(loop, function)


async def until(condition: Callable[[], Any], seconds: float = 2.0) -> None:
    """Wait (bounded) until `condition()` holds."""
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.001)


async def wait_all_tasks_blocked(cushion: float = 0.0) -> None:
    """Return once every other task has been blocked for `cushion` seconds, on either loop.

    trio's own; on asyncio a task counts as blocked while it waits on a future that is not
    done, and as blocked for the whole cushion when it waits on the same future after it
    (anyio's version polls every 0.1 s and has no cushion).
    """
    if sniffio.current_async_library() == "trio":
        await trio.testing.wait_all_tasks_blocked(cushion)
        return
    while True:
        await asyncio.sleep(0)
        before = _asyncio_waits()
        if before is None:
            continue
        if cushion:
            await asyncio.sleep(cushion)
        if _asyncio_waits() == before:
            return


def acpwire_tasks() -> list[str]:
    """The tasks of acpwire's code running now, on either loop (a server's; Hypercorn keeps
    its own per-socket tasks a while after a socket closed)."""
    if sniffio.current_async_library() == "trio":

        def walk(task: trio.lowlevel.Task) -> Iterator[trio.lowlevel.Task]:
            yield task
            for nursery in task.child_nurseries:
                for child in nursery.child_tasks:
                    yield from walk(child)

        names = [task.name for task in walk(trio.lowlevel.current_root_task())]
    else:
        names = []
        for task in asyncio.all_tasks():
            coroutine: Any = task.get_coro()
            names.append(f"{coroutine.cr_code.co_filename}:{coroutine.__qualname__}")
    return [name for name in names if "acpwire" in name]


def _asyncio_waits() -> dict[asyncio.Task[Any], asyncio.Future[Any]] | None:
    """The future each other task waits on, or None if one of them is not blocked."""
    this = asyncio.current_task()
    waits = {}
    for task in asyncio.all_tasks():
        waiter = getattr(task, "_fut_waiter", None)
        if task is this:
            continue
        if waiter is None or waiter.done():
            return None
        waits[task] = waiter
    return waits
