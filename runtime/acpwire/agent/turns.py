"""The helpers a turn's work calls: `Turn` (v2) and `V1Turn` send the right updates for a
reply, tool calls (`TurnToolCall`, `V1TurnToolCall`) and permission requests; `AgentTurn` and
`ToolCallHandle` are what work written once for both versions sees.

The schedulers that run turns (`PromptTurns`, `V1PromptTurns`) are in `schedulers.py`.

The helpers never send what the schema forbids for what their own arguments give: such a call
raises ValueError naming the rule, before anything is sent (the checks are a set lookup or
ride on a loop the helper runs anyway). They check:

- permission requests (`request_permission` of a turn or a tool call): v2 `options` has at
  least one option (`minItems: 1`); option ids are unique within the request (v2: MUST; v1:
  "Unique identifier"). v1 allows an empty `options`, so V1Turn sends one;
- tool call locations (`tool_call`, `update`): absolute paths (`AbsolutePath`), lines from 1
  in v2 ("`0` is invalid"), from 0 in v1, within uint32; diffs (`diff`): absolute paths;
- `Turn.state`: a state and a stop reason are ACP's or begin with `_` (the others are
  reserved for future ACP versions);
- ids: the helpers make tool call and message ids unique within the turn.

What a caller builds whole (`update(any_update)`, `content=` items, a
`RequestPermissionRequest`'s other fields) and enum values typed as Literals are left to the
types and to the opt-in `check_outgoing` (the whole-message schema check).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeAlias, TypeVar, get_args

import acp_schema.v1 as v1
import acp_schema.v2 as acp
from acp_schema import UNSET, UnsetType, tag_of

from .._loop import CancelScope, Event, current_loop, is_cancelled, new_cancel_scope, new_event
from .diffs import require_absolute, v1_diff, v2_diff

if TYPE_CHECKING:  # an agent on the stable surfaces never imports the unstable ones
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2.unstable as v2u

    # What a turn sends: its version's updates, of the stable surface or the unstable one (the
    # same wire form, so the stable notification carries either as it is).
    V2Update: TypeAlias = acp.SessionUpdate | v2u.SessionUpdate
    V1Update: TypeAlias = v1.SessionUpdate | v1u.SessionUpdate

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"
]
"""ACP's stop reasons: the values of the generated `v2.SessionStateUpdate.stop_reason` (a test keeps
them equal; the generated module has no named alias for them)."""

RunState: TypeAlias = Literal["running", "idle", "requires_action"]
"""The values of the generated `v2.SessionStateUpdate.state`."""

KNOWN_STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))
KNOWN_RUN_STATES: frozenset[str] = frozenset(get_args(RunState))
UINT32_MAX = 2**32 - 1


def is_stop_reason(value: object) -> bool:
    """ACP's own stop reasons, or a custom one (begins with `_`): what an agent may send."""
    return isinstance(value, str) and (value in KNOWN_STOP_REASONS or value.startswith("_"))


def wire_stop_reason(value: StopReason | CustomStopReason) -> str:
    """The stop reason as a plain str: msgspec encodes no str subclass (`CustomStopReason`)."""
    return str(value)


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
    def tool_call_id(self) -> str:
        """The tool call's id, unique within the session."""
        ...

    def update(
        self,
        *,
        title: str | UnsetType | None = UNSET,
        # v1's kinds and statuses: those both versions know (v2's open enums start with the
        # same values, v2 adds the statuses `paused` and `cancelled`). No module-level alias
        # of them: it would import their protocol area at every agent's start.
        kind: v1.ToolKind | UnsetType | None = UNSET,
        status: v1.ToolCallStatus | UnsetType | None = UNSET,
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
        kind: v1.ToolKind = "other",
        locations: Sequence[Location] = (),
        raw_input: object = UNSET,
    ) -> ToolCallHandle:
        """Announce a new tool call (status `pending`) and return its handle."""
        ...


AnyWork = Callable[[AgentTurn], Awaitable[StopReason | CustomStopReason]]
"""A turn's work written once for both versions (`PromptTurns` and `V1PromptTurns` run it)."""


def text_of(blocks: Sequence[acp.ContentBlock] | Sequence[v1.ContentBlock]) -> str:
    """The text blocks of a prompt (either version, any surface), joined by newlines."""
    return "\n".join(b.text for b in blocks if tag_of(b) == "text")  # type: ignore[union-attr]


def _choice(answer: acp.RequestPermissionOutcome | v1.RequestPermissionOutcome) -> str | None:
    """The option the client selected (an answer of any surface), None when it cancelled."""
    if tag_of(answer) == "selected":
        return answer.option_id  # type: ignore[union-attr]
    return None


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
    _ids: Iterator[int] = field(default_factory=itertools.count, init=False, repr=False)
    _message_id: str | None = field(default=None, init=False, repr=False)
    _scope: CancelScope = field(default_factory=new_cancel_scope, init=False, repr=False)
    _ended: Event = field(default_factory=new_event, init=False, repr=False)
    _blocked: int = field(default=0, init=False, repr=False)  # permission requests pending

    def update(self, update: V2Update) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`; on the unstable
        surface also its own variants (`acp_schema.v2.unstable.PlanRemoved`)."""
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)  # type: ignore[arg-type]
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
        `idle` themselves). ValueError for a state or stop reason that is not ACP's and does
        not begin with `_`."""
        if state not in KNOWN_RUN_STATES and not state.startswith("_"):
            raise ValueError(
                f"session/update state_update: state {state!r} is not one of "
                f"{sorted(KNOWN_RUN_STATES)} and does not begin with '_' (schema: StateUpdate: "
                "values that do not begin with `_` are reserved for future ACP variants)"
            )
        if stop_reason is not None and not is_stop_reason(stop_reason):
            raise ValueError(
                f"session/update state_update: stop reason {stop_reason!r} is not one of "
                f"{sorted(KNOWN_STOP_REASONS)}: custom stop reasons MUST begin with '_' "
                "(CustomStopReason)"
            )
        update = acp.SessionStateUpdate(state=state)
        if stop_reason is not None:
            update.stop_reason = wire_stop_reason(stop_reason)
        await self.update(update)

    async def request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        """Ask the user; the session reports `requires_action` until every request is answered.
        ValueError, before anything is sent, for no option or two options of one id."""
        check_options(params.options, at_least_one=True)
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
        places = v2_locations(locations) if locations else UNSET
        call = TurnToolCall(self, self.new_message_id("call"))
        await self.update(
            acp.ToolCallProgress(
                tool_call_id=call.tool_call_id,
                title=title,
                kind=kind,
                status="pending",
                locations=places,
                raw_input=raw_input,
            )
        )
        return call


@dataclass(eq=False)
class TurnToolCall:
    """A v2 tool call of a turn (see `ToolCallHandle`)."""

    turn: Turn
    """The turn it belongs to."""
    tool_call_id: str
    """Its id, unique within the session."""

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
                locations=v2_locations(locations) if isinstance(locations, Sequence) else locations,
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
        """Stream a text into the tool call's content (a `tool_call_content_chunk`)."""
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


def check_options(
    options: Sequence[acp.PermissionOption] | Sequence[v1.PermissionOption], at_least_one: bool
) -> None:
    """ValueError naming the rule for a permission request's options the schema forbids."""
    if not options:
        if at_least_one:
            raise ValueError(
                "session/request_permission: options must contain at least one option "
                "(schema: minItems 1)"
            )
        return
    ids = [option.option_id for option in options]
    if len(set(ids)) != len(ids):
        twice = next(i for n, i in enumerate(ids) if i in ids[:n])
        raise ValueError(
            f"session/request_permission: option id {twice!r} appears twice: each optionId "
            "MUST be unique within the request (schema: PermissionOption.optionId)"
        )


LocationStruct = TypeVar("LocationStruct", "acp.ToolCallLocation", "v1.ToolCallLocation")


def _locations(
    locations: Sequence[Location], kind: type[LocationStruct], first_line: int
) -> list[LocationStruct]:
    """The locations as the version's `ToolCallLocation`s; ValueError for a relative path or
    a line outside `first_line`..uint32 (the schema's `ToolCallLocation`)."""
    built = []
    for place in locations:
        path, line = (place, None) if isinstance(place, str) else place
        require_absolute(path, "tool call location", "ToolCallLocation.path is an AbsolutePath")
        if line is None:
            built.append(kind(path=path))
            continue
        if not first_line <= line <= UINT32_MAX:
            raise ValueError(
                f"tool call location {path!r}: line {line!r} is out of range: lines are "
                f"{first_line}..{UINT32_MAX} (schema: ToolCallLocation.line, uint32, minimum "
                f"{first_line})"
            )
        built.append(kind(path=path, line=line))
    return built


def v2_locations(locations: Sequence[Location]) -> list[acp.ToolCallLocation]:
    """v2 locations: lines are 1-based ("`0` is invalid")."""
    return _locations(locations, acp.ToolCallLocation, 1)


def v1_locations(locations: Sequence[Location]) -> list[v1.ToolCallLocation]:
    """v1 locations: lines from 0 (`minimum: 0`)."""
    return _locations(locations, v1.ToolCallLocation, 0)


Record = Callable[["acp.SessionUpdate | v1.SessionUpdate"], object]
"""Records one update of a session (e.g. the `append` of its history list)."""

Recorder = Callable[[str], Record]
"""Given a session id, its `Record` (a session store's `recorder`): asked once per turn."""


@dataclass
class V1Turn:
    """One v1 prompt's work in a session, with the same helpers as the v2 `Turn`."""

    client: v1.ClientPeer
    """The client's typed peer, for requests beyond the helpers (files, terminals)."""
    session_id: str
    """The session the turn runs in."""
    prompt: list[v1.ContentBlock]
    """The prompt's content blocks."""
    turn_id: str
    """An id of the turn, unique within the `V1PromptTurns` (tool call ids start with it)."""
    _ids: Iterator[int] = field(default_factory=itertools.count, init=False, repr=False)

    def update(self, update: V1Update) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`; on the unstable
        surface also its own variants (`acp_schema.v1.unstable`'s)."""
        return self.client.session_update(
            v1.SessionNotification(session_id=self.session_id, update=update)  # type: ignore[arg-type]
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
        """Ask the user (`session/request_permission`; v1 asks for a tool call: `params`
        names one in `tool_call`); ValueError, before anything is sent, for two options of
        one id (v1 allows an empty `options`)."""
        check_options(params.options, at_least_one=False)
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
        places = v1_locations(locations) if locations else UNSET
        call = V1TurnToolCall(self, f"call_{self.turn_id}_{next(self._ids)}")
        await self.update(
            v1.ToolCall(
                tool_call_id=call.tool_call_id,
                title=title,
                kind=kind,
                status="pending",
                locations=places,
                raw_input=raw_input,
            )
        )
        return call


@dataclass(eq=False)
class V1TurnToolCall:
    """A v1 tool call of a turn (see `ToolCallHandle`). v1 has no content chunks: `stream`
    and `diff` send the whole content so far in a `tool_call_update`."""

    turn: V1Turn
    """The turn it belongs to."""
    tool_call_id: str
    """Its id, unique within the session."""
    content: list[v1.ToolCallContent] = field(default_factory=list)
    """Its content so far (v1 sends the whole list with every change)."""

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
        update = v1.ToolCallProgress(
            tool_call_id=self.tool_call_id,
            title=title,
            kind=kind,
            status=status,
            locations=v1_locations(locations) if isinstance(locations, Sequence) else locations,
            content=content,
            raw_input=raw_input,
            raw_output=raw_output,
        )
        if not isinstance(content, UnsetType):
            self.content = list(content or ())
        return self.turn.update(update)

    def add(self, content: v1.ToolCallContent) -> Coroutine[Any, Any, None]:
        """Add one item to the content (v1 sends the whole list again)."""
        return self.update(content=[*self.content, content])

    def stream(self, text: str) -> Coroutine[Any, Any, None]:
        """Add a text to the tool call's content."""
        return self.add(v1.Content(content=v1.TextContent(text=text)))

    def diff(self, path: str, old: str | None, new: str) -> Coroutine[Any, Any, None]:
        """Add the diff of a file to the content (v1: `oldText` / `newText`; `old` None: a
        new file)."""
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
