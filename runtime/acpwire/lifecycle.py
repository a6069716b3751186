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
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeAlias, TypeGuard, get_args

import msgspec

import acp_schema.v1 as v1
import acp_schema.v2 as acp
from acp_schema import UNSET, UnsetType

from ._connection import Connection
from ._loop import CancelScope, Event, current_loop, is_cancelled, new_cancel_scope, new_event
from .diffs import v1_diff, v2_diff
from .errors import ConnectionClosed, RpcError

log = logging.getLogger("acpwire.lifecycle")

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"
]
"""ACP's stop reasons: the values of the generated `v2.SessionStateUpdate.stop_reason` (a test keeps
them equal; the generated module has no named alias for them)."""

RunState: TypeAlias = Literal["running", "idle", "requires_action"]
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

ToolKind: TypeAlias = v1.ToolKind
"""The tool kinds both versions know (v2's open enum starts with the same values)."""

ToolCallStatus: TypeAlias = v1.ToolCallStatus
"""The tool call statuses both versions know (v2 adds `paused` and `cancelled`)."""

Location: TypeAlias = str | tuple[str, int]
"""A file a tool call touches: its absolute path, or (path, 1-based line)."""


class PermissionChoice(NamedTuple):
    """One option of a permission request, for either version."""

    option_id: str
    name: str
    kind: v1.PermissionOptionKind


ALLOW_OR_REJECT = (
    PermissionChoice("allow", "Allow", "allow_once"),
    PermissionChoice("reject", "Reject", "reject_once"),
)


class ToolCallHandle(Protocol):
    """A tool call of a turn, v1 or v2: every change of it is one call."""

    @property
    def tool_call_id(self) -> str: ...

    def update(
        self,
        *,
        title: str | UnsetType | None = UNSET,
        kind: ToolKind | UnsetType | None = UNSET,
        status: ToolCallStatus | UnsetType | None = UNSET,
        locations: Sequence[Location] | UnsetType | None = UNSET,
        raw_input: object = UNSET,
        raw_output: object = UNSET,
    ) -> Awaitable[None]:
        """Change the given fields (None clears one, as ACP defines for each); the others
        stay as they are."""
        ...

    def stream(self, text: str) -> Awaitable[None]:
        """Add a text to the tool call's content."""
        ...

    def diff(self, path: str, old: str | None, new: str) -> Awaitable[None]:
        """Add the diff of a file (absolute `path`; `old` None: a new file) to its content."""
        ...

    async def request_permission(
        self, title: str, options: Sequence[PermissionChoice] = ALLOW_OR_REJECT
    ) -> str | None:
        """Ask the user for this tool call: the chosen option's id, None when cancelled."""
        ...


class AgentTurn(Protocol):
    """What a turn's work uses, whichever protocol version the client speaks."""

    @property
    def session_id(self) -> str:
        """The session the turn runs in."""
        ...

    @property
    def prompt_text(self) -> str:
        """The prompt's text blocks, joined by newlines."""
        ...

    def say(self, text: str) -> Awaitable[None]:
        """Stream one chunk of the agent's reply."""
        ...

    async def tool_call(
        self,
        title: str,
        *,
        kind: ToolKind = "other",
        locations: Sequence[Location] = (),
        raw_input: object = UNSET,
    ) -> ToolCallHandle:
        """Announce a new tool call (status `pending`) and return its handle."""
        ...


AnyWork = Callable[[AgentTurn], Awaitable[StopReason | CustomStopReason]]
"""A turn's work written once for both versions (`PromptTurns` and `V1PromptTurns` run it)."""


def text_of(blocks: Sequence[acp.ContentBlock] | Sequence[v1.ContentBlock]) -> str:
    """The text blocks of a prompt (either version), joined by newlines."""
    return "\n".join(b.text for b in blocks if isinstance(b, acp.TextContent | v1.TextContent))


def _choice(answer: acp.RequestPermissionOutcome | v1.RequestPermissionOutcome) -> str | None:
    if isinstance(answer, acp.SelectedPermissionOutcome | v1.SelectedPermissionOutcome):
        return answer.option_id
    return None


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
    """The client's typed peer, for requests beyond the helpers (files, terminals)."""
    session_id: str
    """The session the turn runs in."""
    prompt: list[acp.ContentBlock]
    """The prompt's content blocks."""
    user_message_id: str
    """The messageId the prompt was inserted with (the `session/prompt` response's)."""
    _ids: Iterator[int] = field(default_factory=itertools.count)
    _message_id: str | None = None
    _scope: CancelScope = field(default_factory=new_cancel_scope)
    _ended: Event = field(default_factory=new_event)
    _blocked: int = 0  # permission requests pending

    def update(self, update: acp.SessionUpdate) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`."""
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)
        )

    def new_message_id(self, prefix: str = "msg") -> str:
        """A fresh id, unique within the turn (for a tool call, a message, ...)."""
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
        self, state: RunState, stop_reason: StopReason | CustomStopReason | None = None
    ) -> None:
        """Send a `state_update` (the helpers send `running`, `requires_action` and the final
        `idle` themselves)."""
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
            if self._blocked == 0 and not is_cancelled():
                with current_loop().CancelScope(shield=True):
                    await self.state("running")

    @property
    def prompt_text(self) -> str:
        """The prompt's text blocks, joined by newlines."""
        return text_of(self.prompt)

    async def tool_call(
        self,
        title: str,
        *,
        kind: acp.ToolKind = "other",
        locations: Sequence[Location] = (),
        raw_input: object = UNSET,
    ) -> TurnToolCall:
        """Announce a new tool call (a first `tool_call_update`, status `pending`)."""
        call = TurnToolCall(self, self.new_message_id("call"))
        await self.update(
            acp.ToolCallProgress(
                tool_call_id=call.tool_call_id,
                title=title,
                kind=kind,
                status="pending",
                locations=_v2_locations(locations) if locations else UNSET,
                raw_input=raw_input,
            )
        )
        return call


@dataclass(eq=False)
class TurnToolCall:
    """A v2 tool call of a turn (see `ToolCallHandle`)."""

    turn: Turn
    tool_call_id: str

    def update(
        self,
        *,
        title: str | UnsetType | None = UNSET,
        kind: acp.ToolKind | UnsetType | None = UNSET,
        status: acp.ToolCallStatus | UnsetType | None = UNSET,
        locations: Sequence[Location] | UnsetType | None = UNSET,
        content: list[acp.ToolCallContent] | UnsetType | None = UNSET,
        raw_input: object = UNSET,
        raw_output: object = UNSET,
    ) -> Coroutine[Any, Any, None]:
        """A `tool_call_update` with the given fields (None clears one; `content` replaces
        the whole content, where `stream`/`diff` add to it)."""
        return self.turn.update(
            acp.ToolCallProgress(
                tool_call_id=self.tool_call_id,
                title=title,
                kind=kind,
                status=status,
                locations=_v2_locations(locations)
                if isinstance(locations, Sequence)
                else locations,
                content=content,
                raw_input=raw_input,
                raw_output=raw_output,
            )
        )

    def add(self, content: acp.ToolCallContent) -> Coroutine[Any, Any, None]:
        """Stream one item of content (a `tool_call_content_chunk`)."""
        return self.turn.update(
            acp.ToolCallContentChunk(tool_call_id=self.tool_call_id, content=content)
        )

    def stream(self, text: str) -> Coroutine[Any, Any, None]:
        return self.add(acp.Content(content=acp.TextContent(text=text)))

    def diff(self, path: str, old: str | None, new: str | None) -> Coroutine[Any, Any, None]:
        """Stream the diff of a file: its change and `git_patch` (`new` None: deleted)."""
        return self.add(v2_diff(path, old, new))

    async def request_permission(
        self, title: str, options: Sequence[PermissionChoice] = ALLOW_OR_REJECT
    ) -> str | None:
        """`session/request_permission` with this tool call as its subject."""
        subject = acp.ToolCallPermissionSubject(
            tool_call=acp.ToolCallUpdate(tool_call_id=self.tool_call_id)
        )
        answer = await self.turn.request_permission(
            acp.RequestPermissionRequest(
                session_id=self.turn.session_id,
                title=title,
                subject=subject,
                options=[acp.PermissionOption(option_id=o, name=n, kind=k) for o, n, k in options],
            )
        )
        return _choice(answer.outcome)


def _v2_locations(locations: Sequence[Location]) -> list[acp.ToolCallLocation]:
    return [
        acp.ToolCallLocation(path=place)
        if isinstance(place, str)
        else acp.ToolCallLocation(path=place[0], line=place[1])
        for place in locations
    ]


Record = Callable[["acp.SessionUpdate | v1.SessionUpdate"], object]
"""Records one update of a session (e.g. the `append` of its history list)."""

Recorder = Callable[[str], Record]
"""Given a session id, its `Record` (a session store's `recorder`): asked once per turn."""


def _ignore(update: acp.SessionUpdate | v1.SessionUpdate) -> None:
    pass


@dataclass
class _RecordingTurn(Turn):
    """A Turn that records every update it sends (only built when a recorder is given, so
    the plain Turn's send path stays as it is)."""

    _record: Record = _ignore

    def update(self, update: acp.SessionUpdate) -> Coroutine[Any, Any, None]:
        self._record(update)
        # Turn.update inlined: this is the send path of every say() (super() costs a frame).
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)
        )


@dataclass
class _Session:
    """A session's running turn and the prompts held until it ends."""

    turn: Turn | None = None
    held: list[acp.PromptRequest] = field(default_factory=list)
    changed: Event = field(default_factory=new_event)

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
        client: acp.ClientPeer,
        *,
        prompt_capabilities: acp.PromptCapabilities | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        """`prompt_capabilities`: what the agent advertised; by default read from the
        connection's `initialize_response` (set by `serve_agent`). `recorder`: gives the
        function recording every update a session's turns send (a session store's
        `recorder`)."""
        if not isinstance(client.caller, Connection):
            raise TypeError("PromptTurns needs the ClientPeer of an acpwire connection")
        self.client = client
        """The client's typed peer the turns send their updates through."""
        self.connection: Connection = client.caller
        """The connection the turns run on (its nursery holds them)."""
        self.prompt_capabilities = prompt_capabilities
        """What prompt content the agent accepts beyond text and resource links."""
        self.recorder = recorder
        """Records every update the turns send (a session store's `recorder`), or None."""
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
                await current_loop().checkpoint_if_cancelled()
                if self._closing(params.session_id):
                    raise RpcError.request_cancelled()
                if session.turn is None and self._first_held(session, params):
                    message_id = f"user_{next(self._ids)}"
                    session.turn = self._new_turn(params, message_id)
                    return session.turn
                await session.changed.wait()
        finally:
            session.held[:] = [held for held in session.held if held is not params]
            self._settle(session, params.session_id)

    def _new_turn(self, params: acp.PromptRequest, message_id: str) -> Turn:
        if self.recorder is None:
            return Turn(self.client, params.session_id, params.prompt, message_id)
        record = self.recorder(params.session_id)
        return _RecordingTurn(
            self.client, params.session_id, params.prompt, message_id, _record=record
        )

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


@dataclass
class V1Turn:
    """One v1 prompt's work in a session, with the same helpers as the v2 `Turn`."""

    client: v1.ClientPeer
    session_id: str
    prompt: list[v1.ContentBlock]
    turn_id: str
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def update(self, update: v1.SessionUpdate) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`."""
        return self.client.session_update(
            v1.SessionNotification(session_id=self.session_id, update=update)
        )

    def say(self, text: str) -> Coroutine[Any, Any, None]:
        """Stream one chunk of the agent's reply."""
        return self.update(v1.AgentMessageChunk(content=v1.TextContent(text=text)))

    @property
    def prompt_text(self) -> str:
        """The prompt's text blocks, joined by newlines."""
        return text_of(self.prompt)

    def request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> Coroutine[Any, Any, v1.RequestPermissionResponse]:
        return self.client.session_request_permission(params)

    async def tool_call(
        self,
        title: str,
        *,
        kind: v1.ToolKind = "other",
        locations: Sequence[Location] = (),
        raw_input: object = UNSET,
    ) -> V1TurnToolCall:
        """Announce a new tool call (a `tool_call`, status `pending`)."""
        call = V1TurnToolCall(self, f"call_{self.turn_id}_{next(self._ids)}")
        await self.update(
            v1.ToolCall(
                tool_call_id=call.tool_call_id,
                title=title,
                kind=kind,
                status="pending",
                locations=_v1_locations(locations) if locations else UNSET,
                raw_input=raw_input,
            )
        )
        return call


@dataclass
class _RecordingV1Turn(V1Turn):
    _record: Record = _ignore

    def update(self, update: v1.SessionUpdate) -> Coroutine[Any, Any, None]:
        self._record(update)
        # V1Turn.update inlined: this is the send path of every say() (super() costs a frame).
        return self.client.session_update(
            v1.SessionNotification(session_id=self.session_id, update=update)
        )


@dataclass(eq=False)
class V1TurnToolCall:
    """A v1 tool call of a turn (see `ToolCallHandle`). v1 has no content chunks: `stream`
    and `diff` send the whole content so far in a `tool_call_update`."""

    turn: V1Turn
    tool_call_id: str
    content: list[v1.ToolCallContent] = field(default_factory=list)

    def update(
        self,
        *,
        title: str | UnsetType | None = UNSET,
        kind: v1.ToolKind | UnsetType | None = UNSET,
        status: v1.ToolCallStatus | UnsetType | None = UNSET,
        locations: Sequence[Location] | UnsetType | None = UNSET,
        content: list[v1.ToolCallContent] | UnsetType | None = UNSET,
        raw_input: object = UNSET,
        raw_output: object = UNSET,
    ) -> Coroutine[Any, Any, None]:
        """A `tool_call_update` with the given fields (None clears one; `content` replaces
        the whole content, where `stream`/`diff` add to it)."""
        if not isinstance(content, UnsetType):
            self.content = list(content or ())
        return self.turn.update(
            v1.ToolCallProgress(
                tool_call_id=self.tool_call_id,
                title=title,
                kind=kind,
                status=status,
                locations=_v1_locations(locations)
                if isinstance(locations, Sequence)
                else locations,
                content=content,
                raw_input=raw_input,
                raw_output=raw_output,
            )
        )

    def add(self, content: v1.ToolCallContent) -> Coroutine[Any, Any, None]:
        """Add one item to the content (v1 sends the whole list again)."""
        return self.update(content=[*self.content, content])

    def stream(self, text: str) -> Coroutine[Any, Any, None]:
        return self.add(v1.Content(content=v1.TextContent(text=text)))

    def diff(self, path: str, old: str | None, new: str) -> Coroutine[Any, Any, None]:
        return self.add(v1_diff(path, old, new))

    async def request_permission(
        self, title: str, options: Sequence[PermissionChoice] = ALLOW_OR_REJECT
    ) -> str | None:
        """`session/request_permission` for this tool call (v1 has no question title: the
        client shows the tool call's own)."""
        answer = await self.turn.request_permission(
            v1.RequestPermissionRequest(
                session_id=self.turn.session_id,
                tool_call=v1.ToolCallUpdate(tool_call_id=self.tool_call_id),
                options=[v1.PermissionOption(option_id=o, name=n, kind=k) for o, n, k in options],
            )
        )
        return _choice(answer.outcome)


def _v1_locations(locations: Sequence[Location]) -> list[v1.ToolCallLocation]:
    return [
        v1.ToolCallLocation(path=place)
        if isinstance(place, str)
        else v1.ToolCallLocation(path=place[0], line=place[1])
        for place in locations
    ]


V1_STOP_REASONS: frozenset[str] = frozenset(get_args(v1.StopReason))


def _v1_stop_reason(stop_reason: StopReason | CustomStopReason) -> v1.StopReason:
    """The v1 stop reason of a turn's work; v1 has no `error` and no custom ones."""
    if _is_v1_stop_reason(stop_reason):
        return stop_reason
    raise RpcError.internal_error(
        f"the turn's work returned the stop reason {stop_reason!r}, which v1 does not have: "
        f"return one of {sorted(V1_STOP_REASONS)} (or raise to answer the prompt with an error)"
    )


def _is_v1_stop_reason(value: str) -> TypeGuard[v1.StopReason]:
    return value in V1_STOP_REASONS


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
        self, client: v1.ClientPeer | None = None, *, recorder: Recorder | None = None
    ) -> None:
        """`recorder`: gives the function recording every update the turns of `start` send,
        and the prompt as `user_message_chunk`s (a session store's `recorder`)."""
        self.client = client
        """The client's typed peer (`start` needs it; `run` works without)."""
        self.recorder = recorder
        """Records every update the turns of `start` send, or None."""
        self.connection = client.caller if client is not None else None
        """The connection whose queued prompts `cancel` answers (None without a client)."""
        self._active: dict[str, tuple[CancelScope, Event]] = {}
        self._ids = itertools.count(1)

    async def start(
        self,
        params: v1.PromptRequest,
        work: Callable[[V1Turn], Awaitable[StopReason | CustomStopReason]],
    ) -> v1.PromptResponse:
        """Run `work` as the prompt's turn (a `V1Turn`, the same helpers as the v2 `Turn`)
        and answer with its stop reason: `return await turns.start(params, work)`."""
        if self.client is None:
            raise TypeError("V1PromptTurns.start needs the client: V1PromptTurns(client)")
        turn = self._new_turn(self.client, params)

        async def run_work() -> v1.StopReason:
            return _v1_stop_reason(await work(turn))

        return v1.PromptResponse(stop_reason=await self.run(params.session_id, run_work))

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
        turn_id = f"turn_{next(self._ids)}"
        if self.recorder is None:
            return V1Turn(client, params.session_id, params.prompt, turn_id)
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
        if not isinstance(self.connection, Connection):
            return False
        return 0 < self.connection.cancel_requests(
            lambda call: (
                isinstance(call.params, v1.PromptRequest) and call.params.session_id == session_id
            )
        )

    async def close(self, session_id: str) -> v1.CloseSessionResponse:
        """`session/close`: cancel the turn, wait until its work ended, then the response."""
        active = self._active.get(session_id)
        self.cancel(session_id)
        if active is not None:
            await active[1].wait()
        return v1.CloseSessionResponse()
