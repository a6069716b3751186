"""The rules `acpwire check` checks, as data: each with the schema or spec text it rests on.

Quotes are verbatim from the vendored schema (`schema/v1`, `schema/v2`: a type's description)
or from the protocol's documentation pages (page and section). Where a page and the schema
disagree, the schema wins (so the lifecycle's idle stop reason is a SHOULD, as the schema's
`IdleStateUpdate` says, although the page says MUST).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "BOTH",
    "FAMILIES",
    "METHOD_NOT_FOUND",
    "NO_REPLY_TO_NOTIFICATIONS",
    "RULES",
    "SAME_ID",
    "Family",
    "Rule",
    "Source",
    "rule",
]


class Family(enum.Enum):
    """The rule families, in the order the table shows them."""

    INITIALIZATION = "initialization"
    CAPABILITIES = "capabilities"
    LIFECYCLE = "prompt lifecycle"
    JSONRPC = "JSON-RPC"
    BAD_INPUT = "bad input"


FAMILIES = tuple(Family)


@dataclass(frozen=True)
class Source:
    """Where a rule comes from (`schema v2 InitializeResponse.protocolVersion`, `spec
    v2/prompt-lifecycle.md § Cancellation`, ...) and the sentence it checks."""

    where: str
    quote: str


@dataclass(frozen=True)
class Rule:
    """One checked rule: its id (`family.name`), what it checks, how strong the text is, the
    protocol versions it applies to, and its sources."""

    id: str
    family: Family
    title: str
    level: str
    protocols: frozenset[int]
    sources: tuple[Source, ...]


BOTH = frozenset({1, 2})
V2 = frozenset({2})

METHOD_NOT_FOUND = Source(
    "schema ErrorCode -32601",
    "**Method not found**: The method does not exist or is not available.",
)
SAME_ID = Source("schema RequestId", "The receiver MUST reply with the same value in the response.")
NO_REPLY_TO_NOTIFICATIONS = Source(
    "spec v2/transports.md § JSON-RPC Batch Messages",
    "The receiver **MUST NOT** reply to a Notification",
)

RULES: tuple[Rule, ...] = (
    Rule(
        "init.answer",
        Family.INITIALIZATION,
        "initialize is answered with a result that fits InitializeResponse",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Initialization",
                "The Agent **MUST** respond with the chosen protocol version, the capabilities "
                "it supports, and its implementation information",
            ),
            Source(
                "spec v1/initialization.md § Initialization",
                "The Agent **MUST** respond with the chosen protocol version and the "
                "capabilities it supports.",
            ),
        ),
    ),
    Rule(
        "init.version-requested",
        Family.INITIALIZATION,
        "the version answered is the one requested, or (v2) the highest supported below it",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Version Negotiation",
                "If the Agent supports the requested version, it **MUST** respond with the "
                "same version.",
            ),
            Source(
                "schema v2 InitializeResponse.protocolVersion",
                "The highest protocol version supported by the agent that is at or below the "
                "version requested by the client.",
            ),
        ),
    ),
    Rule(
        "init.version-newer",
        Family.INITIALIZATION,
        "a request of a newer version (65535) is answered with the agent's latest version",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Version Negotiation",
                "Otherwise, the Agent **MUST** respond with the latest version it supports.",
            ),
        ),
    ),
    Rule(
        "init.version-older",
        Family.INITIALIZATION,
        "a request of a version older than any supported (0) fails with -32022 (v2) or is "
        "answered with the latest version (v1)",
        "MUST",
        BOTH,
        (
            Source(
                "schema v2 InitializeResponse.protocolVersion",
                "If no such version exists, initialization fails with error code -32022.",
            ),
            Source(
                "schema v1 InitializeResponse.protocolVersion",
                "The protocol version the client specified if supported by the agent, or the "
                "latest protocol version supported by the agent.",
            ),
        ),
    ),
    Rule(
        "caps.advertised-served",
        Family.CAPABILITIES,
        "every method the capabilities advertise is served (not -32601 Method not found)",
        "MUST",
        BOTH,
        (
            Source(
                "schema v2 AgentCapabilities.session",
                "Supplying `{}` means the agent supports the baseline session methods: "
                "`session/new`, `session/list`, `session/resume`, `session/close`, "
                "`session/prompt`, `session/cancel`, and `session/update`.",
            ),
            Source(
                "spec v1/initialization.md § Agent Capabilities",
                "As a baseline, all Agents **MUST** support `session/new`, `session/prompt`, "
                "`session/cancel`, and `session/update`.",
            ),
            Source(
                "schema v1 SessionCapabilities.close (and .list, .resume, .delete)",
                "Supplying `{}` means the agent supports closing sessions.",
            ),
        ),
    ),
    Rule(
        "caps.served-advertised",
        Family.CAPABILITIES,
        "no optional method is served without being advertised (a client would never call it)",
        "SHOULD",
        BOTH,
        (
            Source(
                "schema v2 AgentCapabilities.session",
                "Optional. Omitted and `null` are equivalent and mean the agent does not support "
                "the `session/*` methods.",
            ),
            Source(
                "schema v2 SessionCapabilities.delete (and v1 SessionCapabilities.*)",
                "Optional. Omitted and `null` are equivalent and mean the agent does not "
                "advertise support.",
            ),
        ),
    ),
    Rule(
        "turn.prompt-accepted",
        Family.LIFECYCLE,
        "session/prompt is answered with a result that fits PromptResponse (v2: messageId)",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § 2. Prompt Accepted",
                "Upon receiving a prompt request, the Agent **MUST** respond once it has "
                "accepted the prompt.",
            ),
            Source(
                "schema v2 PromptResponse.messageId",
                "Required and non-null. Omission and explicit `null` are both invalid.",
            ),
            Source(
                "spec v1/prompt-turn.md § 4. Check for Completion",
                "the turn ends and the Agent **MUST** respond to the original `session/prompt` "
                "request with a `StopReason`",
            ),
        ),
    ),
    Rule(
        "turn.user-message",
        Family.LIFECYCLE,
        "the user message is reported with the response's messageId",
        "MUST",
        V2,
        (
            Source(
                "spec v2/prompt-lifecycle.md § 2. Prompt Accepted",
                "After accepting the prompt, the Agent **MUST** report where the user message "
                "was inserted in session history.",
            ),
            Source(
                "schema v2 PromptResponse.messageId",
                "The corresponding user-message session update carries this same identifier "
                "and may arrive before or after this response.",
            ),
        ),
    ),
    Rule(
        "turn.running",
        Family.LIFECYCLE,
        "the turn reports running (or requires_action) before it reports idle",
        "MUST",
        V2,
        (
            Source(
                "schema v2 StateUpdate",
                "the agent MUST report `running` when foreground work starts, or "
                "`requires_action` if it starts blocked on user action, and `idle` when it ends.",
            ),
        ),
    ),
    Rule(
        "turn.idle-stop-reason",
        Family.LIFECYCLE,
        "the turn ends with an idle state_update carrying a stop reason",
        "MUST idle, SHOULD stop reason",
        V2,
        (
            Source(
                "schema v2 StateUpdate",
                "The agent MUST report `idle` when no foreground activity remains.",
            ),
            Source(
                "schema v2 IdleStateUpdate",
                "Agents SHOULD include a `stopReason` when the idle transition ends foreground "
                "work.",
            ),
        ),
    ),
    Rule(
        "turn.requires-action",
        Family.LIFECYCLE,
        "a permission request reports requires_action, then running (or idle) once answered",
        "SHOULD, then MUST",
        V2,
        (
            Source(
                "schema v2 RequiresActionStateUpdate",
                "Agents SHOULD report this state when foreground work cannot progress without "
                "user action.",
            ),
            Source(
                "schema v2 RequiresActionStateUpdate",
                "Once reported, agents MUST report `running` when progress resumes, or `idle` if "
                "the work ends without resuming.",
            ),
        ),
    ),
    Rule(
        "turn.stop-reason-known",
        Family.LIFECYCLE,
        "every stop reason is one of the protocol's, or (v2) a custom one beginning with `_`",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § Stop Reasons",
                "Custom stop reasons **MUST** begin with `_`; unknown non-underscore stop "
                "reasons are reserved for future ACP variants.",
            ),
            Source(
                "schema v2 IdleStateUpdate (other)",
                "Values beginning with `_` are reserved for implementation-specific extensions. "
                "Unknown values that do not begin with `_` are reserved for future ACP variants.",
            ),
            Source(
                "schema v1 StopReason",
                "Reasons why an agent stops processing a prompt turn.",
            ),
        ),
    ),
    Rule(
        "turn.permission-refused",
        Family.LIFECYCLE,
        "a permission answer that does not approve (a reject option, `cancelled`; v2: an option "
        "not offered, a custom outcome) does not run the tool call",
        "MUST",
        BOTH,
        (
            Source(
                "schema v2 RequestPermissionOutcome",
                "Agents MUST NOT proceed with the operation.",
            ),
            Source(
                "schema v2 RequestPermissionOutcome",
                "If `optionId` doesn't match an offered option, the agent MUST treat the request "
                "as not approved.",
            ),
            Source(
                "schema v2 RequestPermissionOutcome (other)",
                "Agents that do not understand this outcome MUST NOT treat it as approval.",
            ),
            Source(
                "schema v1 PermissionOptionKind",
                "Reject this operation only this time.",
            ),
        ),
    ),
    Rule(
        "turn.updates-fit",
        Family.LIFECYCLE,
        "every session/update fits the schema (v2: message updates carry a messageId)",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § Message IDs",
                "The Agent **MUST** include an opaque `messageId` on message updates and "
                "message chunks.",
            ),
            Source(
                "spec v2/transports.md § stdio",
                "The agent **MUST NOT** write anything to its `stdout` that is not a valid ACP "
                "message.",
            ),
        ),
    ),
    Rule(
        "turn.cancelled",
        Family.LIFECYCLE,
        "session/cancel during a turn ends it with the stop reason `cancelled`",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § Cancellation",
                "After all ongoing operations have been successfully aborted and pending "
                "updates have been sent, the Agent **MUST** send an idle `state_update` session "
                "update with the `cancelled` stop reason.",
            ),
            Source(
                "spec v1/prompt-turn.md § Cancellation",
                "the Agent **MUST** respond to the original `session/prompt` request with the "
                "`cancelled` stop reason.",
            ),
        ),
    ),
    Rule(
        "turn.nothing-after-cancelled",
        Family.LIFECYCLE,
        "no update of the cancelled turn comes after the end that reports `cancelled`",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § Cancellation",
                "The Agent **MAY** send `session/update` notifications with content or tool "
                "call updates after receiving the `session/cancel` notification, but it "
                "**MUST** ensure that it does so before sending the idle `state_update` session "
                "update that reports cancellation.",
            ),
            Source(
                "spec v1/prompt-turn.md § Cancellation",
                "it **MUST** ensure that it does so before responding to the `session/prompt` "
                "request.",
            ),
        ),
    ),
    Rule(
        "turn.close-order",
        Family.LIFECYCLE,
        "session/close during a turn: idle `cancelled` first, then the close response, then "
        "nothing more for the session",
        "MUST",
        V2,
        (
            Source(
                "schema v2 CloseSessionRequest",
                "When closing cancels active foreground work, the Agent MUST send the final "
                "updates for that work and the idle `state_update` with `stopReason: "
                '"cancelled"` before responding successfully to `session/close`.',
            ),
            Source(
                "schema v2 CloseSessionRequest",
                "After the close response, the Agent sends no other messages for the session on "
                "that connection.",
            ),
        ),
    ),
    Rule(
        "rpc.unknown-method",
        Family.JSONRPC,
        "an unknown method is answered -32601 with the request's id",
        "MUST",
        BOTH,
        (METHOD_NOT_FOUND,),
    ),
    Rule(
        "rpc.id-echoed",
        Family.JSONRPC,
        "a string id and a large integer id come back as sent",
        "MUST",
        BOTH,
        (SAME_ID,),
    ),
    Rule(
        "rpc.notification-unanswered",
        Family.JSONRPC,
        "an unknown notification gets no response and the agent keeps serving",
        "MUST",
        BOTH,
        (NO_REPLY_TO_NOTIFICATIONS,),
    ),
    Rule(
        "rpc.cancel-request",
        Family.JSONRPC,
        "`$/cancel_request` for a request not pending is handled: no response, still serving",
        "MAY ignore, MUST NOT answer",
        BOTH,
        (
            Source(
                "spec v2/cancellation.md § `$/cancel_request` Notification",
                "Cancellation remains optional as it might not be implementable in all clients "
                "or servers.",
            ),
            Source(
                "spec rfds/request-cancellation.md § Cancellation Behavior",
                "If an agent or client receives notifications starting with '$/' it is free to "
                "ignore the notification.",
            ),
        ),
    ),
    Rule(
        "rpc.invalid-params",
        Family.JSONRPC,
        "session/new with params of the wrong type is answered -32602",
        "MUST",
        BOTH,
        (Source("schema ErrorCode -32602", "**Invalid params**: Invalid method parameter(s)."),),
    ),
    Rule(
        "input.parse-error",
        Family.BAD_INPUT,
        "a line that is not JSON is answered -32700 (id null)",
        "MUST",
        BOTH,
        (
            Source(
                "schema ErrorCode -32700",
                "**Parse error**: Invalid JSON was received by the server.",
            ),
        ),
    ),
    Rule(
        "input.invalid-request",
        Family.BAD_INPUT,
        "a JSON object that is no valid Request (its method a number) is answered -32600",
        "MUST",
        BOTH,
        (
            Source(
                "schema ErrorCode -32600",
                "**Invalid request**: The JSON sent is not a valid Request object.",
            ),
        ),
    ),
    Rule(
        "input.keeps-serving",
        Family.BAD_INPUT,
        "after bad lines the agent still answers requests (errors are answers, not exits)",
        "MUST",
        BOTH,
        (
            Source(
                "schema ErrorCode -32700",
                "An error occurred on the server while parsing the JSON text.",
            ),
        ),
    ),
    Rule(
        "input.close-unknown-session",
        Family.BAD_INPUT,
        "session/close of an unknown session succeeds (or answers -32002)",
        "SHOULD",
        V2,
        (
            Source(
                "schema v2 CloseSessionRequest",
                "Closing a session that does not exist or is not active SHOULD succeed, and "
                "Clients SHOULD treat a `-32002` response as a successful close.",
            ),
        ),
    ),
    Rule(
        "input.stdout-clean",
        Family.BAD_INPUT,
        "every line on the agent's stdout is a JSON-RPC message",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/transports.md § stdio",
                "The agent **MUST NOT** write anything to its `stdout` that is not a valid ACP "
                "message.",
            ),
        ),
    ),
)
"""Every rule, in the order of the table."""

_BY_ID = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """The rule `rule_id` (a KeyError names a rule the table lacks: a bug)."""
    return _BY_ID[rule_id]
