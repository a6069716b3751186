"""A session's state folded from its `session/update`s: `SessionState` (v2), `V1SessionState`.

    state = SessionState()
    async with conn.v2.subscribe(session_id) as updates:
        async for update in updates:
            state.apply(update)
            render(state.snapshot())

Every update variant follows the schema's patch rules: an omitted field leaves the stored
value unchanged, `null` clears it (or resets it to the schema's default: a tool call's kind to
`other`, its status to `pending`), a value replaces it; chunks append; a full message
(`agent_message` ...) with `content` replaces the chunks received so far; a `tool_call_update`
with `content` replaces the tool call's content and `tool_call_content_chunk` appends to it;
`_meta` patches by top-level key. Unknown variants are kept in `unknown`, in order (v1 too:
the client delivers a v1 update of a tag these bindings do not know as an `OpenVariant`).

Every surface of a version folds alike: `SessionState` folds the updates of `acp_schema.v2` and
`acp_schema.v2.unstable`, `V1SessionState` those of `acp_schema.v1` and `.v1.unstable`. Each
variant's fold is chosen by its wire tag (`acp_schema.tag_of`: the stable and the unstable
class of one variant share it), once per class; a variant no fold here knows (one only an
unstable surface has, or one a surface lacks) goes to `unknown`.

Messages are keyed by `(role, messageId)`, in order of first appearance: each message type
has its own ID space (the schema's `MessageId`), so a user message, an agent message and a
thought may share an id and stay three messages (`state.messages["agent", "m1"]`).

Cost: an update is a dict lookup (by its class; a class's fold is found by its tag the first
time it is seen) and a few attribute writes; chunks are appended to a list
(linear in the size of a message; `Message.text()` joins on demand). `snapshot()` is a shallow
copy of the top-level maps: records are copied on write after a snapshot (never their content
lists, which only grow or are replaced), so a snapshot never changes under a UI.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from acp_schema import OpenVariant, surface_of, tag_of, v1, v2

if TYPE_CHECKING:  # the unstable surfaces fold alike (their updates are typed for `apply`)
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2.unstable as v2u

__all__ = [
    "Compaction",
    "Message",
    "MessageKey",
    "Role",
    "SessionState",
    "Terminal",
    "ToolCall",
    "V1SessionState",
]

Role = Literal["user", "agent", "thought"]
"""Who a `Message` is from: the user, the agent, or the agent's thought."""
MessageKey = tuple[Role, "str | int"]
"""How `messages` keys a message: `(role, messageId)`; a v1 message sent without a messageId
(a run of chunks of one role) is `(role, n)`, `n` an int (the count of messages before it)."""
Meta = dict[str, Any]
Handler = Callable[[Any, Any], None]
Block = TypeVar("Block")
Item = TypeVar("Item")
Location = TypeVar("Location")
Update = TypeVar("Update")
Self = TypeVar("Self", bound="_Record")


def patch_meta(stored: Meta | None, patch: Meta | UnsetType | None) -> Meta | None:
    """The schema's metadata patch: omitted keeps, `null` clears, an object patches by key
    (a key set to `null` is removed, others replace the stored value, no nested merge)."""
    if patch is UNSET:
        return stored
    if patch is None:
        return None
    merged = dict(stored) if stored else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


class _Record:
    """A record of the state, copied on write after a snapshot (see SessionState.snapshot)."""

    __slots__ = ("_generation",)

    def __init__(self, generation: int) -> None:
        self._generation = generation

    def _copy(self: Self, generation: int) -> Self:
        copy = object.__new__(type(self))
        for cls in type(self).__mro__[:-1]:
            for name in cls.__dict__.get("__slots__", ()):
                object.__setattr__(copy, name, getattr(self, name))
        copy._generation = generation
        return copy


class _Content(_Record, Generic[Item]):
    """A record whose content list grows by chunks and is replaced by full updates."""

    __slots__ = ("_count", "_items")

    def __init__(self, generation: int) -> None:
        super().__init__(generation)
        self._items: list[Item] = []
        self._count = 0

    @property
    def content(self) -> list[Item]:
        """The content so far (a new list: safe to keep)."""
        return self._items[: self._count]

    def _append(self, item: Item) -> None:
        self._items.append(item)
        self._count += 1

    def _replace(self, items: list[Item] | None) -> None:
        self._items = list(items) if items else []
        self._count = len(self._items)


class Message(_Content[Block]):
    """A user message, an agent message or a thought, by role and `messageId` (None: a v1
    chunk sent without one; consecutive chunks of one role form one message)."""

    __slots__ = ("message_id", "meta", "role")

    def __init__(self, generation: int, message_id: str | None, role: Role) -> None:
        super().__init__(generation)
        self.message_id = message_id
        """Its `messageId` (None: v1 chunks sent without one)."""
        self.role: Role = role
        """`user`, `agent` or `thought`."""
        self.meta: Meta | None = None
        """Its `_meta`, patched by key as updates arrive."""

    def text(self) -> str:
        """The text blocks of the content, joined."""
        return "".join(
            block.text  # type: ignore[attr-defined]
            for block in self._items[: self._count]
            if tag_of(block) == "text"
        )

    def __repr__(self) -> str:
        return f"Message({self.message_id!r}, {self.role!r}, {self.text()!r})"


TOOL_CALL_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("name", None),
    ("title", None),
    ("kind", "other"),
    ("status", "pending"),
    ("locations", None),
    ("raw_input", None),
    ("raw_output", None),
    ("capabilities", None),
)
"""A tool call's fields an update sets by name (the record's attribute is the update's field),
each with the value a new tool call starts at, which a v2 `null` resets it to. `content`
(replaced or appended to) and `_meta` (patched by key) have rules of their own."""


def _straight_line(signature: str, statements: list[str]) -> Callable[..., None]:
    """A function running `statements` one after the other, written from TOOL_CALL_FIELDS
    once at import (as dataclasses writes `__init__`): the one table, at the speed of code
    written out field by field (a loop over the table makes a tool call update ~2x slower)."""
    namespace: dict[str, Any] = {"UNSET": UNSET}
    exec(f"def function({signature}):\n" + "".join(f"    {s}\n" for s in statements), namespace)
    function: Callable[..., None] = namespace["function"]
    return function


_start = _straight_line("call", [f"call.{name} = {start!r}" for name, start in TOOL_CALL_FIELDS])
"""Every field of a new tool call at its start value."""

_patch_v2 = _straight_line(
    "call, update",
    [
        f"if (value := update.{name}) is not UNSET: call.{name} = "
        + ("value" if start is None else f"{start!r} if value is None else value")
        for name, start in TOOL_CALL_FIELDS
    ],
)
"""A v2 update's fields: omitted keeps, `null` resets to the start value, a value replaces."""

_patch_v1 = _straight_line(
    "call, update",
    [
        f"if (value := update.{name}) is not UNSET and value is not None: call.{name} = value"
        for name, _ in TOOL_CALL_FIELDS
        if name in v1.ToolCallUpdate.__struct_fields__
    ],
)
"""A v1 `tool_call` / `tool_call_update`'s fields: omitted and `null` alike keep (v1 has no
clearing), a value replaces."""


class ToolCall(_Content[Item], Generic[Item, Location]):
    """A tool call by id; a new one starts as kind `other`, status `pending`, no title
    (`TOOL_CALL_FIELDS`)."""

    __slots__ = ("meta", "tool_call_id", *(name for name, _ in TOOL_CALL_FIELDS))

    name: str | None
    """The tool's programmatic name, when the agent gave one."""
    title: str | None
    """Its title (None before the agent gave one)."""
    kind: str
    """Its tool kind (`read`, `edit`, `execute`, ...)."""
    status: str
    """`pending`, `in_progress`, `completed`, `failed` (v2 also `paused`, `cancelled`)."""
    locations: list[Location] | None
    """The files it touches (`ToolCallLocation`s), None when not given."""
    raw_input: Any
    """The tool's raw input, as the agent sent it (any JSON)."""
    raw_output: Any
    """The tool's raw output, as the agent sent it (any JSON)."""
    capabilities: v2.ToolCallCapabilities | None
    """What the client may do with it: v2 only (v1 has none: always None)."""

    def __init__(self, generation: int, tool_call_id: str) -> None:
        super().__init__(generation)
        self.tool_call_id = tool_call_id
        """Its `toolCallId`."""
        _start(self)
        self.meta: Meta | None = None
        """Its `_meta`, patched by key as updates arrive."""

    def __repr__(self) -> str:
        return f"ToolCall({self.tool_call_id!r}, {self.title!r}, {self.kind}, {self.status})"


class Terminal(_Content[str]):
    """An agent-owned terminal (v2): output is kept as the base64 parts received."""

    __slots__ = ("capabilities", "command", "cwd", "exit_status", "meta", "size", "terminal_id")

    def __init__(self, generation: int, terminal_id: str) -> None:
        super().__init__(generation)
        self.terminal_id = terminal_id
        """Its `terminalId`."""
        self.command: str | None = None
        """The command it runs, when reported."""
        self.cwd: str | None = None
        """Its working directory, when reported."""
        self.exit_status: v2.TerminalExitStatus | None = None
        """How it exited (None while it runs)."""
        self.size: v2.TerminalSize | None = None
        """Its size in rows and columns, when reported."""
        self.capabilities: v2.TerminalCapabilities | None = None
        """What the client may do with it."""
        self.meta: Meta | None = None
        """Its `_meta`, patched by key as updates arrive."""

    def output(self) -> bytes:
        """The terminal's output bytes (each part is independently base64-encoded)."""
        return b"".join(base64.b64decode(part) for part in self._items[: self._count])


class Compaction(_Content[Block]):
    """A context compaction by id: status, summary (content), error."""

    __slots__ = ("compaction_id", "error", "meta", "status")

    def __init__(self, generation: int, compaction_id: str) -> None:
        super().__init__(generation)
        self.compaction_id = compaction_id
        """Its `compactionId`."""
        self.status: str = "in_progress"
        """`in_progress`, `completed` or `failed`."""
        self.error: str | None = None
        """Why it failed, when it did."""
        self.meta: Meta | None = None
        """Its `_meta`, patched by key as updates arrive."""


R = TypeVar("R", bound=_Record)
K = TypeVar("K")


class _Fold(Generic[Update, Block]):
    """What both versions share: messages, tool calls, commands, config, info, usage, notices,
    compactions, copy-on-write snapshots and the dispatch on the update's variant."""

    _version: ClassVar[int]
    """The protocol version whose updates (of any of its surfaces) this fold takes."""
    _by_tag: ClassVar[dict[str, Handler]]
    """The fold of each update variant, by its wire tag."""
    _by_class: ClassVar[dict[type, Handler]]
    """Each update class seen so far and its fold (`_by_tag`'s, or `_keep_unknown`)."""
    # each version's own types: its subclass declares them
    available_commands: list[Any]
    config_options: list[Any]
    usage: Any

    def __init__(self) -> None:
        self._generation = 0
        self.messages: dict[MessageKey, Message[Block]] = {}
        """Messages by `(role, messageId)` in order of first appearance (see `MessageKey`):
        each role has its own id space, as the schema's `MessageId` says."""
        self.compactions: dict[str, Compaction[Block]] = {}
        """Context compactions by id."""
        self.title: str | None = None
        """The session's title (`session_info_update`)."""
        self.updated_at: str | None = None
        """When the session was last updated, as the agent reported it (ISO 8601)."""
        self.info_meta: Meta | None = None
        """The `_meta` of `session_info_update`s, patched by key."""
        self.notices: list[Any] = []
        """The agent's notices, in order."""
        self.unknown: list[Any] = []
        """Updates of variants newer than these bindings (`OpenVariant`s), in order: kept,
        never dropped."""

    def apply(self, update: Update) -> None:
        """Fold one `session/update`'s update into the state (an unknown variant goes to
        `unknown`)."""
        handler = self._by_class.get(type(update))
        if handler is None:
            handler = self._learn(type(update))
        handler(self, update)

    @classmethod
    def _learn(cls, kind: type) -> Handler:
        """The fold of an update class seen for the first time, remembered: by its wire tag
        when it is a `session/update` variant of a surface of this version, else
        `_keep_unknown` (an unknown variant, or an update of another version)."""
        surface = surface_of(kind)
        tag = getattr(getattr(kind, "__struct_config__", None), "tag", None)
        handler = _Fold._keep_unknown
        if (
            surface is not None
            and surface.protocol_version == cls._version
            and isinstance(tag, str)
            and surface.session_update_variants.get(tag) is kind
        ):
            handler = cls._by_tag.get(tag, _Fold._keep_unknown)
        cls._by_class[kind] = handler
        return handler

    def _keep_unknown(self, update: Any) -> None:
        self.unknown.append(update)

    def _snapshot_maps(self, copy: _Fold[Update, Block]) -> None:
        """Share the records with `copy`: later writes here copy a record first."""
        self._generation += 1
        for name, value in vars(self).items():
            if isinstance(value, dict):
                value = dict(value)
            elif isinstance(value, list):
                value = list(value)
            setattr(copy, name, value)
        copy._generation = -1  # a snapshot is read-only: writing to it is a bug

    def _own(self, records: dict[K, R], key: K, record: R) -> R:
        if record._generation != self._generation:
            record = records[key] = record._copy(self._generation)
        return record

    # -- messages

    def _message(self, key: MessageKey, message_id: str, role: Role) -> Message[Block]:
        message = self.messages.get(key)
        if message is None:
            message = self.messages[key] = Message(self._generation, message_id, role)
            return message
        return self._own(self.messages, key, message)

    def _chunk(self, message_id: str | None, role: Role, block: Block) -> None:
        if message_id is None:
            self._anonymous(role)._append(block)
            return
        key = (role, message_id)
        message = self.messages.get(key)
        if message is None or message._generation != self._generation:
            message = self._message(key, message_id, role)
        message._append(block)

    def _anonymous(self, role: Role) -> Message[Block]:
        """v1 chunks without `messageId`: one message per run of chunks of one role."""
        messages = self.messages
        key = next(reversed(messages), None)
        last = None if key is None else messages[key]
        if key is None or last is None or last.message_id is not None or last.role != role:
            key = (role, len(messages))
            message = messages[key] = Message(self._generation, None, role)
            return message
        return self._own(messages, key, last)

    def _full_message(self, message_id: str, role: Role, content: Any, meta: Any) -> None:
        message = self._message((role, message_id), message_id, role)
        if content is not UNSET:
            message._replace(content)
        message.meta = patch_meta(message.meta, meta)

    # -- shared update variants

    def _session_info(self, update: v2.SessionInfoUpdate | v1.SessionInfoUpdate) -> None:
        if update.title is not UNSET:
            self.title = update.title
        if update.updated_at is not UNSET:
            self.updated_at = update.updated_at
        self.info_meta = patch_meta(self.info_meta, update.meta)

    def _commands(self, update: v2.AvailableCommandsUpdate | v1.AvailableCommandsUpdate) -> None:
        self.available_commands = update.available_commands

    def _config(self, update: v2.ConfigOptionUpdate | v1.ConfigOptionUpdate) -> None:
        self.config_options = update.config_options

    def _usage(self, update: v2.UsageUpdate | v1.UsageUpdate) -> None:
        """The latest usage; an omitted `cost` keeps the last reported one."""
        stored = self.usage
        if update.cost is UNSET and stored is not None and stored.cost is not UNSET:
            update = msgspec.structs.replace(update, cost=stored.cost)
        self.usage = update

    def _notice(self, update: Any) -> None:
        self.notices.append(update)

    def _compaction(self, update: v2.CompactionUpdate | v1.CompactionUpdate) -> None:
        key = update.compaction_id
        compaction = self.compactions.get(key)
        if compaction is None:
            compaction = self.compactions[key] = Compaction(self._generation, key)
        else:
            compaction = self._own(self.compactions, key, compaction)
        compaction.status = update.status
        if update.summary is not UNSET:
            compaction._replace(update.summary)  # type: ignore[arg-type]
        if update.error is not UNSET:
            compaction.error = update.error
        compaction.meta = patch_meta(compaction.meta, update.meta)

    def _compaction_chunk(
        self, update: v2.CompactionSummaryChunk | v1.CompactionSummaryChunk
    ) -> None:
        key = update.compaction_id
        compaction = self.compactions.get(key)
        if compaction is None:
            compaction = self.compactions[key] = Compaction(self._generation, key)
        else:
            compaction = self._own(self.compactions, key, compaction)
        compaction._append(update.content)  # type: ignore[arg-type]


SHARED_FOLDS: dict[str, Handler] = {
    "available_commands_update": _Fold._commands,
    "config_option_update": _Fold._config,
    "session_info_update": _Fold._session_info,
    "usage_update": _Fold._usage,
    "notice": _Fold._notice,
    "compaction_update": _Fold._compaction,
    "compaction_summary_chunk": _Fold._compaction_chunk,
}
"""The variants both versions fold alike, by wire tag (each version's `_by_tag` adds its own)."""

V2ToolCall = ToolCall[v2.ToolCallContent, v2.ToolCallLocation]
V1ToolCall = ToolCall[v1.ToolCallContent, v1.ToolCallLocation]


class SessionState(_Fold["v2.SessionUpdate | v2u.SessionUpdate", v2.ContentBlock]):
    """A v2 session's state: `apply(update)` folds a `session/update`, `snapshot()` gives a
    copy that later updates do not change."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_calls: dict[str, V2ToolCall] = {}
        """Tool calls by id."""
        self.terminals: dict[str, Terminal] = {}
        """Agent-owned terminals by id (display state)."""
        self.plans: dict[str, v2.PlanUpdateContent] = {}
        """Plans by `planId`, each the content of its latest `plan_update`, which replaces
        the plan whatever its content type (the schema). A content type these bindings do not
        know is kept as received (an `OpenVariant`, `.tag` its type); one without a string
        `planId` cannot be placed and goes to `unknown` instead."""
        self.available_commands: list[v2.AvailableCommand] = []
        """The latest `available_commands_update`'s commands."""
        self.config_options: list[v2.SessionConfigOption] = []
        """The latest `config_option_update`'s options."""
        self.usage: v2.UsageUpdate | None = None
        """The latest usage (an omitted `cost` keeps the last one reported)."""
        self.run: v2.SessionStateUpdate | None = None
        """The last `state_update` (None before the first): `.state`, `.stop_reason`, `.error`."""

    @property
    def run_state(self) -> str | None:
        """`running`, `requires_action`, `idle` (None until the agent reported one)."""
        return None if self.run is None else self.run.state

    def snapshot(self) -> SessionState:
        """A copy of the state now, unchanged by later updates (records: read only)."""
        copy = object.__new__(SessionState)
        self._snapshot_maps(copy)
        return copy

    # -- variants

    def _user_chunk(self, update: v2.UserMessageChunk) -> None:
        self._chunk(update.message_id, "user", update.content)

    def _agent_chunk(self, update: v2.AgentMessageChunk) -> None:
        self._chunk(update.message_id, "agent", update.content)

    def _thought_chunk(self, update: v2.AgentThoughtChunk) -> None:
        self._chunk(update.message_id, "thought", update.content)

    def _user_message(self, update: v2.UserMessage) -> None:
        self._full_message(update.message_id, "user", update.content, update.meta)

    def _agent_message(self, update: v2.AgentMessage) -> None:
        self._full_message(update.message_id, "agent", update.content, update.meta)

    def _thought(self, update: v2.AgentThought) -> None:
        self._full_message(update.message_id, "thought", update.content, update.meta)

    def _state(self, update: v2.SessionStateUpdate) -> None:
        self.run = update

    def _tool_call(self, key: str) -> V2ToolCall:
        call = self.tool_calls.get(key)
        if call is None:
            call = self.tool_calls[key] = ToolCall(self._generation, key)
            return call
        return self._own(self.tool_calls, key, call)

    def apply_permission_request(
        self, request: v2.RequestPermissionRequest | v2u.RequestPermissionRequest
    ) -> None:
        """A tool call subject patches its tool call like a `tool_call_update` (the schema:
        in the order received, before showing the prompt)."""
        subject: Any = request.subject
        if tag_of(subject) == "tool_call":
            self._tool_call_update(subject.tool_call)

    def _tool_call_update(self, update: v2.ToolCallProgress | v2.ToolCallUpdate) -> None:
        """An upsert (the schema: a new id starts at the protocol defaults)."""
        call = self.tool_calls.get(update.tool_call_id)
        if call is None or call._generation != self._generation:  # new, or shared: the slow path
            call = self._tool_call(update.tool_call_id)
        _patch_v2(call, update)
        if update.content is not UNSET:
            call._replace(update.content)
        if update.meta is not UNSET:
            call.meta = patch_meta(call.meta, update.meta)

    def _tool_call_chunk(self, update: v2.ToolCallContentChunk) -> None:
        self._tool_call(update.tool_call_id)._append(update.content)

    def _terminal(self, key: str) -> Terminal:
        terminal = self.terminals.get(key)
        if terminal is None:
            terminal = self.terminals[key] = Terminal(self._generation, key)
            return terminal
        return self._own(self.terminals, key, terminal)

    def _terminal_update(self, update: v2.TerminalUpdate) -> None:
        terminal = self._terminal(update.terminal_id)
        if update.command is not UNSET:
            terminal.command = update.command
        if update.cwd is not UNSET:
            terminal.cwd = update.cwd
        if update.output is not UNSET:
            terminal._replace(None if update.output is None else [update.output.data])
        if update.exit_status is not UNSET:
            terminal.exit_status = update.exit_status
        if update.size is not UNSET:
            terminal.size = update.size
        if update.capabilities is not UNSET:
            terminal.capabilities = update.capabilities
        terminal.meta = patch_meta(terminal.meta, update.meta)

    def _terminal_chunk(self, update: v2.TerminalOutputChunk) -> None:
        self._terminal(update.terminal_id)._append(update.data)

    def _plan(self, update: v2.PlanUpdate) -> None:
        plan = update.plan
        if isinstance(plan, OpenVariant):  # a content type newer than these bindings
            plan_id = plan.get("planId")
            if not isinstance(plan_id, str):
                self.unknown.append(update)
                return
        else:
            plan_id = plan.plan_id
        self.plans[plan_id] = plan

    _version: ClassVar[int] = 2
    _by_class: ClassVar[dict[type, Handler]] = {}
    _by_tag: ClassVar[dict[str, Handler]] = {
        "user_message_chunk": _user_chunk,
        "user_message": _user_message,
        "agent_message_chunk": _agent_chunk,
        "agent_message": _agent_message,
        "agent_thought_chunk": _thought_chunk,
        "agent_thought": _thought,
        "state_update": _state,
        "tool_call_content_chunk": _tool_call_chunk,
        "tool_call_update": _tool_call_update,
        "terminal_update": _terminal_update,
        "terminal_output_chunk": _terminal_chunk,
        "plan_update": _plan,
        **SHARED_FOLDS,
    }


class V1SessionState(_Fold["v1.SessionUpdate | v1u.SessionUpdate | OpenVariant", v1.ContentBlock]):
    """A v1 session's state, in the same shape as `SessionState` where the concepts match
    (v1 has one plan, `current_mode_id`, no terminals display state, no run-state updates:
    the prompt turn helper records `stop_reason` from the `session/prompt` response).

    A `tool_call_update` for an id never seen creates the tool call (title None until one
    arrives), as v2's upsert does, although v1 calls it "an update to an existing tool call":
    an agent that skipped `tool_call`, or a subscriber that missed it, still shows the call
    and its progress instead of losing them. A v1 update whose tag these bindings do not know
    (delivered by the client as an `OpenVariant`) is kept in `unknown`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.tool_calls: dict[str, V1ToolCall] = {}
        """Tool calls by id."""
        self.plan: list[v1.PlanEntry] = []
        """The latest plan's entries."""
        self.current_mode_id: str | None = None
        """The latest `current_mode_update`'s mode."""
        self.available_commands: list[v1.AvailableCommand] = []
        """The latest `available_commands_update`'s commands."""
        self.config_options: list[v1.SessionConfigOption] = []
        """The latest `config_option_update`'s options."""
        self.usage: v1.UsageUpdate | None = None
        """The latest usage (an omitted `cost` keeps the last one reported)."""
        self.stop_reason: str | None = None
        """The last turn's stop reason (from the `session/prompt` response)."""

    def snapshot(self) -> V1SessionState:
        """A copy of the state now, unchanged by later updates (records: read only)."""
        copy = object.__new__(V1SessionState)
        self._snapshot_maps(copy)
        return copy

    def _user_chunk(self, update: v1.UserMessageChunk) -> None:
        self._chunk(update.message_id or None, "user", update.content)

    def _agent_chunk(self, update: v1.AgentMessageChunk) -> None:
        self._chunk(update.message_id or None, "agent", update.content)

    def _thought_chunk(self, update: v1.AgentThoughtChunk) -> None:
        self._chunk(update.message_id or None, "thought", update.content)

    def _tool_call_start(self, update: v1.ToolCall) -> None:
        """`tool_call`: a new tool call, all fields given (a repeated id starts it over)."""
        call: V1ToolCall = ToolCall(self._generation, update.tool_call_id)
        self.tool_calls[update.tool_call_id] = call
        _patch_v1(call, update)
        if update.content is not UNSET:
            call._replace(update.content)
        call.meta = update.meta or None

    def apply_permission_request(
        self, request: v1.RequestPermissionRequest | v1u.RequestPermissionRequest
    ) -> None:
        """The request's `toolCall` patches its tool call like a `tool_call_update`."""
        tool_call: Any = request.tool_call  # either surface's: the fields are the same
        self._tool_call_update(tool_call)

    def _tool_call_update(self, update: v1.ToolCallProgress | v1.ToolCallUpdate) -> None:
        """v1 has no clearing: `null` and omitted both leave a field unchanged; an id never
        seen creates the tool call (see the class)."""
        key = update.tool_call_id
        call = self.tool_calls.get(key)
        if call is None:
            call = self.tool_calls[key] = ToolCall(self._generation, key)
        else:
            call = self._own(self.tool_calls, key, call)
        _patch_v1(call, update)
        if update.content is not UNSET and update.content is not None:
            call._replace(update.content)
        if update.meta:
            call.meta = update.meta

    def _plan(self, update: v1.Plan) -> None:
        self.plan = update.entries

    def _mode(self, update: v1.CurrentModeUpdate) -> None:
        self.current_mode_id = update.current_mode_id

    _version: ClassVar[int] = 1
    _by_class: ClassVar[dict[type, Handler]] = {}
    _by_tag: ClassVar[dict[str, Handler]] = {
        "user_message_chunk": _user_chunk,
        "agent_message_chunk": _agent_chunk,
        "agent_thought_chunk": _thought_chunk,
        "tool_call": _tool_call_start,
        "tool_call_update": _tool_call_update,
        "plan": _plan,
        "current_mode_update": _mode,
        **SHARED_FOLDS,
    }
