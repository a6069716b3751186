"""An in-process peer served beside the test's code, ended when the test's block ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from acpwire._groups import SingleException  # the runtime's own rule, as open_agent raises

from .memory import MemoryStream

SHUTDOWN_WAIT = 2.0
"""How long leaving the block waits for the in-process peer to finish before cancelling it."""


@asynccontextmanager
async def serving(
    serve: Callable[[], Awaitable[None]], our_end: MemoryStream
) -> AsyncIterator[None]:
    """Run `serve()` in the background while the block runs. Leaving the block closes
    `our_end` (the peer reads EOF), waits `SHUTDOWN_WAIT` seconds for `serve()` to return,
    then cancels it. What fails leaves as itself, not in an ExceptionGroup."""
    served = anyio.Event()

    async def run() -> None:
        try:
            await serve()
        finally:
            served.set()

    with SingleException() as single:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            try:
                with single.callers_code():
                    yield
            finally:
                await our_end.aclose()
                with anyio.move_on_after(SHUTDOWN_WAIT, shield=True):
                    await served.wait()
                tasks.cancel_scope.cancel()
