"""Sans-IO newline-delimited JSON (NDJSON) framing for the ACP stdio transport.

The stdio transport carries one JSON-RPC message per line: UTF-8, delimited by ``b"\\n"``,
with no embedded newlines. This module only splits and joins bytes; it does no I/O and
never decodes, so callers feed it whatever their transport reads and parse the lines.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_LINE_BYTES", "LineReader", "OversizedLine", "frame"]

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
"""Default line limit; large enough for multi-MB tool call updates."""

_LF = b"\n"
_CR = 0x0D


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """Marker for a line that exceeded the limit and was discarded unread.

    ``size`` is the number of bytes dropped (the raw line, excluding its ``b"\\n"``).
    """

    size: int


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
        self._buf = bytearray()
        # The buffer holds no b"\n" before this offset, so searches resume here.
        self._scan = 0
        self._discarding = False
        self._discarded = 0

    @property
    def buffered(self) -> int:
        """Number of bytes currently held for an incomplete line."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray) -> list[bytes | OversizedLine]:
        """Consume ``data`` and return the lines it completed, in order."""
        out: list[bytes | OversizedLine] = []
        start = 0
        if self._discarding:
            nl = data.find(_LF)
            if nl == -1:
                self._discarded += len(data)
                return out
            out.append(OversizedLine(self._discarded + nl))
            self._discarding = False
            self._discarded = 0
            start = nl + 1

        buf = self._buf
        buf += memoryview(data)[start:]
        pos = 0
        scan = self._scan
        while (nl := buf.find(_LF, scan)) != -1:
            self._emit(pos, nl, out)
            pos = scan = nl + 1
        del buf[:pos]
        self._scan = len(buf)

        if self._too_long(len(buf)):
            self._discarding = True
            self._discarded = len(buf)
            buf.clear()
            self._scan = 0
        return out

    def eof(self) -> list[bytes | OversizedLine]:
        """Signal end of stream; flush a final unterminated line or pending marker."""
        out: list[bytes | OversizedLine] = []
        if self._discarding:
            out.append(OversizedLine(self._discarded))
            self._discarding = False
            self._discarded = 0
        elif self._buf:
            self._emit(0, len(self._buf), out)
        self._buf.clear()
        self._scan = 0
        return out

    def _too_long(self, n: int) -> bool:
        # A trailing b"\r" may yet turn out to be part of a CRLF terminator.
        if n and self._buf[-1] == _CR:
            n -= 1
        return n > self.max_line_bytes

    def _emit(self, start: int, end: int, out: list[bytes | OversizedLine]) -> None:
        buf = self._buf
        stop = end - 1 if end > start and buf[end - 1] == _CR else end
        if stop - start > self.max_line_bytes:
            out.append(OversizedLine(end - start))
            return
        line = bytes(buf[start:stop])
        if line and not line.isspace():
            out.append(line)


def frame(message: bytes) -> bytes:
    """Terminate one serialized message with ``b"\\n"`` for the stdio transport.

    Raises ``ValueError`` if ``message`` contains a newline, which would split it.
    """
    if _LF in message:
        raise ValueError("ACP stdio messages must not contain embedded newlines")
    return message + _LF
