"""The `Loop` of trio: trio's own primitives (imported only by a trio program)."""

from __future__ import annotations

import trio

from . import Loop


class _TrioReadableFd:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def wait(self) -> None:
        await trio.lowlevel.wait_readable(self.fd)

    def close(self) -> None:
        trio.lowlevel.notify_closing(self.fd)


def trio_loop() -> Loop:
    return Loop(
        name="trio",
        Event=trio.Event,
        SingleWaiterEvent=trio.Event,  # as cheap as it gets: a set of waiters and a flag
        CancelScope=trio.CancelScope,
        open_nursery=trio.open_nursery,
        move_on_after=trio.move_on_after,
        sleep=trio.sleep,
        checkpoint=trio.lowlevel.checkpoint,
        checkpoint_if_cancelled=trio.lowlevel.checkpoint_if_cancelled,
        current_effective_deadline=trio.current_effective_deadline,
        readable_fd=_TrioReadableFd,
        fd_reader=None,  # a pipe is read by its task: `wait_readable`, then `os.read`
        wait_readable=trio.lowlevel.wait_readable,
        wait_writable=trio.lowlevel.wait_writable,
        notify_closing=trio.lowlevel.notify_closing,
        current_task=trio.lowlevel.current_task,
        Cancelled=trio.Cancelled,
        BrokenResourceError=trio.BrokenResourceError,
        ClosedResourceError=trio.ClosedResourceError,
    )
