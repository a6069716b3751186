"""`ConnectionOptions.on_line`: every line read and written, in order, with its direction, its
bytes as on the wire and a monotonic time; malformed lines included; a hook that raises is
logged once and the connection serves on. On the bare Connection, an agent (`serve_agent`)
and a client (`connect`, `open_agent`)."""

from __future__ import annotations

import logging
import time
from functools import partial

import anyio
import msgspec
import pytest

from acpwire import ConnectionOptions, WireLine
from acpwire.agent import serve_agent
from acpwire.client import connect, open_agent
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV2, new_v2_session, prompt_v2, until_idle
from helpers.commands import ECHO_AGENT
from helpers.connection import serving
from helpers.constants import RAW_INIT_V2
from helpers.loops import until
from helpers.raw import RawPeer, notification, request, response
from helpers.serving import Tap

pytestmark = pytest.mark.usefixtures("loop")


def as_sent(lines: list[WireLine], direction: str) -> bytes:
    """The lines of one direction joined back into the bytes of the stream."""
    return b"".join(line.line + b"\n" for line in lines if line.direction == direction)


async def test_every_line_both_ways_in_order_with_its_bytes_as_on_the_wire() -> None:
    seen: list[WireLine] = []
    start = time.monotonic()
    async with serving(on_line=seen.append) as s:
        # spacing and key order of the peer's own: the hook gets these bytes, not a re-encoding
        echo = b'{ "method" : "_echo", "params": {"b": 2, "a": 1}, "jsonrpc": "2.0", "id": 1 }'
        await s.peer.send(echo)
        echoed = await s.peer.receive_line()
        note = msgspec.json.encode(notification("_note", {"seq": 0}))
        await s.peer.send(note)
        await until(lambda: s.handlers.notes == [0])
        await s.peer.send(request(2, "_ask"))  # the connection asks the peer something back
        asked = await s.peer.receive_line()
        answer = msgspec.json.encode(response(msgspec.json.decode(asked)["id"], {"ok": True}))
        await s.peer.send(answer)
        answered = await s.peer.receive_line()
    assert [(line.direction, line.line) for line in seen] == [
        ("in", echo),
        ("out", echoed),
        ("in", note),
        ("in", msgspec.json.encode(request(2, "_ask"))),
        ("out", asked),
        ("in", answer),
        ("out", answered),
    ]
    times = [line.time for line in seen]
    assert times == sorted(times)
    assert start <= times[0] and times[-1] <= time.monotonic()


async def test_lines_of_one_read_are_all_reported_before_the_replies() -> None:
    seen: list[WireLine] = []
    async with serving(on_line=seen.append) as s:
        first = msgspec.json.encode(request(1, "_echo", "one"))
        second = msgspec.json.encode(request(2, "_echo", "two"))
        await s.peer.stream.send_all(first + b"\n" + second + b"\n")  # one chunk
        replies = [await s.peer.receive_line() for _ in range(2)]
    assert [(line.direction, line.line) for line in seen] == [
        ("in", first),
        ("in", second),
        *(("out", reply) for reply in replies),
    ]
    assert seen[0].time == seen[1].time  # read together


async def test_a_malformed_line_is_reported_as_it_came() -> None:
    seen: list[WireLine] = []
    async with serving(on_line=seen.append) as s:
        await s.peer.send(b"this is not JSON")
        parse_error = await s.peer.receive_line()
        await s.peer.send(b'{"jsonrpc": "2.0", "id": 7}')  # JSON, not a message
        invalid = await s.peer.receive_line()
        assert await s.peer.call(8, "_echo", "still here") == response(8, "still here")
    assert msgspec.json.decode(parse_error)["error"]["code"] == -32700
    assert msgspec.json.decode(invalid)["error"]["code"] == -32600
    assert [(line.direction, line.line) for line in seen][:4] == [
        ("in", b"this is not JSON"),
        ("out", parse_error),
        ("in", b'{"jsonrpc": "2.0", "id": 7}'),
        ("out", invalid),
    ]


async def test_an_unterminated_last_line_is_reported_at_the_end_of_input() -> None:
    seen: list[WireLine] = []
    async with serving(on_line=seen.append) as s:
        last = msgspec.json.encode(notification("_note", {"seq": 3}))
        await s.peer.stream.send_all(last)  # no newline: the input ends first
        await s.peer.stream.send_eof()
        await s.stopped.wait()
    assert [(line.direction, line.line) for line in seen] == [("in", last)]
    assert s.handlers.notes == [3]


async def test_a_hook_that_raises_is_logged_once_and_the_connection_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="acpwire")
    calls: list[WireLine] = []

    def broken(line: WireLine) -> None:
        calls.append(line)
        raise RuntimeError("the trace file is gone")

    async with serving(on_line=broken, peer="the test peer") as s:
        for n in range(3):
            assert await s.peer.call(n, "_echo", n) == response(n, n)
        await s.peer.send(request(9, "_ask"))  # a request of ours still goes out
        asked = await s.peer.receive()
        assert asked["method"] == "session/request_permission"
        await s.peer.send(response(asked["id"], {"outcome": {"outcome": "cancelled"}}))
        assert (await s.peer.receive())["id"] == 9
    (record,) = caplog.records
    assert "on_line hook" in record.getMessage()
    assert "the test peer" in record.getMessage()
    assert record.exc_info is not None and "the trace file is gone" in str(record.exc_info[1])
    assert len(calls) == 3 * 2 + 4  # still called for every line


async def test_agent_and_client_see_the_same_lines_as_the_stream_carries() -> None:
    agent_seen: list[WireLine] = []
    client_seen: list[WireLine] = []
    agent_end, client_end = memory_stream_pair()
    wire = Tap(client_end)
    serve = partial(
        serve_agent,
        EchoAgentV2,
        stream=agent_end,
        options=ConnectionOptions(on_line=agent_seen.append),
    )
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(serve)
        options = ConnectionOptions(on_line=client_seen.append)
        async with connect(wire, v2=ClientV2, options=options) as conn:
            session_id = await new_v2_session(conn)
            async with conn.subscribe(session_id) as updates:
                await conn.v2_agent.session_prompt(prompt_v2(session_id, "hello"))
                await until_idle(updates)
        nursery.cancel_scope.cancel()
    assert as_sent(client_seen, "out") == bytes(wire.sent)
    assert as_sent(client_seen, "in") == bytes(wire.received)
    assert as_sent(agent_seen, "in") == bytes(wire.sent)
    assert as_sent(agent_seen, "out") == bytes(wire.received)
    methods = [msgspec.json.decode(line.line).get("method") for line in client_seen]
    assert methods[:2] == ["initialize", None]  # the request, then its answer
    assert "session/update" in methods
    assert client_seen[0].direction == "out" and agent_seen[0].direction == "in"


async def test_open_agent_passes_the_hook_to_its_connection() -> None:
    seen: list[WireLine] = []
    options = ConnectionOptions(on_line=seen.append)
    async with open_agent(ECHO_AGENT, v2=ClientV2, options=options) as conn:
        await new_v2_session(conn)
    messages = [msgspec.json.decode(line.line) for line in seen]
    assert [
        (line.direction, message.get("method"))
        for line, message in zip(seen, messages, strict=True)
    ][:4] == [
        ("out", "initialize"),
        ("in", None),
        ("out", "session/new"),
        ("in", None),
    ]
    assert messages[1]["result"]["protocolVersion"] == 2


async def test_the_agent_reports_a_malformed_line_and_answers_on() -> None:
    seen: list[WireLine] = []
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(client_end)
    serve = partial(
        serve_agent, EchoAgentV2, stream=agent_end, options=ConnectionOptions(on_line=seen.append)
    )
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(serve)
        await peer.send(b"{not json")
        error = await peer.receive()
        assert error["error"]["code"] == -32700
        reply = await peer.call("init", "initialize", RAW_INIT_V2)
        assert reply["result"]["protocolVersion"] == 2
        nursery.cancel_scope.cancel()
    assert [(line.direction, line.line[:9]) for line in seen] == [
        ("in", b"{not json"),
        ("out", b'{"jsonrpc'),
        ("in", msgspec.json.encode(request("init", "initialize", RAW_INIT_V2))[:9]),
        ("out", b'{"jsonrpc'),
    ]


def test_the_record_is_frozen() -> None:
    line = WireLine("in", b"{}", 1.0)
    with pytest.raises(AttributeError):
        line.line = b"[]"  # type: ignore[misc]
