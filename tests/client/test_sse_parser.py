"""`SseParser` against the event-stream line rules applied to the whole text at once: the
same events, cursor and size errors however the bytes are cut into chunks (the parser's
fast paths for one-line `data:` events must not change what it reads)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from acpwire.streams.sse import EventTooLarge, SseParser, event, identified_event

PIECES = [
    b"data: ",
    b"data:",
    b'data: {"a":1}',
    b"data: " + b"x" * 30,
    b"id: 3",
    b"id: 4\x00",
    b": keepalive",
    b"event: x",
    b"retry: 5",
    b"junk",
    b"\n",
    b"\n\n",
    b"\r\n",
    b"\r",
    b"\xef\xbb\xbf",
    event(b'{"jsonrpc":"2.0","method":"m"}'),
    event(b"y" * 40),
    identified_event(b'{"id":1}', 7),
]


def lines_of(text: bytes) -> list[bytes]:
    text = text.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return text.split(b"\n")


def reference(text: bytes, limit: int) -> tuple[list[bytes], str | None] | str:
    """The line rules, line by line over the whole text ("too large": its data passed
    `limit`)."""
    *lines, _ = lines_of(text)
    events: list[bytes] = []
    data: list[bytes] = []
    size = 0
    event_id: bytes | None = None
    cursor = None
    for line in lines:
        if not line:
            if data:
                events.append(b"\n".join(data))
                data, size = [], 0
            if event_id is not None:
                cursor, event_id = event_id.decode(), None
            continue
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if name == b"id" and b"\0" not in value:
            event_id = value
        elif name == b"data":
            size += len(value) + 1
            if size > limit:
                return "too large"
            data.append(value)
    return events, cursor


def parsed(chunks: list[bytes], limit: int) -> tuple[list[bytes], str | None] | str:
    parser = SseParser(limit)
    events: list[bytes] = []
    try:
        for chunk in chunks:
            events += parser.feed(chunk)
    except EventTooLarge:
        return "too large"
    return events, parser.last_event_id


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=30),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=6),
    st.sampled_from([8, 24, 45, 1 << 20]),
)
def test_any_chunking_reads_what_the_line_rules_read(
    pieces: list[bytes], cuts: list[int], limit: int
) -> None:
    text = b"".join(pieces)
    bounds = sorted({min(cut, len(text)) for cut in cuts})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    expected = reference(text, limit)
    got = parsed(chunks, limit)
    if got == "too large":  # its data passed the limit, or a line longer than any event's
        long_line = any(len(line) > limit + len(b"data: ") for line in lines_of(text))
        assert expected == "too large" or long_line
    else:
        assert got == expected


def test_a_burst_of_one_line_events_in_any_cut() -> None:
    messages = [b'{"jsonrpc":"2.0","method":"session/update","n":%d}' % i for i in range(50)]
    text = b"".join(map(event, messages))
    for cut in range(len(text) + 1):
        assert parsed([text[:cut], text[cut:]], 1 << 20) == (messages, None)
