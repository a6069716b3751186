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

`cancel` (from `session/cancel`) cancels the turn's work (a cancel scope: a pending
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

Both serve either surface of their version: `PromptTurns(client)` answers with the classes of
the client peer's surface (`acp_schema.v2` or `.v2.unstable`: `acp_schema.surface_of(client)`),
and reads prompts, cancels and closes by their method and content blocks by their wire tag.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeGuard, get_args, overload

import msgspec

import acp_schema.v1 as v1
import acp_schema.v2 as acp
from acp_schema import OpenVariant, Surface, surface_of, tag_of

from .._loop import CancelScope, Event, current_loop, is_cancelled, new_cancel_scope, new_event
from .._wire.running import RunningConnection, running_connection
from ..errors import ConnectionClosed, RpcError
from .turns import (
    KNOWN_STOP_REASONS,
    CustomStopReason,
    Recorder,
    RunState,
    StopReason,
    Turn,
    V1Turn,
    Work,
    is_stop_reason,
    wire_stop_reason,
)

if TYPE_CHECKING:
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2.unstable as v2u

log = logging.getLogger("acpwire.agent")

TurnIds = Callable[[str], str]
"""Gives the id of a session's next turn, given the session id (unique within the session)."""


def _counted(prefix: str) -> TurnIds:
    """`prefix_1`, `prefix_2`, ...: turn ids unique within one scheduler (one connection)."""
    numbers = itertools.count(1)
    return lambda session_id: f"{prefix}_{next(numbers)}"


PROMPT = acp.SESSION_PROMPT.name
CLOSE = acp.SESSION_CLOSE.name


@functools.cache
def _v1_stop_reasons() -> frozenset[str]:
    """v1's stop reasons (on first use: `v1.StopReason` imports the protocol's session area)."""
    return frozenset(get_args(v1.StopReason))


# Content blocks (by wire tag) beyond the baseline (text, resource links) and the prompt
# capability that admits each (the schema's PromptCapabilities description).
OPT_IN_CONTENT: dict[str, str] = {
    "image": "image",
    "audio": "audio",
    "resource": "embedded_context",
}
BASELINE_CONTENT = frozenset({"text", "resource_link"})


def _result_type(surface: Surface[Any, Any, Any, Any], method: str) -> Any:
    """The class the surface's agent answers `method` with (its method table's result)."""
    result = surface.agent_methods[method].result
    assert result is not None  # a request: it has a result
    return result.type


def _session_id(request: str | Any) -> str:
    """The session a request (or a session id itself) names."""
    return request if isinstance(request, str) else str(request.session_id)


class _Session(msgspec.Struct):
    """A session's running turn and the prompts held until it ends (a Struct, not a
    dataclass: defined in microseconds at import, cold start)."""

    turn: Turn | None = None
    held: list[acp.PromptRequest] = msgspec.field(default_factory=list)
    changed: Event = msgspec.field(default_factory=new_event)

    def notify(self) -> None:
        """Wake the held prompts to look again (the turn ended, or one of them left)."""
        self.changed.set()
        self.changed = new_event()

    def holds(self, params: object) -> bool:
        return any(params is held for held in self.held)


class PromptTurns:
    """Runs prompt turns in the background of the connection, one at a time per session."""

    def __init__(
        self,
        client: acp.ClientPeer | v2u.ClientPeer,
        *,
        prompt_capabilities: acp.PromptCapabilities | v2u.PromptCapabilities | None = None,
        recorder: Recorder | None = None,
        turn_ids: TurnIds | None = None,
    ) -> None:
        """`client`: the client's typed peer `serve_agent` gave the agent (of `acp_schema.v2`
        or `.v2.unstable`: the turns answer with its surface's classes).
        `prompt_capabilities`: what the agent advertised; by default read from the
        connection's `initialize_response` (set by `serve_agent`). `recorder`: gives the
        function recording every update a session's turns send (a session store's
        `recorder`). `turn_ids`: gives the messageId of a session's next prompt (its
        messages' and tool calls' ids derive from it); by default `user_1`, `user_2`, ... per
        connection, which is right unless a session outlives the connection: a session store
        must continue the count, or a resumed session reuses the ids of its history."""
        surface = surface_of(client)
        if surface is None or surface.protocol_version != 2:
            raise TypeError(
                f"PromptTurns runs v2 turns: give it the v2 ClientPeer serve_agent passes to "
                f"your agent, not a {type(client).__qualname__} (V1PromptTurns runs v1 turns)"
            )
        connection = running_connection(client.caller)
        if connection is None:
            raise TypeError(
                "PromptTurns needs the ClientPeer of an acpwire connection (the one "
                "serve_agent passes to your agent's __init__), not one over a "
                f"{type(client.caller).__qualname__}"
            )
        self.client: acp.ClientPeer = client  # type: ignore[assignment]
        """The client's typed peer the turns send their updates through (the updates are the
        same on both v2 surfaces: the turns send `acp_schema.v2`'s)."""
        self._surface = surface  # its answers' classes looked up at use (an area import each)
        self._connection: RunningConnection = connection  # its task group holds the turns
        self.prompt_capabilities = prompt_capabilities
        """What prompt content the agent accepts beyond text and resource links."""
        self.recorder = recorder
        """Records every update the turns send (a session store's `recorder`), or None."""
        self._sessions: dict[str, _Session] = {}
        self._turn_ids = turn_ids or _counted("user")

    @overload
    async def start(self, params: acp.PromptRequest, work: Work) -> acp.PromptResponse: ...
    @overload
    async def start(self, params: v2u.PromptRequest, work: Work) -> v2u.PromptResponse: ...
    async def start(
        self, params: acp.PromptRequest | v2u.PromptRequest, work: Work
    ) -> acp.PromptResponse | v2u.PromptResponse:
        """Insert the prompt once the session's turn ended and run `work` as the next turn;
        the response (of the client's surface) carries its messageId. Return it from
        `session_prompt` directly."""
        prompt: Any = params
        self._check_content(prompt.prompt)
        session = self._sessions.setdefault(prompt.session_id, _Session())
        turn = await self._insert(session, prompt)
        self._connection.start_soon(self._run, session, turn, work)
        response: acp.PromptResponse = _result_type(self._surface, PROMPT)(
            message_id=turn.user_message_id
        )
        return response

    def current_state(self, session_id: str) -> RunState:
        """The session's state as its turns reported it last."""
        session = self._sessions.get(session_id)
        if session is None or session.turn is None:
            return "idle"
        return "requires_action" if session.turn._blocked else "running"

    def cancel(self, session_id: str) -> bool:
        """`session/cancel`: stop the session's turn (it then reports `cancelled`) and answer
        its prompts not inserted yet -32800. Returns whether there was anything to cancel."""
        session = self._sessions.get(session_id)
        turn = session.turn if session is not None else None
        if turn is not None:
            turn._scope.cancel()
        prompts = self._connection.cancel_requests(
            lambda call: call.method == PROMPT and _names_session(call.params, session_id)
        )
        return turn is not None or prompts > 0

    @overload
    async def close(self, request: str | acp.CloseSessionRequest) -> acp.CloseSessionResponse: ...
    @overload
    async def close(self, request: v2u.CloseSessionRequest) -> v2u.CloseSessionResponse: ...
    async def close(
        self, request: str | acp.CloseSessionRequest | v2u.CloseSessionRequest
    ) -> acp.CloseSessionResponse | v2u.CloseSessionResponse:
        """`session/close` of `request` (the close request, or its session id): cancel as
        `cancel` does and return the close response (of the client's surface) once the turn
        has sent its last update (its idle `cancelled`): nothing of it follows."""
        session_id = _session_id(request)
        self.cancel(session_id)
        session = self._sessions.get(session_id)
        if session is not None and session.turn is not None:
            await session.turn._ended.wait()
        response: acp.CloseSessionResponse = _result_type(self._surface, CLOSE)()
        return response

    def _check_content(self, prompt: list[Any]) -> None:
        advertised = self._advertised()
        for block in prompt:
            content_type = tag_of(block)
            known = not isinstance(block, OpenVariant)
            if known and content_type in BASELINE_CONTENT:
                continue
            capability = OPT_IN_CONTENT.get(content_type) if known else None  # type: ignore[arg-type]
            if capability is None or not isinstance(
                getattr(advertised, capability, None), msgspec.Struct
            ):
                raise RpcError.invalid_params(
                    f"prompt content of type {content_type!r} is not in the agent's "
                    "prompt capabilities (initialize: capabilities.session.prompt); clients "
                    "MUST restrict prompts to them"
                )

    def _advertised(self) -> object:
        """The `PromptCapabilities` given, else those the agent's `initialize` answer
        advertised (`capabilities.session.prompt`; None when it advertised none)."""
        if self.prompt_capabilities is not None:
            return self.prompt_capabilities
        found: object = self._connection.initialize_response
        for name in ("capabilities", "session", "prompt"):
            found = getattr(found, name, None)
            if not isinstance(found, msgspec.Struct):
                return None
        return found

    async def _insert(self, session: _Session, params: acp.PromptRequest) -> Turn:
        """Insert the prompt as the session's turn once it has no turn and no earlier prompt
        is held; -32800 when a cancel or close of the session came first."""
        session.held.append(params)
        try:
            while True:
                # A session/cancel read with this prompt cancelled it before it ran.
                await current_loop().checkpoint_if_cancelled()
                if self._closing(params.session_id):
                    raise RpcError.request_cancelled()
                if session.turn is None and self._first_held(session, params):
                    message_id = self._turn_ids(params.session_id)
                    session.turn = self._new_turn(params, message_id)
                    return session.turn
                await session.changed.wait()
        finally:
            session.held[:] = [held for held in session.held if held is not params]
            self._settle(session, params.session_id)

    def _new_turn(self, params: acp.PromptRequest, message_id: str) -> Turn:
        if self.recorder is None:
            return Turn(self.client, params.session_id, params.prompt, message_id)
        from .recording_turns import _RecordingTurn

        record = self.recorder(params.session_id)
        return _RecordingTurn(
            self.client, params.session_id, params.prompt, message_id, _record=record
        )

    def _first_held(self, session: _Session, params: acp.PromptRequest) -> bool:
        for call in self._connection.requests_in_flight():
            if session.holds(call.params):
                return call.params is params
        return True  # not a request of this connection (start called directly)

    def _closing(self, session_id: str) -> bool:
        return any(
            call.method == CLOSE and _names_session(call.params, session_id)
            for call in self._connection.requests_in_flight()
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
            idle = acp.SessionStateUpdate(state="idle", stop_reason=wire_stop_reason(stop_reason))
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
        if not is_stop_reason(stop_reason):
            problem = (
                f"the turn's work returned the stop reason {stop_reason!r}: it must be one of "
                f"{sorted(KNOWN_STOP_REASONS)} or begin with '_' (CustomStopReason)"
            )
            log.error("%s", problem)
            return "error", problem
        return stop_reason, None
    return "cancelled", None  # the scope caught the cancellation


def _names_session(params: object, session_id: str) -> bool:
    """Whether a request's params name the session (params read raw have no fields yet)."""
    return getattr(params, "session_id", None) == session_id


def _v1_stop_reason(stop_reason: StopReason | CustomStopReason) -> v1.StopReason:
    """The v1 stop reason of a turn's work; v1 has no `error` and no custom ones."""
    if _is_v1_stop_reason(stop_reason):
        return stop_reason
    raise RpcError.internal_error(
        f"the turn's work returned the stop reason {stop_reason!r}, which v1 does not have: "
        f"return one of {sorted(_v1_stop_reasons())} (or raise to answer the prompt with an error)"
    )


def _is_v1_stop_reason(value: str) -> TypeGuard[v1.StopReason]:
    return value in _v1_stop_reasons()


V1Work = Callable[[V1Turn], Awaitable[StopReason | CustomStopReason]]


class V1PromptTurns:
    """v1 prompt turns: the `session/prompt` response itself carries the stop reason.

    `run` executes the turn inside the request and returns its stop reason; `cancel`
    (from `session/cancel`) stops it, and the prompt is answered with `cancelled`, not an
    error, whatever the aborted work returned or raised. With the client peer given, a
    prompt that arrived before the cancel but is not running yet is answered `cancelled` too
    (call `run` first in `session_prompt`). `close` (from `session/close`) cancels the same
    way and returns the close response once the turn's work has ended.
    """

    def __init__(
        self,
        client: v1.ClientPeer | v1u.ClientPeer | None = None,
        *,
        recorder: Recorder | None = None,
        turn_ids: TurnIds | None = None,
    ) -> None:
        """`client`: the client's typed peer `serve_agent` gave the agent (of `acp_schema.v1`
        or `.v1.unstable`: the turns answer with its surface's classes). `recorder`: gives the
        function recording every update the turns of `start` send, and the prompt as
        `user_message_chunk`s (a session store's `recorder`). `turn_ids`: gives the id of a
        session's next turn, the prefix of its tool calls' ids; by default `turn_1`, `turn_2`,
        ... per connection (see `PromptTurns`)."""
        surface = surface_of(client) if client is not None else None
        self._surface = surface if surface is not None and surface.protocol_version == 1 else None
        self.client: v1.ClientPeer | None = client  # type: ignore[assignment]
        """The client's typed peer (`start` needs it; `run` works without)."""
        self.recorder = recorder
        """Records every update the turns of `start` send, or None."""
        self.connection = running_connection(client.caller) if client is not None else None
        """The connection whose queued prompts `cancel` answers (None without a client, or
        for a client peer that is not over an acpwire connection)."""
        self._active: dict[str, tuple[CancelScope, Event]] = {}
        self._turn_ids = turn_ids or _counted("turn")

    @overload
    async def start(self, params: v1.PromptRequest, work: V1Work) -> v1.PromptResponse: ...
    @overload
    async def start(self, params: v1u.PromptRequest, work: V1Work) -> v1u.PromptResponse: ...
    async def start(
        self, params: v1.PromptRequest | v1u.PromptRequest, work: V1Work
    ) -> v1.PromptResponse | v1u.PromptResponse:
        """Run `work` as the prompt's turn (a `V1Turn`, the same helpers as the v2 `Turn`)
        and answer with its stop reason (a response of the client's surface):
        `return await turns.start(params, work)`."""
        if self.client is None or self._surface is None:
            raise TypeError(
                "V1PromptTurns.start needs the v1 client: V1PromptTurns(client), with the v1 "
                "ClientPeer serve_agent passes to your agent"
            )
        prompt: Any = params
        turn = self._new_turn(self.client, prompt)

        async def run_work() -> v1.StopReason:
            return _v1_stop_reason(await work(turn))

        stop_reason = await self.run(prompt.session_id, run_work)
        response: v1.PromptResponse = _result_type(self._surface, PROMPT)(stop_reason=stop_reason)
        return response

    async def run(
        self, session_id: str, work: Callable[[], Awaitable[v1.StopReason]]
    ) -> v1.StopReason:
        """Run `work` as the session's turn and return its stop reason (`cancelled` when
        `cancel` or `close` stopped it). Return it in the `session/prompt` response."""
        if is_cancelled():  # a session/cancel read with this prompt cancelled its request
            return "cancelled"
        ended = new_event()
        with new_cancel_scope() as scope:
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

    def _new_turn(self, client: v1.ClientPeer, params: v1.PromptRequest) -> V1Turn:
        turn_id = self._turn_ids(params.session_id)
        if self.recorder is None:
            return V1Turn(client, params.session_id, params.prompt, turn_id)
        from .recording_turns import _RecordingV1Turn

        record = self.recorder(params.session_id)
        for block in params.prompt:
            record(v1.UserMessageChunk(content=block))
        return _RecordingV1Turn(client, params.session_id, params.prompt, turn_id, _record=record)

    def cancel(self, session_id: str) -> bool:
        """`session/cancel`: stop the session's turn; whether there was anything to cancel."""
        active = self._active.get(session_id)
        if active is not None:
            active[0].cancel()
            return True
        if self.connection is None:
            return False
        return 0 < self.connection.cancel_requests(
            lambda call: call.method == PROMPT and _names_session(call.params, session_id)
        )

    @overload
    async def close(self, request: str | v1.CloseSessionRequest) -> v1.CloseSessionResponse: ...
    @overload
    async def close(self, request: v1u.CloseSessionRequest) -> v1u.CloseSessionResponse: ...
    async def close(
        self, request: str | v1.CloseSessionRequest | v1u.CloseSessionRequest
    ) -> v1.CloseSessionResponse | v1u.CloseSessionResponse:
        """`session/close` of `request` (the close request, or its session id): cancel the
        turn, wait until its work ended, then the response (of the client's surface; without a
        client, of the request's)."""
        session_id = _session_id(request)
        active = self._active.get(session_id)
        self.cancel(session_id)
        if active is not None:
            await active[1].wait()
        surface = self._surface or surface_of(request) or v1.SURFACE
        response: v1.CloseSessionResponse = _result_type(surface, CLOSE)()
        return response
