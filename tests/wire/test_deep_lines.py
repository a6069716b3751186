"""Valid JSON nested deeper than the decoder goes (msgspec stops at a depth that depends on
the Python stack it runs on, so a request with deep params can reach it): the envelope is read
without decoding the rest, and a request still gets exactly one answer, with its id."""

from __future__ import annotations

import logging

import msgspec
import pytest

import acp_schema.v2 as v2
from acpwire._wire.jsonrpc import Answer, JsonRpcCore, Reply
from acpwire._wire.shallow import top_level_scalars
from acpwire.errors import InvalidResponse
from helpers.serving import initialized_raw, raw_client

DEEP = 100_000
ENVELOPE = frozenset({b'"id"', b'"method"'})


def deep(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def test_a_deep_request_is_answered_with_its_id() -> None:
    core = JsonRpcCore(v2.AGENT_CODEC)
    line = b'{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":' + deep() + b"}}"
    [event] = core.receive_line(line)
    assert isinstance(event, Reply)
    answer = msgspec.json.decode(event.data)
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32600
    assert "nested too deeply" in answer["error"]["message"]
    assert event.unparsable is None  # it is JSON: not reported as a line that is not JSON


def test_a_deep_answer_to_our_request_fails_that_request() -> None:
    core = JsonRpcCore(v2.CLIENT_CODEC)
    request_id, _ = core.request(v2.SESSION_NEW, v2.NewSessionRequest(cwd="/repo"))
    line = b'{"jsonrpc":"2.0","result":' + deep() + b',"id":' + str(request_id).encode() + b"}"
    [event] = core.receive_line(line)
    assert isinstance(event, Answer) and event.id == request_id
    assert isinstance(event.error, InvalidResponse) and event.error.method == "session/new"


def test_a_deep_notification_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    core = JsonRpcCore(v2.AGENT_CODEC)
    line = b'{"jsonrpc":"2.0","method":"session/cancel","params":' + deep() + b"}"
    with caplog.at_level(logging.WARNING, logger="acpwire"):
        assert core.receive_line(line) == []
    assert "dropped a session/cancel notification: JSON nested too deeply" in caplog.text


@pytest.mark.parametrize(
    "line",
    [deep(), b'{"jsonrpc":"2.0","params":' + deep() + b"}", b'{"id":[1],"method":' + deep() + b"}"],
    ids=["an array", "no id", "an unusable id"],
)
def test_anything_else_deep_gets_null(line: bytes) -> None:
    [event] = JsonRpcCore(v2.AGENT_CODEC).receive_line(line)
    assert isinstance(event, Reply)
    assert msgspec.json.decode(event.data)["id"] is None


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (b'{"id": 1, "method": "m"}', {"id": 1, "method": "m"}),
        (b'{"params": {"id": 2, "method": "inner"}, "id": "a"}', {"id": "a"}),
        (b'{"method": "x\\"}{,:", "id": null}', {"method": 'x"}{,:', "id": None}),
        (b'{"params": [{"id": 3}], "id": -4.5e1}', {"id": -45.0}),
        (b'{"id": {"nested": 1}}', {}),
        (b'["id", 1]', {}),
        (b'{"a": "id", "b": 1, "id": true}', {"id": True}),
    ],
)
def test_top_level_scalars_reads_only_the_top_level(data: bytes, found: dict[str, object]) -> None:
    assert top_level_scalars(data, ENVELOPE) == found


async def test_a_served_agent_answers_a_deep_request_and_keeps_serving(loop: str) -> None:
    del loop  # runs on each loop
    async with raw_client() as peer:
        await initialized_raw(peer)
        line = b'{"jsonrpc":"2.0","id":"deep","method":"session/new","params":' + deep() + b"}"
        await peer.send(line)
        answer = await peer.receive()
        assert answer["id"] == "deep" and answer["error"]["code"] == -32600
        assert "result" in await peer.call(2, "session/new", {"cwd": "/repo"})
