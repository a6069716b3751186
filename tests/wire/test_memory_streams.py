"""acpwire.testing.memory_stream_pair: pipe semantics and back-pressure, on every loop."""

from __future__ import annotations

import anyio
import pytest

from acpwire.testing import memory_stream_pair
from helpers.loops import run_async, wait_all_tasks_blocked

pytestmark = pytest.mark.usefixtures("loop")


async def test_bytes_flow_both_ways_in_order() -> None:
    left, right = memory_stream_pair()
    await left.send_all(b"abc")
    await left.send_all(b"def")
    await right.send_all(b"back")
    assert await right.receive_some(4) == b"abcd"
    assert await right.receive_some() == b"ef"
    assert await left.receive_some() == b"back"


@pytest.mark.parametrize("how", ["send_eof", "aclose"])
async def test_eof_comes_after_everything_sent_was_read(how: str) -> None:
    left, right = memory_stream_pair()
    await left.send_all(b"last words")
    await getattr(left, how)()
    assert await right.receive_some() == b"last words"
    assert await right.receive_some() == b""
    assert await right.receive_some() == b""


async def test_a_waiting_receiver_wakes_with_data_then_eof() -> None:
    left, right = memory_stream_pair()
    got: list[bytes] = []
    async with anyio.create_task_group() as tasks:

        async def read() -> None:
            while data := await right.receive_some():
                got.append(data)

        tasks.start_soon(read)
        await wait_all_tasks_blocked()
        await left.send_all(b"x")
        await wait_all_tasks_blocked()
        await left.send_eof()
    assert got == [b"x"]


async def test_sending_after_eof_or_close_is_closed_and_to_a_closed_peer_is_broken() -> None:
    left, right = memory_stream_pair()
    await left.send_eof()
    with pytest.raises(anyio.ClosedResourceError):
        await left.send_all(b"x")
    await right.send_all(b"still open the other way")
    await left.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await left.receive_some()
    with pytest.raises(anyio.BrokenResourceError):
        await right.send_all(b"nobody reads this")


async def test_a_bounded_pipe_makes_the_sender_wait_until_the_reader_catches_up() -> None:
    left, right = memory_stream_pair(max_buffered_bytes=4)
    sent = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def send() -> None:
            await left.send_all(b"0123456789")
            sent.set()

        tasks.start_soon(send)
        await wait_all_tasks_blocked()
        assert not sent.is_set()
        assert await right.receive_some() == b"0123"
        await wait_all_tasks_blocked()
        assert not sent.is_set()
        assert await right.receive_some(3) == b"456"
        await sent.wait()
    assert await right.receive_some() == b"789"


async def test_a_sender_waiting_for_room_fails_when_the_reader_closes() -> None:
    left, right = memory_stream_pair(max_buffered_bytes=2)
    failed: list[BaseException] = []

    async def send() -> None:
        try:
            await left.send_all(b"too much")
        except anyio.BrokenResourceError as exc:
            failed.append(exc)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(send)
        await wait_all_tasks_blocked()
        assert not failed
        await right.aclose()
    assert len(failed) == 1


async def test_one_sender_and_one_receiver_at_a_time() -> None:
    left, _right = memory_stream_pair(max_buffered_bytes=1)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(left.send_all, b"ab")  # waits for room after b"a"
        tasks.start_soon(left.receive_some)  # waits for data
        await wait_all_tasks_blocked()
        with pytest.raises(anyio.BusyResourceError):
            await left.send_all(b"c")
        with pytest.raises(anyio.BusyResourceError):
            await left.receive_some()
        tasks.cancel_scope.cancel()


def test_the_bound_must_be_positive() -> None:
    with pytest.raises(ValueError):
        memory_stream_pair(max_buffered_bytes=0)


async def test_an_end_that_stops_receiving_can_still_send() -> None:
    left, right = memory_stream_pair()
    await left.send_all(b"dropped")
    await right.aclose_receiving()
    with pytest.raises(anyio.ClosedResourceError):
        await right.receive_some()
    with pytest.raises(anyio.BrokenResourceError):
        await left.send_all(b"x")
    await right.send_all(b"still talking")
    assert await left.receive_some() == b"still talking"


def test_a_pair_made_before_the_loop_runs_works_on_it(loop: str) -> None:
    left, right = memory_stream_pair(max_buffered_bytes=2)

    async def exchange() -> bytes:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(left.send_all, b"abcd")
            received = b""
            while len(received) < 4:
                received += await right.receive_some()
        return received

    assert run_async(exchange, loop) == b"abcd"
