"""A recorded trace as the script `acpwire replay` plays: its JSON-RPC messages in order,
each with its line in the trace, who sent it, and what it is."""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from .replay_match import kind_of
from .trace_format import TraceError, read_trace

__all__ = ["Recorded", "Script", "Side", "read_script"]

Side = Literal["client", "agent"]
SIDES: tuple[Side, Side] = ("client", "agent")


def other_side(side: Side) -> Side:
    return "agent" if side == "client" else "client"


@dataclass
class Recorded:
    """One message of the trace (or the end of one side's output)."""

    line: int
    """Its line in the trace file (the header is line 1)."""
    side: Side
    """Who sent it."""
    message: dict[str, Any]
    """The JSON-RPC message (empty for `eof`)."""
    eof: bool = False
    """True: not a message, the side closed its output here."""
    answers: Recorded | None = None
    """For a response: the request it answers (None: it answers no recorded request)."""
    in_run: bool = False
    """A message / thought chunk following one of its kind: by shape, a run of chunks is
    matched as its first one, which matches one or more live chunks."""

    @property
    def is_request(self) -> bool:
        return "method" in self.message and "id" in self.message

    @property
    def is_response(self) -> bool:
        return not self.eof and "method" not in self.message

    @property
    def is_chunk(self) -> bool:
        """A message, thought or tool call content chunk (`..._chunk` updates)."""
        return self.kind.endswith("_chunk")

    @functools.cached_property
    def kind(self) -> str:
        """`session/prompt`, `session/update agent_message_chunk`; a response: the kind of
        the request it answers, with ` response` added; `eof` (read once `answers` is set)."""
        if self.eof:
            return "eof"
        if self.is_response:
            request = kind_of(self.answers.message) if self.answers else "unknown request"
            return f"{request} response"
        return kind_of(self.message)

    def describe(self) -> str:
        """`line 7 (agent session/update agent_message_chunk)`."""
        return f"line {self.line} ({self.side} {self.kind})"


@dataclass
class Script:
    """The messages of a trace, in order."""

    path: Path
    command: list[str]
    """The agent command the trace was recorded with."""
    messages: list[Recorded]


_decode = msgspec.json.Decoder().decode


def read_script(path: Path) -> Script:
    """The script of the trace at `path`; `TraceError` naming the line when it is not a
    trace or has a line that is no JSON-RPC message."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceError(f"{path}: {error.strerror}") from None
    header, records = read_trace(data)
    messages: list[Recorded] = []
    for record in records:
        side = record.side
        if side not in SIDES:
            continue  # the `exit` record
        if record.fields.get("eof"):
            messages.append(Recorded(record.number, side, {}, eof=True))
            continue
        if record.raw is None:
            continue  # a line that is not JSON: nothing to replay
        message = _decode(record.raw)
        if not isinstance(message, dict) or not ("method" in message or "id" in message):
            raise TraceError(f"line {record.number}: not a JSON-RPC message")
        messages.append(Recorded(record.number, side, message))
    _pair(messages)
    for number, recorded in enumerate(messages):
        recorded.in_run = number > 0 and _continues_run(messages[number - 1], recorded)
    return Script(path, [str(part) for part in header.get("command", [])], messages)


def _pair(messages: list[Recorded]) -> None:
    """Each response's `answers`: the latest request of its id from the other side not
    answered yet; else the first such request after it (an `acpwire trace` that recorded
    each line after forwarding it, not before, could write an answer before its question)."""
    unanswered: dict[tuple[Side, str], list[Recorded]] = collections.defaultdict(list)
    early: list[Recorded] = []
    for recorded in messages:
        if recorded.eof:
            continue
        if recorded.is_request:
            unanswered[(recorded.side, _id(recorded))].append(recorded)
        elif recorded.is_response:
            asked = unanswered[(other_side(recorded.side), _id(recorded))]
            if asked:
                recorded.answers = asked.pop()
            else:
                early.append(recorded)
    for recorded in early:
        asked = unanswered[(other_side(recorded.side), _id(recorded))]
        later = next((request for request in asked if request.line > recorded.line), None)
        if later is not None:
            asked.remove(later)
            recorded.answers = later


def _id(recorded: Recorded) -> str:
    return msgspec.json.encode(recorded.message.get("id")).decode()


def _continues_run(previous: Recorded, recorded: Recorded) -> bool:
    if not recorded.is_chunk:
        return False
    return previous.side == recorded.side and previous.kind == recorded.kind
