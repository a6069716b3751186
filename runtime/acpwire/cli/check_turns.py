"""`acpwire check`'s prompt turns: one followed to its end on the wire (`follow_turn`), and
judged against the lifecycle rules (`TurnJudge`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import msgspec

import acp_schema
import acp_schema.v2.methods as v2_methods

from .check_peer import Incoming, JsonObject, Peer, Transcript, WireLine
from .check_verdicts import Verdicts

__all__ = [
    "CANCEL_RULES",
    "TURN_RULES",
    "Action",
    "Turn",
    "TurnJudge",
    "describe",
    "fits",
    "follow_turn",
]

GRACE = 0.5
"""Seconds the checker keeps listening after a turn's end for lines that must not come."""
STOP_REASONS = {
    1: {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"},
    2: {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"},
}
NO_CREDENTIALS = "(an agent without credentials often does)"
TURN_RULES = (
    "turn.prompt-accepted",
    "turn.user-message",
    "turn.running",
    "turn.idle-stop-reason",
    "turn.requires-action",
    "turn.stop-reason-known",
    "turn.updates-fit",
)
CANCEL_RULES = ("turn.cancelled", "turn.nothing-after-cancelled")


def fits(version: int, side: str, method: str, part: str, value: object) -> str | None:
    """None when `value` fits the schema's type for `method`'s `part` ("params" or
    "result"), with the schema's own leniency (its default-on-error fields); otherwise what
    does not fit."""
    surface = acp_schema.surface(version)
    table = surface.agent_methods if side == "agent" else surface.client_methods
    spec = table[method]
    codec = spec.params if part == "params" else spec.result
    assert codec is not None
    try:
        codec.convert(value)
    except (msgspec.ValidationError, TypeError, ValueError) as error:
        return str(error)
    return None


def describe(incoming: Incoming | None) -> str:
    """An answer in a few words: `a result`, `error -32601 (Method not found)`, `no answer`."""
    if incoming is None:
        return "no answer"
    code = incoming.error_code
    if code is not None:
        error = (incoming.message or {}).get("error", {})
        return f"error {code} ({error.get('message', '')})"
    return "a result"


def session_update(incoming: Incoming, session_id: str | None = None) -> JsonObject | None:
    """The update of a `session/update` notification (of `session_id`, when given)."""
    if (
        incoming.method != v2_methods.SESSION_UPDATE.name
        or incoming.is_request
        or incoming.message is None
    ):
        return None
    params = incoming.message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
        return None
    if session_id is not None and params.get("sessionId") != session_id:
        return None
    update: JsonObject = params["update"]
    return update


def state_of(incoming: Incoming, session_id: str) -> str | None:
    """The state a v2 `state_update` of `session_id` reports (None for any other line)."""
    update = session_update(incoming, session_id)
    if update is None or update.get("sessionUpdate") != "state_update":
        return None
    state = update.get("state")
    return state if isinstance(state, str) else None


def stop_reason_of(incoming: Incoming, version: int, session_id: str) -> object:
    """The stop reason a turn's end carries (v2: the idle update; v1: the prompt response)."""
    if version >= 2:
        return (session_update(incoming, session_id) or {}).get("stopReason")
    result = (incoming.message or {}).get("result")
    return result.get("stopReason") if isinstance(result, dict) else None


def _dict(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _permission_of(incoming: Incoming, session_id: str) -> bool:
    """Whether `incoming` is a permission request of `session_id`."""
    params = _dict((incoming.message or {}).get("params"))
    return (
        incoming.is_request
        and incoming.method == v2_methods.SESSION_REQUEST_PERMISSION.name
        and params.get("sessionId") == session_id
    )


def _tool_call_of(request: Incoming) -> str | None:
    """The tool call a permission request names (v1 `toolCall`, v2 `subject.toolCall`)."""
    params = _dict((request.message or {}).get("params"))
    call = _dict(params.get("toolCall") or _dict(params.get("subject")).get("toolCall"))
    call_id = call.get("toolCallId")
    return call_id if isinstance(call_id, str) else None


def _answer_to(request: Incoming, transcript: Transcript) -> WireLine | None:
    """The checker's response to the agent's `request` (its line in the transcript)."""
    request_id = (request.message or {}).get("id")
    wanted = json.dumps({"jsonrpc": "2.0", "id": request_id}, separators=(",", ":"))[:-1]
    for line in transcript.lines[request.line.seq + 1 :]:
        if line.to_agent and line.process == request.line.process and line.text.startswith(wanted):
            return line
    return None


@dataclass
class Turn:
    """One prompt's lines: its response, the updates and requests, the end (v2: idle; v1: the
    response) and, when the scenario acted mid-turn, where (`acted_at`) and its answer."""

    session_id: str
    version: int
    response: Incoming | None = None
    lines: list[Incoming] = field(default_factory=list)
    end: Incoming | None = None
    acted_at: int | None = None
    action_line: WireLine | None = None
    action_answer: Incoming | None = None
    after_end: list[Incoming] = field(default_factory=list)

    def index_of(self, incoming: Incoming | None) -> int:
        return self.lines.index(incoming) if incoming in self.lines else len(self.lines)

    def evidence(self) -> list[Incoming | None]:
        return [self.response, *self.lines]

    @property
    def stop_reason(self) -> object:
        return stop_reason_of(self.end, self.version, self.session_id) if self.end else None

    @property
    def ended_before_action(self) -> bool:
        """Whether the turn ended before the scenario could act (no update came first, or
        the end came before the action)."""
        return self.acted_at is None or (
            self.end is not None and self.index_of(self.end) < self.acted_at
        )


Action = Callable[[Peer, str], Awaitable[object]]
"""What a scenario does mid-turn (send session/cancel, session/close): returns the id of a
request whose answer the turn waits for too, or None."""


async def follow_turn(
    peer: Peer, version: int, session_id: str, text: str, action: Action | None = None
) -> Turn:
    """Prompt and follow the turn to its end (v2: the response and idle; v1: the response),
    acting once after the turn's first update; then listen `GRACE` more. A silence longer
    than the peer's timeout ends the wait."""
    turn = Turn(session_id, version)
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    prompt_id = await peer.request(v2_methods.SESSION_PROMPT.name, params)
    action_id: object = None
    while not _followed(turn, action_id):
        incoming = await peer.receive()
        if incoming is None:
            break
        if incoming.answers(prompt_id):
            turn.response = incoming
            turn.end = incoming if version < 2 else turn.end
        elif action_id is not None and incoming.answers(action_id):
            turn.action_answer = incoming
        else:
            turn.lines.append(incoming)
            if version >= 2 and turn.end is None and state_of(incoming, session_id) == "idle":
                turn.end = incoming
            if action is not None and _time_to_act(turn, incoming):
                turn.acted_at = len(turn.lines)
                action_id = await action(peer, session_id)
                turn.action_line = peer.last_sent
    while (incoming := await peer.receive(GRACE)) is not None:
        if action_id is not None and incoming.answers(action_id):
            turn.action_answer = incoming
        else:
            turn.after_end.append(incoming)
    return turn


def _followed(turn: Turn, action_id: object) -> bool:
    if action_id is not None and turn.action_answer is None:
        return False
    response = turn.response
    if response is None:
        return False
    return turn.version < 2 or turn.end is not None or response.error_code is not None


def _time_to_act(turn: Turn, incoming: Incoming) -> bool:
    """After the turn's first update (v2: once the prompt is accepted), before its end."""
    return (
        turn.acted_at is None
        and turn.end is None
        and session_update(incoming, turn.session_id) is not None
        and (turn.version < 2 or turn.response is not None)
    )


class TurnJudge:
    """Judges turns against the lifecycle rules."""

    def __init__(self, verdicts: Verdicts, version: int) -> None:
        self.verdicts = verdicts
        self.version = version

    def wire(self, turn: Turn) -> None:
        """turn.updates-fit and turn.stop-reason-known: for any turn."""
        for incoming in [*turn.lines, *turn.after_end]:
            if incoming.method == v2_methods.SESSION_UPDATE.name and incoming.message is not None:
                params = incoming.message.get("params")
                problem = fits(
                    self.version, "client", v2_methods.SESSION_UPDATE.name, "params", params
                )
                self.verdicts.judge(
                    "turn.updates-fit",
                    problem is None,
                    problem or "every session/update fits the schema",
                    [incoming] if problem else [],
                )
        reason = turn.stop_reason
        if isinstance(reason, str):
            custom = self.version >= 2 and reason.startswith("_")
            known = reason in STOP_REASONS[self.version] or custom
            if custom:
                why = f"stop reason {reason!r} (a custom one: v2 allows `_`)"
            elif known:
                why = f"stop reason {reason!r}"
            else:
                why = f"stop reason {reason!r}, not one of v{self.version}'s" + (
                    " nor beginning with `_`" if self.version >= 2 else " (v1 has no custom ones)"
                )
            self.verdicts.judge("turn.stop-reason-known", known, why, [turn.end])

    def unusable(self, turn: Turn, rule_ids: Sequence[str]) -> bool:
        """When the prompt was answered with an error (or its turn ended `error`): its rules
        not applicable (the agent may lack credentials), and True."""
        if turn.response is not None and turn.response.error_code is not None:
            why = f"session/prompt got {describe(turn.response)} {NO_CREDENTIALS}"
        elif turn.stop_reason == "error":
            why = f"the turn ended with stop reason `error` {NO_CREDENTIALS}"
        else:
            return False
        for rule_id in rule_ids:
            self.verdicts.not_applicable(rule_id, why, [turn.response, turn.end])
        return True

    def turn(self, turn: Turn) -> None:
        """The rules of a turn that ran to its end."""
        self.wire(turn)
        response = turn.response
        if response is None:
            why = "session/prompt got no answer"
            self.verdicts.failed("turn.prompt-accepted", why, turn.evidence())
            return
        if self.unusable(turn, TURN_RULES):
            return
        result = (response.message or {}).get("result")
        problem = fits(self.version, "agent", v2_methods.SESSION_PROMPT.name, "result", result)
        self.verdicts.judge(
            "turn.prompt-accepted", problem is None, problem or "a PromptResponse", [response]
        )
        if self.version >= 2:
            self._user_message(turn)
            self._states(turn)

    def _user_message(self, turn: Turn) -> None:
        result = (turn.response.message or {}).get("result") if turn.response else None
        message_id = result.get("messageId") if isinstance(result, dict) else None
        kinds = ("user_message", "user_message_chunk")
        updates = [(i, session_update(i, turn.session_id) or {}) for i in turn.lines]
        user = [(i, u) for i, u in updates if u.get("sessionUpdate") in kinds]
        ids = [u.get("messageId") for _, u in user]
        self.verdicts.judge(
            "turn.user-message",
            message_id is not None and message_id in ids,
            f"the response's messageId {message_id!r}; user message updates with {ids or 'none'}",
            [turn.response, *(i for i, _ in user)],
        )

    def _states(self, turn: Turn) -> None:
        """turn.running, turn.idle-stop-reason and turn.requires-action (v2)."""
        verdicts = self.verdicts
        states = [
            (turn.index_of(i), i, s) for i in turn.lines if (s := state_of(i, turn.session_id))
        ]
        state_lines = [i for _, i, _ in states]
        end_at = turn.index_of(turn.end)
        started = any(s in ("running", "requires_action") and at < end_at for at, _, s in states)
        verdicts.judge(
            "turn.running",
            started,
            "running reported before idle"
            if started
            else "no running or requires_action before the turn's idle",
            state_lines,
        )
        if turn.end is None:
            why = "no idle state_update ended the turn"
            verdicts.failed("turn.idle-stop-reason", why, turn.evidence())
        else:
            reason = turn.stop_reason
            verdicts.judge(
                "turn.idle-stop-reason",
                isinstance(reason, str),
                f"idle with stop reason {reason!r}",
                [turn.end],
            )
        asks = [
            i
            for i in turn.lines
            if i.is_request
            and i.method == v2_methods.SESSION_REQUEST_PERMISSION.name
            and _dict((i.message or {}).get("params")).get("sessionId") == turn.session_id
        ]
        if not asks:
            why = "the agent asked no permission in this turn"
            verdicts.not_applicable("turn.requires-action", why)
            return
        asked_at = turn.index_of(asks[0])
        reported = any(s == "requires_action" for at, _, s in states if at <= asked_at + 1)
        resumed = any(s in ("running", "idle") for at, _, s in states if at > asked_at)
        if not reported:
            why = "no requires_action with the permission request"
        else:
            then = "running or idle" if resumed else "neither running nor idle"
            why = f"requires_action with the permission request, then {then}"
        verdicts.judge("turn.requires-action", reported and resumed, why, [asks[0], *state_lines])

    def refused(self, turns: Sequence[tuple[str, Turn]], transcript: Transcript) -> None:
        """turn.permission-refused, for turns whose permission requests were answered with a
        refusal (`answered`, the turn): the tool call they name reports no progress after it."""
        rule_id = "turn.permission-refused"
        ran: list[tuple[str, Incoming, WireLine | None, Incoming]] = []
        watched: list[str] = []
        for answered, turn in turns:
            self.wire(turn)
            if self.unusable(turn, (rule_id,)):
                return
            ask = next((i for i in turn.lines if _permission_of(i, turn.session_id)), None)
            call_id = _tool_call_of(ask) if ask is not None else None
            if ask is None or call_id is None:
                continue
            watched.append(answered)
            ran += [
                (answered, ask, _answer_to(ask, transcript), i)
                for i in [*turn.lines, *turn.after_end]
                if i.line.seq > ask.line.seq
                and (u := session_update(i, turn.session_id)) is not None
                and u.get("toolCallId") == call_id
                and u.get("status") in ("in_progress", "completed")
            ][:1]
        if ran:
            why = "; ".join(
                f"answered {answered}, it reported the tool call "
                f"{_dict(_dict(_dict(i.message).get('params')).get('update')).get('status')!r}"
                for answered, _, _, i in ran
            )
            evidence = [line for item in ran for line in item[1:]]
            self.verdicts.failed(rule_id, why, evidence)
        elif watched:
            why = f"answered {', '.join(watched)}: the tool call not run"
            self.verdicts.passed(rule_id, why)
        else:
            why = "the agent asked no permission naming a tool call in the refused turns"
            self.verdicts.not_applicable(rule_id, why)

    def cancelled(self, turn: Turn) -> None:
        """turn.cancelled and turn.nothing-after-cancelled, for a turn sent session/cancel."""
        verdicts = self.verdicts
        self.wire(turn)
        if self.unusable(turn, CANCEL_RULES):
            return
        reason = turn.stop_reason
        if turn.ended_before_action:
            verdicts.unjudged(CANCEL_RULES, f"the turn ended ({reason!r}) before session/cancel")
            return
        if turn.end is None:
            why = "after session/cancel, the turn did not end"
            verdicts.failed("turn.cancelled", why, [turn.action_line, *turn.evidence()])
            return
        why = f"after session/cancel, the turn ended {reason!r}"
        verdicts.judge("turn.cancelled", reason == "cancelled", why, [turn.action_line, turn.end])
        following = [*turn.lines[turn.index_of(turn.end) + 1 :], *turn.after_end]
        later = [i for i in following if session_update(i, turn.session_id) is not None]
        verdicts.judge(
            "turn.nothing-after-cancelled",
            not later,
            f"{len(later)} update(s) of the session after the turn's end"
            if later
            else "nothing after the turn's end",
            [turn.end, *later],
        )

    def closed(self, turn: Turn) -> None:
        """turn.close-order, for a turn sent session/close (v2)."""
        rule_id = "turn.close-order"
        self.wire(turn)
        if self.unusable(turn, (rule_id,)):
            return
        if turn.ended_before_action:
            why = "the turn ended before session/close was sent"
            self.verdicts.not_applicable(rule_id, why)
            return
        answer, end = turn.action_answer, turn.end
        evidence = [turn.action_line, end, answer, *turn.after_end]
        if answer is None or answer.error_code is not None:
            self.verdicts.failed(rule_id, f"session/close got {describe(answer)}", evidence)
            return
        reason = turn.stop_reason
        if end is None or reason != "cancelled" or end.line.seq > answer.line.seq:
            if end is None or reason == "cancelled":
                why = "the close response came before an idle `cancelled`"
            else:
                why = f"the turn ended {reason!r}"
            self.verdicts.failed(rule_id, why, evidence)
            return
        later = [i for i in turn.after_end if session_update(i, turn.session_id) is not None]
        self.verdicts.judge(
            rule_id,
            not later,
            f"{len(later)} message(s) for the session after the close response"
            if later
            else "idle `cancelled`, then the close response, then nothing for the session",
            evidence,
        )
