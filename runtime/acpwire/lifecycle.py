"""The v2 prompt lifecycle, so an agent author can't get it wrong.

    class MyAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.turns = PromptTurns(client)

        async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
            return await self.turns.start(params, self.work)   # return it directly

        async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
            self.turns.cancel(params.session_id)

        async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
            return await self.turns.close(params.session_id)

        async def work(self, turn: Turn) -> StopReason | CustomStopReason:
            await turn.say("Hello")
            return "end_turn"

`start` checks the prompt's content against the agent's prompt capabilities (-32602 for a
block it did not advertise), inserts the prompt and answers it at once with its `messageId`,
then runs the turn in the background: `user_message` with the prompt, `state_update:
running`, your work, and `state_update: idle` with the stop reason it returns. While
`turn.request_permission` waits, the state is `requires_action`; with several permission
requests pending it stays so until the last one is answered. A stop reason that is neither
ACP's nor `_`-prefixed ends the turn with `error` (ACP: custom stop reasons MUST begin with
`_`); build custom ones with `CustomStopReason("_mine")`.

A prompt that arrives while the session's turn runs is held, not inserted: its response
waits until that turn has reported idle, then it is inserted and starts the next turn, so a
client never sees the new turn's `running` before the old turn's `idle`. (ACP lets an agent
hold a prompt: the `session/prompt` response means insertion, not receipt; a new prompt does
not cancel the running turn, only `session/cancel` does.) Held prompts are inserted in the
order they arrived; prompts written in one burst to an idle session may be inserted in
either order.

`cancel` (from `session/cancel`) cancels the turn's work (a trio cancel scope: a pending
permission request is cancelled with `$/cancel_request`) and the turn ends idle with
`cancelled`, whatever the work returned or raised; prompts of the session that arrived
before the cancel and are not inserted (held, or not yet handled) are answered -32800.
`close` (from `session/close`) does the same, waits until the turn has sent its last update,
and returns the close response: nothing of the turn follows it; prompts not inserted while
the close is in flight are answered -32800. Any other exception ends the turn idle with the
`error` stop reason.

`session_prompt` must return `start`'s result directly: `cancel` answers -32800 to any
prompt request of the session still unanswered, which would include an inserted one whose
handler kept running after `start`.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

import msgspec
import trio

import acp_schema.v1 as v1
import acp_schema.v2 as acp

from .connection import Connection
from .errors import ConnectionClosed, RpcError

log = logging.getLogger("acpwire.lifecycle")

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"
]
"""ACP's stop reasons: the values of the generated `v2.SessionStateUpdate.stop_reason` (a test keeps
them equal; the generated module has no named alias for them)."""

SessionState: TypeAlias = Literal["running", "idle", "requires_action"]
"""The values of the generated `v2.SessionStateUpdate.state`."""

KNOWN_STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))


class CustomStopReason(str):
    """A stop reason of the agent's own: `CustomStopReason("_paused")`.

    ACP: custom stop reasons MUST begin with `_` (unprefixed ones are reserved for future
    versions); any other value raises ValueError.
    """

    __slots__ = ()

    def __new__(cls, value: str) -> CustomStopReason:
        if not value.startswith("_"):
            raise ValueError(
                f"custom stop reason {value!r}: custom stop reasons MUST begin with '_' "
                f"(use {'_' + value!r}), the others are ACP's: {sorted(KNOWN_STOP_REASONS)}"
            )
        return super().__new__(cls, value)


Work = Callable[["Turn"], Awaitable[StopReason | CustomStopReason]]
"""A turn's work: returns its stop reason (`"end_turn"`, ... or a `CustomStopReason`)."""

# Content blocks beyond the baseline (text, resource links) and the prompt capability that
# admits each (the schema's PromptCapabilities description).
OPT_IN_CONTENT: dict[type, str] = {
    acp.ImageContent: "image",
    acp.AudioContent: "audio",
    acp.EmbeddedResource: "embedded_context",
}
BASELINE_CONTENT = (acp.TextContent, acp.ResourceLink)


@dataclass
class Turn:
    """One prompt's foreground work in a session, with helpers that send the right updates."""

    client: acp.ClientPeer
    session_id: str
    prompt: list[acp.ContentBlock]
    user_message_id: str
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _message_id: str | None = None
    _scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    _ended: trio.Event = field(default_factory=trio.Event)
    _blocked: int = 0  # permission requests pending

    def update(self, update: acp.SessionUpdate) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`."""
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)
        )

    def new_message_id(self, prefix: str = "msg") -> str:
        return f"{prefix}_{self.user_message_id}_{next(self._ids)}"

    def say(self, text: str) -> Coroutine[Any, Any, None]:
        """Stream one chunk of the agent's reply (chunks of one turn share a messageId).

        Like `update`, it returns the send's coroutine itself: `await turn.say(...)`."""
        if self._message_id is None:
            self._message_id = self.new_message_id("agent")
        return self.update(
            acp.AgentMessageChunk(message_id=self._message_id, content=acp.TextContent(text=text))
        )

    async def state(
        self, state: SessionState, stop_reason: StopReason | CustomStopReason | None = None
    ) -> None:
        update = acp.SessionStateUpdate(state=state)
        if stop_reason is not None:
            update.stop_reason = stop_reason
        await self.update(update)

    async def request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        """Ask the user; the session reports `requires_action` until every request is answered."""
        self._blocked += 1
        if self._blocked == 1:
            await self.state("requires_action")
        try:
            return await self.client.session_request_permission(params)
        finally:
            self._blocked -= 1
            # Back to running unless the turn was cancelled (then it goes straight to idle).
            # Checked before shielding: inside a shield the deadline is never -inf.
            if self._blocked == 0 and not _is_cancelled():
                with trio.CancelScope(shield=True):
                    await self.state("running")


def _is_cancelled() -> bool:
    return trio.current_effective_deadline() == -float("inf")


@dataclass
class _Session:
    """A session's running turn and the prompts held until it ends."""

    turn: Turn | None = None
    held: list[acp.PromptRequest] = field(default_factory=list)
    changed: trio.Event = field(default_factory=trio.Event)

    def notify(self) -> None:
        """Wake the held prompts to look again (the turn ended, or one of them left)."""
        self.changed.set()
        self.changed = trio.Event()

    def holds(self, params: object) -> bool:
        return any(params is held for held in self.held)


class PromptTurns:
    """Runs prompt turns in the background of the connection, one at a time per session."""

    def __init__(
        self, client: acp.ClientPeer, *, prompt_capabilities: acp.PromptCapabilities | None = None
    ) -> None:
        """`prompt_capabilities`: what the agent advertised; by default read from the
        connection's `initialize_response` (set by `serve_agent`)."""
        if not isinstance(client.caller, Connection):
            raise TypeError("PromptTurns needs the ClientPeer of an acpwire connection")
        self.client = client
        self.connection: Connection = client.caller
        self.prompt_capabilities = prompt_capabilities
        self._sessions: dict[str, _Session] = {}
        self._ids = itertools.count(1)

    async def start(self, params: acp.PromptRequest, work: Work) -> acp.PromptResponse:
        """Insert the prompt once the session's turn ended and run `work` as the next turn;
        the response carries its messageId. Return it from `session_prompt` directly."""
        self._check_content(params.prompt)
        session = self._sessions.setdefault(params.session_id, _Session())
        turn = await self._insert(session, params)
        self.connection.nursery.start_soon(self._run, session, turn, work)
        return acp.PromptResponse(message_id=turn.user_message_id)

    def cancel(self, session_id: str) -> bool:
        """`session/cancel`: stop the session's turn (it then reports `cancelled`) and answer
        its prompts not inserted yet -32800. Returns whether there was anything to cancel."""
        session = self._sessions.get(session_id)
        turn = session.turn if session is not None else None
        if turn is not None:
            turn._scope.cancel()
        prompts = self.connection.cancel_requests(
            lambda call: (
                isinstance(call.params, acp.PromptRequest) and call.params.session_id == session_id
            )
        )
        return turn is not None or prompts > 0

    async def close(self, session_id: str) -> acp.CloseSessionResponse:
        """`session/close`: cancel as `cancel` does and return the close response once the
        turn has sent its last update (its idle `cancelled`): nothing of it follows."""
        self.cancel(session_id)
        session = self._sessions.get(session_id)
        if session is not None and session.turn is not None:
            await session.turn._ended.wait()
        return acp.CloseSessionResponse()

    def _check_content(self, prompt: list[acp.ContentBlock]) -> None:
        advertised = self._advertised()
        for block in prompt:
            if isinstance(block, BASELINE_CONTENT):
                continue
            capability = OPT_IN_CONTENT.get(type(block))
            if capability is None or not isinstance(
                getattr(advertised, capability), msgspec.Struct
            ):
                raise RpcError.invalid_params(
                    f"prompt content of type {_content_type(block)!r} is not in the agent's "
                    "prompt capabilities (initialize: capabilities.session.prompt); clients "
                    "MUST restrict prompts to them"
                )

    def _advertised(self) -> acp.PromptCapabilities:
        if self.prompt_capabilities is not None:
            return self.prompt_capabilities
        response = self.connection.initialize_response
        if isinstance(response, acp.InitializeResponse):
            capabilities = response.capabilities
            if isinstance(capabilities, acp.AgentCapabilities):
                session = capabilities.session
                if isinstance(session, acp.SessionCapabilities):
                    if isinstance(session.prompt, acp.PromptCapabilities):
                        return session.prompt
        return acp.PromptCapabilities()

    async def _insert(self, session: _Session, params: acp.PromptRequest) -> Turn:
        """Insert the prompt as the session's turn once it has no turn and no earlier prompt
        is held; -32800 when a cancel or close of the session came first."""
        session.held.append(params)
        try:
            while True:
                # A session/cancel read with this prompt cancelled it before it ran.
                await trio.lowlevel.checkpoint_if_cancelled()
                if self._closing(params.session_id):
                    raise RpcError.request_cancelled()
                if session.turn is None and self._first_held(session, params):
                    message_id = f"user_{next(self._ids)}"
                    session.turn = Turn(self.client, params.session_id, params.prompt, message_id)
                    return session.turn
                await session.changed.wait()
        finally:
            session.held[:] = [held for held in session.held if held is not params]
            self._settle(session, params.session_id)

    def _first_held(self, session: _Session, params: acp.PromptRequest) -> bool:
        for call in self.connection.requests_in_flight():
            if session.holds(call.params):
                return call.params is params
        return True  # not a request of this connection (start called directly)

    def _closing(self, session_id: str) -> bool:
        return any(
            isinstance(call.params, acp.CloseSessionRequest)
            and call.params.session_id == session_id
            for call in self.connection.requests_in_flight()
        )

    def _settle(self, session: _Session, session_id: str) -> None:
        session.notify()
        if session.turn is None and not session.held and self._sessions.get(session_id) is session:
            del self._sessions[session_id]

    async def _run(self, session: _Session, turn: Turn, work: Work) -> None:
        try:
            await turn.update(acp.UserMessage(message_id=turn.user_message_id, content=turn.prompt))
            await turn.state("running")
            stop_reason, error = await _outcome(turn, work)
            idle = acp.SessionStateUpdate(state="idle", stop_reason=stop_reason)
            if error is not None:
                idle.error = acp.Error(code=acp.ErrorCodeValues.INTERNAL_ERROR, message=error)
            await turn.update(idle)
        except ConnectionClosed:
            pass  # the client is gone: nobody to report the turn to, and no error of ours
        finally:
            session.turn = None
            turn._ended.set()
            self._settle(session, turn.session_id)


async def _outcome(turn: Turn, work: Work) -> tuple[StopReason | CustomStopReason, str | None]:
    """Run the work in the turn's cancel scope: its stop reason and error message."""
    with turn._scope:
        try:
            stop_reason = await work(turn)
        except Exception as exc:
            if turn._scope.cancel_called:
                return "cancelled", None  # aborted work often raises; it is no error
            log.exception("prompt turn failed")
            return "error", f"{type(exc).__name__}: {exc}"
        if turn._scope.cancel_called:
            return "cancelled", None  # cancellation ended the work, whatever it returned
        if not _valid_stop_reason(stop_reason):
            problem = (
                f"the turn's work returned the stop reason {stop_reason!r}: it must be one of "
                f"{sorted(KNOWN_STOP_REASONS)} or begin with '_' (CustomStopReason)"
            )
            log.error("%s", problem)
            return "error", problem
        return stop_reason, None
    return "cancelled", None  # the scope caught the cancellation


def _valid_stop_reason(value: object) -> bool:
    return isinstance(value, str) and (value in KNOWN_STOP_REASONS or value.startswith("_"))


def _content_type(block: acp.ContentBlock) -> str:
    if isinstance(block, acp.UnknownContentBlock):
        return block.tag
    return str(type(block).__struct_config__.tag)


class V1PromptTurns:
    """v1 prompt turns: the `session/prompt` response itself carries the stop reason.

    `run` executes the turn inside the request and returns its stop reason; `cancel`
    (from `session/cancel`) stops it, and the prompt is answered with `cancelled`, not an
    error, whatever the aborted work returned or raised. With the client peer given, a
    prompt that arrived before the cancel but is not running yet is answered `cancelled` too
    (call `run` first in `session_prompt`). `close` (from `session/close`) cancels the same
    way and returns the close response once the turn's work has ended.
    """

    def __init__(self, client: v1.ClientPeer | None = None) -> None:
        self.connection = client.caller if client is not None else None
        self._active: dict[str, tuple[trio.CancelScope, trio.Event]] = {}

    async def run(
        self, session_id: str, work: Callable[[], Awaitable[v1.StopReason]]
    ) -> v1.StopReason:
        if _is_cancelled():  # a session/cancel read with this prompt cancelled its request
            return "cancelled"
        ended = trio.Event()
        with trio.CancelScope() as scope:
            self._active[session_id] = (scope, ended)
            try:
                stop_reason = await work()
                if not scope.cancel_called:
                    return stop_reason
            except Exception:
                if not scope.cancel_called:
                    raise
            finally:
                ended.set()
                if self._active.get(session_id, (None,))[0] is scope:
                    del self._active[session_id]
        return "cancelled"

    def cancel(self, session_id: str) -> bool:
        active = self._active.get(session_id)
        if active is not None:
            active[0].cancel()
            return True
        if not isinstance(self.connection, Connection):
            return False
        return 0 < self.connection.cancel_requests(
            lambda call: (
                isinstance(call.params, v1.PromptRequest) and call.params.session_id == session_id
            )
        )

    async def close(self, session_id: str) -> v1.CloseSessionResponse:
        active = self._active.get(session_id)
        self.cancel(session_id)
        if active is not None:
            await active[1].wait()
        return v1.CloseSessionResponse()
