"""The rules `acpwire check --client` checks of a client, as data: each with the schema or spec
text it rests on (quotes verbatim, as in `check_rules`)."""

from __future__ import annotations

from .check_rules import (
    BOTH,
    METHOD_NOT_FOUND,
    NO_REPLY_TO_NOTIFICATIONS,
    SAME_ID,
    Family,
    Rule,
    Source,
    rule,
)

__all__ = ["CLIENT_RULES"]

V1 = frozenset({1})
ONE_RESPONSE = Source(
    "spec v2/cancellation.md § `$/cancel_request` Notification",
    "**MUST** send one of these responses for the original request",
)

CLIENT_RULES: tuple[Rule, ...] = (
    Rule(
        "init.initialize-first",
        Family.INITIALIZATION,
        "the client's first message is an initialize request",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Initialization",
                "Before a Session can be created, Clients **MUST** initialize the connection by "
                "calling the `initialize` method",
            ),
        ),
    ),
    Rule(
        "init.params-fit",
        Family.INITIALIZATION,
        "initialize's params fit InitializeRequest: the protocol version, capabilities (v2: info)",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Protocol version",
                "The `initialize` request **MUST** include the latest protocol version the "
                "Client supports.",
            ),
            Source(
                "spec v2/initialization.md § Implementation Information",
                "Both Clients and Agents **MUST** provide information about their "
                "implementation in the `info` field.",
            ),
        ),
    ),
    Rule(
        "caps.advertised-served",
        Family.CAPABILITIES,
        "fs/read_text_file and terminal/output are served when the capabilities advertise them",
        "MUST",
        V1,
        (
            Source(
                "schema v1 FileSystemCapabilities.readTextFile",
                "Whether the Client supports `fs/read_text_file` requests.",
            ),
            Source(
                "schema v1 ClientCapabilities.terminal",
                "Whether the Client support all `terminal/*` methods.",
            ),
        ),
    ),
    Rule(
        "caps.served-advertised",
        Family.CAPABILITIES,
        "fs/read_text_file and terminal/output are answered -32601 when not advertised",
        "SHOULD",
        V1,
        (
            Source(
                "spec v1/file-system.md § Checking Support",
                "If `readTextFile` or `writeTextFile` is `false` or not present, the Agent "
                "**MUST NOT** attempt to call the corresponding filesystem method.",
            ),
            Source(
                "spec v1/terminals.md § Checking Support",
                "If `terminal` is `false` or not present, the Agent **MUST NOT** attempt to call "
                "any terminal methods.",
            ),
            METHOD_NOT_FOUND,
        ),
    ),
    Rule(
        "turn.requests-fit",
        Family.LIFECYCLE,
        "every request of the client fits its method's params (session/new, session/prompt, ...)",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/initialization.md § Version Negotiation",
                "Clients and Agents **MUST** agree on a protocol version and act according to "
                "its specification.",
            ),
        ),
    ),
    Rule(
        "turn.reads-updates",
        Family.LIFECYCLE,
        "the client keeps reading during a turn: a burst of updates, then a request answered",
        "SHOULD",
        BOTH,
        (
            Source(
                "spec v2/prompt-lifecycle.md § Cancellation",
                "The Client **SHOULD** still accept tool call updates received after sending "
                "`session/cancel`.",
            ),
        ),
    ),
    Rule(
        "turn.permission-answer",
        Family.LIFECYCLE,
        "a permission request is answered with a RequestPermissionResponse naming an offered "
        "option (or `cancelled`)",
        "MUST",
        BOTH,
        (
            Source(
                "schema v2 SelectedPermissionOutcome",
                "The user selected one of the provided options.",
            ),
            Source(
                "schema v2 RequestPermissionOutcome",
                "If `optionId` doesn't match an offered option, the agent MUST treat the request "
                "as not approved.",
            ),
        ),
    ),
    Rule(
        "turn.permission-cancelled",
        Family.LIFECYCLE,
        "after session/cancel, a permission request of the cancelled turn is answered "
        "`cancelled` (v2: the agent sends $/cancel_request for it; -32800 also accepted)",
        "MUST",
        BOTH,
        (
            Source(
                "spec v1/prompt-turn.md § Cancellation",
                "The Client **MUST** respond to all pending `session/request_permission` "
                "requests with the `cancelled` outcome.",
            ),
            Source(
                "schema v1 RequestPermissionOutcome",
                "When a client sends a `session/cancel` notification to cancel an ongoing "
                "prompt turn, it MUST respond to all pending `session/request_permission` "
                "requests with this `cancelled` outcome.",
            ),
            Source(
                "schema v2 RequestPermissionOutcome",
                "The client answers a request the agent cancels with `$/cancel_request` with "
                "this outcome.",
            ),
            Source(
                "spec v2/cancellation.md § `$/cancel_request` Notification",
                "An error response with code `-32800` (Request Cancelled)",
            ),
        ),
    ),
    Rule(
        "rpc.unknown-method",
        Family.JSONRPC,
        "an agent request of an unknown method is answered -32601 with the request's id",
        "MUST",
        BOTH,
        (METHOD_NOT_FOUND,),
    ),
    rule("rpc.id-echoed"),
    Rule(
        "rpc.answered-once",
        Family.JSONRPC,
        "every request of the agent is answered exactly once (none missing, none twice)",
        "MUST",
        BOTH,
        (
            ONE_RESPONSE,
            SAME_ID,
        ),
    ),
    Rule(
        "rpc.notification-unanswered",
        Family.JSONRPC,
        "an unknown notification gets no response and the client keeps serving",
        "MUST",
        BOTH,
        (NO_REPLY_TO_NOTIFICATIONS,),
    ),
    Rule(
        "rpc.cancel-request",
        Family.JSONRPC,
        "`$/cancel_request`: a request it names is answered once; one for no pending request "
        "gets no response",
        "MUST",
        BOTH,
        (
            ONE_RESPONSE,
            NO_REPLY_TO_NOTIFICATIONS,
        ),
    ),
    Rule(
        "rpc.ids-unique",
        Family.JSONRPC,
        "the client never reuses the id of its request still awaiting a response",
        "MUST",
        BOTH,
        (
            Source(
                "schema v2 RequestId",
                "A sender MUST NOT reuse an ID while a request with it is still awaiting a "
                "response.",
            ),
        ),
    ),
    Rule(
        "input.lines-clean",
        Family.BAD_INPUT,
        "every line the client writes is a JSON-RPC message",
        "MUST",
        BOTH,
        (
            Source(
                "spec v2/transports.md § stdio",
                "The client **MUST NOT** write anything to the agent's `stdin` that is not a "
                "valid ACP message.",
            ),
        ),
    ),
)
"""Every client rule, in the order of the table."""
