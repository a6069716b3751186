"""`acpwire trace` records each chunk before it forwards it, so a peer's answer can never
come before what it answers in the trace (the forwarding threads race otherwise: the answer's
thread could queue it while the question's thread was between its write and its record)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from acpwire.cli.trace import forward


class Chunks:
    """What `forward` hands a recorder, kept."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.writing = {b"client": False, b"agent": False}

    def chunk(self, seconds: float, side: bytes, data: bytes) -> None:
        self.chunks.append(data)

    def eof(self, seconds: float, side: bytes, broken: bool) -> None:
        pass


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_chunk_is_recorded_before_its_bytes_reach_the_peer() -> None:
    source_read, source_write = os.pipe()
    sink_read, sink_write = os.pipe()
    chunks = Chunks()
    tap = threading.Thread(
        target=forward,
        args=(source_read, sink_write, b"client", chunks, time.monotonic()),
        daemon=True,
    )
    tap.start()
    os.write(source_write, b'{"id":1}\n')
    wait_for(lambda: len(chunks.chunks) == 1)
    # nobody reads the sink: were the recording after the write, a full pipe would hold it
    filler = b"x" * (1 << 20)
    feeder = threading.Thread(target=os.write, args=(source_write, filler), daemon=True)
    feeder.start()
    wait_for(lambda: len(chunks.chunks) >= 2)
    assert chunks.chunks[0] == b'{"id":1}\n'
    assert len(chunks.chunks) >= 2, "the chunk being written is not recorded yet"
    os.close(source_write)
    while os.read(sink_read, 1 << 16):  # let it finish
        pass
    tap.join(10)
    os.close(sink_read)
