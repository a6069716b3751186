"""What a request/response exchange costs on pipes (issue 18): a read right after one that
emptied the pipe waits for data instead of failing first, a cancelled read never loses bytes
(on asyncio the loop's fd reader reads for the task), and input arriving lets the next lone
message be written directly."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from acpwire._wire.outbox import Outbox
from acpwire.streams import pipes
from acpwire.streams.pipes import PipeStream

pytestmark = pytest.mark.usefixtures("loop")  # each test runs on trio and on asyncio


def pipe_pair() -> tuple[PipeStream, PipeStream]:
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    return PipeStream(a_write, a_read), PipeStream(b_write, b_read)


class CountingOs(SimpleNamespace):
    """`os` for the pipes module, counting the reads that found nothing."""

    def __init__(self) -> None:
        names = (name for name in dir(os) if not name.startswith("__") and name != "read")
        super().__init__(**{name: getattr(os, name) for name in names})
        self.failed_reads = 0

    def read(self, fd: int, size: int) -> bytes:
        try:
            return os.read(fd, size)
        except BlockingIOError:
            self.failed_reads += 1
            raise


async def test_a_read_after_one_that_emptied_the_pipe_waits_for_data_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting = CountingOs()
    monkeypatch.setattr(pipes, "os", counting)
    a, b = pipe_pair()
    for _ in range(5):
        await a.send_all(b"request\n")
        assert await b.receive_some() == b"request\n"  # less than asked: the pipe is empty
        async with anyio.create_task_group() as nursery:

            async def answer_later() -> None:
                await anyio.sleep(0.01)
                await b.send_all(b"answer\n")

            nursery.start_soon(answer_later)
            assert await a.receive_some() == b"answer\n"
    assert counting.failed_reads <= 1, counting.failed_reads  # `a`'s first read only
    await a.aclose()
    await b.aclose()


async def test_a_full_read_is_followed_by_a_read_without_waiting() -> None:
    a, b = pipe_pair()
    await a.send_all(b"x" * 10)
    assert await b.receive_some(4) == b"xxxx"  # as much as asked: more may be there
    assert await b.receive_some(4) == b"xxxx"
    assert await b.receive_some(4) == b"xx"
    await a.aclose()
    await b.aclose()


async def read_into(stream: PipeStream, got: list[bytes], task_status: Any) -> None:
    task_status.started()
    got.append(await stream.receive_some(100))


async def test_a_cancelled_read_never_loses_bytes() -> None:
    for passes in range(6):  # cancel the reading task after 0..5 scheduler passes
        read_end, write_end = os.pipe()
        stream = PipeStream(receive_fd=read_end)
        os.write(write_end, b"x")
        assert await stream.receive_some(100) == b"x"  # it emptied the pipe: the next waits
        got: list[bytes] = []
        async with anyio.create_task_group() as nursery:
            await nursery.start(read_into, stream, got)
            os.write(write_end, b"data")
            for _ in range(passes):
                await anyio.sleep(0)
            nursery.cancel_scope.cancel()
        with anyio.fail_after(2):
            rest = b"" if got else await stream.receive_some(100)
        assert [*got, rest] in ([b"data", b""], [b"data"]), (passes, got, rest)
        await stream.aclose()
        os.close(write_end)


def test_bytes_the_asyncio_loop_read_for_a_task_cancelled_before_it_took_them_are_kept() -> None:
    """asyncio's own `Task.cancel()` (anyio waits for such a task to take its result first):
    the loop's callback has read the bytes, the task is cancelled before it resumes."""

    async def scenario() -> None:
        read_end, write_end = os.pipe()
        stream = PipeStream(receive_fd=read_end)
        os.write(write_end, b"x")
        assert await stream.receive_some(100) == b"x"  # it emptied the pipe: the next waits
        waiting = asyncio.create_task(stream.receive_some(100))
        await asyncio.sleep(0)  # it waits, for the loop's reader
        reader: Any = stream._reader
        os.write(write_end, b"data")
        while reader.waiter is not None:  # until the loop's callback read the bytes
            await asyncio.sleep(0)
        waiting.cancel()  # before the task resumed to take them
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert await asyncio.wait_for(stream.receive_some(100), 2) == b"data"
        await stream.aclose()
        os.close(write_end)

    asyncio.run(scenario())


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
