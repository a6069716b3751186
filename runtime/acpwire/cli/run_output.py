"""What `acpwire run` shows of a run: `TextOutput` (the agent's words on stdout, the rest on
stderr) or `JsonOutput` (one NDJSON event per line on stdout)."""

from __future__ import annotations

import io
import os
import sys
from typing import Any, Protocol, TextIO

import msgspec

from acp_schema import v1, v2

__all__ = ["JsonOutput", "Output", "TextOutput"]

MESSAGE_CHUNKS = (v2.AgentMessageChunk, v1.AgentMessageChunk)
THOUGHT_CHUNKS = (v2.AgentThoughtChunk, v1.AgentThoughtChunk)
TEXT_BLOCKS = (v2.TextContent, v1.TextContent)


class Output(Protocol):
    """The events of a run, as `acpwire run` reports them."""

    def initialized(self, protocol_version: int, agent: str) -> None:
        """`initialize` was answered: the negotiated version, the agent's name and version."""

    def session(self, session_id: str, how: str) -> None:
        """A session was opened (`how`: new, resumed, loaded)."""

    def turn_started(self, number: int, text: str) -> None:
        """Turn `number` (from 1) was sent with the prompt `text`."""

    def update(self, update: Any) -> None:
        """A `session/update` of the turn."""

    def permission(self, title: str, decision: str, by: str) -> None:
        """A permission request was decided (`by`: the policy, or the user)."""

    def turn_ended(self, number: int, stop_reason: str | None, exit_code: int) -> None:
        """Turn `number` ended with `stop_reason`."""

    def note(self, message: str) -> None:
        """Something the user should know (cancelling, no terminal to ask on)."""

    def error(self, kind: str, message: str, exit_code: int) -> None:
        """The run failed: `kind` names the exit code's meaning."""


def text_of(update: Any) -> str:
    """The text of a chunk's text block ('' for other content)."""
    content = update.content
    return content.text if isinstance(content, TEXT_BLOCKS) else ""


def _one_place(out: TextIO, err: TextIO) -> bool:
    """Whether what `out` and `err` write ends up together: both terminals, or one file."""
    if out.isatty() and err.isatty():
        return True
    try:
        first, second = os.fstat(out.fileno()), os.fstat(err.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


class TextOutput:
    """The agent's message text on stdout, as it streams (each turn's answer ending with a
    newline); tool calls, permission decisions, thoughts and the stop reason on stderr in
    brackets. When both go to one place (a terminal, or `2>&1`), a bracketed line starts on a
    line of its own."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.interleaved = _one_place(self.out, self.err)
        self.open_line = False  # the answer's last text did not end its line
        self.thinking = False
        self.titles: dict[str, str] = {}  # tool call id -> its title

    def _status(self, line: str) -> None:
        self._end_thought()
        if self.open_line and self.interleaved:
            self.out.write("\n")
            self.out.flush()
            self.open_line = False
        self.err.write(f"[{line}]\n")
        self.err.flush()

    def _end_thought(self) -> None:
        if self.thinking:
            self.err.write("\n")
            self.thinking = False

    def initialized(self, protocol_version: int, agent: str) -> None:
        self._status(f"{agent}, protocol v{protocol_version}")

    def session(self, session_id: str, how: str) -> None:
        self._status(f"session {session_id} ({how})")

    def turn_started(self, number: int, text: str) -> None:
        pass

    def update(self, update: Any) -> None:
        if isinstance(update, MESSAGE_CHUNKS):
            self._end_thought()
            text = text_of(update)
            if text:
                self.out.write(text)
                self.out.flush()
                self.open_line = not text.endswith("\n")
        elif isinstance(update, THOUGHT_CHUNKS):
            if not self.thinking:
                self.err.write("[thought] ")
                self.thinking = True
            self.err.write(text_of(update))
            self.err.flush()
        elif isinstance(getattr(update, "tool_call_id", None), str):
            self._tool_call(update)

    def _tool_call(self, update: Any) -> None:
        """A tool call's title and status as this update leaves them (a new call: pending)."""
        tool_call_id: str = update.tool_call_id
        known = tool_call_id in self.titles
        title = getattr(update, "title", None)
        if isinstance(title, str):
            self.titles[tool_call_id] = title
        status = getattr(update, "status", None)
        if not isinstance(status, str):
            if known or not isinstance(title, str):
                return
            status = "pending"
        self._status(f"tool {self.titles.get(tool_call_id, tool_call_id)}: {status}")

    def permission(self, title: str, decision: str, by: str) -> None:
        self._status(f"permission {title!r}: {decision} ({by})")

    def turn_ended(self, number: int, stop_reason: str | None, exit_code: int) -> None:
        self._end_thought()
        if self.open_line:
            self.out.write("\n")
            self.out.flush()
            self.open_line = False
        self._status(stop_reason or "no stop reason")

    def note(self, message: str) -> None:
        self._status(message)

    def error(self, kind: str, message: str, exit_code: int) -> None:
        self._end_thought()
        if self.open_line:
            self.out.write("\n")
            self.open_line = False
        self.out.flush()
        self.err.write(f"acpwire run: {kind}: {message}\n")
        self.err.flush()


class JsonOutput:
    """One JSON object per line on stdout, `event` naming it: `initialized`, `session`,
    `turn_started`, `update` (the `session/update`'s `update` as the agent sent it, re-encoded
    from the typed value), `permission`, `turn_ended`, `note`, `error`."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.encoder = msgspec.json.Encoder()

    def _event(self, event: str, **fields: Any) -> None:
        self.out.write(self.encoder.encode({"event": event, **fields}).decode() + "\n")
        self.out.flush()

    def initialized(self, protocol_version: int, agent: str) -> None:
        self._event("initialized", protocolVersion=protocol_version, agent=agent)

    def session(self, session_id: str, how: str) -> None:
        self._event("session", sessionId=session_id, how=how)

    def turn_started(self, number: int, text: str) -> None:
        self._event("turn_started", turn=number, prompt=text)

    def update(self, update: Any) -> None:
        self._event("update", update=update)

    def permission(self, title: str, decision: str, by: str) -> None:
        self._event("permission", title=title, decision=decision, by=by)

    def turn_ended(self, number: int, stop_reason: str | None, exit_code: int) -> None:
        self._event("turn_ended", turn=number, stopReason=stop_reason, exitCode=exit_code)

    def note(self, message: str) -> None:
        self._event("note", message=message)

    def error(self, kind: str, message: str, exit_code: int) -> None:
        self._event("error", kind=kind, message=message, exitCode=exit_code)
