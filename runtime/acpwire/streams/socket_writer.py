"""Writing WebSocket frames to the socket under an httpcore network stream without a pass of
the event loop when the socket takes them at once (it nearly always does: a frame is small and
the kernel's send buffer mostly empty).

The network stream's own `write` (anyio's or trio's socket stream) is a checkpoint: the task
that writes is rescheduled before it goes on, one pass of the loop per frame sent. Here a plain
TCP socket is written with one non-blocking `os.write` on its file descriptor (trio and asyncio
both keep it non-blocking); only what it does not take is awaited (the socket becoming
writable). Over TLS, or where the socket is not reachable, every frame goes through the
stream's `write`, awaited.
"""

from __future__ import annotations

import os

import anyio
import httpcore


class SocketWriter:
    """The one writer of a network stream's frames, in order (`send`, `try_send`,
    `send_or_queue`)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        sock = stream.get_extra_info("socket")
        plain = stream.get_extra_info("ssl_object") is None and os.name == "posix"
        self._fd = sock.fileno() if plain and sock is not None else -1
        """The socket's descriptor, written directly; -1: through the stream's `write`."""
        self._lock = anyio.Lock()  # held while a frame is written in more than one go
        self._queued: list[bytes] = []  # frames `send_or_queue` left to the writer busy
        self._owed = b""  # the rest of a frame `try_send` began
        self._broken: str | None = None

    @property
    def direct(self) -> bool:
        """Whether frames go straight to the socket (a plain TCP socket, reachable)."""
        return self._fd >= 0

    @property
    def owed(self) -> bool:
        """Whether the rest of a frame `try_send` began waits for the next `send`."""
        return bool(self._owed)

    def try_send(self, data: bytes) -> bool:
        """Write `data` now, without waiting, if nothing is being written: True when it is
        committed (written whole, or its rest `owed`: written first by the next `send`);
        False when nothing was written (a write is in progress, the socket is full, not
        direct or broken: the caller sends it with `send`, which waits or raises)."""
        if self._lock.locked() or self._owed or self._fd < 0:
            return False
        try:
            written = self._write_now(data)
        except httpcore.WriteError:
            return False
        if written and written < len(data):
            self._owed = data[written:]
        return written > 0

    async def send(self, data: bytes) -> None:
        """Write `data` whole (b"": only what is owed), after what is being written; with no
        checkpoint when the socket takes it at once. Raises `httpcore.WriteError` when the
        socket is broken."""
        if self._owed:
            data, self._owed = self._owed + data, b""
            async with self._lock:
                await self._write_rest(data, begun=True)
                while self._queued:
                    await self._write_rest(self._queued.pop(0), begun=False)
            return
        if not data:
            return
        if not self._lock.locked():
            written = self._write_now(data)
            if written == len(data):
                return
            data = data[written:]  # the rest, before any other frame: under the lock
            begun = written > 0
        else:
            begun = False
        async with self._lock:
            await self._write_rest(data, begun)
            while self._queued:
                await self._write_rest(self._queued.pop(0), begun=False)

    async def send_or_queue(self, frame: bytes) -> None:
        """Send a control frame (a pong, a ping) without waiting behind a frame being written:
        while one is, `frame` is queued and that frame's writer sends it next. (The reader
        answers pings this way: it never waits for the socket to take what the connection
        writes, which may wait for the server to read, which may wait for the reader.)"""
        if self._lock.locked():
            self._queued.append(frame)
        else:
            await self.send(frame)

    def close(self) -> None:
        """The socket is being closed: every write from now on is a `httpcore.WriteError`
        (its descriptor number may soon be another file's)."""
        self._fd = -1
        if self._broken is None:
            self._broken = "the socket was closed"

    def _write_now(self, data: bytes) -> int:
        """The bytes of `data` the socket took without waiting (0 when not direct)."""
        if self._broken is not None:
            raise httpcore.WriteError(self._broken)
        if self._fd < 0:
            return 0
        try:
            return os.write(self._fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            self._broken = f"the socket is broken ({exc!r})"
            raise httpcore.WriteError(self._broken) from exc

    async def _write_rest(self, data: bytes, begun: bool) -> None:
        """Write `data` whole, waiting for the socket as needed (under the lock); `begun`: the
        frame's first bytes were written (cancelled now, it would be cut short)."""
        size = len(data)
        try:
            while data and self._fd >= 0:
                try:
                    await anyio.wait_writable(self._fd)
                except (anyio.BusyResourceError, RuntimeError, NotImplementedError):
                    # the loop will not watch a descriptor its transport owns (uvloop):
                    # from now on every frame goes through the stream (its buffer keeps
                    # their order; a direct write would pass what it holds)
                    self._fd = -1
                    break
                data = data[self._write_now(data) :]
            if data:
                await self._stream.write(data)
        except anyio.get_cancelled_exc_class():
            if begun or len(data) < size:
                self._broken = "a frame was cut short (its writer was cancelled)"
            raise
        except (OSError, anyio.ClosedResourceError) as exc:
            self._broken = f"the socket is broken ({exc!r})"
            raise httpcore.WriteError(self._broken) from exc
