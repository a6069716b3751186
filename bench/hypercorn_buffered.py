"""Hypercorn's trio worker with a buffered TCP writer: the measurement of a change proposed to
Hypercorn (issue 19), applied only inside a bench process. acpwire does not ship it.

    python bench/hypercorn_buffered.py -m MODULE [ARG...]   # MODULE as __main__, patched
    python bench/hypercorn_buffered.py -m acpwire.fixtures.echo_agent --loop trio --serve 127.0.0.1:0

Hypercorn 0.18's trio worker writes every piece of output (a WebSocket frame, an HTTP body
chunk) in `TCPServer.protocol_send` (hypercorn/trio/tcp_server.py) under a `trio.Lock` and
with `send_all` in a shielded cancel scope: the lock's acquire is a checkpoint and so is
`send_all` (trio's socket send ends in `cancel_shielded_checkpoint`), two trips through trio's
scheduler per `websocket.send` (bench/trio_passes.py). A bare ASGI app's server executes
230k instructions per frame on trio, 71k on asyncio, 63k with this writer
(bench/server_instructions.py). Its asyncio worker writes to the transport and awaits `drain()`, which returns at once while less
than the transport's high-water mark (64 KiB) is unsent.

`BufferedTCPServer` does on trio what asyncio does: `protocol_send` appends the bytes to the
connection's buffer and returns without a checkpoint while less than `HIGH_WATER` bytes are
unsent (past that it waits until the writer has taken the buffer below it again: the same
backpressure); one writer task per connection sends whatever has gathered with one `send_all`,
so frames written while it was sending go out together. The connection is closed (`_close`)
only after what was buffered has been sent. `install()` makes Hypercorn's trio `serve` use it;
bench/remote.py and bench/remote_floor.py run it as the server `hypercorn-buffered`.
"""

from __future__ import annotations

import runpy
import sys
from typing import Any

import trio
from hypercorn.events import Closed, Event, RawData
from hypercorn.trio import run as trio_run
from hypercorn.trio.tcp_server import TCPServer

HIGH_WATER = 64 * 1024
"""Unsent bytes past which `protocol_send` waits (asyncio's default high-water mark)."""


class BufferedTCPServer(TCPServer):
    """Hypercorn's trio connection, its output written by a task of its own from a buffer."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._unsent = bytearray()
        self._gathered = trio.lowlevel.ParkingLot()  # the writer, waiting for bytes
        self._taken = trio.lowlevel.ParkingLot()  # senders waiting for the buffer to shrink
        self._broken = False  # the socket failed: bytes written from now on are dropped

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write)
            try:
                await super().run()  # ends with `_close`, which sends the rest first
            finally:
                nursery.cancel_scope.cancel()

    async def protocol_send(self, event: Event) -> None:
        if not isinstance(event, RawData):
            await super().protocol_send(event)  # Closed (through `_close`), Updated
            return
        if self._broken:
            return
        self._unsent += event.data
        if self._gathered:  # the writer waits: unpark_all costs ~6k instructions even if not
            self._gathered.unpark_all()
        while len(self._unsent) >= HIGH_WATER and not self._broken:
            await self._taken.park()

    async def _write(self) -> None:
        """Send the buffer as it fills, until the socket fails or the connection ends."""
        while True:
            while not self._unsent:
                await self._gathered.park()
            taken = bytes(self._unsent)  # a copy: the buffer grows while `send_all` waits
            try:
                await self.stream.send_all(taken)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._broken = True
                self._unsent.clear()
                self._taken.unpark_all()
                await self.protocol.handle(Closed())
                return
            del self._unsent[: len(taken)]
            if self._taken:
                self._taken.unpark_all()

    async def _flush(self) -> None:
        """Wait until the writer has sent the whole buffer (or the socket failed)."""
        while self._unsent and not self._broken:
            await self._taken.park()

    async def _close(self) -> None:
        await self._flush()
        await super()._close()


def install() -> None:
    """Make Hypercorn's trio `serve` (`hypercorn.trio.serve`, `serve_remote` on trio) build its
    connections as `BufferedTCPServer`s, in this process."""
    trio_run.TCPServer = BufferedTCPServer  # type: ignore[misc]


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] != "-m":
        raise SystemExit(__doc__.split("\n\n")[1])
    install()
    module, sys.argv = sys.argv[2], sys.argv[2:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
