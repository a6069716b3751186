"""What `acpwire show` tells of a trace: its messages in order (each decoded against the
schema of the negotiated protocol version), the sessions and their turns (timings, tool calls,
permission requests and answers, state transitions), and the protocol rules broken, each
attached to the message where it happened.

The rules checked (`Finding.rule`):

- `schema`: a line does not decode against the schema (the version's unstable surface, the
  widest), or is not JSON-RPC at all;
- `jsonrpc`: a response to no pending request; a request never answered by the trace's end;
- `v2 lifecycle` (MUST, prompt-lifecycle.md): the `session/prompt` response comes before the
  `user_message` / `user_message_chunk` that reports where the prompt was inserted, and that
  report comes; `state_update` `running` before the turn's output; the idle `state_update`
  ending a turn carries a stop reason, a known one or a custom one beginning with `_`; after
  `session/cancel` the turn ends `cancelled`;
- `v2 lifecycle` (SHOULD): `requires_action` while a permission request is pending;
- `cancellation` (MUST, client): permission requests pending at `session/cancel` are answered
  `cancelled`.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

import acp_schema
import acp_schema.v1.methods as v1_methods
import acp_schema.v2.methods as v2_methods
from acp_schema import v1

from .trace_format import Record

__all__ = [
    "Entry",
    "Finding",
    "Permission",
    "Row",
    "Session",
    "Story",
    "ToolCall",
    "Turn",
    "exit_text",
    "seconds",
    "tell",
    "timeline",
]

KNOWN_STOP_REASONS = frozenset(typing.get_args(v1.StopReason))
OUTPUT_UPDATES = frozenset(
    {
        "agent_message_chunk",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "tool_call",
        "tool_call_update",
        "tool_call_content_chunk",
        "plan",
        "plan_update",
    }
)
USER_MESSAGES = frozenset({"user_message", "user_message_chunk"})
Level = Literal["MUST", "SHOULD", "error"]
_decode_json = msgspec.json.Decoder().decode


@dataclass
class Finding:
    """A rule broken at one message."""

    level: Level
    """`MUST` / `SHOULD` (the spec's words), `error` (not a valid message at all)."""
    rule: str
    """The family: `schema`, `jsonrpc`, `v2 lifecycle`, `cancellation`."""
    message: str
    """What is wrong, in words."""


@dataclass
class Entry:
    """One record of the trace, as shown."""

    number: int
    """Its line in the trace file."""
    t: float
    """Seconds since the trace started."""
    side: str | None
    """`client` or `agent` (who wrote it); None for the agent's exit."""
    kind: str
    """`request`, `notification`, `response`, `error`, `text`, `eof` or `exit`."""
    method: str | None
    """The method (a response: the method of the request it answers)."""
    summary: str
    """One line saying what it is."""
    raw: bytes | None = None
    """The line as recorded (`text` records: None)."""
    findings: list[Finding] = field(default_factory=list)
    """The rules it breaks."""
    update: str | None = None
    """A `session/update`'s kind (`agent_message_chunk`, ...)."""


@dataclass
class ToolCall:
    """A tool call of a turn and its statuses over time."""

    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    statuses: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Permission:
    """A permission request of a turn and its answer."""

    t: float
    title: str
    options: list[str]
    answer: str | None = None
    answered: float | None = None
    entry: int = 0


@dataclass
class Turn:
    """One prompt turn: its prompt, timings, tool calls, permissions and states."""

    number: int
    prompt: str
    started: float
    entry: int
    accepted: float | None = None
    first_chunk: float | None = None
    ended: float | None = None
    stop_reason: str | None = None
    error: str | None = None
    message_id: str | None = None
    inserted: bool = False
    running_seen: bool = False
    cancelled: float | None = None
    states: list[tuple[float, str, str | None]] = field(default_factory=list)
    tool_calls: dict[str, ToolCall] = field(default_factory=dict)
    permissions: list[Permission] = field(default_factory=list)
    last_agent: float | None = None
    longest_gap: tuple[float, float] | None = None  # (seconds, at)
    user_messages: dict[str, Entry] = field(default_factory=dict)

    @property
    def duration(self) -> float | None:
        """From the prompt to the end the agent reported."""
        return None if self.ended is None else self.ended - self.started

    @property
    def outcome(self) -> str:
        """How it ended: the stop reason, the error, `ended` (no stop reason), `not ended`."""
        return self.stop_reason or self.error or ("not ended" if self.ended is None else "ended")

    @property
    def to_first_chunk(self) -> float | None:
        """From the prompt to the agent's first message chunk."""
        return None if self.first_chunk is None else self.first_chunk - self.started


@dataclass
class Session:
    """A session and its turns."""

    session_id: str
    how: str
    opened: float
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Story:
    """Everything `acpwire show` renders of one trace."""

    header: dict[str, Any]
    entries: list[Entry] = field(default_factory=list)
    sessions: dict[str, Session] = field(default_factory=dict)
    protocol_version: int | None = None
    agent: str | None = None
    exit: dict[str, int] | None = None

    @property
    def findings(self) -> list[tuple[Entry, Finding]]:
        """Every finding with the entry it is attached to, in trace order."""
        return [(entry, finding) for entry in self.entries for finding in entry.findings]

    @property
    def duration(self) -> float:
        """Seconds from the start to the last record."""
        return self.entries[-1].t if self.entries else 0.0

    @property
    def messages(self) -> int:
        """How many JSON lines the two sides wrote (`text` lines aside)."""
        return sum(1 for entry in self.entries if entry.raw is not None)


@dataclass
class _Pending:
    method: str
    entry: Entry
    params: Any
    turn: Turn | None = None
    permission: Permission | None = None


def tell(header: dict[str, Any], records: Iterable[Record]) -> Story:
    """The story of a trace's records."""
    teller = _Teller(Story(header))
    for record in records:
        teller.record(record)
    teller.finish()
    return teller.story


class _Teller:
    def __init__(self, story: Story) -> None:
        self.story = story
        self.version = 2
        self.pending: dict[tuple[str, Any], _Pending] = {}
        self.turns: dict[str, Turn] = {}  # session id -> its running turn

    # -- records

    def record(self, record: Record) -> None:
        entry = Entry(record.number, record.t, record.side, "", None, "", record.raw)
        self.story.entries.append(entry)
        if record.raw is not None:
            assert record.side is not None
            self._line(entry, record.side, record.raw)
        elif record.text is not None:
            entry.kind = "text"
            entry.summary = f"not JSON: {_short(record.text)}"
            entry.findings.append(Finding("error", "schema", "a line that is not JSON"))
        elif "exit" in record.fields:
            self.story.exit = record.fields["exit"]
            entry.kind = "exit"
            entry.summary = f"the agent's end: {exit_text(record.fields['exit'])}"
        elif record.fields.get("eof"):
            entry.kind = "eof"
            broken = " (its reader went away)" if record.fields.get("broken") else ""
            entry.summary = f"the {record.side} closed its output{broken}"

    def _line(self, entry: Entry, side: str, raw: bytes) -> None:
        try:
            message = _decode_json(raw)
        except msgspec.DecodeError as error:  # pragma: no cover (the tap records such as text)
            entry.kind = "text"
            entry.findings.append(Finding("error", "schema", f"not JSON: {error}"))
            return
        if not isinstance(message, dict):
            entry.kind, entry.summary = "text", "JSON, but not a JSON-RPC message"
            entry.findings.append(Finding("error", "schema", "not a JSON-RPC message"))
            return
        other = "agent" if side == "client" else "client"
        method, has_id = message.get("method"), "id" in message
        if isinstance(method, str):
            entry.kind, entry.method = ("request" if has_id else "notification"), method
            if method == v2_methods.INITIALIZE.name and side == "client":
                self._initialize(message)
            self._check_schema(entry, side, raw, None)
            if has_id:
                self.pending[(side, message["id"])] = _Pending(method, entry, message.get("params"))
            self._call(entry, side, method, message.get("params"), message.get("id"))
        elif has_id and ("result" in message or "error" in message):
            entry.kind = "response" if "result" in message else "error"
            pending = self.pending.pop((other, message["id"]), None)
            if pending is None:
                entry.summary = f"answer #{message['id']}"
                entry.findings.append(
                    Finding(
                        "MUST",
                        "jsonrpc",
                        f"a response to no pending request (id {message['id']!r})",
                    )
                )
                return
            entry.method = pending.method
            if pending.method == v2_methods.INITIALIZE.name:
                self._initialized(message)
            self._check_schema(entry, side, raw, pending.method)
            self._answer(entry, pending, message)
        else:
            entry.kind, entry.summary = "text", "JSON, but not a JSON-RPC message"
            entry.findings.append(Finding("error", "schema", "neither a request nor a response"))

    def _check_schema(self, entry: Entry, side: str, raw: bytes, method: str | None) -> None:
        surface: acp_schema.Surface[Any, Any, Any, Any] = (
            acp_schema.surface(1, unstable=True)
            if self.version == 1
            else acp_schema.surface(2, unstable=True)
        )
        codec = surface.agent_codec if side == "client" else surface.client_codec
        try:
            codec.decode(raw, (lambda _: method) if method else None)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            entry.findings.append(
                Finding("error", "schema", f"does not fit the {surface.label} schema: {error}")
            )

    # -- version

    def _initialize(self, message: dict[str, Any]) -> None:
        version = _get(message, "params", "protocolVersion")
        if version in (1, 2):
            self.version = version

    def _initialized(self, message: dict[str, Any]) -> None:
        version = _get(message, "result", "protocolVersion")
        if version in (1, 2):
            self.version = self.story.protocol_version = version
        info = _get(message, "result", "info") or _get(message, "result", "agentInfo")
        if isinstance(info, dict):
            self.story.agent = f"{info.get('name')} {info.get('version')}"

    # -- calls

    def _call(self, entry: Entry, side: str, method: str, params: Any, request_id: Any) -> None:
        number = f" #{request_id}" if request_id is not None else ""
        entry.summary = f"{method}{number}"
        params = params if isinstance(params, dict) else {}
        session_id = params.get("sessionId")
        turn = self.turns.get(session_id) if isinstance(session_id, str) else None
        if (
            method == v2_methods.SESSION_PROMPT.name
            and side == "client"
            and isinstance(session_id, str)
        ):
            self._prompt(entry, session_id, params)
        elif method == v2_methods.SESSION_UPDATE.name and side == "agent":
            self._update(entry, turn, params.get("update"))
        elif method == v2_methods.SESSION_REQUEST_PERMISSION.name and side == "agent":
            self._permission(entry, turn, params, request_id)
        elif method == v2_methods.SESSION_CANCEL.name and side == "client" and turn is not None:
            turn.cancelled = entry.t
        if turn is not None and side == "agent":
            self._gap(turn, entry.t)

    def _prompt(self, entry: Entry, session_id: str, params: dict[str, Any]) -> None:
        session = self.story.sessions.setdefault(session_id, Session(session_id, "seen", entry.t))
        text = " ".join(
            block.get("text", "")
            for block in params.get("prompt") or []
            if isinstance(block, dict) and block.get("type") == "text"
        )
        turn = Turn(len(session.turns) + 1, text, entry.t, entry.number)
        session.turns.append(turn)
        self.turns[session_id] = turn
        entry.summary += f": {_short(text)}"

    def _update(self, entry: Entry, turn: Turn | None, update: Any) -> None:
        if not isinstance(update, dict):
            return
        kind = update.get("sessionUpdate")
        entry.update = kind if isinstance(kind, str) else None
        entry.summary += f" {kind}"
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            text = _get(update, "content", "text")
            entry.summary += f": {_short(text if isinstance(text, str) else repr(text))}"
        if turn is None or turn.ended is not None:
            return
        v2 = self.version == 2
        if kind in USER_MESSAGES:
            message_id = update.get("messageId")
            if isinstance(message_id, str):
                turn.user_messages.setdefault(message_id, entry)
                if message_id == turn.message_id:
                    turn.inserted = True
        elif kind == "state_update":
            state, reason = update.get("state"), update.get("stopReason")
            turn.states.append((entry.t, str(state), reason if isinstance(reason, str) else None))
            entry.summary += f" {state}" + (f" ({reason})" if isinstance(reason, str) else "")
            if state == "running":
                turn.running_seen = True
            elif state == "idle" and v2 and turn.accepted is not None:
                self._end(entry, turn, reason if isinstance(reason, str) else None)
        elif kind in OUTPUT_UPDATES and v2 and not turn.running_seen and turn.accepted is not None:
            turn.running_seen = True  # said once per turn
            entry.findings.append(
                Finding("MUST", "v2 lifecycle", "output before `state_update` running")
            )
        if kind == "agent_message_chunk" and turn.first_chunk is None:
            turn.first_chunk = entry.t
        if kind in ("tool_call", "tool_call_update"):
            self._tool_call(entry, turn, update)

    def _tool_call(self, entry: Entry, turn: Turn, update: dict[str, Any]) -> None:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        call = turn.tool_calls.setdefault(tool_call_id, ToolCall(tool_call_id))
        title, kind, status = update.get("title"), update.get("kind"), update.get("status")
        if isinstance(title, str):
            call.title = title
        if isinstance(kind, str):
            call.kind = kind
        if isinstance(status, str):
            call.statuses.append((entry.t, status))
        elif not call.statuses:
            call.statuses.append((entry.t, "pending"))
        entry.summary += f": {call.title or tool_call_id} {call.statuses[-1][1]}"

    def _permission(
        self, entry: Entry, turn: Turn | None, params: dict[str, Any], request_id: Any
    ) -> None:
        title = params.get("title") or _get(params, "toolCall", "title")
        if not isinstance(title, str):
            tool_call_id = _get(params, "toolCall", "toolCallId") or _get(
                params, "subject", "toolCall", "toolCallId"
            )
            call = (
                turn.tool_calls.get(tool_call_id)
                if turn and isinstance(tool_call_id, str)
                else None
            )
            title = (call.title if call else None) or "permission"
        options = [
            f"{o.get('name')} ({o.get('kind')})"
            for o in params.get("options") or []
            if isinstance(o, dict)
        ]
        permission = Permission(entry.t, title, options, entry=entry.number)
        entry.summary += f": {_short(title)}"
        if turn is None:
            return
        turn.permissions.append(permission)
        if self.version == 2 and (not turn.states or turn.states[-1][1] != "requires_action"):
            entry.findings.append(
                Finding(
                    "SHOULD",
                    "v2 lifecycle",
                    "no `requires_action` state before the permission request",
                )
            )
        pending = self.pending.get(("agent", request_id))
        if pending is not None:
            pending.turn, pending.permission = turn, permission

    # -- answers

    def _answer(self, entry: Entry, pending: _Pending, message: dict[str, Any]) -> None:
        request_id = message["id"]
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            entry.summary = f"error #{request_id} to {pending.method}: {text} ({code})"
        else:
            entry.summary = f"answer #{request_id} to {pending.method}"
        result = message.get("result")
        method = pending.method
        if method in (
            v2_methods.SESSION_NEW.name,
            v1_methods.SESSION_LOAD.name,
            v2_methods.SESSION_RESUME.name,
        ) and isinstance(result, dict):
            session_id = result.get("sessionId") or _get_params(pending, "sessionId")
            if isinstance(session_id, str):
                how = {
                    v2_methods.SESSION_NEW.name: "new",
                    v1_methods.SESSION_LOAD.name: "loaded",
                }.get(method, "resumed")
                self.story.sessions.setdefault(session_id, Session(session_id, how, entry.t))
                entry.summary += f": {session_id}"
        elif method == v2_methods.SESSION_PROMPT.name:
            self._prompt_answered(entry, pending, result, error)
        elif (
            method == v2_methods.SESSION_REQUEST_PERMISSION.name and pending.permission is not None
        ):
            self._permission_answered(entry, pending, result)

    def _prompt_answered(self, entry: Entry, pending: _Pending, result: Any, error: Any) -> None:
        session_id = _get_params(pending, "sessionId")
        turn = self.turns.get(session_id) if isinstance(session_id, str) else None
        if turn is None or turn.entry != pending.entry.number:
            return
        if error is not None:
            turn.ended, turn.error = entry.t, entry.summary
            return
        turn.accepted = entry.t
        if self.version != 2:
            reason = result.get("stopReason") if isinstance(result, dict) else None
            turn.ended, turn.stop_reason = entry.t, reason if isinstance(reason, str) else None
            entry.summary += f": {turn.stop_reason}"
            return
        message_id = result.get("messageId") if isinstance(result, dict) else None
        if isinstance(message_id, str):
            turn.message_id = message_id
            entry.summary += f": message {message_id}"
            early = turn.user_messages.get(message_id)
            if early is not None:
                turn.inserted = True
                early.findings.append(
                    Finding(
                        "MUST",
                        "v2 lifecycle",
                        "the user message came before the `session/prompt` response",
                    )
                )

    def _permission_answered(self, entry: Entry, pending: _Pending, result: Any) -> None:
        permission, turn = pending.permission, pending.turn
        assert permission is not None
        outcome = result.get("outcome") if isinstance(result, dict) else None
        answer = "?"
        if isinstance(outcome, dict):
            answer = str(outcome.get("optionId") or outcome.get("outcome"))
        permission.answer, permission.answered = answer, entry.t
        entry.summary += f": {answer}"
        cancelled_before = (
            turn is not None and turn.cancelled is not None and turn.cancelled < entry.t
        )
        if cancelled_before and not (
            isinstance(outcome, dict) and outcome.get("outcome") == "cancelled"
        ):
            entry.findings.append(
                Finding(
                    "MUST",
                    "cancellation",
                    "a permission request pending at `session/cancel` answered other than `cancelled`",
                )
            )

    # -- the end of a turn

    def _end(self, entry: Entry, turn: Turn, reason: str | None) -> None:
        turn.ended, turn.stop_reason = entry.t, reason
        if not turn.inserted:
            entry.findings.append(
                Finding(
                    "MUST",
                    "v2 lifecycle",
                    "the turn ended without a `user_message` reporting where its prompt was inserted",
                )
            )
        if reason is None:
            entry.findings.append(
                Finding(
                    "MUST",
                    "v2 lifecycle",
                    "the idle `state_update` ending the turn has no stop reason",
                )
            )
        elif reason not in KNOWN_STOP_REASONS and not reason.startswith("_"):
            entry.findings.append(
                Finding(
                    "MUST",
                    "v2 lifecycle",
                    f"stop reason {reason!r}: a custom one must begin with `_`",
                )
            )
        if turn.cancelled is not None and reason != "cancelled":
            entry.findings.append(
                Finding(
                    "MUST",
                    "v2 lifecycle",
                    f"the turn was cancelled but ended {reason!r}, not `cancelled`",
                )
            )

    def _gap(self, turn: Turn, t: float) -> None:
        if turn.ended is not None and turn.ended < t:
            return
        if turn.last_agent is not None:
            gap = t - turn.last_agent
            if turn.longest_gap is None or gap > turn.longest_gap[0]:
                turn.longest_gap = (gap, turn.last_agent)
        turn.last_agent = t

    def finish(self) -> None:
        for (side, request_id), pending in self.pending.items():
            pending.entry.findings.append(
                Finding(
                    "MUST", "jsonrpc", f"request #{request_id} from the {side} was never answered"
                )
            )


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _get_params(pending: _Pending, key: str) -> Any:
    return pending.params.get(key) if isinstance(pending.params, dict) else None


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Row:
    """A row of the timeline: one entry, or a run of message chunks folded into one."""

    entries: list[Entry]
    """The entries it shows (a run of chunks: several)."""
    delta: float | None
    """Seconds since the previous row (None for the first)."""

    @property
    def first(self) -> Entry:
        """The row's first entry (its time, side and line)."""
        return self.entries[0]

    @property
    def summary(self) -> str:
        """What the row says: the entry's summary, or the run's count and text."""
        if len(self.entries) == 1:
            return self.first.summary
        text = "".join(_chunk_text(entry) for entry in self.entries)
        return f"{len(self.entries)} × {self.first.update}: {_short(text, 80)}"


FOLDED = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


def timeline(story: Story) -> list[Row]:
    """The story's entries in order, consecutive chunks of one kind folded into one row (an
    entry with a finding always has a row of its own)."""
    rows: list[Row] = []
    previous: float | None = None
    for entry in story.entries:
        last = rows[-1] if rows else None
        if (
            last is not None
            and entry.update in FOLDED
            and entry.update == last.first.update
            and not entry.findings
            and not last.entries[-1].findings
        ):
            last.entries.append(entry)
            previous = entry.t
            continue
        rows.append(Row([entry], None if previous is None else entry.t - previous))
        previous = entry.t
    return rows


def _chunk_text(entry: Entry) -> str:
    if entry.raw is None:
        return ""
    text = _get(_decode_json(entry.raw), "params", "update", "content", "text")
    return text if isinstance(text, str) else ""


def exit_text(how: dict[str, int]) -> str:
    """How the agent ended, in words: `exit code 0`, `ended by signal 15`."""
    return f"exit code {how['code']}" if "code" in how else f"ended by signal {how.get('signal')}"


def seconds(value: float | None) -> str:
    """A duration for a person: `1.23 s`, `45.6 ms`, `789 µs`; `-` for None."""
    if value is None:
        return "-"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 0.001:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} µs"
