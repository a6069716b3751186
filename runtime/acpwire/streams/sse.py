"""Server-sent events (the `text/event-stream` format), sans-IO: one JSON-RPC message per
event's `data`, comments as keepalives. Used by both sides of Streamable HTTP.

The parser follows the HTML standard's event-stream rules where ACP needs them: lines end in
LF, CRLF or CR; `data:` lines of one event are joined with LF; a blank line ends the event;
lines starting with `:` are comments; `id` sets the cursor of the event it is part of
(`last_event_id` once that event is complete: a resumable stream's `Last-Event-ID`); other
fields (`event`, `retry`) are read and ignored; a leading BOM is dropped.
"""

from __future__ import annotations

KEEPALIVE = b": keepalive\n\n"
"""A comment event: keeps intermediaries from timing an idle stream out; readers skip it."""

_BOM = b"\xef\xbb\xbf"


def event(data: bytes) -> bytes:
    """The event carrying `data` (one JSON text, no raw line breaks)."""
    return b"data: " + data + b"\n\n"


def identified_event(data: bytes, event_id: int) -> bytes:
    """The event carrying `data`, with its cursor (a resumable stream's)."""
    return b"id: %d\ndata: %b\n\n" % (event_id, data)


class EventTooLarge(ValueError):
    """An event's data grew past the parser's limit."""


class SseParser:
    """Incremental parser: `feed` bytes as they arrive, get the data of each event ended."""

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self._pending = b""  # an unfinished line
        self._data: list[bytes] = []
        self._size = 0
        self._started = False  # the BOM check is done
        self._after_cr = False  # the last chunk ended in CR: a LF first in the next is its pair
        self._event_id: bytes | None = None  # the `id` of the event being read
        self.last_event_id: str | None = None
        """The `id` of the last complete event that had one."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event `chunk` completes, in order (events without data are
        skipped). `EventTooLarge` when one passes the limit."""
        if not self._started:
            chunk = self._pending + chunk
            self._pending = b""
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._pending = chunk
                return []
            self._started = True
            chunk = chunk.removeprefix(_BOM)
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._after_cr = chunk[-1:] == b"\r"
        text = self._pending + chunk
        if b"\r" in text:
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events: list[bytes] = []
        end = text.rfind(b"\n\n")
        if end < 0 or self._data or self._event_id is not None:
            self._lines(text, events)
            return events
        # Every "\n\n" ends an event (the blank line after a line): the events before the
        # last one are whole. The common one, a single `data: ` line, needs no line work;
        # any other goes through the line rules with its blank line, as it would have.
        limit = self.max_event_bytes
        complete = text[:end]
        wholes = complete.split(b"\n\n")
        if (  # every event one `data: ` line (as a burst of messages is): no loop of our own
            complete.startswith(b"data: ")
            and complete.count(b"\n\ndata: ") == len(wholes) - 1
            and complete.count(b"\n") == 2 * (len(wholes) - 1)
        ):
            if max(map(len, wholes)) - 5 > limit:
                raise EventTooLarge(f"an event larger than {limit} bytes")
            events = [whole[6:] for whole in wholes]
            self._lines(text[end + 2 :], events)
            return events
        for whole in wholes:
            if whole[:6] == b"data: " and b"\n" not in whole:
                if len(whole) - 5 > limit:
                    raise EventTooLarge(f"an event larger than {limit} bytes")
                events.append(whole[6:])
            else:
                self._lines(whole + b"\n\n", events)
        self._lines(text[end + 2 :], events)
        return events

    def _lines(self, text: bytes, events: list[bytes]) -> None:
        """Apply the line rules to `text` (LF line ends): the data of each event it ends
        goes to `events`; its unfinished last line waits for the next chunk."""
        lines = text.split(b"\n")
        self._pending = lines.pop()
        if len(self._pending) > self.max_event_bytes + len(b"data: "):
            raise EventTooLarge(f"an event line longer than {self.max_event_bytes} bytes")
        for line in lines:
            if not line:
                if self._data:
                    events.append(b"\n".join(self._data))
                    self._data, self._size = [], 0
                if self._event_id is not None:
                    self.last_event_id = self._event_id.decode("utf-8", "replace")
                    self._event_id = None
                continue
            if line[:1] == b":":
                continue
            name, _, value = line.partition(b":")
            value = value[1:] if value[:1] == b" " else value
            if name != b"data":
                if name == b"id" and b"\0" not in value:
                    self._event_id = value
                continue
            self._size += len(value) + 1
            if self._size > self.max_event_bytes:
                raise EventTooLarge(f"an event larger than {self.max_event_bytes} bytes")
            self._data.append(value)
