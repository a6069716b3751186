"""The pieces of resumable streams that need no server: the SSE parser's cursor (the `id` of
the last complete event, never of one cut midway), the reconnect policy's waits and checks,
the capability read from an `initialize` answer, and `ResumeOptions`' checks."""

from __future__ import annotations

import pytest

from acpwire import ResumeOptions
from acpwire.streams import Reconnect
from acpwire.streams.reconnect import offers_resumption, reconnect_policy
from acpwire.streams.sse import SseParser, identified_event


def test_the_cursor_is_the_id_of_the_last_complete_event() -> None:
    parser = SseParser(1024)
    first, second = identified_event(b'{"a":1}', 1), identified_event(b'{"a":2}', 2)
    assert parser.feed(first) == [b'{"a":1}']
    assert parser.last_event_id == "1"
    cut = second.index(b"data")
    assert parser.feed(second[:cut]) == []  # the id came, its event did not
    assert parser.last_event_id == "1"
    assert parser.feed(second[cut:]) == [b'{"a":2}']
    assert parser.last_event_id == "2"
    assert parser.feed(b": keepalive\n\ndata: x\n\n") == [b"x"]
    assert parser.last_event_id == "2"  # events without an id keep it


def test_reconnect_waits_grow_to_the_cap() -> None:
    assert list(Reconnect(attempts=5, first_delay=0.1, max_delay=0.5).delays()) == [
        0.1,
        0.2,
        0.4,
        0.5,
        0.5,
    ]
    assert reconnect_policy(False) is None
    assert reconnect_policy(True) == Reconnect()
    mine = Reconnect(attempts=2)
    assert reconnect_policy(mine) is mine
    with pytest.raises(ValueError, match="attempts"):
        Reconnect(attempts=0)
    with pytest.raises(ValueError, match="first_delay"):
        Reconnect(first_delay=3.0, max_delay=1.0)


def test_the_capability_is_read_from_the_initialize_answer() -> None:
    offered = b'{"jsonrpc":"2.0","id":0,"result":{"_meta":{"transport":{"resumable":{}}}}}'
    assert offers_resumption(offered)
    for answer in (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}',
        b'{"jsonrpc":"2.0","id":0,"result":{"_meta":{"transport":{"resumable":true}}}}',
        b'{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"no"}}',
        b"not json",
    ):
        assert not offers_resumption(answer), answer


def test_resume_options_are_checked() -> None:
    for bad in ({"max_events": 0}, {"max_bytes": 0}):
        with pytest.raises(ValueError, match="ResumeOptions"):
            ResumeOptions(**bad)
