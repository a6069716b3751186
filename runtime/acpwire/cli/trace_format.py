"""The trace file `acpwire trace` writes and `acpwire show` reads: NDJSON, one JSON object a line.

The first line is the header:

    {"acpwire_trace": 1, "started": "2026-05-01T12:00:00.000000Z", "command": ["my-agent"],
     "redacted": ["env", "headers", "auth"], "patterns": ["sk-[a-z0-9]+"], "acpwire": "0.2.0"}

`acpwire_trace` is the format's version (this module writes and reads 1); `started` the wall
clock at the start (UTC); `command` the agent command; `redacted` the default rules applied and
`patterns` the `--redact` ones. Every other line is a record, `t` being the seconds since the
start on the monotonic clock (microseconds), `from` the side that wrote the line (`client`:
the editor, to the agent; `agent`: the agent, to the editor):

    {"t": 0.001204, "from": "client", "line": {"jsonrpc": "2.0", "id": 0, ...}}
    {"t": 0.081311, "from": "agent", "line": {...}, "redacted": true}
    {"t": 0.090002, "from": "agent", "text": "not JSON: a stray print"}
    {"t": 5.250000, "from": "client", "eof": true}
    {"t": 5.260113, "exit": {"code": 0}, "cpu": 0.021}

- `line`: the line as received, embedded byte for byte (a line that is JSON); with
  `"redacted": true` when a secret was replaced by `"[redacted]"` (the line re-encoded, in
  the trace only: the forwarded bytes are never changed);
- `"crlf": true`: the line ended with CR LF; `line` is what came before the CR;
- `text`: a line that is not JSON (or not UTF-8: undecodable bytes replaced), as a string;
  `"unterminated": true` marks a last line that had no newline before the end;
- `eof`: that side closed its output (`"broken": true`: the reader of it went away first, so
  the tap stopped reading it, as a closed pipe would);
- `exit`: how the agent ended, `{"code": N}` or `{"signal": N}`; `cpu`: the CPU seconds the
  tap spent forwarding and recording (its overhead; `bench/trace_tap.py` reads it).

Redacted by default: the values of `env` (an MCP server's or a terminal's environment, a
terminal auth method's) and of `headers` (an HTTP MCP server's), and every field of
`authenticate` / `auth/login` params but `methodId`. `--redact PATTERN` (a regular
expression) replaces each match in any string of a line.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = [
    "FORMAT",
    "VERSION",
    "Record",
    "Redactor",
    "TraceError",
    "TraceWriter",
    "read_trace",
]

FORMAT = "acpwire_trace"
"""The header's key naming the format; its value is the version."""
VERSION = 1
"""The version of the format this module writes and reads."""
REDACTED = "[redacted]"
DEFAULT_RULES = ("env", "headers", "auth")
AUTH_METHODS = frozenset({"authenticate", "auth/login"})
TRIGGERS = (b'"env"', b'"headers"', b'"authenticate"', b'"auth/login"')

_validate = msgspec.json.Decoder(msgspec.Raw).decode
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class TraceError(Exception):
    """A file that is not a trace of a version this acpwire reads; the message says why."""


class Redactor:
    """Replaces the secrets of a line (the default rules, then `patterns`) in its trace copy."""

    def __init__(self, patterns: Sequence[str] = ()) -> None:
        self.patterns = list(patterns)
        self._bytes = [re.compile(p.encode()) for p in patterns]
        self._text = [re.compile(p) for p in patterns]

    def wants(self, line: bytes) -> bool:
        """Whether the line may hold a secret (cheap: substrings and the patterns)."""
        return any(t in line for t in TRIGGERS) or any(p.search(line) for p in self._bytes)

    def redact(self, message: Any) -> Any:
        """The decoded line with its secrets replaced (the message itself is changed)."""
        if isinstance(message, dict) and message.get("method") in AUTH_METHODS:
            params = message.get("params")
            if isinstance(params, dict):
                for key in params:
                    if key != "methodId":
                        params[key] = REDACTED
        return self._walk(message)

    def redact_text(self, text: str) -> str:
        """A line that is not JSON, with the patterns' matches replaced."""
        for pattern in self._text:
            text = pattern.sub(REDACTED, text)
        return text

    def _walk(self, value: Any) -> Any:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("env", "headers"):
                    value[key] = _secret_values(item)
                else:
                    value[key] = self._walk(item)
            return value
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        if isinstance(value, str):
            return self.redact_text(value)
        return value


def _secret_values(value: Any) -> Any:
    """`env` / `headers`: a list of `{name, value}` or a name -> value map, values hidden."""
    if isinstance(value, dict):
        return {name: REDACTED for name in value}
    if isinstance(value, list):
        return [
            {**item, "value": REDACTED} if isinstance(item, dict) and "value" in item else item
            for item in value
        ]
    return value


def _is_json(data: bytes) -> bool:
    """Whether `data` is one JSON value in UTF-8 without a CR (so it can be embedded as it
    is: a CR, JSON whitespace, would end the record's line for some readers)."""
    if b"\r" in data:
        return False
    try:
        _validate(data)
        if not data.isascii():
            data.decode()
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return True


class TraceWriter:
    """Writes a trace to a file descriptor: the header, then records from any thread (each
    batch written whole, in one `write`)."""

    def __init__(self, fd: int, header: dict[str, Any], redactor: Redactor) -> None:
        self.fd = fd
        self.redactor = redactor
        self._lock = threading.Lock()
        self._write(_encode({FORMAT: VERSION, **header}) + b"\n")

    def _write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]

    def lines(
        self, seconds: float, side: bytes, lines: list[bytes], unterminated: bool = False
    ) -> None:
        """Record `lines` (without their newlines) that `side` (b"client" / b"agent") wrote,
        received `seconds` after the start (`unterminated`: a last line without newline)."""
        head = b'{"t":%.6f,"from":"%s",' % (seconds, side)
        end = b',"unterminated":true}\n' if unterminated else b"}\n"
        if not unterminated and self._all_plain(lines):  # the common case, in C-speed calls
            line_head = head + b'"line":'
            self._write(line_head + (end + line_head).join(lines) + end)
            return
        records = []
        wants = self.redactor.wants
        for line in lines:
            if wants(line):
                records.append(head + self._redacted(line) + end)
            elif _is_json(line):
                records.append(head + b'"line":' + line + end)
            elif line.endswith(b"\r") and _is_json(line[:-1]):  # CRLF: the CR apart
                records.append(head + b'"line":' + line[:-1] + b',"crlf":true' + end)
            else:
                records.append(head + b'"text":' + _encode(line.decode(errors="replace")) + end)
        self._write(b"".join(records))

    def _all_plain(self, lines: list[bytes]) -> bool:
        """Whether every line is JSON with nothing to redact (checked for all at once)."""
        batch = b",".join(lines)
        return not self.redactor.wants(batch) and _is_json(b"[" + batch + b"]")

    def _redacted(self, line: bytes) -> bytes:
        try:
            message = _decode(line)
        except msgspec.DecodeError:
            text = self.redactor.redact_text(line.decode(errors="replace"))
            return b'"text":' + _encode(text)
        return b'"line":' + _encode(self.redactor.redact(message)) + b',"redacted":true'

    def event(self, seconds: float, **fields: Any) -> None:
        """A record that is not a line: `eof`, `exit`."""
        self._write(_encode({"t": round(seconds, 6), **fields}) + b"\n")


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a trace, as `read_trace` gives it."""

    number: int
    """Its line number in the file (the header is line 1)."""
    t: float
    """Seconds since the start of the trace (monotonic clock)."""
    side: str | None
    """`client` or `agent` (who wrote the line), None for `exit`."""
    raw: bytes | None
    """The line as it was recorded (`line` records), else None."""
    text: str | None
    """A line that was not JSON (`text` records)."""
    fields: dict[str, Any]
    """The record's other fields (`eof`, `broken`, `exit`, `cpu`, `redacted`,
    `unterminated`, `crlf`)."""


class _RawRecord(msgspec.Struct):
    t: float = 0.0
    side: str | None = msgspec.field(default=None, name="from")
    line: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)  # empty: no `line`
    text: str | None = None
    eof: bool = False
    broken: bool = False
    redacted: bool = False
    unterminated: bool = False
    crlf: bool = False
    exit: dict[str, int] | None = None
    cpu: float | None = None


_read_record = msgspec.json.Decoder(_RawRecord).decode


def read_trace(data: bytes) -> tuple[dict[str, Any], Iterator[Record]]:
    """The header of a trace file's bytes and its records; TraceError when it is not a trace
    (or of a version this acpwire does not read)."""
    first, _, rest = data.partition(b"\n")
    try:
        header = _decode(first)
    except msgspec.DecodeError as error:
        raise TraceError(f"not an acpwire trace: its first line is not JSON ({error})") from None
    if not isinstance(header, dict) or FORMAT not in header:
        raise TraceError(f"not an acpwire trace: its first line has no {FORMAT!r} key")
    if header[FORMAT] != VERSION:
        raise TraceError(
            f"a trace of format version {header[FORMAT]}: this acpwire reads version {VERSION}"
            " (a newer acpwire reads it)"
        )
    return header, _records(rest)


def _records(rest: bytes) -> Iterator[Record]:
    for number, line in enumerate(rest.split(b"\n"), start=2):
        if not line.strip():
            continue
        try:
            record = _read_record(line)
        except msgspec.DecodeError as error:
            raise TraceError(f"line {number} is not a trace record: {error}") from None
        fields: dict[str, Any] = {
            name: value
            for name in ("eof", "broken", "redacted", "unterminated", "crlf", "exit", "cpu")
            if (value := getattr(record, name))
        }
        raw = bytes(record.line) if len(record.line) else None
        yield Record(number, record.t, record.side, raw, record.text, fields)
