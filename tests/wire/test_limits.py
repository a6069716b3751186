"""Limits with bounded memory: floods, slow readers on either side, request floods, line size
and JSON nesting depth.

Each test measures what it bounds (tracemalloc peak, tasks, read-ahead) against an explicit
ceiling and prints what it observed (``pytest -s`` shows the ``LIMIT`` lines).

Floods come from `ScriptedStream`, a stream whose peer is a generator: it makes the next
chunk only when the connection asks for it. So nothing on the peer's side is ever buffered,
and a connection that read ahead of its handlers (queueing messages or spawning a task per
message) would show it at once as memory growth and read-ahead.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
import sniffio
import trio.lowlevel

import acp_schema.v2 as v2
from acpwire._wire.connection import READ_CHUNK, Connection
from acpwire._wire.framing import DEFAULT_MAX_LINE_BYTES, LineReader
from acpwire._wire.jsonrpc import Call
from acpwire._wire.options import ConnectionOptions
from acpwire._wire.outbox import DEFAULT_MAX_BUFFERED_BYTES
from acpwire.client import connect
from acpwire.client.router import UPDATE_BUFFER
from helpers.connection import serving
from helpers.constants import PERMISSION_REQUEST as PERMISSION
from helpers.loops import run_async, wait_all_tasks_blocked
from helpers.raw import RawPeer, notification, request, response

MB = 1024 * 1024

pytestmark = pytest.mark.usefixtures("loop")

# --------------------------------------------------------------------------- harness


def report(what: str, **values: Any) -> None:
    """One line of observed limits, for the report (visible with ``pytest -s``)."""
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    print(f"\nLIMIT {what}: {shown}")


@contextmanager
def traced() -> Iterator[dict[str, int]]:
    """tracemalloc over the block: the result dict gets `peak` (bytes above the start)."""
    out: dict[str, int] = {}
    already = tracemalloc.is_tracing()
    if not already:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    try:
        yield out
    finally:
        _, peak = tracemalloc.get_traced_memory()
        out["peak"] = peak - base
        if not already:
            tracemalloc.stop()


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for row in status:
            if row.startswith(field + ":"):
                return int(row.split()[1])
    raise LookupError(field)


@contextmanager
def peak_rss() -> Iterator[dict[str, int]]:
    """Peak resident memory over the block (Linux: VmHWM after resetting it), above the start.

    For runs too long to trace every allocation; `peak` is -1 when it can't be measured.
    """
    out: dict[str, int] = {}
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # reset the high-water mark
        base = _status_kb("VmRSS")
    except OSError:
        base = -1
    try:
        yield out
    finally:
        out["peak"] = -1 if base < 0 else (_status_kb("VmHWM") - base) * 1024


class Wait:
    """A step of a `ScriptedStream` script: block the peer until `ready()` holds."""

    def __init__(self, ready: Callable[[], bool]) -> None:
        self.ready = ready


class ScriptedStream:
    """Our side of a connection whose peer is a script.

    `script` yields the bytes the peer sends (each item is returned by one `receive_some`,
    so keep items <= READ_CHUNK) or `Wait` steps; when it ends the stream reports EOF.
    Every line we send is passed to `on_line` as it is written, and not kept.
    """

    def __init__(self, script: Iterable[bytes | Wait], on_line: Callable[[bytes], None]) -> None:
        self._script = iter(script)
        self._on_line = on_line
        self._reader = LineReader(max_line_bytes=1 << 40)
        self.received = 0  # bytes the connection has taken from the peer
        self.sent = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await anyio.lowlevel.checkpoint()
        for step in self._script:
            if isinstance(step, Wait):
                while not step.ready():
                    await anyio.sleep(0.001)
                continue
            assert max_bytes is None or len(step) <= max_bytes
            self.received += len(step)
            return step
        return b""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await anyio.lowlevel.checkpoint()
        self.sent += len(data)
        for line in self._reader.feed(bytes(data)):
            assert isinstance(line, bytes)
            self._on_line(line)

    async def wait_send_all_might_not_block(self) -> None:
        await anyio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await anyio.lowlevel.checkpoint()


def chunked(data: bytes, size: int = READ_CHUNK) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def line(message: Any) -> bytes:
    return msgspec.json.encode(message) + b"\n"


@dataclass
class Tally:
    """What our side wrote back: error codes by id, and results by id."""

    errors: dict[Any, list[int]] = field(default_factory=dict)
    results: dict[Any, Any] = field(default_factory=dict)
    lines: int = 0

    def __call__(self, raw: bytes) -> None:
        self.lines += 1
        message = msgspec.json.decode(raw)
        if "error" in message:
            self.errors.setdefault(message["id"], []).append(message["error"]["code"])
        else:
            assert message["id"] not in self.results, f"answered twice: {message}"
            self.results[message["id"]] = message["result"]


async def echo(call: Call) -> Any:
    return msgspec.json.decode(call.params) if isinstance(call.params, msgspec.Raw) else None


def run_connection(
    loop: str,
    script: Iterable[bytes | Wait],
    on_line: Callable[[bytes], None],
    dispatch: Callable[[Call], Any] = echo,
    timeout: float = 30.0,
    **options: Any,
) -> ScriptedStream:
    """Serve one scripted peer with a Connection until the script ends (no leaked tasks)."""
    stream = ScriptedStream(script, on_line)

    async def main() -> None:
        with anyio.fail_after(timeout):
            limits = ConnectionOptions(**options)
            await Connection(stream, v2.AGENT_CODEC, dispatch, options=limits).run()

    run_async(main, loop)
    return stream


# --------------------------------------------------------------------------- 1 GB of garbage

FLOOD_BYTES = 1024 * MB


def no_newline_garbage(total: int) -> Iterator[bytes]:
    rng = random.Random(7)
    chunk = bytes(rng.choice(b'{}[]":,abc \x00\xff\t') for _ in range(READ_CHUNK))
    assert b"\n" not in chunk
    for _ in range(total // READ_CHUNK):
        yield chunk  # the same object every time: the peer allocates nothing


def junk_lines_block(seed: int = 3, size: int = MB) -> bytes:
    """About `size` bytes of newline-separated junk (no valid message), ending in a newline."""
    rng = random.Random(seed)
    kinds: list[Callable[[int], bytes]] = [
        lambda n: bytes(rng.randrange(256) for _ in range(n)).replace(b"\n", b"?"),
        lambda n: b"x" * n,
        lambda n: b'{"jsonrpc":"2.0","id":1,"method":"_echo","params":"' + b"a" * n,  # unterminated
        lambda n: b"[" * min(n, 500),  # unclosed batch
        lambda n: b'{"jsonrpc":"2.0","id":' + b"9" * n,
        lambda n: b"}" * n,
        lambda n: b"\x00" * n,
    ]
    parts: list[bytes] = []
    total = 0
    while total < size:
        n = rng.choice([10, 1000, 30000, 60000])
        part = rng.choice(kinds)(rng.randrange(1, n + 1)) + b"\n"
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def answered_lines(block: bytes) -> int:
    """How many lines of the block a connection answers (it skips whitespace-only lines)."""
    reader = LineReader()
    return len(reader.feed(block)) + len(reader.eof())


@pytest.mark.parametrize(
    ("kind", "max_line_bytes", "ceiling"),
    [
        ("no-newline", DEFAULT_MAX_LINE_BYTES, 100 * MB),  # holds up to the limit, then discards
        ("no-newline", MB, 4 * MB),
        ("junk-lines", DEFAULT_MAX_LINE_BYTES, 16 * MB),
    ],
    ids=["no-newline-default-limit", "no-newline-1MB-limit", "junk-lines"],
)
def test_one_gigabyte_of_garbage_stays_bounded_and_serving_goes_on(
    loop: str, kind: str, max_line_bytes: int, ceiling: int
) -> None:
    tally = Tally()
    if kind == "no-newline":
        garbage: Iterable[bytes] = no_newline_garbage(FLOOD_BYTES)
        expected_errors = 1
    else:
        block = junk_lines_block()
        repeats = -(-FLOOD_BYTES // len(block))
        garbage = itertools.chain.from_iterable(chunked(block) for _ in range(repeats))
        expected_errors = answered_lines(block) * repeats
    script = itertools.chain(
        garbage,
        [b"\n", line(request("after", "_echo", "still here")), Wait(lambda: tally.results)],
    )
    started = time.perf_counter()
    with traced() as memory:
        stream = run_connection(loop, script, tally, max_line_bytes=max_line_bytes, timeout=45)
    elapsed = time.perf_counter() - started
    report(
        f"1 GB {kind} flood",
        max_line_bytes=max_line_bytes,
        peer_bytes=stream.received,
        error_replies=sum(len(codes) for codes in tally.errors.values()),
        tracemalloc_peak_MB=round(memory["peak"] / MB, 1),
        ceiling_MB=ceiling // MB,
        seconds=round(elapsed, 1),
    )
    assert stream.received >= FLOOD_BYTES
    assert tally.results == {"after": "still here"}
    assert list(tally.errors) == [None]  # every error answers no identifiable request
    codes = tally.errors[None]
    assert len(codes) == expected_errors
    if kind == "no-newline":
        assert codes == [-32600]  # one oversized line
    else:
        assert set(codes) <= {-32700, -32600}
    assert memory["peak"] < ceiling


# --------------------------------------------------------------------------- 10^6 notifications


class Numbered:
    """Chunks of `template` lines with the `\\x00` in it replaced by 0, 1, 2 ...

    `produced` counts the lines handed out so far (a chunk is made when it is read).
    """

    def __init__(self, template: bytes, count: int) -> None:
        self.head, self.tail = template.split(b"\x00")
        self.count = count
        self.per_chunk = READ_CHUNK // (len(template) + len(str(count)))
        self.produced = 0

    def __iter__(self) -> Iterator[bytes]:
        head, tail = self.head, self.tail
        for start in range(0, self.count, self.per_chunk):
            stop = min(self.count, start + self.per_chunk)
            self.produced = stop
            yield b"".join(b"%s%d%s" % (head, n, tail) for n in range(start, stop))


NOTE_TEMPLATE = line(notification("_note", {"seq": 0})).replace(b'"seq":0', b'"seq":\x00')


def test_a_million_notifications_at_a_slow_handler_are_read_no_faster_than_handled(
    loop: str,
) -> None:
    """Notifications run in order on the reader: a slow handler stops the reading."""
    count = 1_000_000
    handled = 0
    read_ahead = 0
    lines = Numbered(NOTE_TEMPLATE, count)
    per_chunk = lines.per_chunk

    async def slow(call: Call) -> Any:
        nonlocal handled, read_ahead
        if call.is_request:
            return await echo(call)
        assert msgspec.json.decode(call.params)["seq"] == handled  # in order
        handled += 1
        if handled % 1000 == 0:
            await anyio.sleep(0)  # a handler that yields, and now and then really waits
            read_ahead = max(read_ahead, lines.produced - handled)
        if handled % 100_000 == 0:
            await anyio.sleep(0.001)

    def script() -> Iterator[bytes | Wait]:
        yield from lines
        yield line(request("after", "_echo", 1))
        yield Wait(lambda: tally.results)

    tally = Tally()
    stream = ScriptedStream(script(), tally)

    async def main() -> None:
        with anyio.fail_after(30):
            await Connection(stream, v2.AGENT_CODEC, slow).run()

    started = time.perf_counter()
    with peak_rss() as memory:
        run_async(main, loop)
    elapsed = time.perf_counter() - started
    report(
        "10^6 notifications, slow handler",
        handled=handled,
        max_read_ahead_msgs=read_ahead,
        peak_rss_growth_MB=round(memory["peak"] / MB, 2),
        msgs_per_s=int(count / elapsed),
        seconds=round(elapsed, 1),
    )
    assert handled == count
    assert tally.results == {"after": 1}
    assert read_ahead <= 2 * per_chunk  # never more than the chunk being split, and the next
    assert memory["peak"] < 16 * MB  # (10^6 queued notifications would be hundreds of MB)


class QuietClient(v2.ClientBase):
    """A client whose session_update handler is slow now and then, and keeps nothing."""

    def __init__(self, agent: v2.AgentPeer) -> None:
        self.calls = 0

    async def session_update(self, params: v2.UpdateSessionNotification) -> None:
        self.calls += 1
        if self.calls % 50_000 == 0:
            await anyio.sleep(0.001)


INIT_RESULT = {"protocolVersion": 2, "info": {"name": "flood", "version": "0"}}
UPDATE_TEMPLATE = line(
    notification(
        "session/update",
        {
            "sessionId": "sess_1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg_1",
                "content": {"type": "text", "text": "<>"},
            },
        },
    )
).replace(b"<>", b"\x00")

SUBSCRIBER_UPDATES = 1_000_000


def test_a_million_session_updates_at_a_slow_subscriber_apply_back_pressure(loop: str) -> None:
    """ClientConnection: a subscriber that reads slowly holds the reader at UPDATE_BUFFER."""
    count = SUBSCRIBER_UPDATES
    lines = Numbered(UPDATE_TEMPLATE, count)
    per_chunk = lines.per_chunk
    asked: list[Any] = []
    consumed = 0
    read_ahead = 0
    buffered = 0
    held = 0

    def on_line(raw: bytes) -> None:
        asked.append(msgspec.json.decode(raw))

    def script() -> Iterator[bytes | Wait]:
        yield Wait(lambda: bool(asked))  # the client's initialize
        yield line(response(asked[0]["id"], INIT_RESULT))
        yield Wait(lambda: subscribed)
        yield from lines
        yield Wait(lambda: consumed == count)

    stream = ScriptedStream(script(), on_line)
    subscribed = False

    async def main() -> None:
        nonlocal consumed, read_ahead, buffered, held, subscribed
        with anyio.fail_after(40):
            async with connect(stream, v2=QuietClient) as conn:
                await conn.initialize(
                    v2.InitializeRequest(
                        protocol_version=2, info=v2.Implementation(name="t", version="0")
                    )
                )
                async with conn.subscribe("sess_1") as updates:
                    subscribed = True
                    async for update in updates:
                        assert update.content.text == str(consumed)
                        consumed += 1
                        if consumed % 64 == 0:  # slow: the agent's flood outpaces us
                            buffered = max(buffered, len(updates._items))
                            held += updates._writer is not None  # the connection waits for room
                            read_ahead = max(read_ahead, lines.produced - consumed)
                            await anyio.sleep(0.001 if consumed % 100_000 == 0 else 0)
                        if consumed == count:
                            break
                assert conn.client.calls == count

    started = time.perf_counter()
    with peak_rss() as memory:
        run_async(main, loop)
    elapsed = time.perf_counter() - started
    report(
        f"{count} session/updates, slow subscriber",
        consumed=consumed,
        max_subscriber_buffer=buffered,
        samples_with_the_reader_held_back=held,
        max_read_ahead_msgs=read_ahead,
        peak_rss_growth_MB=round(memory["peak"] / MB, 2),
        msgs_per_s=int(count / elapsed),
        seconds=round(elapsed, 1),
    )
    assert consumed == count
    assert buffered <= UPDATE_BUFFER
    assert held > 0  # the subscriber really was the bottleneck: the reader waited for it
    assert read_ahead <= UPDATE_BUFFER + 2 * per_chunk
    assert memory["peak"] < 16 * MB


# --------------------------------------------------------------------------- our send side


class StalledPeer:
    """A peer that reads nothing until `gate` opens, then slowly (256 kB per scheduler tick)."""

    def __init__(self) -> None:
        self.gate = anyio.Event()
        self.inbound_eof = anyio.Event()
        self.reader = LineReader()
        self.received = 0  # messages, each checked to be the next in order
        self.writes = 0

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.gate.wait()
        step = 256 * 1024
        for start in range(0, len(data), step):
            await anyio.sleep(0)
            for raw in self.reader.feed(bytes(data[start : start + step])):
                assert isinstance(raw, bytes)
                seq = int(msgspec.json.decode(raw)["params"]["update"]["messageId"])
                assert seq == self.received
                self.received += 1
        self.writes += 1

    async def wait_send_all_might_not_block(self) -> None:
        await anyio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await self.inbound_eof.wait()
        return b""

    async def aclose(self) -> None:
        await anyio.lowlevel.checkpoint()


def chunk_update(seq: int, text: str) -> v2.UpdateSessionNotification:
    return v2.UpdateSessionNotification(
        session_id="sess_1",
        update=v2.AgentMessageChunk(message_id=str(seq), content=v2.TextContent(text=text)),
    )


@pytest.mark.parametrize("max_buffered", [64 * 1024, DEFAULT_MAX_BUFFERED_BYTES])
async def test_notify_waits_for_a_slow_reader_instead_of_buffering(max_buffered: int) -> None:
    text = "p" * 1000
    peer = StalledPeer()
    connection = Connection(
        peer, v2.AGENT_CODEC, echo, options=ConnectionOptions(max_buffered_bytes=max_buffered)
    )
    sent = 0
    total = 12 * max_buffered // 1000  # a dozen buffers' worth

    async def sender() -> None:
        nonlocal sent
        for seq in range(total):
            await connection.notify(v2.SESSION_UPDATE, chunk_update(seq, text))
            sent = seq + 1

    with traced() as memory:
        async with anyio.create_task_group() as nursery:
            await nursery.start(connection.run)
            nursery.start_soon(sender)
            await wait_all_tasks_blocked()
            stalled_at = sent
            queued = connection._outbox._queued
            assert 0 < sent < total  # notify() waits instead of queueing everything
            assert queued <= max_buffered + 1100
            peer.gate.set()  # now the peer reads, slowly
            with anyio.fail_after(8):
                while sent < total:
                    await anyio.sleep(0.001)
                await connection._outbox.flush()
            peer.inbound_eof.set()
    report(
        "outbox at a stalled reader",
        max_buffered_bytes=max_buffered,
        notify_calls_before_blocking=stalled_at,
        queued_bytes_while_stalled=queued,
        total_sent=total,
        writes=peer.writes,
        tracemalloc_peak_MB=round(memory["peak"] / MB, 2),
    )
    assert peer.received == total
    # bytes in flight count against the bound and a backlog is written in 256 KiB pieces:
    # about the bound, plus one piece and the test's own messages
    assert memory["peak"] < 2 * max_buffered + MB


# --------------------------------------------------------------------------- request floods


def live_tasks() -> int:
    """Every task the event loop is running now."""
    if sniffio.current_async_library() != "trio":
        return len(asyncio.all_tasks())

    def count(task: trio.lowlevel.Task) -> int:
        return 1 + sum(count(t) for n in task.child_nurseries for t in n.child_tasks)

    return count(trio.lowlevel.current_root_task())


@pytest.mark.parametrize("limit", [1, 8, 64])
async def test_a_request_flood_runs_at_most_the_limit_and_queues_at_most_as_many(
    limit: int,
) -> None:
    flood = 5000
    async with serving(max_concurrent_requests=limit) as s:
        baseline = live_tasks()
        lines = b"".join(line(request(i, "_wait")) for i in range(flood))
        await s.peer.send(lines)
        refused: list[Any] = []
        with anyio.fail_after(5):
            while len(refused) < flood - 2 * limit:
                refused.append(await s.peer.receive())
        await wait_all_tasks_blocked()
        tasks = live_tasks() - baseline
        assert s.handlers.running == limit == len(s.handlers.started)
        assert tasks == limit
        assert len(s.connection._backlog) == limit
        assert {r["error"]["code"] for r in refused} == {-32603}
        assert all("overloaded" in r["error"]["message"] for r in refused)
        s.handlers.gate.set()
        served = [await s.peer.receive() for _ in range(2 * limit)]
        await s.peer.expect_silence()
        ids = sorted([r["id"] for r in refused] + [r["id"] for r in served])
        assert ids == list(range(flood))  # each exactly once
        assert {r["result"] for r in served} == {"released"}
        assert s.handlers.peak == limit
    report("request flood", limit=limit, flood=flood, handler_tasks=tasks, refused=len(refused))


async def test_a_flood_of_quick_requests_is_answered_once_each_and_nothing_leaks() -> None:
    flood = 1000
    async with serving(max_concurrent_requests=4) as s:
        baseline = live_tasks()
        await s.peer.send(b"".join(line(request(i, "_echo", i)) for i in range(flood)))
        answers = [await s.peer.receive() for _ in range(flood)]
        ok = sum("result" in a for a in answers)
        assert sorted(a["id"] for a in answers) == list(range(flood))
        await wait_all_tasks_blocked()
        assert live_tasks() == baseline
        assert s.connection._handlers == {} and not s.connection._backlog
        assert s.connection.core.in_flight == frozenset()
    report("quick request flood (max_concurrent_requests=4)", flood=flood, served=ok)


async def test_a_pipelined_burst_of_instant_requests_is_not_refused() -> None:
    burst = 1000  # ~60 kB: one read
    async with serving() as s:
        await s.peer.send(b"".join(line(request(i, "_echo", i)) for i in range(burst)))
        answers = [await s.peer.receive() for _ in range(burst)]
    refused = [a for a in answers if "error" in a]
    assert refused == [], f"{len(refused)} of {burst} refused: {refused[0]}"


# --------------------------------------------------------------------------- line size


@pytest.mark.parametrize("limit", [100, 4096])
@pytest.mark.parametrize("chunk", [3, 61, 4096, 1 << 20])
async def test_oversized_lines_get_invalid_request_and_the_stream_resyncs(
    limit: int, chunk: int
) -> None:
    """Lines at, just over and far over the limit, in any chunking, with LF or CRLF."""
    fill = limit - len(msgspec.json.encode(request(1, "_echo", "")))
    at_limit = line(request(1, "_echo", "a" * fill))
    assert len(at_limit) == limit + 1  # the limit counts the line without its terminator
    over = line(request(2, "_echo", "a" * (fill + 1)))
    crlf = line(request(3, "_echo", "c" * fill))[:-1] + b"\r\n"
    huge = b'{"jsonrpc":"2.0","id":4,"method":"_echo","params":"' + b"h" * (10 * limit) + b'"}\n'
    batch = line([request(5, "_echo", "b" * limit)])
    tail = line(request(6, "_echo", "tail"))
    data = at_limit + over + crlf + huge + batch + tail
    async with serving(max_line_bytes=limit) as s:
        for part in chunked(data, chunk):
            await s.peer.stream.send_all(part)
        answers = [await s.peer.receive() for _ in range(6)]
        await s.peer.expect_silence()
    results = {a["id"]: a["result"] for a in answers if "result" in a}
    errors = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert results == {1: "a" * fill, 3: "c" * fill, 6: "tail"}
    # over and huge: their ids read from the head kept of the line; a batch has none
    assert errors == [(2, -32600), (4, -32600), (None, -32600)]


# --------------------------------------------------------------------------- nesting depth


def nested(kind: str, depth: int) -> bytes:
    if kind == "batch":
        return b"[" * depth + b"]" * depth
    if kind == "extension-params":
        inner = b"[" * depth + b"]" * depth
        return b'{"jsonrpc":"2.0","id":1,"method":"_echo","params":' + inner + b"}"
    if kind == "_meta":  # a known method: Handlers answers it -32601
        inner = b'{"a":' * depth + b"1" + b"}" * depth
        return (
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":'
            b'{"cwd":"/","_meta":' + inner + b"}}"
        )
    if kind == "response":  # an answer to a request of ours
        return b'{"jsonrpc":"2.0","id":0,"result":' + b"[" * depth + b"]" * depth + b"}"
    raise AssertionError(kind)


async def first_of(condition: Callable[[], Any], peer: RawPeer) -> Any:
    """The peer's next message, or None if `condition()` comes true first."""
    got: list[Any] = []
    async with anyio.create_task_group() as nursery:

        async def receive() -> None:
            got.append(await peer.receive())
            nursery.cancel_scope.cancel()

        async def wait() -> None:
            while not condition():
                await anyio.sleep(0.001)
            nursery.cancel_scope.cancel()

        nursery.start_soon(receive)
        nursery.start_soon(wait)
    return got[0] if got else None


@pytest.mark.parametrize("kind", ["batch", "extension-params", "_meta", "response"])
@pytest.mark.parametrize(
    "depth",
    [
        200,
        2_000,
        100_000,
    ],
)
async def test_deeply_nested_json_gets_an_error_reply_and_serving_goes_on(
    kind: str, depth: int
) -> None:
    async with serving() as s:
        asked: dict[str, Any] = {}
        if kind == "response":

            async def ask() -> None:
                try:
                    asked["result"] = await s.connection.request(
                        v2.SESSION_REQUEST_PERMISSION, PERMISSION
                    )
                except Exception as exc:
                    asked["error"] = exc

            s.nursery.start_soon(ask)
            assert (await s.peer.receive())["id"] == 0
        await s.peer.send(nested(kind, depth))
        with anyio.fail_after(2):
            if kind == "response" and depth < 1000:
                while not asked:
                    await anyio.sleep(0.001)
                # a result of the wrong shape fails our request (it is no valid permission answer)
                assert "error" in asked
            elif kind == "response":  # either fail our request, or answer the line -32700
                reply = await first_of(lambda: asked, s.peer)
                if reply is None:
                    assert "error" in asked
                else:
                    assert reply["id"] is None and reply["error"]["code"] in (-32700, -32600)
            else:
                reply = await s.peer.receive()
                if kind == "extension-params" and depth < 1000:
                    assert reply["id"] == 1 and "result" in reply
                elif kind == "_meta" and depth < 1000:
                    assert reply["id"] == 1 and reply["error"]["code"] == -32601
                elif kind == "batch" and depth < 1000:  # [[[...]]]: one entry, no request
                    assert [r["error"]["code"] for r in reply] == [-32600]
                else:
                    assert reply["id"] in (None, 1)
                    assert reply["error"]["code"] in (-32700, -32600)
            assert await s.peer.call(99, "_echo", "alive") == response(99, "alive")
        assert not s.connection.closed
