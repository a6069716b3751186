"""Tests for the sans-IO NDJSON framer."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpwire._wire.framing import HEAD_BYTES, LineReader, OversizedLine, frame

Item = bytes | OversizedLine


def feed_chunks(reader: LineReader, chunks: list[bytes], *, eof: bool = True) -> list[Item]:
    out: list[Item] = []
    for chunk in chunks:
        out.extend(reader.feed(chunk))
    if eof:
        out.extend(reader.eof())
    return out


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def expected_items(lines: list[bytes], max_line_bytes: int) -> list[Item]:
    out: list[Item] = []
    for raw in lines:
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if len(line) > max_line_bytes:
            out.append(OversizedLine(len(raw), raw[: min(HEAD_BYTES, max_line_bytes)]))
        elif line and not line.isspace():
            out.append(line)
    return out


lines_st = st.lists(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x"))
    | st.sampled_from([b"", b" ", b"\r", b" \t\r", b"{}\r", b"\xe2\x82\xac"]),
    max_size=20,
)


@given(
    lines=lines_st,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    trailing_newline=st.booleans(),
)
def test_random_chunking_yields_same_lines(
    lines: list[bytes], cuts: list[int], trailing_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    got = feed_chunks(LineReader(), split_at(data, cuts))
    assert got == expected_items(lines, 64 * 1024 * 1024)
    assert all(type(item) is bytes for item in got)


@given(
    lines=lines_st,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    max_line_bytes=st.integers(min_value=1, max_value=30),
)
def test_random_chunking_with_small_limit(
    lines: list[bytes], cuts: list[int], max_line_bytes: int
) -> None:
    data = b"".join(line + b"\n" for line in lines)
    reader = LineReader(max_line_bytes)
    out: list[Item] = []
    for chunk in split_at(data, cuts):
        out.extend(reader.feed(chunk))
        assert reader.buffered <= max_line_bytes + 1
    out.extend(reader.eof())
    assert out == expected_items(lines, max_line_bytes)


def test_crlf_stripped() -> None:
    assert LineReader().feed(b'{"a":1}\r\n{"b":2}\r\n') == [b'{"a":1}', b'{"b":2}']


def test_crlf_split_between_chunks() -> None:
    assert feed_chunks(LineReader(), [b"abc\r", b"\ndef\r", b"\n"]) == [b"abc", b"def"]


def test_only_one_trailing_cr_stripped() -> None:
    assert LineReader().feed(b"abc\r\r\n") == [b"abc\r"]


def test_empty_and_whitespace_lines_skipped() -> None:
    assert LineReader().feed(b"\n\n  \n\t\r\n{}\n\r\n") == [b"{}"]


def test_multibyte_utf8_split_across_chunks() -> None:
    line = '{"text":"héllo €𝄞"}'.encode()
    chunks = [line[i : i + 1] for i in range(len(line))] + [b"\n"]
    got = feed_chunks(LineReader(), chunks)
    assert got == [line]


def test_oversized_line_then_valid_line() -> None:
    reader = LineReader(max_line_bytes=10)
    got = reader.feed(b"x" * 50 + b"\n" + b'{"ok":1}\n')
    assert got == [OversizedLine(50, b"x" * 10), b'{"ok":1}']


def test_oversized_line_over_many_chunks_bounded_memory() -> None:
    limit, chunk = 1000, 64
    reader = LineReader(max_line_bytes=limit)
    out: list[Item] = []
    total = 10 * limit
    for _ in range(total // chunk):
        out.extend(reader.feed(b"y" * chunk))
        assert reader.buffered <= limit + chunk
    rest = total % chunk
    out.extend(reader.feed(b"y" * rest + b"\nnext\n"))
    out.extend(reader.eof())
    assert out == [OversizedLine(total, b"y" * limit), b"next"]
    assert reader.buffered == 0


@pytest.mark.parametrize("chunk", [64, 100_000])
def test_an_oversized_line_keeps_its_first_head_bytes_however_it_arrives(chunk: int) -> None:
    """Enough of it to answer a request with its id (the core reads the head)."""
    line = bytes(i % 251 for i in range(3 * HEAD_BYTES)).replace(b"\n", b"x")
    reader = LineReader(max_line_bytes=2 * HEAD_BYTES)
    out = feed_chunks(reader, [*(line[i : i + chunk] for i in range(0, len(line), chunk)), b"\n"])
    assert out == [OversizedLine(len(line), line[:HEAD_BYTES])]


def test_line_at_exact_limit_is_delivered() -> None:
    reader = LineReader(max_line_bytes=5)
    assert feed_chunks(reader, [b"abc", b"de\r", b"\n", b"abcdef\n"]) == [
        b"abcde",
        OversizedLine(6, b"abcde"),
    ]


def test_eof_with_trailing_newline() -> None:
    reader = LineReader()
    assert reader.feed(b"a\nb\n") == [b"a", b"b"]
    assert reader.eof() == []


def test_eof_without_trailing_newline() -> None:
    reader = LineReader()
    assert reader.feed(b"a\nb") == [b"a"]
    assert reader.buffered == 1
    assert reader.eof() == [b"b"]
    assert reader.buffered == 0


def test_eof_while_discarding_reports_marker() -> None:
    reader = LineReader(max_line_bytes=4)
    assert reader.feed(b"ok\n0123456789") == [b"ok"]
    assert reader.feed(b"0123") == []
    assert reader.eof() == [OversizedLine(14, b"0123")]


def test_frame_appends_newline() -> None:
    assert frame(b'{"jsonrpc":"2.0"}') == b'{"jsonrpc":"2.0"}\n'


def test_frame_rejects_embedded_newline() -> None:
    with pytest.raises(ValueError):
        frame(b'{"a":\n1}')


def test_frame_roundtrip() -> None:
    msgs = [b'{"id":1}', b'{"id":2}']
    assert LineReader().feed(b"".join(frame(m) for m in msgs)) == msgs


def test_five_megabyte_line_in_64k_chunks() -> None:
    line = b'{"x":"' + b"a" * (5 * 1024 * 1024) + b'"}'
    data = line + b"\n"
    step = 64 * 1024
    reader = LineReader()
    out: list[Item] = []
    for i in range(0, len(data), step):
        out.extend(reader.feed(data[i : i + step]))
    assert out == [line]
    assert reader.buffered == 0
    assert reader.eof() == []
