"""The scripted agent of `acpwire check --client`: it serves the client whatever it asks
(initialize, sessions, prompts) and, in the turns the client starts, does what tests the
client's rules (`check_client_rules`).

The first turn: a burst of updates then a request, the agent's requests of unknown methods
(an integer, a string and a large integer id), an unknown notification, `$/cancel_request`
for no pending request and for one just sent, the capability-bound methods (v1:
fs/read_text_file of a file that does not exist, terminal/output of an unknown terminal): the
probes of `check_client_probes`; then a tool call asking permission. Every later turn streams
a chunk every 50 ms until the client sends session/cancel; then the agent asks one more permission (v2: and cancels it with `$/cancel_request`, as the
schema has agents do), which the client must answer `cancelled`: it arrives after the client
cancelled, so from the client's side it is pending at the cancel (it cannot tell a request
that crossed its session/cancel on the wire). The run ends when the client closes the
connection, or after `timeout` seconds of silence with no turn running.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any

import trio

import acp_schema
import acp_schema.v2.methods as v2_methods
from acpwire import __version__

from .check_client_probes import burst, jsonrpc_probes
from .check_client_rules import CLIENT_RULES
from .check_client_wire import ClientWire, request_key
from .check_peer import Incoming, JsonObject, Transcript, WireLine
from .check_turns import describe, fits
from .check_verdicts import Verdicts

__all__ = ["ClientOutcome", "ScriptedAgent"]

SLOW_CHUNKS, SLOW_DELAY = 100, 0.05
TOOL_CALL = "call_acpwire_check_1"
OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


@dataclass
class Pending:
    """A request of the scripted agent and the responses that came for it."""

    line: WireLine | None = None
    answers: list[Incoming] = field(default_factory=list)
    answered: trio.Event = field(default_factory=trio.Event)


@dataclass
class ClientOutcome:
    verdicts: Verdicts = field(default_factory=lambda: Verdicts(CLIENT_RULES))
    transcript: Transcript = field(default_factory=Transcript)
    protocol: int | None = None
    client: str | None = None


@dataclass
class Session:
    cancelled: trio.Event = field(default_factory=trio.Event)
    cancel_line: WireLine | None = None
    running: bool = False


class ScriptedAgent:
    """Serves one client on `wire`; `run()` returns when the client is done."""

    def __init__(
        self, wire: ClientWire, outcome: ClientOutcome, protocol: int | None, timeout: float
    ) -> None:
        self.wire = wire
        self.outcome = outcome
        self.verdicts = outcome.verdicts
        self.protocol = protocol
        self.timeout = timeout
        self.version = protocol or 2
        self.capabilities: JsonObject = {}
        self.pending: dict[tuple[str, object], Pending] = {}
        self.stray: list[Incoming] = []
        self.client_pending: set[tuple[str, object]] = set()
        self.sessions: dict[str, Session] = {}
        self.turns = 0
        self.first: Incoming | None = None
        self.last_seen = trio.current_time()
        self.unfit: list[Incoming] = []
        self.reused: list[Incoming] = []
        self.unclean: list[Incoming] = []
        self.stalled = False
        """Whether the client stopped reading (the run ended there)."""
        self._next_id = 0
        # A folder that is never created: the file fs/read_text_file is asked for cannot exist.
        self.missing_folder = os.path.join(
            tempfile.gettempdir(), f"acpwire-check-{uuid.uuid4().hex}"
        )

    # the wire

    async def run(self) -> ClientOutcome:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.wire.read)
            nursery.start_soon(self._watch_silence, nursery.cancel_scope)
            async for incoming in self.wire.lines:
                self.last_seen = trio.current_time()
                self.receive(incoming, nursery)
            nursery.cancel_scope.cancel()
        self.judge_wire()
        return self.outcome

    async def _watch_silence(self, scope: trio.CancelScope) -> None:
        """End the run after `timeout` seconds without a line and with no turn running."""
        while True:
            await trio.sleep(0.1)
            running = any(s.running for s in self.sessions.values())
            if self.wire.broken or (
                not running and trio.current_time() - self.last_seen > self.timeout
            ):
                scope.cancel()
                return

    def receive(self, incoming: Incoming, nursery: trio.Nursery) -> None:
        message = incoming.message
        if message is None or message.get("jsonrpc") != "2.0":
            self.unclean.append(incoming)
            return
        if self.first is None:
            self.first = incoming
        if incoming.is_response:
            pending = self.pending.get(request_key(message.get("id")))
            if pending is None:
                self.stray.append(incoming)
                return
            pending.answers.append(incoming)
            pending.answered.set()
        elif incoming.is_request:
            key = request_key(message["id"])
            if key in self.client_pending:
                self.reused.append(incoming)
            self.client_pending.add(key)
            nursery.start_soon(self.serve, incoming)
        elif incoming.method is not None:
            self.notified(incoming)
        else:
            self.unclean.append(incoming)

    async def respond(self, request: Incoming, answer: JsonObject) -> None:
        assert request.message is not None
        request_id = request.message["id"]
        self.client_pending.discard(request_key(request_id))
        await self.wire.send({"jsonrpc": "2.0", "id": request_id, **answer})

    async def notify(self, method: str, params: JsonObject) -> WireLine:
        return await self.wire.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def update(self, session_id: str, **update: Any) -> WireLine:
        return await self.notify(
            v2_methods.SESSION_UPDATE.name, {"sessionId": session_id, "update": update}
        )

    async def send_request(
        self, method: str, params: JsonObject, request_id: object = None
    ) -> tuple[object, Pending]:
        if request_id is None:
            self._next_id += 1
            request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        pending = self.pending[request_key(request_id)] = Pending()  # before its answer can come
        pending.line = await self.wire.send(message)
        return request_id, pending

    async def ask(
        self, method: str, params: JsonObject, request_id: object = None
    ) -> tuple[WireLine, Incoming | None]:
        """A request's line and its first answer (None after `timeout` seconds)."""
        _, pending = await self.send_request(method, params, request_id)
        with trio.move_on_after(self.timeout):
            await pending.answered.wait()
        assert pending.line is not None
        return pending.line, (pending.answers[0] if pending.answers else None)

    # the client's requests

    async def serve(self, request: Incoming) -> None:
        method = request.method or ""
        params = (request.message or {}).get("params")
        params = params if isinstance(params, dict) else {}
        if method == v2_methods.INITIALIZE.name:
            await self.initialize(request, params)
            return
        if method in self._agent_methods():
            problem = fits(self.version, "agent", method, "params", params)
            if problem is not None:
                self.unfit.append(request)
                await self.respond(request, _error(-32602, f"Invalid params: {problem}"))
                return
        if method == v2_methods.SESSION_NEW.name:
            session_id = f"sess_acpwire_check_{len(self.sessions) + 1}"
            self.sessions[session_id] = Session()
            await self.respond(request, {"result": {"sessionId": session_id}})
        elif method == v2_methods.SESSION_PROMPT.name:
            await self.prompt(request, str(params.get("sessionId")))
        elif method == v2_methods.SESSION_CLOSE.name:
            session = self.sessions.pop(str(params.get("sessionId")), None)
            if session is not None:
                session.cancelled.set()
            await self.respond(request, {"result": {}})
        elif method == v2_methods.SESSION_LIST.name:
            await self.respond(request, {"result": {"sessions": []}})
        else:
            await self.respond(request, _error(-32601, f"Method not found: {method}"))

    def _agent_methods(self) -> set[str]:
        return set(acp_schema.surface(self.version).agent_methods)

    async def initialize(self, request: Incoming, params: JsonObject) -> None:
        asked = params.get("protocolVersion")
        if self.protocol is None and asked == 1:
            self.version = 1  # otherwise 2, or --protocol whatever was asked (the agent's only)
        self.outcome.protocol = self.version
        problem = fits(self.version, "agent", v2_methods.INITIALIZE.name, "params", params)
        self.verdicts.judge(
            "init.params-fit",
            problem is None,
            problem or f"a version {self.version} InitializeRequest",
            [request],
        )
        caps = params.get("capabilities" if self.version >= 2 else "clientCapabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("info") or params.get("clientInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.outcome.client = f"{info['name']} {info.get('version', '')}".strip()
        me = {"name": "acpwire-check", "version": __version__}
        if self.version >= 2:
            result: JsonObject = {"protocolVersion": 2, "info": me, "capabilities": {"session": {}}}
        else:
            caps_v1: JsonObject = {"sessionCapabilities": {"close": {}, "list": {}}}
            result = {
                "protocolVersion": 1,
                "agentInfo": me,
                "agentCapabilities": caps_v1,
                "authMethods": [],
            }
        await self.respond(request, {"result": result})

    def notified(self, incoming: Incoming) -> None:
        params = (incoming.message or {}).get("params")
        if incoming.method == v2_methods.SESSION_CANCEL.name and isinstance(params, dict):
            session = self.sessions.get(str(params.get("sessionId")))
            if session is not None and session.running:
                session.cancel_line = incoming.line
                session.cancelled.set()

    # turns

    async def prompt(self, request: Incoming, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            await self.respond(request, _error(-32002, f"Resource not found: {session_id}"))
            return
        session.running = True
        self.turns += 1
        first = self.turns == 1
        message_id = f"user_acpwire_check_{self.turns}"
        if self.version >= 2:
            await self.respond(request, {"result": {"messageId": message_id}})
            content = (request.message or {}).get("params", {}).get("prompt")
            await self.update(
                session_id,
                sessionUpdate="user_message",
                messageId=message_id,
                content=content if isinstance(content, list) else [],
            )
            await self.update(session_id, sessionUpdate="state_update", state="running")
        try:
            if first:
                await burst(self, session_id)
                if self.stalled:
                    return
                await jsonrpc_probes(self, session_id)
                await self.permission(session_id)
                stop = "cancelled" if session.cancelled.is_set() else "end_turn"
            else:
                stop = await self.slow(session_id, session)
        finally:
            session.running = False
        if self.version >= 2:
            await self.update(
                session_id, sessionUpdate="state_update", state="idle", stopReason=stop
            )
        else:
            await self.respond(request, {"result": {"stopReason": stop}})

    def chunk(self, session_id: str, text: str) -> JsonObject:
        message_id = {"messageId": f"agent_acpwire_check_{self.turns}"} if self.version >= 2 else {}
        return {
            "sessionUpdate": "agent_message_chunk",
            **message_id,
            "content": {"type": "text", "text": text},
        }

    async def slow(self, session_id: str, session: Session) -> str:
        for _ in range(SLOW_CHUNKS):
            await self.update(session_id, **self.chunk(session_id, "slow "))
            with trio.move_on_after(SLOW_DELAY):
                await session.cancelled.wait()
            if session.cancelled.is_set():
                await self.permission_after_cancel(session_id, session)
                return "cancelled"
        return "end_turn"

    def permission_params(self, session_id: str, title: str) -> JsonObject:
        params: JsonObject = {"sessionId": session_id, "options": OPTIONS}
        if self.version >= 2:
            params["title"] = title
        else:
            params["toolCall"] = {"toolCallId": f"{TOOL_CALL}_{self.turns}", "title": title}
        return params

    async def permission(self, session_id: str) -> None:
        """A tool call asking permission first (as an agent reading a file does)."""
        call = {"toolCallId": TOOL_CALL, "title": "Read the README", "kind": "read"}
        kind = "tool_call_update" if self.version >= 2 else "tool_call"
        await self.update(session_id, sessionUpdate=kind, **call, status="pending")
        if self.version >= 2:
            await self.update(session_id, sessionUpdate="state_update", state="requires_action")
        sent, answer = await self.ask(
            v2_methods.SESSION_REQUEST_PERMISSION.name,
            self.permission_params(session_id, "Read the README"),
        )
        self.judge_permission(sent, answer)
        if self.version >= 2:
            await self.update(session_id, sessionUpdate="state_update", state="running")
        for status in ("in_progress", "completed"):
            await self.update(
                session_id, sessionUpdate="tool_call_update", toolCallId=TOOL_CALL, status=status
            )
        await self.update(session_id, **self.chunk(session_id, "Hello from acpwire check"))

    def judge_permission(self, sent: WireLine, answer: Incoming | None) -> None:
        rule_id = "turn.permission-answer"
        result = (answer.message or {}).get("result") if answer else None
        if not isinstance(result, dict):
            self.verdicts.failed(
                rule_id, f"the permission request got {describe(answer)}", [sent, answer]
            )
            return
        problem = fits(
            self.version, "client", v2_methods.SESSION_REQUEST_PERMISSION.name, "result", result
        )
        outcome = result.get("outcome")
        outcome = outcome if isinstance(outcome, dict) else {}
        offered = [o["optionId"] for o in OPTIONS]
        if problem is None and outcome.get("outcome") == "selected":
            chosen = outcome.get("optionId")
            ok = chosen in offered
            why = f"selected {chosen!r}" + ("" if ok else f", not one of {offered}")
        else:
            ok = problem is None
            why = problem or f"outcome {outcome.get('outcome')!r}"
        self.verdicts.judge(rule_id, ok, why, [sent, answer])

    async def permission_after_cancel(self, session_id: str, session: Session) -> None:
        rule_id = "turn.permission-cancelled"
        request_id, pending = await self.send_request(
            v2_methods.SESSION_REQUEST_PERMISSION.name,
            self.permission_params(session_id, "Write a file"),
        )
        cancel_line = None
        if self.version >= 2:
            cancel_line = await self.notify(
                v2_methods.CANCEL_REQUEST.name, {"requestId": request_id}
            )
        with trio.move_on_after(self.timeout):
            await pending.answered.wait()
        answer = pending.answers[0] if pending.answers else None
        evidence = [session.cancel_line, pending.line, cancel_line, answer]
        result = (answer.message or {}).get("result") if answer else None
        outcome = result.get("outcome") if isinstance(result, dict) else None
        said = outcome.get("outcome") if isinstance(outcome, dict) else None
        if said is not None:
            why = f"the permission request after session/cancel got outcome {said!r}"
            self.verdicts.judge(rule_id, said == "cancelled", why, evidence)
        elif answer is not None and answer.error_code == -32800 and self.version >= 2:
            self.verdicts.passed(rule_id, "answered -32800 (Request cancelled)", evidence)
        else:
            why = f"the permission request after session/cancel got {describe(answer)}"
            self.verdicts.failed(rule_id, why, evidence)

    # at the end

    def judge_wire(self) -> None:
        verdicts = self.verdicts
        first = self.first
        if first is None:
            verdicts.failed("init.initialize-first", "the client sent nothing")
        else:
            ok = first.is_request and first.method == v2_methods.INITIALIZE.name
            why = "initialize first" if ok else f"the first message is {_what(first)}"
            verdicts.judge("init.initialize-first", ok, why, [first])
            if not ok:
                verdicts.not_applicable("init.params-fit", "no initialize came first")
        verdicts.judge(
            "turn.requests-fit",
            not self.unfit,
            f"{len(self.unfit)} request(s) whose params do not fit (answered -32602)"
            if self.unfit
            else "every request fits its params",
            self.unfit,
        )
        missing = [p.line for p in self.pending.values() if not p.answers and p.line]
        twice = [a for p in self.pending.values() for a in p.answers[1:]]
        problems = [
            f"{len(missing)} unanswered" if missing else "",
            f"{len(twice)} answered twice" if twice else "",
            f"{len(self.stray)} response(s) to no request sent" if self.stray else "",
        ]
        said = ", ".join(p for p in problems if p)
        if self.pending:
            verdicts.judge(
                "rpc.answered-once",
                not said,
                said or f"{len(self.pending)} requests, each answered once",
                [*missing, *twice, *self.stray],
            )
        verdicts.judge(
            "rpc.ids-unique",
            not self.reused,
            f"{len(self.reused)} request(s) reusing a pending id"
            if self.reused
            else "no id reused while pending",
            self.reused,
        )
        verdicts.judge(
            "input.lines-clean",
            not self.unclean,
            f"{len(self.unclean)} line(s) that are no JSON-RPC message"
            if self.unclean
            else "every line a JSON-RPC message",
            self.unclean[:5],
        )
        if self.stalled:
            verdicts.unjudged((r.id for r in CLIENT_RULES), "the client stopped reading")
        if self.turns == 0:
            verdicts.unjudged((r.id for r in CLIENT_RULES), "the client sent no session/prompt")
        verdicts.unjudged(
            ("turn.permission-cancelled",),
            "the client cancelled no turn (with session/cancel) after the first",
        )


def _error(code: int, message: str) -> JsonObject:
    return {"error": {"code": code, "message": message}}


def _what(incoming: Incoming) -> str:
    if incoming.method is not None:
        return f"{'a request' if incoming.is_request else 'a notification'} {incoming.method}"
    return "a response" if incoming.is_response else "no JSON-RPC message"
