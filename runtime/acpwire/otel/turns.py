"""The prompt turns open on one connection, one span each, by session.

A turn starts with its `session/prompt` (sent by a client, handled by an agent) and ends with
its stop reason: in v1 the prompt's result carries it; in v2 the prompt is answered once
inserted, and the turn ends with the session's next `state_update` whose state is `idle`
(an agent holds a prompt while the previous turn runs, answering it only after that turn's
idle: so an idle ends the oldest turn of the session whose prompt was answered)."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry.trace import Span, Status, StatusCode

STOP_REASON = "acp.stop_reason"
UPDATES = "acp.session_updates"
UPDATE_KIND = "acp.session_update"


@dataclass(eq=False)
class Turn:
    span: Span
    answered: bool = False
    updates: int = 0
    """The session updates sent or received in the turn (`acp.session_updates` at its end)."""
    last_kind: str | None = None
    carrier: dict[str, str] | None = None
    """Its trace context as `_meta` carries it (made once: the same for all its messages)."""

    def update(self, method: str, kind: str | None) -> None:
        """A session update of the turn: an event on its span, unless it is a chunk that
        continues a run of chunks of its kind (a reply streams thousands: the run's first
        chunk marks when it started, `acp.session_updates` counts them all)."""
        self.updates += 1
        if kind != self.last_kind or kind is None or not kind.endswith("_chunk"):
            self.span.add_event(method, {UPDATE_KIND: kind} if kind is not None else None)
        self.last_kind = kind


class Turns:
    """The open turns of one connection, oldest first per session."""

    def __init__(self) -> None:
        self._open: dict[str, list[Turn]] = {}

    def start(self, session_id: str | None, span: Span) -> Turn:
        turn = Turn(span)
        if session_id is not None:
            self._open.setdefault(session_id, []).append(turn)
        return turn

    def current(self, session_id: str | None) -> Turn | None:
        """The session's oldest open turn (what its updates belong to), if any."""
        turns = self._open.get(session_id) if session_id is not None else None
        return turns[0] if turns else None

    def answered(self, turn: Turn, stop_reason: str | None) -> None:
        """Its prompt was answered: with a stop reason (v1) the turn ends; without (v2) it
        ends with the session's next idle."""
        if stop_reason is None:
            turn.answered = True
        else:
            self.end(turn, stop_reason)

    def idle(self, session_id: str | None, stop_reason: str | None) -> None:
        """The session went idle: its oldest answered turn ends."""
        for turn in self._open.get(session_id, []) if session_id is not None else []:
            if turn.answered:
                self.end(turn, stop_reason)
                return

    def fail(self, turn: Turn, description: str) -> None:
        """Its prompt failed: the turn ends with an error status."""
        turn.span.set_status(Status(StatusCode.ERROR, description))
        self.end(turn, None)

    def end(self, turn: Turn, stop_reason: str | None) -> None:
        if stop_reason is not None:
            turn.span.set_attribute(STOP_REASON, stop_reason)
        turn.span.set_attribute(UPDATES, turn.updates)
        turn.span.end()
        for session_id, turns in self._open.items():
            if turn in turns:
                turns.remove(turn)
                if not turns:
                    del self._open[session_id]
                return

    def end_all(self) -> None:
        """The connection closed: every open turn ends (an event says why)."""
        for turns in list(self._open.values()):
            for turn in list(turns):
                turn.span.add_event("connection closed")
                self.end(turn, None)
