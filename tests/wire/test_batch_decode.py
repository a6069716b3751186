"""Several whole lines of one read are decoded in one call when each is a call the one-pass
decoder reads (`JsonRpcCore.receive_block`, issue 18); anything else is read line by line.
Either way a connection delivers the same: the same calls to its handlers in the same order,
the same answers and errors back. A connection with a line hook reads line by line, so the
two paths are compared side by side on the same input, split into reads at every offset."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import MethodMessage
from acpwire._wire.connection import Connection
from acpwire._wire.framing import LineBlock, LineReader
from acpwire._wire.jsonrpc import Call, Event, JsonRpcCore, Reply
from acpwire.errors import RpcError
from helpers.connection import serving
from helpers.constants import PERMISSION_REQUEST
from helpers.raw import notification, request, response

pytestmark = pytest.mark.usefixtures("loop")


def update(text: str) -> bytes:
    chunk = {"type": "text", "text": text}
    params = {
        "sessionId": "s1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": chunk, "messageId": "m"},
    }
    return msgspec.json.encode(notification("session/update", params))


def permission(id: Any) -> bytes:
    params = msgspec.to_builtins(PERMISSION_REQUEST)
    return msgspec.json.encode(request(id, "session/request_permission", params))


NOTES = [update(f"n{i}") for i in range(4)]

MIXED = {
    "notifications": NOTES,
    "requests among them": [NOTES[0], permission(1), NOTES[1], permission(2), NOTES[2]],
    "a duplicate id": [permission(7), NOTES[0], permission(7), NOTES[1]],
    "a response": [NOTES[0], msgspec.json.encode(response(99, {})), NOTES[1]],
    "malformed lines": [NOTES[0], b'{"jsonrpc":"2.0","method":', b"not json", NOTES[1]],
    "unknown methods": [
        NOTES[0],
        msgspec.json.encode(notification("_x/note", {"a": 1})),
        msgspec.json.encode(request(3, "x/unknown", {})),
        msgspec.json.encode(request(4, "_x/ask", {})),
        NOTES[1],
    ],
    "bad params": [NOTES[0], msgspec.json.encode(request(5, "session/request_permission", {}))],
    "two messages on a line": [NOTES[0], NOTES[1] + b" " + NOTES[2], NOTES[3]],
    "two on a line, one on two lines": [
        NOTES[0] + NOTES[1],
        NOTES[2][: NOTES[2].index(b'"params"')],  # valid JSON split where whitespace may go
        NOTES[2][NOTES[2].index(b'"params"') :],
        NOTES[3],
    ],
    "two on a line, one on two lines after a }": [
        NOTES[0] + NOTES[1],
        NOTES[2][: NOTES[2].index(b"}") + 1],  # the newline follows a `}`, not before a `{`
        NOTES[2][NOTES[2].index(b"}") + 1 :],
        NOTES[3],
    ],
    "two on a line, a blank line": [NOTES[0] + b" " + NOTES[1], b"  ", NOTES[2]],
    "two on a line, an empty line": [NOTES[0] + b" " + NOTES[1], b"", NOTES[2]],
    "a batch array": [NOTES[0], b"[" + NOTES[1] + b"," + permission(6) + b"]", NOTES[2]],
    "CRLF": [NOTES[0] + b"\r", NOTES[1] + b"\r", NOTES[2]],
}


class Recorder:
    """Records each call the connection starts; request handlers answer with an error that
    names the call (so answers differ per call), notifications return nothing."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.calls: list[Any] = []

    def __call__(self, call: Call) -> Any:
        self.calls.append((call.method, call.id, msgspec.to_builtins(call.message)))
        return self._run(call)

    async def _run(self, call: Call) -> None:
        if call.is_request:
            raise RpcError(-32000, f"seen {call.method}")


async def deliveries(lines: list[bytes], cut: int, *, per_line: bool) -> tuple[Any, Any]:
    """What a client connection's handlers saw and what it wrote back, for `lines` (each
    ended by a newline, after a first line and before an end marker) written in two reads
    split at byte `cut` of `lines`."""
    # a first line: the first line of a read completes what is held and is read alone
    data = b"".join(line + b"\n" for line in [update("first"), *lines, permission("end")])
    cut += len(update("first")) + 1
    options: dict[str, Any] = {"on_line": (lambda line: None) if per_line else None}
    async with serving(Recorder, v2.CLIENT_CODEC, **options) as served:
        await served.peer.send(data[:cut])
        await anyio.sleep(0)
        await served.peer.send(data[cut:])
        answers = []
        while True:
            answer = msgspec.json.decode(await served.peer.receive_line())
            answers.append(answer)
            if isinstance(answer, dict) and answer.get("id") == "end":
                break
        await served.peer.expect_silence(0.01)
        return served.handlers.calls, answers


@pytest.mark.parametrize("lines", list(MIXED.values()), ids=list(MIXED))
async def test_a_read_decoded_in_one_call_delivers_what_reading_line_by_line_does(
    lines: list[bytes],
) -> None:
    size = sum(len(line) + 1 for line in lines)
    for cut in sorted({0, 1, len(lines[0]), len(lines[0]) + 1, size // 2, size - 1, size}):
        expected = await deliveries(lines, cut, per_line=True)
        assert await deliveries(lines, cut, per_line=False) == expected, f"split at {cut}"


@pytest.mark.parametrize("lines", list(MIXED.values()), ids=list(MIXED))
def test_a_block_is_decoded_in_one_call_only_when_line_by_line_reads_the_same(
    lines: list[bytes],
) -> None:
    block = b"\n".join(lines)
    one_call = JsonRpcCore(v2.CLIENT_CODEC).receive_block(block)
    core = JsonRpcCore(v2.CLIENT_CODEC)
    by_line = [event for line in LineBlock(block).lines() for event in core.receive_line(line)]
    if one_call:
        assert [described(e) for e in one_call] == [described(e) for e in by_line]


def described(event: Event | MethodMessage) -> Any:
    if isinstance(event, MethodMessage):  # (a direct route's: none here)
        return ("message", msgspec.to_builtins(event))
    if isinstance(event, Call):
        return ("call", event.id, msgspec.to_builtins(event.message))
    if isinstance(event, Reply):
        return ("reply", event.data)
    return ("answer", event.id, event.result, event.error)


def test_an_empty_block_is_read_line_by_line() -> None:
    assert JsonRpcCore(v2.CLIENT_CODEC).receive_block(b"") == []


def test_a_stream_of_calls_is_decoded_in_one_call() -> None:
    core = JsonRpcCore(v2.CLIENT_CODEC)
    events = core.receive_block(b"\n".join([NOTES[0], permission(1), NOTES[1]]))
    assert [type(e) for e in events] == [Call, Call, Call]
    assert [e.id for e in events if isinstance(e, Call)] == [msgspec.UNSET, 1, msgspec.UNSET]
    assert core.in_flight == {1}


def test_a_direct_method_s_notifications_are_given_as_their_messages() -> None:
    """`switch_codec(codec, direct)`: a block's notifications of `direct` come as the decoded
    messages (no call built); a request of that method, other calls and single lines as
    before."""
    spec = v2.CLIENT_CODEC.inbound["session/update"]
    core = JsonRpcCore(v2.CLIENT_CODEC)
    core.switch_codec(v2.CLIENT_CODEC, spec)
    as_request = msgspec.json.encode(
        request(9, "session/update", msgspec.json.decode(NOTES[1])["params"])
    )
    events = core.receive_block(b"\n".join([NOTES[0], permission(1), as_request, NOTES[2]]))
    assert [type(e) for e in events] == [spec.message, Call, Call, spec.message]
    assert core.in_flight == {1, 9}
    assert [type(e) for e in core.receive_line(NOTES[3])] == [Call]
    for direct in (None, v1.CLIENT_CODEC.inbound["session/update"]):  # none, or not the codec's
        core.switch_codec(v2.CLIENT_CODEC, direct)
        assert [type(e) for e in core.receive_block(NOTES[0] + b"\n" + NOTES[1])] == [Call, Call]


def test_a_read_of_several_lines_holds_its_unfinished_end() -> None:
    reader = LineReader()
    assert reader.feed_block(b"partial") == []
    items = reader.feed_block(b" line\n" + NOTES[0] + b"\n" + NOTES[1] + b"\n" + b"half")
    assert items == [b"partial line", LineBlock(NOTES[0] + b"\n" + NOTES[1])]
    assert reader.feed_block(b" done\n") == [b"half done"]
