"""The scripted scenarios of `acpwire check`: what is sent to the agent and how its answers are
judged against the rules (`check_rules`).

Four agent processes: the main one (initialize, JSON-RPC rules, capability probes, sessions,
a turn, a turn per refused permission, a cancelled turn, a closed turn), and once it is initialized, alongside it: one
asking for a newer protocol version then one for an older one, and one fed bad lines. An
agent that cannot do what a rule needs (no session without credentials, a prompt answered
with an error) makes the rule not applicable, with the reason, never a pass.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

import acp_schema.v1.methods as v1_methods
import acp_schema.v2.methods as v2_methods
from acpwire import __version__

from .check_peer import (
    AgentNotStarted,
    Connect,
    Incoming,
    JsonObject,
    Peer,
    Transcript,
    open_peer,
)
from .check_turns import CANCEL_RULES, TURN_RULES, TurnJudge, describe, fits, follow_turn
from .check_verdicts import CapabilityProbes, Verdicts

__all__ = ["Outcome", "Settings", "run_scenarios"]

NEWER_VERSION = 65535
OLDER_VERSION = 0
UNKNOWN_METHOD = "acpwire_check/no_such_method"
UNKNOWN_NOTIFICATION = "acpwire_check/no_such_notification"
UNKNOWN_SESSION = "sess_acpwire_check_unknown"
STRING_ID = "acpwire-check-ü-1"
LARGE_ID = 2**32 + 1
HELLO = "Hello from acpwire check"
SLOW = "Please be slow: acpwire check cancels this turn"
NOT_PROBED = {v2_methods.AUTH_LOGOUT.name, v1_methods.LOGOUT.name}
"""Capability-bound methods the checker never calls: they would log the user out."""

SESSION_RULES = (
    *TURN_RULES,
    "turn.permission-refused",
    *CANCEL_RULES,
    "turn.close-order",
    "rpc.invalid-params",
    "input.close-unknown-session",
)


@dataclass(frozen=True)
class Settings:
    connect: Connect
    """A new agent process (`process_channel`) or connection (`check_remote.remote_channel`)."""
    protocol: int | None
    """The version to check (None: offer 2, accept 1)."""
    timeout: float
    """Seconds to wait for each answer the checker expects."""
    cwd: str
    remote: bool = False
    """Whether the agent is remote (`--url`): no stdio, so the stdio rules do not apply."""


@dataclass
class Outcome:
    """What the scenarios found: the verdicts, the version spoken, the agent's name."""

    verdicts: Verdicts = field(default_factory=Verdicts)
    transcript: Transcript = field(default_factory=Transcript)
    protocol: int | None = None
    agent: str | None = None


REFUSALS = {
    # how the checker answers a permission request in a turn where it does not approve
    "reject": "the reject option",
    "cancelled": "`cancelled`",
    "unknown-option": "an optionId not offered",
    "custom-outcome": "the custom outcome `_acpwire_check_deferred`",
}
V1_REFUSALS = ("reject", "cancelled")
"""The refusals v1 has (its outcomes are `selected` and `cancelled` only, and it says nothing
of an option not offered)."""


def answer_agent_request(incoming: Incoming, answer: str = "allow") -> JsonObject:
    """The checker's client side: a permission request gets its first allowing option (the
    turn goes on), or the refusal `answer` names (`REFUSALS`); anything else is a method this
    client does not serve."""
    params = _dict((incoming.message or {}).get("params"))
    if incoming.method == v2_methods.SESSION_REQUEST_PERMISSION.name:
        options = [_dict(o) for o in params.get("options") or [] if isinstance(o, dict)]
        wanted = "reject" if answer == "reject" else "allow"
        fitting = [o for o in options if str(o.get("kind", "")).startswith(wanted)]
        chosen = (fitting or options or [{}])[0]
        outcome: JsonObject = {"outcome": "selected", "optionId": chosen.get("optionId")}
        if answer == "cancelled":
            outcome = {"outcome": "cancelled"}
        elif answer == "unknown-option":
            outcome = {"outcome": "selected", "optionId": "acpwire-check-no-such-option"}
        elif answer == "custom-outcome":
            outcome = {"outcome": "_acpwire_check_deferred"}
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
        self.permission_answer = "allow"
        """How the checker answers permission requests now (`REFUSALS`, or "allow")."""

    def peer(self) -> AbstractAsyncContextManager[Peer]:
        settings = self.settings
        return open_peer(
            settings.connect,
            self.outcome.transcript,
            settings.timeout,
            lambda incoming: answer_agent_request(incoming, self.permission_answer),
        )

    async def run(self) -> Outcome:
        """The main process first initialized, then the other three alongside it."""
        async with self.peer() as peer:
            started = await self.initialize(peer)
            if started:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self.versions)
                    nursery.start_soon(self.bad_input)
                    await self.jsonrpc(peer)
                    await self.capabilities(peer)
                    await self.sessions(peer)
        if started is None:
            raise AgentNotStarted(peer.channel.summary())  # after the exit: its code is known
        if started:
            self.stdout_clean()
        return self.outcome

    async def versions(self) -> None:
        await self.other_version(NEWER_VERSION)
        await self.other_version(OLDER_VERSION)  # judged by the latest version the first found

    # initialization

    async def initialize(self, peer: Peer) -> bool | None:
        """The first initialize; False when the rest cannot run (the verdicts say why), None
        when the agent went away without answering."""
        asked = self.version
        _, response = await peer.call(v2_methods.INITIALIZE.name, initialize_params(asked, asked))
        if response is None and (peer.gone()):
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
        problem = fits(version, "agent", v2_methods.INITIALIZE.name, "result", result)
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
            _, response = await peer.call(
                v2_methods.INITIALIZE.name, initialize_params(asked, None)
            )
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
        await peer.notify(v2_methods.CANCEL_REQUEST.name, {"requestId": 987654321})
        await self._no_answer_then_serving(
            peer, "rpc.cancel-request", v2_methods.CANCEL_REQUEST.name
        )

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
                        v2_methods.SESSION_NEW.name,
                        v2_methods.SESSION_LIST.name,
                        v2_methods.SESSION_RESUME.name,
                        v2_methods.SESSION_CLOSE.name,
                        v2_methods.SESSION_PROMPT.name,
                    )
                },
                v2_methods.SESSION_DELETE.name: delete,
                v2_methods.AUTH_LOGIN.name: methods,
                v2_methods.AUTH_LOGOUT.name: methods,
            }
        caps = _dict(result.get("agentCapabilities"))
        sessions = _dict(caps.get("sessionCapabilities"))
        return {
            v1_methods.SESSION_NEW.name: True,
            v1_methods.SESSION_PROMPT.name: True,
            v1_methods.SESSION_LOAD.name: caps.get("loadSession") is True,
            **{
                f"session/{n}": isinstance(sessions.get(n), dict)
                for n in ("list", "close", "resume", "delete")
            },
            v1_methods.LOGOUT.name: isinstance(_dict(caps.get("auth")).get("logout"), dict),
            v1_methods.AUTHENTICATE.name: methods,
        }

    def probe_params(self, method: str) -> JsonObject:
        """Valid params for `method` that name nothing that exists (a served method answers
        them with an error like -32002 or a harmless result; one not served, -32601)."""
        cwd = self.settings.cwd
        v1_extra: JsonObject = {"mcpServers": []} if self.version < 2 else {}
        text = [{"type": "text", "text": HELLO}]
        params: dict[str, JsonObject] = {
            v2_methods.SESSION_NEW.name: {"cwd": cwd, **v1_extra},
            v2_methods.SESSION_LIST.name: {},
            v2_methods.SESSION_RESUME.name: {"sessionId": UNKNOWN_SESSION, "cwd": cwd, **v1_extra},
            v1_methods.SESSION_LOAD.name: {"sessionId": UNKNOWN_SESSION, "cwd": cwd, **v1_extra},
            v2_methods.SESSION_CLOSE.name: {"sessionId": UNKNOWN_SESSION},
            v2_methods.SESSION_DELETE.name: {"sessionId": UNKNOWN_SESSION},
            v2_methods.SESSION_PROMPT.name: {"sessionId": UNKNOWN_SESSION, "prompt": text},
            v2_methods.AUTH_LOGIN.name: {"methodId": "acpwire-check-no-such-method"},
            v1_methods.AUTHENTICATE.name: {"methodId": "acpwire-check-no-such-method"},
        }
        return params[method]

    async def capabilities(self, peer: Peer) -> None:
        """Probe each capability-bound method: served (any answer but -32601) or not."""
        found = CapabilityProbes(peer.timeout)
        for method, advertised in self.advertised().items():
            if method in NOT_PROBED:
                continue
            _, response = await peer.call(method, self.probe_params(method))
            assert peer.last_request is not None
            served = found.record(
                method, advertised, response, describe(response), peer.last_request
            )
            if served is not None:
                self.served[method] = served
        found.judge(self.verdicts)

    # sessions and turns

    async def new_session(self, peer: Peer) -> tuple[str | None, Incoming | None]:
        params: JsonObject = {"cwd": self.settings.cwd}
        if self.version < 2:
            params["mcpServers"] = []
        _, response = await peer.call(v2_methods.SESSION_NEW.name, params)
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
        judge = TurnJudge(self.verdicts, self.version)
        judge.turn(await follow_turn(peer, self.version, session_id, HELLO))
        await self.refused_turns(peer, session_id, judge)

        async def cancel(peer: Peer, session_id: str) -> None:
            await peer.notify(v2_methods.SESSION_CANCEL.name, {"sessionId": session_id})

        judge.cancelled(await follow_turn(peer, self.version, session_id, SLOW, cancel))
        if self.version >= 2:
            await self.closed_turn(peer, judge)

    async def refused_turns(self, peer: Peer, session_id: str, judge: TurnJudge) -> None:
        """A turn per refusal the version has: the permission request answered so, the tool
        call it names must not run."""
        turns = []
        for refusal in REFUSALS if self.version >= 2 else V1_REFUSALS:
            self.permission_answer = refusal
            try:
                turns.append(
                    (REFUSALS[refusal], await follow_turn(peer, self.version, session_id, HELLO))
                )
            finally:
                self.permission_answer = "allow"
        judge.refused(turns, self.outcome.transcript)

    async def closed_turn(self, peer: Peer, judge: TurnJudge) -> None:
        if self.served.get(v2_methods.SESSION_CLOSE.name) is False:
            self.verdicts.not_applicable("turn.close-order", "session/close is not served")
            return
        session_id, response = await self.new_session(peer)
        if session_id is None:
            why = f"a second session/new got {describe(response)}"
            self.verdicts.not_applicable("turn.close-order", why)
            return

        async def close(peer: Peer, session_id: str) -> object:
            return await peer.request(v2_methods.SESSION_CLOSE.name, {"sessionId": session_id})

        turn = await follow_turn(peer, self.version, session_id, SLOW, close)
        judge.closed(turn)

    async def bad_session_requests(self, peer: Peer) -> None:
        _, response = await peer.call(
            v2_methods.SESSION_NEW.name, {"cwd": 42, "mcpServers": "none"}
        )
        self.verdicts.judge(
            "rpc.invalid-params",
            response is not None and response.error_code == -32602,
            f"session/new with cwd 42 got {describe(response)}",
            [peer.last_request, response],
        )
        if self.version >= 2:
            _, response = await peer.call(
                v2_methods.SESSION_CLOSE.name, {"sessionId": UNKNOWN_SESSION}
            )
            ok = response is not None and (response.error_code in (None, -32002))
            self.verdicts.judge(
                "input.close-unknown-session",
                ok,
                f"session/close of an unknown session got {describe(response)}",
                [peer.last_request, response],
            )

    # bad input

    async def bad_input(self) -> None:
        verdicts = self.verdicts
        async with self.peer() as peer:
            _, response = await peer.call(
                v2_methods.INITIALIZE.name, initialize_params(self.version, self.version)
            )
            if response is None:
                verdicts.unjudged(
                    ("input.parse-error", "input.invalid-request", "input.keeps-serving"),
                    "initialize got no answer",
                )
                return
            # the line sent, not the transcript's last: other scenarios write to it meanwhile
            garbled = await peer.send_line('{"jsonrpc": "2.0", "id": 41, "method": "session/new", ')
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
                + (f" (the agent closed {self.ended_what})" if peer.closed else ""),
                [answer],
            )

    @property
    def ended_what(self) -> str:
        """What an agent that went away closed."""
        return "the connection" if self.settings.remote else "its stdout"

    def stdout_clean(self) -> None:
        if self.settings.remote:
            self.verdicts.not_applicable(
                "input.stdout-clean",
                "a rule of the stdio transport; over --url each message is its own WebSocket "
                "frame (the JSON-RPC rules judge what is in them)",
            )
            return
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
    """Run every scenario against the agent `settings.connect` reaches; raises `AgentNotStarted` when the agent
    cannot be run or exits before answering initialize."""
    return await Scenarios(settings).run()
