"""The public class names of union variants: a reviewed table, and the rule for new variants.

A variant's class name is a promise to users, so it must not depend on how a schema release
happens to spell the variant (one more `$ref` to its payload type used to rename it). Every
variant of the vendored schema release is pinned in VARIANT_NAMES, by protocol version, union
and tag (a default variant without a tag by its `title`); the stable and unstable modules of
a version share the entries, so one wire variant has one name. Review a new entry like an API:

- the name of the payload type when the variant carries exactly that type and nothing uses the
  type on its own (`ToolCall`, `Plan`, `TextContent`): the variant takes the payload's place;
- otherwise a name that does not clash with the payload type, preferably the one the official
  SDKs use: `tool_call_update` carries a `ToolCallUpdate` (also a field of permission
  requests) and is `ToolCallProgress`, as in the Python SDK; `state_update` carries the
  `StateUpdate` union of the unstable schema and is `SessionStateUpdate`;
- one naming pattern per union (`AcceptElicitationResponse`, `DeclineElicitationResponse`, ...).

A variant that is not in the table (a new schema release) is named by `rule_name`
(`<Tag><Union>`, e.g. `PlanRemovedSessionUpdate`), which depends on nothing but the union and
the tag; `python -m codegen` warns about each one and `python -m codegen.vendor report` lists
them, so that they are pinned (or renamed) here before a release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .naming import camel_case

VariantKey = tuple[str, str, str]
"""(protocol version, union name, tag value or default variant title)."""

VARIANT_NAMES: Final[Mapping[VariantKey, str]] = {
    ("v1", "AuthMethod", "terminal"): "AuthMethodTerminal",
    ("v1", "ContentBlock", "audio"): "AudioContent",
    ("v1", "ContentBlock", "image"): "ImageContent",
    ("v1", "ContentBlock", "resource"): "EmbeddedResource",
    ("v1", "ContentBlock", "resource_link"): "ResourceLink",
    ("v1", "ContentBlock", "text"): "TextContent",
    ("v1", "CreateElicitationRequest", "form"): "ElicitationFormMode",
    ("v1", "CreateElicitationRequest", "url"): "ElicitationUrlMode",
    ("v1", "CreateElicitationResponse", "accept"): "AcceptElicitationResponse",
    ("v1", "CreateElicitationResponse", "cancel"): "CancelElicitationResponse",
    ("v1", "CreateElicitationResponse", "decline"): "DeclineElicitationResponse",
    ("v1", "ElicitationPropertySchema", "array"): "MultiSelectPropertySchema",
    ("v1", "ElicitationPropertySchema", "boolean"): "BooleanPropertySchema",
    ("v1", "ElicitationPropertySchema", "integer"): "IntegerPropertySchema",
    ("v1", "ElicitationPropertySchema", "number"): "NumberPropertySchema",
    ("v1", "ElicitationPropertySchema", "string"): "StringPropertySchema",
    ("v1", "McpServer", "acp"): "McpServerAcp",
    ("v1", "McpServer", "http"): "McpServerHttp",
    ("v1", "McpServer", "sse"): "McpServerSse",
    ("v1", "MessageMcpResponse", "Error"): "ErrorMessageMcpResponse",
    ("v1", "MessageMcpResponse", "Result"): "ResultMessageMcpResponse",
    ("v1", "MultiSelectItems", "string"): "StringMultiSelectItems",
    ("v1", "PlanUpdateContent", "file"): "PlanFile",
    ("v1", "PlanUpdateContent", "items"): "PlanItems",
    ("v1", "PlanUpdateContent", "markdown"): "PlanMarkdown",
    ("v1", "RequestPermissionOutcome", "cancelled"): "CancelledPermissionOutcome",
    ("v1", "RequestPermissionOutcome", "selected"): "SelectedPermissionOutcome",
    ("v1", "SessionConfigOption", "boolean"): "SessionConfigBoolean",
    ("v1", "SessionConfigOption", "select"): "SessionConfigSelect",
    ("v1", "SessionUpdate", "agent_message_chunk"): "AgentMessageChunk",
    ("v1", "SessionUpdate", "agent_thought_chunk"): "AgentThoughtChunk",
    ("v1", "SessionUpdate", "available_commands_update"): "AvailableCommandsUpdate",
    ("v1", "SessionUpdate", "compaction_summary_chunk"): "CompactionSummaryChunk",
    ("v1", "SessionUpdate", "compaction_update"): "CompactionUpdate",
    ("v1", "SessionUpdate", "config_option_update"): "ConfigOptionUpdate",
    ("v1", "SessionUpdate", "current_mode_update"): "CurrentModeUpdate",
    ("v1", "SessionUpdate", "notice"): "Notice",
    ("v1", "SessionUpdate", "plan"): "Plan",
    ("v1", "SessionUpdate", "plan_removed"): "PlanRemoved",
    ("v1", "SessionUpdate", "plan_update"): "PlanUpdate",
    ("v1", "SessionUpdate", "session_info_update"): "SessionInfoUpdate",
    ("v1", "SessionUpdate", "session_message"): "SessionMessage",
    ("v1", "SessionUpdate", "session_message_chunk"): "SessionMessageChunk",
    ("v1", "SessionUpdate", "subagent_update"): "SubagentUpdate",
    ("v1", "SessionUpdate", "tool_call"): "ToolCall",
    ("v1", "SessionUpdate", "tool_call_update"): "ToolCallProgress",
    ("v1", "SessionUpdate", "usage_update"): "UsageUpdate",
    ("v1", "SessionUpdate", "user_message_chunk"): "UserMessageChunk",
    ("v1", "SetSessionConfigOptionRequest", "boolean"): "BooleanSetSessionConfigOptionRequest",
    ("v1", "SetSessionConfigOptionRequest", "value_id"): "ValueIdSetSessionConfigOptionRequest",
    ("v1", "StateUpdate", "idle"): "IdleStateUpdate",
    ("v1", "StateUpdate", "requires_action"): "RequiresActionStateUpdate",
    ("v1", "StateUpdate", "running"): "RunningStateUpdate",
    ("v1", "StateUpdate", "unknown"): "UnknownStateUpdate",
    ("v1", "ToolCallContent", "content"): "Content",
    ("v1", "ToolCallContent", "diff"): "Diff",
    ("v1", "ToolCallContent", "terminal"): "Terminal",
    ("v2", "AuthMethod", "agent"): "AuthMethodAgent",
    ("v2", "AuthMethod", "terminal"): "AuthMethodTerminal",
    ("v2", "AvailableCommand", "command"): "Command",
    ("v2", "AvailableCommandInput", "text"): "TextCommandInput",
    ("v2", "BackgroundWork", "subagent"): "BackgroundSubagent",
    ("v2", "BackgroundWork", "terminal"): "BackgroundTerminal",
    ("v2", "BackgroundWork", "tool_call"): "BackgroundToolCall",
    ("v2", "ContentBlock", "audio"): "AudioContent",
    ("v2", "ContentBlock", "image"): "ImageContent",
    ("v2", "ContentBlock", "resource"): "EmbeddedResource",
    ("v2", "ContentBlock", "resource_link"): "ResourceLink",
    ("v2", "ContentBlock", "text"): "TextContent",
    ("v2", "CreateElicitationRequest", "form"): "ElicitationFormMode",
    ("v2", "CreateElicitationRequest", "url"): "ElicitationUrlMode",
    ("v2", "CreateElicitationResponse", "accept"): "AcceptElicitationResponse",
    ("v2", "CreateElicitationResponse", "cancel"): "CancelElicitationResponse",
    ("v2", "CreateElicitationResponse", "decline"): "DeclineElicitationResponse",
    ("v2", "DiffChange", "add"): "AddDiffChange",
    ("v2", "DiffChange", "copy"): "CopyDiffChange",
    ("v2", "DiffChange", "delete"): "DeleteDiffChange",
    ("v2", "DiffChange", "modify"): "ModifyDiffChange",
    ("v2", "DiffChange", "move"): "MoveDiffChange",
    ("v2", "ElicitationPropertySchema", "array"): "MultiSelectPropertySchema",
    ("v2", "ElicitationPropertySchema", "boolean"): "BooleanPropertySchema",
    ("v2", "ElicitationPropertySchema", "integer"): "IntegerPropertySchema",
    ("v2", "ElicitationPropertySchema", "number"): "NumberPropertySchema",
    ("v2", "ElicitationPropertySchema", "string"): "StringPropertySchema",
    ("v2", "McpServer", "acp"): "McpServerAcp",
    ("v2", "McpServer", "http"): "McpServerHttp",
    ("v2", "McpServer", "stdio"): "McpServerStdio",
    ("v2", "MessageMcpResponse", "Error"): "ErrorMessageMcpResponse",
    ("v2", "MessageMcpResponse", "Result"): "ResultMessageMcpResponse",
    ("v2", "MultiSelectItems", "string"): "StringMultiSelectItems",
    ("v2", "PlanUpdateContent", "file"): "PlanFile",
    ("v2", "PlanUpdateContent", "items"): "PlanItems",
    ("v2", "PlanUpdateContent", "markdown"): "PlanMarkdown",
    ("v2", "ReplayFrom", "start"): "ReplayFromStart",
    ("v2", "RequestPermissionOutcome", "cancelled"): "CancelledPermissionOutcome",
    ("v2", "RequestPermissionOutcome", "selected"): "SelectedPermissionOutcome",
    ("v2", "RequestPermissionSubject", "command"): "CommandPermissionSubject",
    ("v2", "RequestPermissionSubject", "tool_call"): "ToolCallPermissionSubject",
    ("v2", "SessionConfigOption", "boolean"): "SessionConfigBoolean",
    ("v2", "SessionConfigOption", "select"): "SessionConfigSelect",
    ("v2", "SessionUpdate", "agent_message"): "AgentMessage",
    ("v2", "SessionUpdate", "agent_message_chunk"): "AgentMessageChunk",
    ("v2", "SessionUpdate", "agent_thought"): "AgentThought",
    ("v2", "SessionUpdate", "agent_thought_chunk"): "AgentThoughtChunk",
    ("v2", "SessionUpdate", "available_commands_update"): "AvailableCommandsUpdate",
    ("v2", "SessionUpdate", "compaction_summary_chunk"): "CompactionSummaryChunk",
    ("v2", "SessionUpdate", "compaction_update"): "CompactionUpdate",
    ("v2", "SessionUpdate", "config_option_update"): "ConfigOptionUpdate",
    ("v2", "SessionUpdate", "notice"): "Notice",
    ("v2", "SessionUpdate", "plan_removed"): "PlanRemoved",
    ("v2", "SessionUpdate", "plan_update"): "PlanUpdate",
    ("v2", "SessionUpdate", "session_info_update"): "SessionInfoUpdate",
    ("v2", "SessionUpdate", "session_message"): "SessionMessage",
    ("v2", "SessionUpdate", "session_message_chunk"): "SessionMessageChunk",
    ("v2", "SessionUpdate", "state_update"): "SessionStateUpdate",
    ("v2", "SessionUpdate", "subagent_update"): "SubagentUpdate",
    ("v2", "SessionUpdate", "terminal_output_chunk"): "TerminalOutputChunk",
    ("v2", "SessionUpdate", "terminal_update"): "TerminalUpdate",
    ("v2", "SessionUpdate", "tool_call_content_chunk"): "ToolCallContentChunk",
    ("v2", "SessionUpdate", "tool_call_update"): "ToolCallProgress",
    ("v2", "SessionUpdate", "usage_update"): "UsageUpdate",
    ("v2", "SessionUpdate", "user_message"): "UserMessage",
    ("v2", "SessionUpdate", "user_message_chunk"): "UserMessageChunk",
    ("v2", "SetSessionConfigOptionRequest", "boolean"): "BooleanSetSessionConfigOptionRequest",
    ("v2", "SetSessionConfigOptionRequest", "id"): "IdSetSessionConfigOptionRequest",
    ("v2", "StateUpdate", "idle"): "IdleStateUpdate",
    ("v2", "StateUpdate", "requires_action"): "RequiresActionStateUpdate",
    ("v2", "StateUpdate", "running"): "RunningStateUpdate",
    ("v2", "StateUpdate", "unknown"): "UnknownStateUpdate",
    ("v2", "ToolCallContent", "content"): "Content",
    ("v2", "ToolCallContent", "diff"): "Diff",
    ("v2", "ToolCallContent", "terminal"): "Terminal",
}


def rule_name(union: str, tag: str) -> str:
    """The name of a variant the table does not pin: `("SessionUpdate", "plan_removed")` ->
    `PlanRemovedSessionUpdate`."""
    return camel_case(tag) + union


def variant_name(version: str, union: str, tag: str) -> tuple[str, bool]:
    """The class name of a variant, and whether the table pins it."""
    pinned = VARIANT_NAMES.get((version, union, tag))
    if pinned is not None:
        return pinned, True
    return rule_name(union, tag), False


def unknown_variant_names(union: str) -> tuple[str, ...]:
    """Candidate names of an open union's catch-all variant, first free one wins:
    `UnknownSessionUpdate`, or `OtherStateUpdate` where the schema has an `unknown` tag."""
    return f"Unknown{union}", f"Other{union}"
