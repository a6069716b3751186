"""Pipes as one trio stream, without a scheduler pass per read and per write.

trio's FdStream starts every `receive_some` and `send_all` with a full checkpoint, a pass
through the scheduler even when the pipe is ready: on each side of a request/response round
trip that is two passes more than needed. `PipeStream` tries the read or write first and
waits only when the pipe is not ready. A reader that keeps finding data still yields once
every `BURST_READS` reads, so it can't starve other tasks; anything unusual (a closed or
broken pipe) takes FdStream's own path, so the errors are trio's.
"""

from __future__ import annotations

import fcntl
import os

import trio
from trio.lowlevel import FdStream

BURST_READS = 4
"""Reads in a row that found data at once, after which a read yields to the scheduler."""

READ_SIZE = 64 * 1024
PIPE_BYTES = 1024 * 1024


class PipeStream(trio.abc.HalfCloseableStream):
    """A pair of pipe ends: we write to `send_stream` and read from `receive_stream`."""

    def __init__(self, send_stream: FdStream, receive_stream: FdStream) -> None:
        self.send_stream = send_stream
        self.receive_stream = receive_stream
        self._burst = 0

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            sent = os.write(self.send_stream.fileno(), data)  # fileno() is -1 once closed
        except BlockingIOError:
            sent = 0
        except OSError:  # closed or broken: FdStream raises the right trio error
            return await self.send_stream.send_all(data)
        if sent < len(data):  # the pipe is full: FdStream waits and writes the rest
            await self.send_stream.send_all(memoryview(data)[sent:])

    def try_send(self, parts: list[bytes]) -> int:
        """Write what the pipe takes now, without waiting: the bytes written (0 when it is
        full, closed or broken: a later `send_all` then waits, or raises trio's error)."""
        try:
            return os.writev(self.send_stream.fileno(), parts)
        except OSError:
            return 0

    async def wait_send_all_might_not_block(self) -> None:
        await self.send_stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.send_stream.aclose()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._burst >= BURST_READS or (max_bytes is not None and max_bytes < 1):
            self._burst = 0
            return await self.receive_stream.receive_some(max_bytes)  # a checkpoint first
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            fd = self.receive_stream.fileno()
            try:
                data = os.read(fd, max_bytes or READ_SIZE)
            except BlockingIOError:
                self._burst = 0
                await trio.lowlevel.wait_readable(fd)  # raises if the pipe is closed meanwhile
                continue
            except OSError:  # closed or broken: FdStream raises the right trio error
                return await self.receive_stream.receive_some(max_bytes)
            self._burst += 1
            return data

    async def aclose(self) -> None:
        try:
            await self.send_stream.aclose()
        finally:
            await self.receive_stream.aclose()


def widen_pipe(fd: int) -> None:
    """Let a pipe hold more than Linux's default 64 KiB: a streaming writer then writes, and
    its reader reads, in fewer, larger pieces (fewer wake-ups on both sides)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, PIPE_BYTES)
    except OSError:
        pass  # not a pipe, or over the system's limit (/proc/sys/fs/pipe-max-size)
