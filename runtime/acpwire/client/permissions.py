"""Permission policies: answer `session/request_permission` without (or before) asking a user.

    permissions = Permissions(approve_reads)             # reads approved, the rest asked
    requests = AgentRequests(permissions)                 # in a turn: asked = an event
    # or, without turns, in the client's handler:
    return await Permissions(deny_all).answer(params)

A policy sees a `PermissionContext` (session, tool call id, kind, programmatic name, title, a
v2 command subject's command) and decides "allow", "reject" or "ask". `Permissions` turns the
decision into an option the agent offered: allow -> `allow_once` (else `allow_always`),
reject -> `reject_once` (else `reject_always`); when no option fits it answers `cancelled`
(not approved, no option chosen: the agent MUST NOT proceed). "ask" calls the `ask` callback
(in a turn: the `PermissionRequested` event); with none, asking rejects (non-interactive).
An answered `allow_always` / `reject_always` option is remembered for the session and the
tool (a command subject's command, else the tool's name, else its kind), and answers later
requests for it without asking (with the `*_always` option again when offered).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, overload

from acp_schema import v1, v2

from .state import SessionState, V1SessionState

__all__ = [
    "Decision",
    "PermissionContext",
    "Permissions",
    "Policy",
    "Verdict",
    "approve_all",
    "approve_reads",
    "ask_user",
    "cancelled_permission",
    "deny_all",
    "rules",
]

Decision = Literal["allow", "reject", "ask"]
"""What a policy decides for one permission request."""
READ_KINDS = frozenset({"read", "search", "think"})
ALLOW = ("allow_once", "allow_always")
REJECT = ("reject_once", "reject_always")


@dataclass(frozen=True, slots=True)
class PermissionContext:
    """What a policy decides on (from the request, completed by the session state)."""

    session_id: str
    """The session the request is for."""
    tool_call_id: str | None
    """The tool call asked about (None: a v2 request without a tool call subject)."""
    kind: str | None
    """The tool kind (`read`, `edit`, `execute` ...; a v2 command subject: `execute`)."""
    tool_name: str | None
    """The tool's programmatic name, when the agent gave one."""
    title: str | None
    """The tool call's title, else the request's (v2)."""
    command: str | None
    """A v2 command subject's command."""
    request: v2.RequestPermissionRequest | v1.RequestPermissionRequest
    """The request itself."""

    @property
    def tool(self) -> str | None:
        """What a remembered `*_always` answer is keyed by: command, name, else kind."""
        return self.command or self.tool_name or self.kind


Policy = Callable[[PermissionContext], Decision]
"""A permission policy: `approve_all`, `approve_reads`, `deny_all`, `ask_user`, `rules(...)`,
or any function of a `PermissionContext` returning a `Decision`."""


def approve_all(context: PermissionContext) -> Decision:
    """Allow every tool."""
    return "allow"


def deny_all(context: PermissionContext) -> Decision:
    """Reject every tool."""
    return "reject"


def ask_user(context: PermissionContext) -> Decision:
    """Ask for every tool (the default policy; with nobody to ask, that rejects)."""
    return "ask"


def approve_reads(context: PermissionContext) -> Decision:
    """Allow tools of kind read, search, think; ask for the rest."""
    return "allow" if context.kind in READ_KINDS else "ask"


def rules(by_tool: Mapping[str, Decision], default: Decision = "ask") -> Policy:
    """Per-tool rules, by programmatic name first, then by kind: `rules({"read": "allow",
    "execute": "reject", "git_push": "ask"})`."""

    def policy(context: PermissionContext) -> Decision:
        for key in (context.tool_name, context.kind):
            if key is not None and key in by_tool:
                return by_tool[key]
        return default

    return policy


def context_of(
    request: v2.RequestPermissionRequest | v1.RequestPermissionRequest,
    state: SessionState | V1SessionState | None = None,
) -> PermissionContext:
    """The policy's view of a request; the tool call's kind/name/title come from the request,
    else from the session state (the subject only patches the stored tool call)."""
    tool_call: Any = None
    command = None
    kind: str | None = None
    if isinstance(request, v1.RequestPermissionRequest):
        tool_call = request.tool_call
    elif isinstance(request.subject, v2.ToolCallPermissionSubject):
        tool_call = request.subject.tool_call
    elif isinstance(request.subject, v2.CommandPermissionSubject):
        command, kind = request.subject.command, "execute"
    tool_call_id = tool_call.tool_call_id if tool_call is not None else None
    stored = state.tool_calls.get(tool_call_id) if state and tool_call_id else None

    def field(name: str) -> Any:
        value = getattr(tool_call, name, None) if tool_call is not None else None
        if isinstance(value, str):
            return value
        return getattr(stored, name, None) if stored is not None else None

    return PermissionContext(
        session_id=request.session_id,
        tool_call_id=tool_call_id,
        kind=kind or field("kind"),
        tool_name=field("name"),
        title=field("title") or getattr(request, "title", None),
        command=command,
        request=request,
    )


Ask = Callable[[], Awaitable[Any]]
Response = v2.RequestPermissionResponse | v1.RequestPermissionResponse


class Permissions:
    """Answers permission requests by `policy`, remembering `*_always` answers per session."""

    def __init__(self, policy: Policy = ask_user) -> None:
        self.policy = policy
        """Decides what nothing remembered answers."""
        self._remembered: dict[tuple[str, str], Decision] = {}

    def forget(self, session_id: str) -> None:
        """Drop the session's remembered answers (e.g. when it closes)."""
        for key in [key for key in self._remembered if key[0] == session_id]:
            del self._remembered[key]

    def remembered(self, context: PermissionContext) -> Decision | None:
        """The `*_always` answer given for this session and tool, if any."""
        tool = context.tool
        return self._remembered.get((context.session_id, tool)) if tool else None

    def decide(
        self,
        request: v2.RequestPermissionRequest | v1.RequestPermissionRequest,
        state: SessionState | V1SessionState | None = None,
    ) -> Verdict:
        """The remembered answer for the request's tool, else the policy's decision."""
        context = context_of(request, state)
        remembered = self.remembered(context)
        return Verdict(context, remembered or self.policy(context), remembered is not None)

    def respond(self, verdict: Verdict) -> Response:
        """The response for an allow/reject verdict (asking with nobody to ask: reject), of
        the request's version."""
        request = verdict.context.request
        module: Any = v2 if isinstance(request, v2.RequestPermissionRequest) else v1
        kinds = ALLOW if verdict.decision == "allow" else REJECT
        # a remembered answer repeats the `*_always` option when offered
        response: Response = select(
            module, request.options, kinds[::-1] if verdict.remembered else kinds
        )
        return response

    def learn(self, verdict: Verdict, response: Response) -> None:
        """Remember an `allow_always` / `reject_always` option the user chose."""
        context = verdict.context
        option_id = getattr(response.outcome, "option_id", None)
        chosen = next((o for o in context.request.options if o.option_id == option_id), None)
        if chosen is None or context.tool is None:
            return
        if chosen.kind == "allow_always":
            self._remembered[context.session_id, context.tool] = "allow"
        elif chosen.kind == "reject_always":
            self._remembered[context.session_id, context.tool] = "reject"

    @overload
    async def answer(
        self,
        request: v2.RequestPermissionRequest,
        ask: Ask | None = None,
        state: SessionState | None = None,
    ) -> v2.RequestPermissionResponse: ...
    @overload
    async def answer(
        self,
        request: v1.RequestPermissionRequest,
        ask: Ask | None = None,
        state: V1SessionState | None = None,
    ) -> v1.RequestPermissionResponse: ...
    async def answer(
        self,
        request: v2.RequestPermissionRequest | v1.RequestPermissionRequest,
        ask: Ask | None = None,
        state: SessionState | V1SessionState | None = None,
    ) -> Response:
        """The response to `request` (of its version): the policy's (or a remembered)
        decision, else `ask()`'s answer (with no `ask`, asking rejects)."""
        verdict = self.decide(request, state)
        if verdict.decision == "ask" and ask is not None:
            response: Response = await ask()
            self.learn(verdict, response)
            return response
        return self.respond(verdict)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision on one request: `decision`, and whether it was a remembered answer."""

    context: PermissionContext
    """What the decision was made on."""
    decision: Decision
    """`allow`, `reject` or `ask`."""
    remembered: bool
    """Whether it is an earlier `*_always` answer for the session and tool (not the
    policy's)."""


def select(module: Any, options: list[Any], kinds: tuple[str, ...]) -> Any:
    """Select the first offered option of the first kind in `kinds`; none: `cancelled`."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                outcome = module.SelectedPermissionOutcome(option_id=option.option_id)
                return module.RequestPermissionResponse(outcome=outcome)
    return cancelled_permission(module)


def cancelled_permission(module: Any) -> Any:
    """The version's `RequestPermissionResponse` with the `cancelled` outcome."""
    return module.RequestPermissionResponse(outcome=module.CancelledPermissionOutcome())
