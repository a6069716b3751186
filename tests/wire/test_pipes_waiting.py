"""What a request/response exchange costs on pipes (issue 18): input arriving lets the next
lone message be written directly."""

from __future__ import annotations

import os

import pytest

from acpwire._wire.outbox import Outbox
from acpwire.streams.pipes import PipeStream

pytestmark = pytest.mark.usefixtures("loop")  # each test runs on trio and on asyncio


def pipe_pair() -> tuple[PipeStream, PipeStream]:
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    return PipeStream(a_write, a_read), PipeStream(b_write, b_read)


async def test_input_arriving_lets_the_next_lone_message_be_written_directly() -> None:
    a, b = pipe_pair()
    outbox = Outbox(a)  # no writer task: only direct writes reach the pipe
    outbox.put_nowait(b"answer 1")
    assert os.read(b.receive_fd, 100) == b"answer 1\n"
    outbox.input_arrived()  # the next request was read
    outbox.put_nowait(b"answer 2")
    assert os.read(b.receive_fd, 100) == b"answer 2\n"
    outbox.put_nowait(b"burst")  # no input in between: queued for the writer task
    with pytest.raises(BlockingIOError):
        os.read(b.receive_fd, 100)
    await a.aclose()
    await b.aclose()
