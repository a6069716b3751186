"""OS pipes as one byte stream on either loop, without a scheduler pass per read and write.

A write is tried first and waits (`wait_writable` of the running loop) only when the pipe is
full. A read is tried first too, except right after a read that emptied the pipe (it returned
less than asked): then it waits for data first (on asyncio the loop's `fd_reader` reads it;
on trio the task waits with `wait_readable`, then reads), since a read would find nothing,
as after each message of a request/response exchange. On each side of a round trip that
saves two passes through the scheduler and a failed read. A reader that keeps finding data
still yields once every `BURST_READS` reads, so it can't starve other tasks. Closing an end
wakes a task waiting on it with the loop's `ClosedResourceError`; writing to a pipe nobody
reads raises its `BrokenResourceError`.
"""

from __future__ import annotations

import fcntl
import os
import stat

from .._loop import FdReader, Loop, current_loop

BURST_READS = 4
"""Reads in a row that found data at once, after which a read yields to the scheduler."""

READ_SIZE = 64 * 1024
PIPE_BYTES = 1024 * 1024
CLOSED = -1


class PipeStream:
    """A pair of pipe ends: we write to `send_fd` and read from `receive_fd` (either may be
    absent: CLOSED). The stream owns both: they are made non-blocking and closed by it."""

    def __init__(self, send_fd: int = CLOSED, receive_fd: int = CLOSED) -> None:
        for fd in (send_fd, receive_fd):
            if fd != CLOSED:
                os.set_blocking(fd, False)
        self.send_fd = send_fd
        """The pipe end we write to (CLOSED once closed)."""
        self.receive_fd = receive_fd
        """The pipe end we read from (CLOSED once closed)."""
        self._burst = 0
        self._loop: Loop | None = None  # the loop of the first use
        self._reader: FdReader | None = None  # made on the first wait to read
        # a pipe (not a file) that the last read emptied: wait before reading again
        self._pipe = receive_fd != CLOSED and stat.S_ISFIFO(os.fstat(receive_fd).st_mode)
        self._drained = False

    @property
    def _running_loop(self) -> Loop:
        if self._loop is None:
            self._loop = current_loop()
        return self._loop

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Write all of `data`, waiting while the pipe is full."""
        loop = self._running_loop
        await loop.checkpoint_if_cancelled()
        view = memoryview(data)
        while view:
            if self.send_fd == CLOSED:
                raise loop.ClosedResourceError("the pipe was closed")
            try:
                sent = os.write(self.send_fd, view)
            except BlockingIOError:
                await loop.wait_writable(self.send_fd)  # raises if the end is closed meanwhile
                continue
            except OSError as exc:  # EPIPE: nobody reads any more
                raise loop.BrokenResourceError(f"cannot write to the pipe: {exc}") from exc
            view = view[sent:]

    def try_send(self, parts: list[bytes]) -> int:
        """Write what the pipe takes now, without waiting: the bytes written (0 when it is
        full, closed or broken: a later `send_all` then waits, or raises the loop's error)."""
        try:
            return os.writev(self.send_fd, parts)
        except OSError:
            return 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """The next bytes read (at most `max_bytes`), waiting for some; `b""` at EOF."""
        loop = self._loop or self._running_loop
        size = max_bytes or READ_SIZE
        if not self._drained:  # try a read first
            if self._burst >= BURST_READS:
                self._burst = 0
                await loop.checkpoint()
            else:
                await loop.checkpoint_if_cancelled()
            if self.receive_fd == CLOSED:
                raise loop.ClosedResourceError("the pipe was closed")
            try:
                data = os.read(self.receive_fd, size)
            except BlockingIOError:
                pass  # wait below
            except OSError as exc:
                raise loop.BrokenResourceError(f"cannot read from the pipe: {exc}") from exc
            else:
                self._burst += 1
                self._drained = self._pipe and 0 < len(data) < size
                return data
        # Wait until there is data (waiting is the checkpoint), in this coroutine: one frame
        # less to pass through on every wake-up.
        self._burst = 0
        try:
            if loop.fd_reader is not None:  # the loop's reader reads (asyncio: its callback)
                reader = self._reader or self._new_reader(loop)
                reading = reader.read(size)
                try:
                    data = await reading  # raises if closed meanwhile
                except BaseException:
                    reader.abandon(reading)  # what it read for us, the next read gives
                    raise
            else:  # wait for data, then read it here (trio): no coroutine of a reader's
                while True:
                    if self.receive_fd == CLOSED:
                        raise loop.ClosedResourceError("the pipe was closed")
                    await loop.wait_readable(self.receive_fd)  # raises if closed meanwhile
                    try:
                        data = os.read(self.receive_fd, size)
                        break
                    except BlockingIOError:  # another reader of the pipe came first
                        continue
        except OSError as exc:
            raise loop.BrokenResourceError(f"cannot read from the pipe: {exc}") from exc
        self._drained = self._pipe and 0 < len(data) < size
        return data

    def _new_reader(self, loop: Loop) -> FdReader:
        """The reader of `receive_fd`, made on the first wait (ClosedResourceError once the
        end is closed: `close_receive` drops the reader)."""
        if self.receive_fd == CLOSED:
            raise loop.ClosedResourceError("the pipe was closed")
        assert loop.fd_reader is not None  # (asked only then)
        self._reader = loop.fd_reader(self.receive_fd)
        return self._reader

    async def send_eof(self) -> None:
        """Close the end we write to (`close_send`)."""
        self.close_send()

    def close_send(self) -> None:
        """Close the end we write to (the reader at the other end sees EOF)."""
        fd, self.send_fd = self.send_fd, CLOSED
        self._close(fd)

    def close_receive(self) -> None:
        """Close the end we read from (a task waiting to read is woken with an error)."""
        fd, self.receive_fd = self.receive_fd, CLOSED
        if self._reader is not None:
            self._reader.close()
            self._reader = None
            os.close(fd)
        else:
            self._close(fd)

    def _close(self, fd: int) -> None:
        if fd == CLOSED:
            return
        if self._loop is not None:  # a task of that loop may be waiting on it
            self._loop.notify_closing(fd)
        os.close(fd)

    async def aclose(self) -> None:
        """Close both ends."""
        self.close_send()
        self.close_receive()


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
