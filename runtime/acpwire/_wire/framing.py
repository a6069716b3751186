"""Sans-IO newline-delimited JSON (NDJSON) framing for the ACP stdio transport.

The stdio transport carries one JSON-RPC message per line: UTF-8, delimited by ``b"\\n"``,
with no embedded newlines. This module only splits and joins bytes; it does no I/O and
never decodes, so callers feed it whatever their transport reads and parse the lines.
"""

from __future__ import annotations

import msgspec

from .options import ConnectionOptions

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "HEAD_BYTES",
    "LineBlock",
    "LineReader",
    "OversizedLine",
    "frame",
]

DEFAULT_MAX_LINE_BYTES = ConnectionOptions.max_line_bytes
"""Default line limit: the connection's."""

HEAD_BYTES = 4096
"""How much of a line over the limit is kept (`OversizedLine.head`): room for the envelope a
request starts with (`jsonrpc`, `id`, `method`), so it can be answered with its id."""

_LF = b"\n"
_CR = 0x0D  # an int: `_CR in data` is a bare memchr, cheaper than searching for b"\r"


class OversizedLine(msgspec.Struct, frozen=True, gc=False):
    """Marker for a line that exceeded the limit and was discarded unread (a Struct: defined
    in microseconds at import, cold start).

    ``size`` is the number of bytes dropped (the raw line, excluding its ``b"\\n"``);
    ``head`` its first ``min(HEAD_BYTES, max_line_bytes)`` bytes.
    """

    size: int
    head: bytes = b""


class LineBlock(msgspec.Struct, frozen=True, gc=False):
    """Complete lines read together, kept as one piece for a caller that decodes them in one
    call (`LineReader.feed_block`): no line in it is over the limit or ends in CR. (A Struct:
    defined in microseconds at import, cold start.)

    ``lines()`` are the lines ``feed`` would have returned for it.
    """

    data: bytes

    def lines(self) -> list[bytes]:
        return _kept(self.data.split(_LF))


def _kept(lines: list[bytes]) -> list[bytes]:
    """The non-blank lines (no calls: blank lines are rare)."""
    return [line for line in lines if line and (line[0] > 32 or not line.isspace())]


class LineReader:
    """Incremental splitter of a byte stream into newline-terminated lines.

    Lines are returned without the trailing ``b"\\n"`` (and one trailing ``b"\\r"``);
    empty and whitespace-only lines are skipped. A line longer than ``max_line_bytes``
    is never held in full: it is discarded as it arrives and reported once as an
    :class:`OversizedLine` when it ends, after which reading resumes normally.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()  # the start of a line whose newline has not arrived yet
        self._discarding = False
        self._discarded = 0
        self._head = b""  # the start of the line being discarded
        self._head_bytes = min(HEAD_BYTES, max_line_bytes)

    @property
    def buffered(self) -> int:
        """Number of bytes currently held for an incomplete line."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray) -> list[bytes | OversizedLine]:
        """Consume ``data`` and return the lines it completed, in order.

        Complete lines are cut straight out of ``data`` with ``bytes.split`` (one copy per
        line); only an unfinished line is buffered, and never more than the limit of it.
        """
        if type(data) is not bytes:
            data = bytes(data)
        out: list[bytes | OversizedLine] = []
        if self._discarding:
            nl = data.find(_LF)
            if nl == -1:
                self._discarded += len(data)
                return out
            out.append(OversizedLine(self._discarded + nl, self._head))
            self._discarding = False
            self._discarded = 0
            data = data[nl + 1 :]
        nl = data.find(_LF)
        if nl == -1:
            self._hold(data)
            return out
        first, *lines, tail = data.split(_LF)
        if self._buf:
            self._buf += first
            self._add(bytes(self._buf), out)
            self._buf.clear()
        else:
            self._add(first, out)
        if len(data) <= self.max_line_bytes and _CR not in data:
            out += _kept(lines)  # no line here can be too long or end in CR
        else:
            for line in lines:
                self._add(line, out)
        self._hold(tail)
        return out

    def feed_block(
        self, data: bytes | bytearray
    ) -> list[bytes | OversizedLine] | list[bytes | OversizedLine | LineBlock]:
        """``feed``, with the complete lines after the first one of ``data`` returned together as
        one `LineBlock` (last), when there are several and none can be over the limit or end in
        CR; the first completes what is held, and is returned alone."""
        if type(data) is not bytes:
            data = bytes(data)
        first = data.find(_LF)
        end = len(data) - 1
        if first == end:  # one line: a request or an answer read alone (latency)
            if (  # whole, nothing held: as it is
                not self._buf
                and not self._discarding
                and 0 < end <= self.max_line_bytes
                and data[end - 1] != _CR
                and data[0] > 32
            ):
                whole: list[bytes | OversizedLine] = [data[:end]]
                return whole
            return self.feed(data)
        if first == -1:
            return self.feed(data)
        last = data.rfind(_LF)
        if first == last or self._discarding or len(data) > self.max_line_bytes or _CR in data:
            return self.feed(data)
        items: list[bytes | OversizedLine | LineBlock] = [*self.feed(data[: first + 1])]
        items.append(LineBlock(data[first + 1 : last]))
        self._hold(data[last + 1 :])
        return items

    def eof(self) -> list[bytes | OversizedLine]:
        """Signal end of stream; flush a final unterminated line or pending marker."""
        out: list[bytes | OversizedLine] = []
        if self._discarding:
            out.append(OversizedLine(self._discarded, self._head))
            self._discarding = False
            self._discarded = 0
        elif self._buf:
            self._add(bytes(self._buf), out)
        self._buf.clear()
        return out

    def _hold(self, part: bytes) -> None:
        """Buffer the start of an unfinished line, or start discarding it once it is too long."""
        if not part:
            return
        self._buf += part
        n = len(self._buf)
        if self._buf[-1] == _CR:  # it may yet turn out to be part of a CRLF terminator
            n -= 1
        if n > self.max_line_bytes:
            self._discarding = True
            self._discarded = len(self._buf)
            self._head = bytes(self._buf[: self._head_bytes])
            self._buf.clear()

    def _add(self, raw: bytes, out: list[bytes | OversizedLine]) -> None:
        line = raw[:-1] if raw[-1:] == b"\r" else raw
        if len(line) > self.max_line_bytes:
            out.append(OversizedLine(len(raw), raw[: self._head_bytes]))
        elif line and (line[0] > 32 or not line.isspace()):
            out.append(line)


def frame(message: bytes) -> bytes:
    """Terminate one serialized message with ``b"\\n"`` for the stdio transport.

    Raises ``ValueError`` if ``message`` contains a newline, which would split it.
    """
    if _LF in message:
        raise ValueError("ACP stdio messages must not contain embedded newlines")
    return message + _LF
