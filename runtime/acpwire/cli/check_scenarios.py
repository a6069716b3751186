"""The scripted scenarios of `acpwire check`: what is sent to the agent and how its answers are
judged against the rules (`check_rules`).

Four agent processes: the main one (initialize, JSON-RPC rules, capability probes, sessions,
a turn, a cancelled turn, a closed turn), one asking for a newer protocol version, one for an
older one, and one fed bad lines. An agent that cannot do what a rule needs (no session
without credentials, a prompt answered with an error) makes the rule not applicable, with
the reason, never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

import acp_schema
from acpwire import __version__

from .check_peer import (
    AgentNotStarted,
    Incoming,
    JsonObject,
    Peer,
    Transcript,
    WireLine,
    open_peer,
)
from .check_verdicts import Verdicts

__all__ = ["Outcome", "Settings", "run_scenarios"]

GRACE = 0.5
"""Seconds the checker keeps listening for lines that must not come (after a turn's end,
after a notification)."""
NEWER_VERSION = 65535
OLDER_VERSION = 0
UNKNOWN_METHOD = "acpwire_check/no_such_method"
UNKNOWN_NOTIFICATION = "acpwire_check/no_such_notification"
UNKNOWN_SESSION = "sess_acpwire_check_unknown"
STRING_ID = "acpwire-check-ü-1"
LARGE_ID = 2**32 + 1
HELLO = "Hello from acpwire check"
SLOW = "Please be slow: acpwire check cancels this turn"
STOP_REASONS = {
    1: {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"},
    2: {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"},
}
NOT_PROBED = {"auth/logout", "logout"}
"""Capability-bound methods the checker never calls: they would log the user out."""

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
SESSION_RULES = (
    *TURN_RULES,
    *CANCEL_RULES,
    "turn.close-order",
    "rpc.invalid-params",
    "input.close-unknown-session",
)


@dataclass(frozen=True)
class Settings:
    command: Sequence[str]
    protocol: int | None
    """The version to check (None: offer 2, accept 1)."""
    timeout: float
    """Seconds to wait for each answer the checker expects."""
    cwd: str


@dataclass
class Outcome:
    """What the scenarios found: the verdicts, the version spoken, the agent's name."""

    verdicts: Verdicts = field(default_factory=Verdicts)
    transcript: Transcript = field(default_factory=Transcript)
    protocol: int | None = None
    agent: str | None = None


def answer_agent_request(incoming: Incoming) -> JsonObject:
    """The checker's client side: a permission request gets its first allowing option (the
    turn goes on); anything else is a method this client does not serve."""
    message = incoming.message or {}
    if incoming.method == "session/request_permission":
        options = message.get("params", {}).get("options") or []
        allowing = [o for o in options if str(o.get("kind", "")).startswith("allow")]
        chosen = (allowing or options or [{}])[0]
        outcome = {"outcome": "selected", "optionId": chosen.get("optionId")}
        return {"result": {"outcome": outcome}}
    return {"error": {"code": -32601, "message": f"Method not found: {incoming.method}"}}


def initialize_params(version: int, shape: int | None) -> JsonObject:
    """`initialize` params asking for `version`, shaped as protocol `shape` has them (None:
    both shapes' fields, for a version whose shape is unknown)."""
    info = {"name": "acpwire-check", "version": __version__}
    v2_fields = {"info": info, "capabilities": {}}
    v1_fields = {"clientInfo": info, "clientCapabilities": {}}
    fields = v2_fields if shape == 2 else v1_fields if shape == 1 else {**v2_fields, **v1_fields}
    return {"protocolVersion": version, **fields}


def fits(version: int, side: str, method: str, part: str, value: object) -> str | None:
    """None when `value` fits the schema's type for `method`'s `part` ("params" or
    "result"); otherwise what does not fit."""
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
    if incoming is None:
        return "no answer"
    code = incoming.error_code
    if code is not None:
        error = (incoming.message or {}).get("error", {})
        return f"error {code} ({error.get('message', '')})"
    return "a result"


def session_update(incoming: Incoming, session_id: str | None = None) -> JsonObject | None:
    """The update of a `session/update` notification (of `session_id`, when given)."""
    if incoming.method != "session/update" or incoming.is_request or incoming.message is None:
        return None
    params = incoming.message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
        return None
    if session_id is not None and params.get("sessionId") != session_id:
        return None
    update: JsonObject = params["update"]
    return update


def state_of(incoming: Incoming, session_id: str) -> str | None:
    update = session_update(incoming, session_id)
    if update is None or update.get("sessionUpdate") != "state_update":
        return None
    state = update.get("state")
    return state if isinstance(state, str) else None


def is_idle(incoming: Incoming, session_id: str) -> bool:
    return state_of(incoming, session_id) == "idle"


def stop_reason_of(incoming: Incoming, version: int, session_id: str) -> object:
    """The stop reason a turn's end carries (v2: the idle update; v1: the prompt response)."""
    if version >= 2:
        return (session_update(incoming, session_id) or {}).get("stopReason")
    result = (incoming.message or {}).get("result")
    return result.get("stopReason") if isinstance(result, dict) else None


@dataclass
class Turn:
    """One prompt's lines: its response, the updates and requests, the end (v2: idle; v1: the
    response) and, when the scenario acted mid-turn, where (`acted_at`) and its answer."""

    session_id: str
    request_line: Incoming | None = None
    response: Incoming | None = None
    lines: list[Incoming] = field(default_factory=list)
    end: Incoming | None = None
    acted_at: int | None = None
    action_answer: Incoming | None = None
    after_end: list[Incoming] = field(default_factory=list)

    def index_of(self, incoming: Incoming | None) -> int:
        return self.lines.index(incoming) if incoming in self.lines else len(self.lines)

    def evidence(self) -> list[Incoming | None]:
        return [self.response, *self.lines]


Action = Callable[[Peer, str], Any]
"""What a scenario does mid-turn (send session/cancel, session/close): returns the id of a
request to wait for, or None."""


class Scenarios:
    """The scenarios against one agent command."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.outcome = Outcome()
        self.verdicts = self.outcome.verdicts
        self.version = settings.protocol or 2
        self.initialized: JsonObject = {}
        self.latest: int | None = None
        """The latest version the agent supports (its answer to a request of 65535)."""
        self.served: dict[str, bool] = {}

    def peer(self) -> open_peer:
        settings = self.settings
        return open_peer(
            settings.command,
            self.outcome.transcript,
            settings.timeout,
            answer_agent_request,
            settings.cwd,
        )

    async def run(self) -> Outcome:
        async with self.peer() as peer:
            started = await self.initialize(peer)
            if started:
                await self.jsonrpc(peer)
                await self.capabilities(peer)
                await self.sessions(peer)
        if started is None:
            raise AgentNotStarted(peer.exit_summary())  # after the exit: its code is known
        if not started:
            return self.outcome
        await self.other_version(NEWER_VERSION)
        await self.other_version(OLDER_VERSION)
        await self.bad_input()
        self.stdout_clean()
        return self.outcome

    # initialization

    async def initialize(self, peer: Peer) -> bool | None:
        """The first initialize; False when the rest cannot run (the verdicts say why), None
        when the agent went away without answering."""
        asked = self.version
        _, response = await peer.call("initialize", initialize_params(asked, asked))
        if response is None and (peer.closed or peer.process.poll() is not None):
            return None
        rest = "initialize failed"
        evidence = [peer.last_request, response]
        result = (response.message or {}).get("result") if response else None
        if response is not None and response.error_code == -32022:
            self.verdicts.passed("init.answer", f"version {asked} refused with -32022", evidence)
            self.verdicts.unjudged(
                _all_rules_but("init.answer"), f"the agent does not speak version {asked}"
            )
            return False
        if not isinstance(result, dict):
            self.verdicts.failed("init.answer", f"initialize got {describe(response)}", evidence)
            self.verdicts.unjudged(_all_rules_but("init.answer"), rest)
            return False
        version = result.get("protocolVersion")
        if version not in (1, 2) or (self.settings.protocol and version != asked):
            spoken = "no version" if not isinstance(version, int) else f"version {version}"
            self.verdicts.judge(
                "init.version-requested",
                isinstance(version, int) and version <= asked,
                f"asked for {asked}, the agent answered {spoken}",
                evidence,
            )
            self.verdicts.unjudged(
                _all_rules_but("init.version-requested"),
                f"the agent speaks {spoken}; acpwire check speaks version {asked}"
                + ("" if self.settings.protocol else " or 1"),
            )
            return False
        self.version = version
        self.outcome.protocol = version
        self.initialized = result
        problem = fits(version, "agent", "initialize", "result", result)
        self.verdicts.judge(
            "init.answer",
            problem is None,
            problem or f"a version {version} InitializeResponse",
            evidence,
        )
        self.outcome.agent = _agent_name(result)
        self.verdicts.judge(
            "init.version-requested",
            version <= asked,
            f"asked for {asked}, the agent answered {version}",
            [peer.last_request, response],
        )
        return True

    async def other_version(self, asked: int) -> None:
        """Ask a new agent process for version `asked` (65535, then 0)."""
        newer = asked > self.version
        async with self.peer() as peer:
            _, response = await peer.call("initialize", initialize_params(asked, None))
            sent = peer.last_request
        result = (response.message or {}).get("result") if response else None
        got = result.get("protocolVersion") if isinstance(result, dict) else None
        said = f"asked for {asked}, the agent answered " + (
            f"version {got}" if got is not None else describe(response)
        )
        evidence = [sent, response]
        if newer:
            ok = isinstance(got, int) and self.version <= got <= asked
            self.latest = got if ok and isinstance(got, int) else None
            self.verdicts.judge("init.version-newer", ok, said, evidence)
        elif (self.latest or self.version) >= 2:
            refused = response is not None and response.error_code == -32022
            self.verdicts.judge("init.version-older", refused, said, evidence)
        else:
            self.verdicts.judge("init.version-older", got == self.version, said, evidence)

    # JSON-RPC

    async def jsonrpc(self, peer: Peer) -> None:
        verdicts = self.verdicts
        rid = await peer.request(UNKNOWN_METHOD, {})
        sent = peer.last_request
        _, response = await peer.until(lambda i: i.is_response)
        verdicts.judge(
            "rpc.unknown-method",
            response is not None and response.error_code == -32601 and response.answers(rid),
            f"{UNKNOWN_METHOD} got {describe(response)}"
            + ("" if response is None or response.answers(rid) else " with another id"),
            [sent, response],
        )
        for request_id in (STRING_ID, LARGE_ID):
            await peer.send_request(UNKNOWN_METHOD, {}, request_id)
            sent = peer.last_request
            _, answer = await peer.until(lambda i: i.is_response)
            got = (answer.message or {}).get("id") if answer else None
            verdicts.judge(
                "rpc.id-echoed",
                answer is not None and answer.answers(request_id),
                f"sent id {request_id!r}, the response has id {got!r}",
                [sent, answer],
            )
        await peer.notify(UNKNOWN_NOTIFICATION, {})
        await self._no_answer_then_serving(
            peer, "rpc.notification-unanswered", UNKNOWN_NOTIFICATION
        )
        await peer.notify("$/cancel_request", {"requestId": 987654321})
        await self._no_answer_then_serving(peer, "rpc.cancel-request", "$/cancel_request")

    async def _no_answer_then_serving(self, peer: Peer, rule_id: str, what: str) -> None:
        """After a notification: a request is answered, and nothing else answered before it."""
        before, response = await peer.call(UNKNOWN_METHOD, {})
        answers = [i for i in before if i.is_response]
        if response is None:
            self.verdicts.failed(rule_id, f"after {what}, the agent stopped answering", [*before])
        elif answers:
            self.verdicts.failed(rule_id, f"{what} was answered", answers)
        else:
            self.verdicts.passed(rule_id, f"{what}: no response; the next request answered")

    # capabilities

    def advertised(self) -> dict[str, bool]:
        """The capability-bound methods and whether the initialize response advertises them."""
        result = self.initialized
        methods = bool(result.get("authMethods"))
        if self.version >= 2:
            caps = _dict(result.get("capabilities"))
            session = caps.get("session")
            has_session = isinstance(session, dict)
            delete = has_session and isinstance(_dict(session).get("delete"), dict)
            return {
                **{
                    m: has_session
                    for m in (
                        "session/new",
                        "session/list",
                        "session/resume",
                        "session/close",
                        "session/prompt",
                    )
                },
                "session/delete": delete,
                "auth/login": methods,
                "auth/logout": methods,
            }
        caps = _dict(result.get("agentCapabilities"))
        sessions = _dict(caps.get("sessionCapabilities"))
        return {
            "session/new": True,
            "session/prompt": True,
            "session/load": caps.get("loadSession") is True,
            **{
                f"session/{n}": isinstance(sessions.get(n), dict)
                for n in ("list", "close", "resume", "delete")
            },
            "logout": isinstance(_dict(caps.get("auth")).get("logout"), dict),
            "authenticate": methods,
        }

    def probe_params(self, method: str) -> JsonObject:
        """Valid params for `method` that name nothing that exists (a served method answers
        them with an error like -32002 or a harmless result; one not served, -32601)."""
        cwd = self.settings.cwd
        v1_extra: JsonObject = {"mcpServers": []} if self.version < 2 else {}
        text = [{"type": "text", "text": HELLO}]
        params: dict[str, JsonObject] = {
            "session/new": {"cwd": cwd, **v1_extra},
            "session/list": {},
            "session/resume": {"sessionId": UNKNOWN_SESSION, "cwd": cwd, **v1_extra},
            "session/load": {"sessionId": UNKNOWN_SESSION, "cwd": cwd, **v1_extra},
            "session/close": {"sessionId": UNKNOWN_SESSION},
            "session/delete": {"sessionId": UNKNOWN_SESSION},
            "session/prompt": {"sessionId": UNKNOWN_SESSION, "prompt": text},
            "auth/login": {"methodId": "acpwire-check-no-such-method"},
            "authenticate": {"methodId": "acpwire-check-no-such-method"},
        }
        return params[method]

    async def capabilities(self, peer: Peer) -> None:
        """Probe each capability-bound method: served (any answer but -32601) or not."""
        wrong: dict[str, list[str]] = {"caps.advertised-served": [], "caps.served-advertised": []}
        evidence: dict[str, list[Incoming | WireLine | None]] = {rule_id: [] for rule_id in wrong}
        probed = []
        for method, advertised in self.advertised().items():
            if method in NOT_PROBED:
                continue
            _, response = await peer.call(method, self.probe_params(method))
            sent = peer.last_request
            if response is None:
                continue
            served = response.error_code != -32601
            self.served[method] = served
            probed.append(method)
            if advertised != served:
                rule_id = "caps.advertised-served" if advertised else "caps.served-advertised"
                how = "advertised but not served" if advertised else "served but not advertised"
                wrong[rule_id].append(f"{method} {how} ({describe(response)})")
                evidence[rule_id] += [sent, response]
        for rule_id, problems in wrong.items():
            self.verdicts.judge(
                rule_id,
                not problems,
                "; ".join(problems) or f"probed {', '.join(probed)}: served as advertised",
                evidence[rule_id],
            )

    # sessions and turns

    async def new_session(self, peer: Peer) -> tuple[str | None, Incoming | None]:
        params: JsonObject = {"cwd": self.settings.cwd}
        if self.version < 2:
            params["mcpServers"] = []
        _, response = await peer.call("session/new", params)
        result = (response.message or {}).get("result") if response else None
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        return (session_id if isinstance(session_id, str) else None), response

    async def sessions(self, peer: Peer) -> None:
        session_id, response = await self.new_session(peer)
        if session_id is None:
            self.verdicts.unjudged(
                SESSION_RULES,
                f"session/new got {describe(response)} (an agent without credentials often does)",
            )
            return
        await self.bad_session_requests(peer)
        await self.turn(peer, session_id)
        await self.cancelled_turn(peer, session_id)
        if self.version >= 2:
            await self.closed_turn(peer)

    async def bad_session_requests(self, peer: Peer) -> None:
        _, response = await peer.call("session/new", {"cwd": 42, "mcpServers": "none"})
        self.verdicts.judge(
            "rpc.invalid-params",
            response is not None and response.error_code == -32602,
            f"session/new with cwd 42 got {describe(response)}",
            [peer.last_request, response],
        )
        if self.version >= 2:
            _, response = await peer.call("session/close", {"sessionId": UNKNOWN_SESSION})
            ok = response is not None and (response.error_code in (None, -32002))
            self.verdicts.judge(
                "input.close-unknown-session",
                ok,
                f"session/close of an unknown session got {describe(response)}",
                [peer.last_request, response],
            )

    async def run_turn(
        self, peer: Peer, session_id: str, text: str, action: Action | None = None
    ) -> Turn:
        """Prompt and follow the turn to its end (v2: the response and idle; v1: the
        response), acting mid-turn once after its first update; then listen `GRACE` more."""
        version = self.version
        turn = Turn(session_id)
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        rid = await peer.request("session/prompt", params)
        action_id: object = None
        deadline_waits = 0
        while True:
            waiting_action = action_id is not None and turn.action_answer is None
            done = turn.response is not None and (
                version < 2 or turn.end is not None or turn.response.error_code is not None
            )
            if done and not waiting_action:
                break
            incoming = await peer.receive()
            if incoming is None:
                deadline_waits += 1
                break
            if incoming.answers(rid):
                turn.response = incoming
                if version < 2:
                    turn.end = incoming
                continue
            if action_id is not None and incoming.answers(action_id):
                turn.action_answer = incoming
                continue
            turn.lines.append(incoming)
            if version >= 2 and is_idle(incoming, session_id) and turn.end is None:
                turn.end = incoming
            if (
                action is not None
                and turn.acted_at is None
                and turn.end is None
                and session_update(incoming, session_id) is not None
                and (version < 2 or turn.response is not None)
            ):
                turn.acted_at = len(turn.lines)
                action_id = await action(peer, session_id)
        while (incoming := await peer.receive(GRACE)) is not None:
            if action_id is not None and incoming.answers(action_id):
                turn.action_answer = incoming
            else:
                turn.after_end.append(incoming)
        self.updates_fit([*turn.lines, *turn.after_end])
        if turn.end is not None:
            self.stop_reason_known(turn.end, session_id)
        return turn

    def updates_fit(self, lines: list[Incoming]) -> None:
        for incoming in lines:
            if incoming.method == "session/update" and incoming.message is not None:
                problem = fits(
                    self.version,
                    "client",
                    "session/update",
                    "params",
                    incoming.message.get("params"),
                )
                self.verdicts.judge(
                    "turn.updates-fit",
                    problem is None,
                    problem or "every session/update fits the schema",
                    [incoming] if problem else [],
                )

    def stop_reason_known(self, end: Incoming, session_id: str) -> None:
        reason = stop_reason_of(end, self.version, session_id)
        if not isinstance(reason, str):
            return
        known = reason in STOP_REASONS[self.version] or reason.startswith("_")
        self.verdicts.judge("turn.stop-reason-known", known, f"stop reason {reason!r}", [end])

    def prompt_unusable(self, turn: Turn, rule_ids: Sequence[str]) -> bool:
        """When the prompt was answered with an error (or its turn ended `error`): its rules
        not applicable (the agent may lack credentials), True."""
        reason = stop_reason_of(turn.end, self.version, turn.session_id) if turn.end else None
        if turn.response is not None and turn.response.error_code is not None:
            why = f"session/prompt got {describe(turn.response)} (an agent without credentials often does)"
        elif reason == "error":
            why = (
                "the turn ended with stop reason `error` (an agent without credentials often does)"
            )
        else:
            return False
        for rule_id in rule_ids:
            self.verdicts.not_applicable(rule_id, why, [turn.response, turn.end])
        return True

    async def turn(self, peer: Peer, session_id: str) -> None:
        turn = await self.run_turn(peer, session_id, HELLO)
        verdicts = self.verdicts
        response = turn.response
        if response is None:
            verdicts.failed("turn.prompt-accepted", "session/prompt got no answer", turn.evidence())
            return
        if self.prompt_unusable(turn, TURN_RULES):
            return
        result = (response.message or {}).get("result")
        problem = fits(self.version, "agent", "session/prompt", "result", result)
        verdicts.judge(
            "turn.prompt-accepted", problem is None, problem or "a PromptResponse", [response]
        )
        if self.version < 2:
            self.verdicts.unjudged(TURN_RULES, "a v1 turn")
            return
        self.judge_v2_turn(turn)

    def judge_v2_turn(self, turn: Turn) -> None:
        verdicts = self.verdicts
        session_id = turn.session_id
        result = (turn.response.message or {}).get("result") if turn.response else None
        message_id = result.get("messageId") if isinstance(result, dict) else None
        user = [
            i
            for i in turn.lines
            if (session_update(i, session_id) or {}).get("sessionUpdate")
            in ("user_message", "user_message_chunk")
        ]
        ids = [(session_update(i, session_id) or {}).get("messageId") for i in user]
        verdicts.judge(
            "turn.user-message",
            message_id is not None and message_id in ids,
            f"the response's messageId {message_id!r}; user message updates with {ids or 'none'}",
            [turn.response, *user],
        )
        states = [(i, state_of(i, session_id)) for i in turn.lines if state_of(i, session_id)]
        end_at = turn.index_of(turn.end)
        started = [
            i
            for i, s in states
            if s in ("running", "requires_action") and turn.index_of(i) < end_at
        ]
        verdicts.judge(
            "turn.running",
            bool(started),
            "running reported before idle"
            if started
            else "no running or requires_action before the turn's idle",
            [i for i, _ in states],
        )
        if turn.end is None:
            verdicts.failed(
                "turn.idle-stop-reason", "no idle state_update ended the turn", turn.evidence()
            )
        else:
            reason = stop_reason_of(turn.end, 2, session_id)
            verdicts.judge(
                "turn.idle-stop-reason",
                isinstance(reason, str),
                f"idle with stop reason {reason!r}",
                [turn.end],
            )
        asks = [i for i in turn.lines if i.method == "session/request_permission"]
        if not asks:
            verdicts.not_applicable(
                "turn.requires-action", "the agent asked no permission in this turn"
            )
            return
        ask_at = turn.index_of(asks[0])
        around = [(turn.index_of(i), s) for i, s in states]
        reported = any(s == "requires_action" for at, s in around if at <= ask_at + 1)
        resumed = any(s in ("running", "idle") for at, s in around if at > ask_at)
        verdicts.judge(
            "turn.requires-action",
            reported and resumed,
            "requires_action with the permission request, then "
            + ("running or idle" if resumed else "neither running nor idle")
            if reported
            else "no requires_action with the permission request",
            [asks[0], *(i for i, _ in states)],
        )

    async def cancelled_turn(self, peer: Peer, session_id: str) -> None:
        async def cancel(peer: Peer, session_id: str) -> None:
            await peer.notify("session/cancel", {"sessionId": session_id})

        turn = await self.run_turn(peer, session_id, SLOW, cancel)
        self.judge_cancelled(turn, "session/cancel")

    def judge_cancelled(self, turn: Turn, how: str) -> bool:
        """turn.cancelled and turn.nothing-after-cancelled; True when cancelled as it should."""
        verdicts = self.verdicts
        if self.prompt_unusable(turn, CANCEL_RULES):
            return False
        if turn.acted_at is None:
            why = f"the turn ended before any update, so no {how} was sent mid-turn"
            verdicts.unjudged(CANCEL_RULES, why)
            return False
        if turn.end is None:
            verdicts.failed("turn.cancelled", f"after {how}, the turn did not end", turn.evidence())
            return False
        reason = stop_reason_of(turn.end, self.version, turn.session_id)
        if reason != "cancelled" and turn.index_of(turn.end) < turn.acted_at:
            verdicts.unjudged(CANCEL_RULES, f"the turn ended ({reason!r}) before {how} was sent")
            return False
        verdicts.judge(
            "turn.cancelled",
            reason == "cancelled",
            f"after {how}, the turn ended {reason!r}",
            [turn.end],
        )
        later = [
            i
            for i in [*turn.lines[turn.index_of(turn.end) + 1 :], *turn.after_end]
            if session_update(i, turn.session_id) is not None
        ]
        verdicts.judge(
            "turn.nothing-after-cancelled",
            not later,
            f"{len(later)} update(s) of the session after the turn's end"
            if later
            else "nothing after the turn's end",
            [turn.end, *later],
        )
        return reason == "cancelled"

    async def closed_turn(self, peer: Peer) -> None:
        if self.served.get("session/close") is False:
            self.verdicts.not_applicable("turn.close-order", "session/close is not served")
            return
        session_id, response = await self.new_session(peer)
        if session_id is None:
            self.verdicts.not_applicable(
                "turn.close-order", f"a second session/new got {describe(response)}"
            )
            return

        async def close(peer: Peer, session_id: str) -> object:
            return await peer.request("session/close", {"sessionId": session_id})

        turn = await self.run_turn(peer, session_id, SLOW, close)
        if self.prompt_unusable(turn, ("turn.close-order",)):
            return
        if turn.acted_at is None or (
            turn.end is not None and turn.index_of(turn.end) < turn.acted_at
        ):
            self.verdicts.not_applicable(
                "turn.close-order", "the turn ended before session/close was sent"
            )
            return
        answer = turn.action_answer
        end = turn.end
        evidence = [end, answer, *turn.after_end]
        if answer is None or answer.error_code is not None:
            self.verdicts.failed(
                "turn.close-order", f"session/close got {describe(answer)}", evidence
            )
            return
        lines = peer.transcript.lines
        reason = stop_reason_of(end, 2, session_id) if end else None
        if end is None or reason != "cancelled" or lines.index(end.line) > lines.index(answer.line):
            self.verdicts.failed(
                "turn.close-order",
                "the close response came before an idle `cancelled`"
                if end is None or reason == "cancelled"
                else f"the turn ended {reason!r}",
                evidence,
            )
            return
        later = [i for i in turn.after_end if session_update(i, session_id) is not None]
        self.verdicts.judge(
            "turn.close-order",
            not later,
            f"{len(later)} message(s) for the session after the close response"
            if later
            else "idle `cancelled`, then the close response, then nothing for the session",
            evidence,
        )

    # bad input

    async def bad_input(self) -> None:
        verdicts = self.verdicts
        async with self.peer() as peer:
            _, response = await peer.call(
                "initialize", initialize_params(self.version, self.version)
            )
            if response is None:
                verdicts.unjudged(
                    ("input.parse-error", "input.invalid-request", "input.keeps-serving"),
                    "initialize got no answer",
                )
                return
            await peer.send_line('{"jsonrpc": "2.0", "id": 41, "method": "session/new", ')
            garbled = peer.transcript.lines[-1]
            _, answer = await peer.until(lambda i: i.is_response)
            id_null = answer is not None and (answer.message or {}).get("id") is None
            verdicts.judge(
                "input.parse-error",
                answer is not None and answer.error_code == -32700 and id_null,
                f"a truncated JSON line got {describe(answer)}"
                + ("" if answer is None or id_null else " with a non-null id"),
                [garbled, answer],
            )
            bad = {"jsonrpc": "2.0", "id": "acpwire-check-bad", "method": 1, "params": "bar"}
            sent = await peer.send(bad)
            _, answer = await peer.until(lambda i: i.is_response)
            verdicts.judge(
                "input.invalid-request",
                answer is not None and answer.error_code == -32600,
                f"a request whose method is a number got {describe(answer)}",
                [sent, answer],
            )
            _, answer = await peer.call(UNKNOWN_METHOD, {})
            verdicts.judge(
                "input.keeps-serving",
                answer is not None,
                "the next request was answered"
                if answer
                else "the next request got no answer"
                + (" (the agent closed its stdout)" if peer.closed else ""),
                [answer],
            )

    def stdout_clean(self) -> None:
        bad = [
            line
            for line in self.outcome.transcript.lines
            if not line.to_agent and not _is_message(line.text)
        ]
        self.verdicts.judge(
            "input.stdout-clean",
            not bad,
            f"{len(bad)} line(s) on stdout that are no JSON-RPC message"
            if bad
            else "every line a JSON-RPC message",
            bad[:5],
        )


def _is_message(text: str) -> bool:
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return False
    return (
        isinstance(value, dict)
        and value.get("jsonrpc") == "2.0"
        and ("method" in value or "result" in value or "error" in value)
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _agent_name(result: JsonObject) -> str | None:
    info = _dict(result.get("info") or result.get("agentInfo"))
    if isinstance(info.get("name"), str):
        return f"{info['name']} {info.get('version', '')}".strip()
    return None


def _all_rules_but(*kept: str) -> list[str]:
    from .check_rules import RULES

    return [r.id for r in RULES if r.id not in kept]


async def run_scenarios(settings: Settings) -> Outcome:
    """Run every scenario against `settings.command`; raises `AgentNotStarted` when the agent
    cannot be run or exits before answering initialize."""
    return await Scenarios(settings).run()
