"""The best a msgspec binding can do for the benchmark corpus: hand-written strict Structs.

Written by hand (not generated) for exactly the messages `make_streams.py --direction agent`
emits, v2 and v1: every `session/update` variant it uses, permission requests, the v1 fs and
terminal requests and the `session/prompt` responses. Rules:

- variants: only those the corpus uses (a tagged union of msgspec Structs, no open variant,
  no fallback); a union the corpus only ever fills with one variant is that Struct alone;
- enums: closed `Literal`s; integer formats keep their `Meta` bounds; `jsonrpc` must be "2.0";
- fields: the full field list the schema gives each type used, every optional one defaulting
  to UNSET (so decode-then-encode gives the input back). Optional fields the corpus never
  fills still cost a default on decode and a check on encode, so leaving them out would
  flatter the reference; their types are written out as well (Annotations, Icon, ...).
- `kw_only=True, gc=False` everywhere, like the generated code.

`check_against_schema()` (run by codec.py before timing) asserts every Struct here has the
same wire names and required flags as the generated type it stands for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

Json = dict[str, Any]
MetaField = Json | None | UnsetType
_M: Any = msgspec.field(default=UNSET, name="_meta")
U32 = Annotated[int, Meta(ge=0, le=4294967295)]
U16P = Annotated[int, Meta(ge=1, le=65535)]
I64 = Annotated[int, Meta(ge=-9223372036854775808, le=9223372036854775807)]
NonNeg = Annotated[int, Meta(ge=0)]
RequestId = int | str | None


def _f(name: str) -> Any:
    """An optional field with a wire name."""
    return msgspec.field(default=UNSET, name=name)


def _r(name: str) -> Any:
    """A required field with a wire name."""
    return msgspec.field(name=name)


class S(msgspec.Struct, kw_only=True, gc=False):
    pass


# =========================================================================== v2


class V2Annotations(S, kw_only=True):
    audience: list[Literal["assistant", "user"]] | UnsetType | None = UNSET
    last_modified: str | UnsetType | None = _f("lastModified")
    priority: Annotated[float, Meta(ge=0, le=1)] | UnsetType | None = UNSET
    meta: MetaField = _M


class V2Icon(S, kw_only=True):
    src: str
    mime_type: str | UnsetType | None = _f("mimeType")
    sizes: list[str] | UnsetType | None = UNSET
    theme: Literal["light", "dark"] | UnsetType | None = UNSET
    meta: MetaField = _M


class V2Text(S, kw_only=True, tag_field="type", tag="text"):
    text: str
    annotations: V2Annotations | UnsetType | None = UNSET
    meta: MetaField = _M


class V2Image(S, kw_only=True, tag_field="type", tag="image"):
    data: str
    mime_type: str = _r("mimeType")
    uri: str | UnsetType | None = UNSET
    annotations: V2Annotations | UnsetType | None = UNSET
    meta: MetaField = _M


class V2ResourceLink(S, kw_only=True, tag_field="type", tag="resource_link"):
    name: str
    uri: str
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    icons: list[V2Icon] | UnsetType | None = UNSET
    mime_type: str | UnsetType | None = _f("mimeType")
    size: NonNeg | UnsetType | None = UNSET
    annotations: V2Annotations | UnsetType | None = UNSET
    meta: MetaField = _M


class V2TextResourceContents(S, kw_only=True):
    text: str
    uri: str
    mime_type: str | UnsetType | None = _f("mimeType")
    meta: MetaField = _M


class V2EmbeddedResource(S, kw_only=True, tag_field="type", tag="resource"):
    resource: V2TextResourceContents
    annotations: V2Annotations | UnsetType | None = UNSET
    meta: MetaField = _M


V2ContentBlock = V2Text | V2Image | V2ResourceLink | V2EmbeddedResource


class V2ContentChunk(S, kw_only=True):
    message_id: str = _r("messageId")
    content: V2ContentBlock
    meta: MetaField = _M


class V2ContentList(S, kw_only=True):
    message_id: str = _r("messageId")
    content: list[V2ContentBlock] | UnsetType | None = UNSET
    meta: MetaField = _M


class V2UserMessageChunk(V2ContentChunk, tag_field="sessionUpdate", tag="user_message_chunk"):
    pass


class V2AgentMessageChunk(V2ContentChunk, tag_field="sessionUpdate", tag="agent_message_chunk"):
    pass


class V2AgentThoughtChunk(V2ContentChunk, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    pass


class V2UserMessage(V2ContentList, tag_field="sessionUpdate", tag="user_message"):
    pass


class V2AgentMessage(V2ContentList, tag_field="sessionUpdate", tag="agent_message"):
    pass


class V2AgentThought(V2ContentList, tag_field="sessionUpdate", tag="agent_thought"):
    pass


class V2BackgroundTerminal(S, kw_only=True, tag_field="type", tag="terminal"):
    terminal_id: str = _r("terminalId")
    meta: MetaField = _M


class V2Error(S, kw_only=True):
    code: int
    message: str
    data: Any | UnsetType = UNSET


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]


class V2StateUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="state_update"):
    state: Literal["running", "idle", "requires_action"]
    background: list[V2BackgroundTerminal] | UnsetType | None = UNSET
    meta: MetaField = _M
    stop_reason: StopReason | UnsetType | None = _f("stopReason")
    error: V2Error | UnsetType | None = UNSET


class V2Content(S, kw_only=True, tag_field="type", tag="content"):
    content: V2ContentBlock
    meta: MetaField = _M


FileType = Literal["text", "binary", "directory", "symlink"]


class V2ModifyChange(S, kw_only=True, tag_field="operation", tag="modify"):
    path: str
    file_type: FileType | UnsetType | None = _f("fileType")
    mime_type: str | UnsetType | None = _f("mimeType")
    meta: MetaField = _M


class V2DeleteChange(S, kw_only=True, tag_field="operation", tag="delete"):
    path: str
    file_type: FileType | UnsetType | None = _f("fileType")
    mime_type: str | UnsetType | None = _f("mimeType")
    meta: MetaField = _M


class V2MoveChange(S, kw_only=True, tag_field="operation", tag="move"):
    old_path: str = _r("oldPath")
    path: str
    file_type: FileType | UnsetType | None = _f("fileType")
    mime_type: str | UnsetType | None = _f("mimeType")
    meta: MetaField = _M


class V2DiffPatch(S, kw_only=True):
    format: Literal["git_patch"]
    text: str
    meta: MetaField = _M


class V2Diff(S, kw_only=True, tag_field="type", tag="diff"):
    changes: list[V2ModifyChange | V2DeleteChange | V2MoveChange]
    patch: V2DiffPatch | UnsetType | None = UNSET
    meta: MetaField = _M


class V2Terminal(S, kw_only=True, tag_field="type", tag="terminal"):
    terminal_id: str = _r("terminalId")
    meta: MetaField = _M


V2ToolCallContent = V2Content | V2Diff | V2Terminal


class V2ToolCallContentChunk(
    S, kw_only=True, tag_field="sessionUpdate", tag="tool_call_content_chunk"
):
    tool_call_id: str = _r("toolCallId")
    content: V2ToolCallContent
    meta: MetaField = _M


class V2Location(S, kw_only=True):
    path: str
    line: Annotated[int, Meta(ge=1, le=4294967295)] | UnsetType | None = UNSET
    meta: MetaField = _M


class V2CancelCapabilities(S, kw_only=True):
    meta: MetaField = _M


class V2ToolCallCapabilities(S, kw_only=True):
    cancel: V2CancelCapabilities | UnsetType | None = UNSET
    meta: MetaField = _M


ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
V2ToolStatus = Literal["pending", "in_progress", "paused", "completed", "failed", "cancelled"]


class V2ToolCallFields(S, kw_only=True):
    tool_call_id: str = _r("toolCallId")
    name: str | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType | None = UNSET
    status: V2ToolStatus | UnsetType | None = UNSET
    content: list[V2ToolCallContent] | UnsetType | None = UNSET
    locations: list[V2Location] | UnsetType | None = UNSET
    raw_input: Any | UnsetType = _f("rawInput")
    raw_output: Any | UnsetType = _f("rawOutput")
    capabilities: V2ToolCallCapabilities | UnsetType | None = UNSET
    meta: MetaField = _M


class V2ToolCallUpdate(V2ToolCallFields, tag_field="sessionUpdate", tag="tool_call_update"):
    pass


class V2TerminalOutput(S, kw_only=True):
    data: str
    meta: MetaField = _M


class V2ExitStatus(S, kw_only=True):
    exit_code: I64 | UnsetType | None = _f("exitCode")
    signal: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V2TerminalSize(S, kw_only=True):
    cols: U16P
    rows: U16P
    meta: MetaField = _M


class V2TerminalCapabilities(S, kw_only=True):
    cancel: V2CancelCapabilities | UnsetType | None = UNSET
    meta: MetaField = _M


class V2TerminalUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="terminal_update"):
    terminal_id: str = _r("terminalId")
    command: str | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    output: V2TerminalOutput | UnsetType | None = UNSET
    exit_status: V2ExitStatus | UnsetType | None = _f("exitStatus")
    size: V2TerminalSize | UnsetType | None = UNSET
    capabilities: V2TerminalCapabilities | UnsetType | None = UNSET
    meta: MetaField = _M


class V2TerminalOutputChunk(
    S, kw_only=True, tag_field="sessionUpdate", tag="terminal_output_chunk"
):
    terminal_id: str = _r("terminalId")
    data: str
    meta: MetaField = _M


class V2PlanEntry(S, kw_only=True):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed", "cancelled"]
    meta: MetaField = _M


class V2PlanItems(S, kw_only=True, tag_field="type", tag="items"):
    plan_id: str = _r("planId")
    entries: list[V2PlanEntry]
    meta: MetaField = _M


class V2PlanUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="plan_update"):
    plan: V2PlanItems
    meta: MetaField = _M


class V2TextCommandInput(S, kw_only=True, tag_field="type", tag="text"):
    hint: str
    meta: MetaField = _M


class V2Command(S, kw_only=True, tag_field="type", tag="command"):
    name: str
    description: str
    input: V2TextCommandInput | UnsetType | None = UNSET
    meta: MetaField = _M


class V2AvailableCommandsUpdate(
    S, kw_only=True, tag_field="sessionUpdate", tag="available_commands_update"
):
    available_commands: list[V2Command] = _r("availableCommands")
    meta: MetaField = _M


ConfigCategory = Literal["mode", "model", "model_config", "thought_level"]


class V2SelectOption(S, kw_only=True):
    value: str
    name: str
    description: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V2ConfigSelect(S, kw_only=True, tag_field="type", tag="select"):
    current_value: str = _r("currentValue")
    options: Annotated[list[V2SelectOption], Meta(min_length=1)]
    config_id: str = _r("configId")
    name: str
    description: str | UnsetType | None = UNSET
    category: ConfigCategory | UnsetType | None = UNSET
    meta: MetaField = _M


class V2ConfigBoolean(S, kw_only=True, tag_field="type", tag="boolean"):
    current_value: bool = _r("currentValue")
    config_id: str = _r("configId")
    name: str
    description: str | UnsetType | None = UNSET
    category: ConfigCategory | UnsetType | None = UNSET
    meta: MetaField = _M


class V2ConfigOptionUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="config_option_update"):
    config_options: list[V2ConfigSelect | V2ConfigBoolean] = _r("configOptions")
    meta: MetaField = _M


class V2SessionInfoUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="session_info_update"):
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = _f("updatedAt")
    meta: MetaField = _M


class V2Cost(S, kw_only=True):
    amount: float
    currency: str
    meta: MetaField = _M


class V2UsageUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="usage_update"):
    used: NonNeg
    size: NonNeg
    cost: V2Cost | UnsetType | None = UNSET
    meta: MetaField = _M


class V2Notice(S, kw_only=True, tag_field="sessionUpdate", tag="notice"):
    severity: Literal["info", "warning", "error"]
    title: Annotated[str, Meta(min_length=1)]
    description: str | UnsetType | None = UNSET
    meta: MetaField = _M


CompactionStatus = Literal["in_progress", "completed", "failed", "cancelled"]


class V2CompactionUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="compaction_update"):
    compaction_id: str = _r("compactionId")
    status: CompactionStatus
    summary: list[V2ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V2CompactionSummaryChunk(
    S, kw_only=True, tag_field="sessionUpdate", tag="compaction_summary_chunk"
):
    compaction_id: str = _r("compactionId")
    content: V2ContentBlock
    meta: MetaField = _M


V2SessionUpdate = (
    V2UserMessageChunk
    | V2UserMessage
    | V2AgentMessageChunk
    | V2AgentMessage
    | V2AgentThoughtChunk
    | V2AgentThought
    | V2StateUpdate
    | V2ToolCallContentChunk
    | V2ToolCallUpdate
    | V2TerminalUpdate
    | V2TerminalOutputChunk
    | V2PlanUpdate
    | V2AvailableCommandsUpdate
    | V2ConfigOptionUpdate
    | V2SessionInfoUpdate
    | V2UsageUpdate
    | V2Notice
    | V2CompactionUpdate
    | V2CompactionSummaryChunk
)


class V2SessionNotification(S, kw_only=True):
    session_id: str = _r("sessionId")
    update: V2SessionUpdate
    meta: MetaField = _M


class V2ToolCallSubject(S, kw_only=True, tag_field="type", tag="tool_call"):
    tool_call: V2ToolCallFields = _r("toolCall")
    meta: MetaField = _M


class V2CommandSubject(S, kw_only=True, tag_field="type", tag="command"):
    command: str
    cwd: str
    tool_call_id: str | UnsetType | None = _f("toolCallId")
    terminal_id: str | UnsetType | None = _f("terminalId")
    meta: MetaField = _M


class V2PermissionOption(S, kw_only=True):
    option_id: str = _r("optionId")
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]
    meta: MetaField = _M


class V2RequestPermission(S, kw_only=True):
    session_id: str = _r("sessionId")
    title: str
    description: str | UnsetType | None = UNSET
    subject: V2ToolCallSubject | V2CommandSubject | UnsetType | None = UNSET
    options: Annotated[list[V2PermissionOption], Meta(min_length=1)]
    meta: MetaField = _M


class V2PromptResponse(S, kw_only=True):
    message_id: str = _r("messageId")
    meta: MetaField = _M


# =========================================================================== v1


class V1Annotations(S, kw_only=True):
    audience: list[Literal["assistant", "user"]] | UnsetType | None = UNSET
    last_modified: str | UnsetType | None = _f("lastModified")
    priority: float | UnsetType | None = UNSET
    meta: MetaField = _M


class V1Text(S, kw_only=True, tag_field="type", tag="text"):
    annotations: V1Annotations | UnsetType | None = UNSET
    text: str
    meta: MetaField = _M


class V1Image(S, kw_only=True, tag_field="type", tag="image"):
    annotations: V1Annotations | UnsetType | None = UNSET
    data: str
    mime_type: str = _r("mimeType")
    uri: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V1ResourceLink(S, kw_only=True, tag_field="type", tag="resource_link"):
    annotations: V1Annotations | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    mime_type: str | UnsetType | None = _f("mimeType")
    name: str
    size: I64 | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    uri: str
    meta: MetaField = _M


class V1TextResourceContents(S, kw_only=True):
    mime_type: str | UnsetType | None = _f("mimeType")
    text: str
    uri: str
    meta: MetaField = _M


class V1EmbeddedResource(S, kw_only=True, tag_field="type", tag="resource"):
    annotations: V1Annotations | UnsetType | None = UNSET
    resource: V1TextResourceContents
    meta: MetaField = _M


V1ContentBlock = V1Text | V1Image | V1ResourceLink | V1EmbeddedResource


class V1ContentChunk(S, kw_only=True):
    content: V1ContentBlock
    message_id: str | UnsetType | None = _f("messageId")
    meta: MetaField = _M


class V1UserMessageChunk(V1ContentChunk, tag_field="sessionUpdate", tag="user_message_chunk"):
    pass


class V1AgentMessageChunk(V1ContentChunk, tag_field="sessionUpdate", tag="agent_message_chunk"):
    pass


class V1AgentThoughtChunk(V1ContentChunk, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    pass


class V1Content(S, kw_only=True, tag_field="type", tag="content"):
    content: V1ContentBlock
    meta: MetaField = _M


class V1Diff(S, kw_only=True, tag_field="type", tag="diff"):
    path: str
    old_text: str | UnsetType | None = _f("oldText")
    new_text: str = _r("newText")
    meta: MetaField = _M


class V1Terminal(S, kw_only=True, tag_field="type", tag="terminal"):
    terminal_id: str = _r("terminalId")
    meta: MetaField = _M


V1ToolCallContent = V1Content | V1Diff | V1Terminal


class V1Location(S, kw_only=True):
    path: str
    line: U32 | UnsetType | None = UNSET
    meta: MetaField = _M


V1ToolStatus = Literal["pending", "in_progress", "completed", "failed"]


class V1ToolCall(S, kw_only=True, tag_field="sessionUpdate", tag="tool_call"):
    tool_call_id: str = _r("toolCallId")
    title: str
    name: str | UnsetType | None = UNSET
    kind: ToolKind | UnsetType = UNSET
    status: V1ToolStatus | UnsetType = UNSET
    content: list[V1ToolCallContent] | UnsetType = UNSET
    locations: list[V1Location] | UnsetType = UNSET
    raw_input: Any | UnsetType = _f("rawInput")
    raw_output: Any | UnsetType = _f("rawOutput")
    meta: MetaField = _M


class V1ToolCallFields(S, kw_only=True):
    tool_call_id: str = _r("toolCallId")
    kind: ToolKind | UnsetType | None = UNSET
    status: V1ToolStatus | UnsetType | None = UNSET
    title: str | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    content: list[V1ToolCallContent] | UnsetType | None = UNSET
    locations: list[V1Location] | UnsetType | None = UNSET
    raw_input: Any | UnsetType = _f("rawInput")
    raw_output: Any | UnsetType = _f("rawOutput")
    meta: MetaField = _M


class V1ToolCallUpdate(V1ToolCallFields, tag_field="sessionUpdate", tag="tool_call_update"):
    pass


class V1PlanEntry(S, kw_only=True):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]
    meta: MetaField = _M


class V1Plan(S, kw_only=True, tag_field="sessionUpdate", tag="plan"):
    entries: list[V1PlanEntry]
    meta: MetaField = _M


class V1CommandInput(S, kw_only=True):
    hint: str
    meta: MetaField = _M


class V1Command(S, kw_only=True):
    name: str
    description: str
    input: V1CommandInput | UnsetType | None = UNSET
    meta: MetaField = _M


class V1AvailableCommandsUpdate(
    S, kw_only=True, tag_field="sessionUpdate", tag="available_commands_update"
):
    available_commands: list[V1Command] = _r("availableCommands")
    meta: MetaField = _M


class V1CurrentModeUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="current_mode_update"):
    current_mode_id: str = _r("currentModeId")
    meta: MetaField = _M


class V1SelectOption(S, kw_only=True):
    value: str
    name: str
    description: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V1ConfigSelect(S, kw_only=True, tag_field="type", tag="select"):
    current_value: str = _r("currentValue")
    options: list[V1SelectOption]
    id: str
    name: str
    description: str | UnsetType | None = UNSET
    category: ConfigCategory | UnsetType | None = UNSET
    meta: MetaField = _M


class V1ConfigBoolean(S, kw_only=True, tag_field="type", tag="boolean"):
    current_value: bool = _r("currentValue")
    id: str
    name: str
    description: str | UnsetType | None = UNSET
    category: ConfigCategory | UnsetType | None = UNSET
    meta: MetaField = _M


class V1ConfigOptionUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="config_option_update"):
    config_options: list[V1ConfigSelect | V1ConfigBoolean] = _r("configOptions")
    meta: MetaField = _M


class V1SessionInfoUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="session_info_update"):
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = _f("updatedAt")
    meta: MetaField = _M


class V1Cost(S, kw_only=True):
    amount: float
    currency: str
    meta: MetaField = _M


class V1UsageUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="usage_update"):
    used: NonNeg
    size: NonNeg
    cost: V1Cost | UnsetType | None = UNSET
    meta: MetaField = _M


class V1Notice(S, kw_only=True, tag_field="sessionUpdate", tag="notice"):
    severity: Literal["info", "warning", "error"]
    title: Annotated[str, Meta(min_length=1)]
    description: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V1CompactionUpdate(S, kw_only=True, tag_field="sessionUpdate", tag="compaction_update"):
    compaction_id: str = _r("compactionId")
    status: CompactionStatus
    summary: list[V1ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET
    meta: MetaField = _M


class V1CompactionSummaryChunk(
    S, kw_only=True, tag_field="sessionUpdate", tag="compaction_summary_chunk"
):
    compaction_id: str = _r("compactionId")
    content: V1ContentBlock
    meta: MetaField = _M


V1SessionUpdate = (
    V1UserMessageChunk
    | V1AgentMessageChunk
    | V1AgentThoughtChunk
    | V1ToolCall
    | V1ToolCallUpdate
    | V1Plan
    | V1AvailableCommandsUpdate
    | V1CurrentModeUpdate
    | V1ConfigOptionUpdate
    | V1SessionInfoUpdate
    | V1UsageUpdate
    | V1Notice
    | V1CompactionUpdate
    | V1CompactionSummaryChunk
)


class V1SessionNotification(S, kw_only=True):
    session_id: str = _r("sessionId")
    update: V1SessionUpdate
    meta: MetaField = _M


class V1PermissionOption(S, kw_only=True):
    option_id: str = _r("optionId")
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]
    meta: MetaField = _M


class V1RequestPermission(S, kw_only=True):
    session_id: str = _r("sessionId")
    tool_call: V1ToolCallFields = _r("toolCall")
    options: list[V1PermissionOption]
    meta: MetaField = _M


class V1EnvVariable(S, kw_only=True):
    name: str
    value: str
    meta: MetaField = _M


class V1CreateTerminal(S, kw_only=True):
    session_id: str = _r("sessionId")
    command: str
    args: list[str] | UnsetType = UNSET
    env: list[V1EnvVariable] | UnsetType = UNSET
    cwd: str | UnsetType | None = UNSET
    output_byte_limit: NonNeg | UnsetType | None = _f("outputByteLimit")
    meta: MetaField = _M


class V1TerminalRef(S, kw_only=True):
    session_id: str = _r("sessionId")
    terminal_id: str = _r("terminalId")
    meta: MetaField = _M


class V1ReadTextFile(S, kw_only=True):
    session_id: str = _r("sessionId")
    path: str
    line: U32 | UnsetType | None = UNSET
    limit: U32 | UnsetType | None = UNSET
    meta: MetaField = _M


class V1WriteTextFile(S, kw_only=True):
    session_id: str = _r("sessionId")
    path: str
    content: str
    meta: MetaField = _M


class V1PromptResponse(S, kw_only=True):
    stop_reason: Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"] = (
        _r("stopReason")
    )
    meta: MetaField = _M


# =========================================================================== messages


class Msg(S, kw_only=True, tag_field="method"):
    jsonrpc: Literal["2.0"]
    id: UnsetType = UNSET  # a notification's: never on the wire
    method: ClassVar[str]  # the tag, as a class attribute (set below), to encode it cheaply


class Req(Msg, kw_only=True):
    id: RequestId  # type: ignore[assignment]


class _PeerOrder(S):
    """A request or notification in the key order peers write (`jsonrpc`, `id`, `method`,
    `params`): msgspec writes a tagged struct's tag first."""

    jsonrpc: str
    id: Any  # UNSET (a notification) is left out
    method: str
    params: Any


class V2SessionUpdateMsg(Msg, kw_only=True, tag="session/update"):
    params: V2SessionNotification


class V2RequestPermissionMsg(Req, kw_only=True, tag="session/request_permission"):
    params: V2RequestPermission


class V1SessionUpdateMsg(Msg, kw_only=True, tag="session/update"):
    params: V1SessionNotification


class V1RequestPermissionMsg(Req, kw_only=True, tag="session/request_permission"):
    params: V1RequestPermission


class V1CreateTerminalMsg(Req, kw_only=True, tag="terminal/create"):
    params: V1CreateTerminal


class V1TerminalOutputMsg(Req, kw_only=True, tag="terminal/output"):
    params: V1TerminalRef


class V1ReleaseTerminalMsg(Req, kw_only=True, tag="terminal/release"):
    params: V1TerminalRef


class V1WaitForExitMsg(Req, kw_only=True, tag="terminal/wait_for_exit"):
    params: V1TerminalRef


class V1ReadTextFileMsg(Req, kw_only=True, tag="fs/read_text_file"):
    params: V1ReadTextFile


class V1WriteTextFileMsg(Req, kw_only=True, tag="fs/write_text_file"):
    params: V1WriteTextFile


class Response(S, kw_only=True):
    jsonrpc: Literal["2.0"]
    id: RequestId
    result: Any


class _ResponseEnvelope(S, kw_only=True):
    jsonrpc: Literal["2.0"]
    id: RequestId
    result: Raw


class ReferenceCodec:
    """Requests/notifications in one msgspec pass over the method-tagged union; a line that
    union rejects is a response: envelope with the result as `msgspec.Raw`, then the result
    type of the method the request id names (what any msgspec binding must do)."""

    def __init__(self, messages: Any, results: dict[str, type[msgspec.Struct]]) -> None:
        self.decoder = msgspec.json.Decoder(messages)
        self.envelope = msgspec.json.Decoder(_ResponseEnvelope)
        self.results = {m: msgspec.json.Decoder(t) for m, t in results.items()}
        self._encode = msgspec.json.Encoder().encode

    def encode(self, message: Any) -> bytes:
        """A message as peers write it, the bytes of the line it was decoded from: a request
        or notification (tagged by `method`, which msgspec writes first) through a struct of
        the four envelope fields in peer order, the cheapest way found by hand (splicing the
        encoded bytes instead copies the payload twice: slower); a response as it is."""
        if isinstance(message, Msg):
            line = _PeerOrder(message.jsonrpc, message.id, message.method, message.params)  # type: ignore[attr-defined]
            return self._encode(line)
        return self._encode(message)

    def decode(self, line: bytes, result_method: Callable[[RequestId], str | None]) -> Any:
        try:
            return self.decoder.decode(line)
        except msgspec.ValidationError:
            env = self.envelope.decode(line)
            method = result_method(env.id)
            if method is None:
                raise
            return Response(
                jsonrpc="2.0", id=env.id, result=self.results[method].decode(env.result)
            )


for _message in (*Msg.__subclasses__(), *Req.__subclasses__()):
    _message.method = _message.__struct_config__.tag  # type: ignore[misc]

V2 = ReferenceCodec(
    V2SessionUpdateMsg | V2RequestPermissionMsg, {"session/prompt": V2PromptResponse}
)
V1 = ReferenceCodec(
    V1SessionUpdateMsg
    | V1RequestPermissionMsg
    | V1CreateTerminalMsg
    | V1TerminalOutputMsg
    | V1ReleaseTerminalMsg
    | V1WaitForExitMsg
    | V1ReadTextFileMsg
    | V1WriteTextFileMsg,
    {"session/prompt": V1PromptResponse},
)
CODECS = {"v2": V2, "v1": V1}

# reference Struct -> name of the generated type it stands for (checked by check_against_schema)
_COUNTERPARTS: dict[str, dict[type[msgspec.Struct], str]] = {
    "v2": {
        V2Annotations: "Annotations",
        V2Icon: "Icon",
        V2Text: "TextContent",
        V2Image: "ImageContent",
        V2ResourceLink: "ResourceLink",
        V2TextResourceContents: "TextResourceContents",
        V2EmbeddedResource: "EmbeddedResource",
        V2UserMessageChunk: "UserMessageChunk",
        V2AgentMessageChunk: "AgentMessageChunk",
        V2AgentThoughtChunk: "AgentThoughtChunk",
        V2UserMessage: "UserMessage",
        V2AgentMessage: "AgentMessage",
        V2AgentThought: "AgentThought",
        V2BackgroundTerminal: "BackgroundTerminal",
        V2Error: "Error",
        V2StateUpdate: "SessionStateUpdate",
        V2Content: "Content",
        V2ModifyChange: "ModifyDiffChange",
        V2DeleteChange: "DeleteDiffChange",
        V2MoveChange: "MoveDiffChange",
        V2DiffPatch: "DiffPatch",
        V2Diff: "Diff",
        V2Terminal: "Terminal",
        V2ToolCallContentChunk: "ToolCallContentChunk",
        V2Location: "ToolCallLocation",
        V2CancelCapabilities: "ToolCallCancelCapabilities",
        V2ToolCallCapabilities: "ToolCallCapabilities",
        V2ToolCallFields: "ToolCallUpdate",
        V2ToolCallUpdate: "ToolCallProgress",
        V2TerminalOutput: "TerminalOutput",
        V2ExitStatus: "TerminalExitStatus",
        V2TerminalSize: "TerminalSize",
        V2TerminalCapabilities: "TerminalCapabilities",
        V2TerminalUpdate: "TerminalUpdate",
        V2TerminalOutputChunk: "TerminalOutputChunk",
        V2PlanEntry: "PlanEntry",
        V2PlanItems: "PlanItems",
        V2PlanUpdate: "PlanUpdate",
        V2TextCommandInput: "TextCommandInput",
        V2Command: "Command",
        V2AvailableCommandsUpdate: "AvailableCommandsUpdate",
        V2SelectOption: "SessionConfigSelectOption",
        V2ConfigSelect: "SessionConfigSelect",
        V2ConfigBoolean: "SessionConfigBoolean",
        V2ConfigOptionUpdate: "ConfigOptionUpdate",
        V2SessionInfoUpdate: "SessionInfoUpdate",
        V2Cost: "Cost",
        V2UsageUpdate: "UsageUpdate",
        V2Notice: "Notice",
        V2CompactionUpdate: "CompactionUpdate",
        V2CompactionSummaryChunk: "CompactionSummaryChunk",
        V2SessionNotification: "UpdateSessionNotification",
        V2ToolCallSubject: "ToolCallPermissionSubject",
        V2CommandSubject: "CommandPermissionSubject",
        V2PermissionOption: "PermissionOption",
        V2RequestPermission: "RequestPermissionRequest",
        V2PromptResponse: "PromptResponse",
    },
    "v1": {
        V1Annotations: "Annotations",
        V1Text: "TextContent",
        V1Image: "ImageContent",
        V1ResourceLink: "ResourceLink",
        V1TextResourceContents: "TextResourceContents",
        V1EmbeddedResource: "EmbeddedResource",
        V1UserMessageChunk: "UserMessageChunk",
        V1AgentMessageChunk: "AgentMessageChunk",
        V1AgentThoughtChunk: "AgentThoughtChunk",
        V1Content: "Content",
        V1Diff: "Diff",
        V1Terminal: "Terminal",
        V1Location: "ToolCallLocation",
        V1ToolCall: "ToolCall",
        V1ToolCallFields: "ToolCallUpdate",
        V1ToolCallUpdate: "ToolCallProgress",
        V1PlanEntry: "PlanEntry",
        V1Plan: "Plan",
        V1CommandInput: "UnstructuredCommandInput",
        V1Command: "AvailableCommand",
        V1AvailableCommandsUpdate: "AvailableCommandsUpdate",
        V1CurrentModeUpdate: "CurrentModeUpdate",
        V1SelectOption: "SessionConfigSelectOption",
        V1ConfigSelect: "SessionConfigSelect",
        V1ConfigBoolean: "SessionConfigBoolean",
        V1ConfigOptionUpdate: "ConfigOptionUpdate",
        V1SessionInfoUpdate: "SessionInfoUpdate",
        V1Cost: "Cost",
        V1UsageUpdate: "UsageUpdate",
        V1Notice: "Notice",
        V1CompactionUpdate: "CompactionUpdate",
        V1CompactionSummaryChunk: "CompactionSummaryChunk",
        V1SessionNotification: "SessionNotification",
        V1PermissionOption: "PermissionOption",
        V1RequestPermission: "RequestPermissionRequest",
        V1EnvVariable: "EnvVariable",
        V1CreateTerminal: "CreateTerminalRequest",
        V1TerminalRef: "TerminalOutputRequest",
        V1ReadTextFile: "ReadTextFileRequest",
        V1WriteTextFile: "WriteTextFileRequest",
        V1PromptResponse: "PromptResponse",
    },
}


def _shape(cls: type[msgspec.Struct]) -> tuple[Any, ...]:
    cfg = cls.__struct_config__
    fields = sorted((f.encode_name, f.required) for f in msgspec.structs.fields(cls))
    return (cfg.tag_field, cfg.tag, tuple(fields))


def check_against_schema() -> list[str]:
    """Differences between each reference Struct and its generated counterpart (empty: none)."""
    from acp_schema import v1, v2

    problems = []
    for version, module in (("v2", v2), ("v1", v1)):
        for ref, name in _COUNTERPARTS[version].items():
            ours = _shape(getattr(module, name))
            theirs = _shape(ref)
            if ours != theirs:
                problems.append(f"{version} {ref.__name__} vs {name}: {theirs} != {ours}")
    return problems
