"""PipeStream (reads and writes without a scheduler pass when the pipe is ready) and the
outbox's direct write of a lone message."""

from __future__ import annotations

import os

import anyio
import pytest

from acpwire._loop import current_loop
from acpwire._wire.outbox import Outbox
from acpwire.errors import ConnectionClosed
from acpwire.streams.pipes import BURST_READS, PipeStream

pytestmark = pytest.mark.usefixtures("loop")  # each test runs on trio and on asyncio


def pipe_pair() -> tuple[PipeStream, PipeStream]:
    """Two PipeStreams connected both ways through OS pipes."""
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    a = PipeStream(a_write, a_read)
    b = PipeStream(b_write, b_read)
    return a, b


async def receive_exactly(stream: PipeStream, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = await stream.receive_some()
        assert chunk, "unexpected end of stream"
        data += chunk
    return data


async def test_bytes_go_both_ways_and_eof_is_seen() -> None:
    a, b = pipe_pair()
    await a.send_all(b"ping\n")
    assert await receive_exactly(b, 5) == b"ping\n"
    await b.send_all(b"pong\n")
    assert await receive_exactly(a, 5) == b"pong\n"
    await a.send_eof()
    assert await b.receive_some() == b""
    await a.aclose()
    await b.aclose()


async def test_a_write_larger_than_the_pipe_waits_for_the_reader() -> None:
    a, b = pipe_pair()
    payload = os.urandom(3 * 1024 * 1024)  # far over the pipe's capacity
    received = b""
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(a.send_all, payload)
        received = await receive_exactly(b, len(payload))
    assert received == payload


async def test_closed_and_broken_pipes_raise_the_loops_errors() -> None:
    loop = current_loop()
    a, b = pipe_pair()
    await a.aclose()
    with pytest.raises(loop.ClosedResourceError):
        await a.send_all(b"x")
    with pytest.raises(loop.ClosedResourceError):
        await a.receive_some()
    with pytest.raises(loop.BrokenResourceError):  # b's reader is gone (a closed it)
        await b.send_all(b"x" * 100_000)
    await b.aclose()


async def test_closing_wakes_a_waiting_reader() -> None:
    a, b = pipe_pair()
    woken = False

    async def read() -> None:
        nonlocal woken
        with pytest.raises(current_loop().ClosedResourceError):
            await b.receive_some()
        woken = True

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(read)
        await anyio.wait_all_tasks_blocked()  # b waits for data
        b.close_receive()
    assert woken
    await a.aclose()
    await b.aclose()


async def test_a_reader_that_keeps_finding_data_still_lets_others_run() -> None:
    a, b = pipe_pair()
    await a.send_all(b"x" * 1000)
    others_ran = 0

    async def other() -> None:
        nonlocal others_ran
        while True:
            others_ran += 1
            await anyio.sleep(0)

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(other)
        await anyio.sleep(0)  # let it start
        before = others_ran
        for _ in range(10 * BURST_READS):
            assert await b.receive_some(1) == b"x"  # data is always there: no wait
        # A scheduler pass every BURST_READS reads (9 here); trio shuffles the order of tasks
        # within a pass, so the last ones may not show yet. Never yielding would give <= 1.
        assert others_ran - before >= 5
        nursery.cancel_scope.cancel()
    await a.aclose()
    await b.aclose()


async def test_a_lone_message_is_written_at_once_and_a_burst_in_one_piece() -> None:
    a, b = pipe_pair()
    outbox = Outbox(a)
    outbox.put_nowait(b"first")  # no writer task running: written directly
    assert os.read(b.receive_fd, 100) == b"first\n"
    outbox.put_nowait(b"second")  # until the writer has run, the rest is queued
    outbox.put_nowait(b"third")
    with pytest.raises(BlockingIOError):
        os.read(b.receive_fd, 100)
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(outbox.run)
        assert await receive_exactly(b, 13) == b"second\nthird\n"
        outbox.put_nowait(b"fourth")  # the writer ran: direct again
        assert os.read(b.receive_fd, 100) == b"fourth\n"
        nursery.cancel_scope.cancel()
    await a.aclose()
    await b.aclose()


async def test_what_a_full_pipe_does_not_take_is_written_later_in_order() -> None:
    a, b = pipe_pair()
    outbox = Outbox(a)
    big = b"a" * (3 * 1024 * 1024)  # more than the pipe holds: written in part
    outbox.put_nowait(big)
    outbox.put_nowait(b"after")
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(outbox.run)
        received = await receive_exactly(b, len(big) + 7)
        nursery.cancel_scope.cancel()
    assert received == big + b"\nafter\n"
    await a.aclose()
    await b.aclose()


async def test_a_direct_write_to_a_broken_pipe_fails_the_outbox() -> None:
    a, b = pipe_pair()
    failures: list[ConnectionClosed] = []
    outbox = Outbox(a, on_failure=failures.append)
    await b.aclose()  # nobody reads any more
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(outbox.run)
        outbox.put_nowait(b"lost")  # not written: left to the writer, which reports it
        await anyio.wait_all_tasks_blocked()
    assert len(failures) == 1
    with pytest.raises(ConnectionClosed):
        outbox.put_nowait(b"more")
    await a.aclose()
