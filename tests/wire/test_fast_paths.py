"""The runtime's fast paths (issue 18) keep the slow paths' behaviour where the fast one
does not apply: an answer computed on the reader waits for room in a full outbox; a line
without a `"method"` key skips the one-pass call decoder, and one that has it in a result
or escaped, or a call written in another key order, still decodes right; a call's
single-waiter event behaves as an Event."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import anyio
import msgspec
import pytest
from anyio.lowlevel import checkpoint

import acp_schema.v2 as v2
from acpwire._loop import current_loop
from acpwire._wire.framing import LineReader
from acpwire._wire.jsonrpc import Answer, Call, JsonRpcCore
from acpwire.errors import PeerError
from helpers.connection import serving
from helpers.loops import wait_all_tasks_blocked
from helpers.raw import error_response, request, response

pytestmark = pytest.mark.usefixtures("loop")

BOUND = 4096


async def test_answers_made_on_the_reader_wait_for_room_in_a_full_outbox() -> None:
    text = "a" * 1000
    burst = 200  # about 200 KB of answers, fifty times the outbox's bound
    async with serving(max_buffered_bytes=BOUND) as s:
        await s.peer.send(
            b"".join(msgspec.json.encode(request(i, "_echo", text)) + b"\n" for i in range(burst))
        )
        await wait_all_tasks_blocked()
        # the reader waits for room instead of queueing every answer
        assert s.connection._outbox._queued <= BOUND + 1100
        answers = [await s.peer.receive() for _ in range(burst)]
        await s.peer.expect_silence()
    assert answers == [response(i, text) for i in range(burst)]  # in order, once each


def client_core() -> JsonRpcCore:
    return JsonRpcCore(v2.CLIENT_CODEC)


@pytest.mark.parametrize(
    "result",
    [{"sessionId": "s1"}, {"sessionId": "s1", "_meta": {"method": "session/new", "x": 1}}],
    ids=["plain", "a result mentioning method"],
)
def test_an_answer_decodes_typed_with_or_without_method_in_its_result(result: Any) -> None:
    core = client_core()
    request_id, _ = core.request(v2.SESSION_NEW, v2.NewSessionRequest(cwd="/"))
    (answer,) = core.receive_line(msgspec.json.encode(response(request_id, result)))
    assert isinstance(answer, Answer) and answer.error is None
    assert answer.result.session_id == "s1"
    assert isinstance(answer.result, v2.NewSessionResponse)


def test_a_call_whose_method_key_is_escaped_still_decodes_typed() -> None:
    core = JsonRpcCore(v2.AGENT_CODEC)
    line = b'{"jsonrpc":"2.0","id":3,"\\u006dethod":"session/new","params":{"cwd":"/"}}'
    (call,) = core.receive_line(line)
    assert isinstance(call, Call) and call.id == 3 and call.method == "session/new"
    assert call.params == v2.NewSessionRequest(cwd="/")


def test_a_line_with_leading_whitespace_is_still_read() -> None:
    core = JsonRpcCore(v2.AGENT_CODEC)
    (call,) = core.receive_line(
        b'  {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}'
    )
    assert isinstance(call, Call) and call.params == v2.NewSessionRequest(cwd="/")


@pytest.mark.parametrize(
    "line",
    [
        b'{"method":"session/update","jsonrpc":"2.0","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text",'
        b'"text":"hi"}}}}',
        b'{ "jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", '
        b'"update": {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": '
        b'{"type": "text", "text": "hi"}}}}',
    ],
    ids=["method first", "spaces"],
)
def test_a_notification_not_written_as_acpwire_writes_it_still_takes_the_one_pass_decoder(
    line: bytes,
) -> None:
    core = client_core()
    fast = core._decode_fast
    decoded: list[bytes] = []

    def counting(data: bytes) -> Any:
        decoded.append(data)
        return fast(data)

    core._decode_fast = counting
    (call,) = core.receive_line(line)
    assert decoded == [line]  # found by searching for "method", not by its head
    assert isinstance(call, Call) and call.spec is not None and call.id is msgspec.UNSET
    assert isinstance(call.params, v2.UpdateSessionNotification)
    assert call.params.update == v2.AgentMessageChunk(
        message_id="m", content=v2.TextContent(text="hi")
    )


async def test_a_single_waiter_event_set_first_is_waited_for_at_once() -> None:
    event = current_loop().SingleWaiterEvent()
    assert not event.is_set()
    event.set()
    assert event.is_set()
    with anyio.fail_after(1):
        await event.wait()


async def test_a_single_waiter_event_wakes_its_waiter_and_refuses_a_second() -> None:
    event = current_loop().SingleWaiterEvent()
    woken: list[str] = []

    async def waiter(name: str) -> None:
        await event.wait()
        woken.append(name)

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(waiter, "first")
        await wait_all_tasks_blocked()
        if current_loop().name == "asyncio":  # trio's Event takes any number of waiters
            with pytest.raises(RuntimeError, match="already waiting"):
                await event.wait()
        event.set()
    assert woken == ["first"]


async def test_a_single_waiter_event_can_be_waited_for_again_after_a_cancelled_wait() -> None:
    event = current_loop().SingleWaiterEvent()
    with anyio.move_on_after(0.01) as scope:
        await event.wait()
    assert scope.cancelled_caught
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(event.wait)
        await checkpoint()
        event.set()


@pytest.mark.parametrize(
    "data",
    [b'{"a":1}\n', b'{"a":1}\r\n', b"x\n", b" \n", b"\t{}\n", b"\n", b'{"a":1}', b"\xff\n"],
)
@pytest.mark.parametrize("read", ["feed", "feed_block"])
def test_a_read_of_one_whole_line_is_split_as_any_read_is(data: bytes, read: str) -> None:
    whole, byte_by_byte = LineReader(max_line_bytes=7), LineReader(max_line_bytes=7)
    split = [line for i in range(len(data)) for line in byte_by_byte.feed(data[i : i + 1])]
    assert getattr(whole, read)(data) == split
    assert whole.eof() == byte_by_byte.eof()


@pytest.mark.parametrize("read", ["feed", "feed_block"])
def test_a_whole_line_after_a_held_part_joins_it(read: str) -> None:
    reader = LineReader()
    assert getattr(reader, read)(b'{"a":') == []
    assert getattr(reader, read)(b"1}\n") == [b'{"a":1}']


async def test_a_call_answered_with_an_error_leaves_nothing_behind() -> None:
    async with serving() as s:
        call = s.connection.request_method("_ping", None)
        async with anyio.create_task_group() as nursery:
            errors: list[weakref.ref[PeerError]] = []

            async def caller() -> None:
                try:
                    await call
                except PeerError as exc:
                    errors.append(weakref.ref(exc))

            nursery.start_soon(caller)
            sent = await s.peer.receive()
            await s.peer.send(error_response(sent["id"], -32000, "no"))
    gc.collect()
    assert len(errors) == 1 and errors[0]() is None  # the answer, its error and traceback
