"""Permission policies: answer `session/request_permission` without (or before) asking a user.

    permissions = Permissions(approve_reads)             # reads approved, the rest asked
    requests = AgentRequests(permissions)                 # in a turn: asked = an event
    # or, without turns, in the client's handler:
    return await Permissions(deny_all).answer(params)

A policy sees a `PermissionContext` (session, tool call id, kind, programmatic name, title, a
v2 command subject's command) and decides "allow", "reject" or "ask"; requests of every surface
(`acp_schema.v2`, `.v2.unstable`, `acp_schema.v1`, `.v1.unstable`) alike, each answered with a
response of its own surface (`acp_schema.surface_of(request)`). `Permissions` turns the
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
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

from acp_schema import Surface, surface_of, tag_of
from acp_schema.v2.methods import SESSION_REQUEST_PERMISSION

from .state import SessionState, V1SessionState

if TYPE_CHECKING:
    import acp_schema.v1 as v1
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2 as v2
    import acp_schema.v2.unstable as v2u

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
    "selected_permission",
]

Decision = Literal["allow", "reject", "ask"]
"""What a policy decides for one permission request."""
READ_KINDS = frozenset({"read", "search", "think"})
ALLOW = ("allow_once", "allow_always")
REJECT = ("reject_once", "reject_always")
PERMISSION = SESSION_REQUEST_PERMISSION.name  # the same name in v1

AnySurface = Surface[Any, Any, Any, Any]
"""A surface chosen at run time (the one a request belongs to)."""

Request: TypeAlias = (
    "v2.RequestPermissionRequest | v1.RequestPermissionRequest"
    " | v2u.RequestPermissionRequest | v1u.RequestPermissionRequest"
)
Response: TypeAlias = (
    "v2.RequestPermissionResponse | v1.RequestPermissionResponse"
    " | v2u.RequestPermissionResponse | v1u.RequestPermissionResponse"
)


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
    request: Request
    """The request itself (of any surface)."""

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
    request: Request, state: SessionState | V1SessionState | None = None
) -> PermissionContext:
    """The policy's view of a request; the tool call's kind/name/title come from the request,
    else from the session state (the subject only patches the stored tool call)."""
    tool_call: Any = None
    command = None
    kind: str | None = None
    asked: Any = request
    if _surface(request).protocol_version == 1:
        tool_call = asked.tool_call  # v1 asks about one tool call
    else:
        subject = asked.subject
        subject_type = tag_of(subject)
        if subject_type == "tool_call":
            tool_call = subject.tool_call
        elif subject_type == "command":
            command, kind = subject.command, "execute"
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
        self, request: Request, state: SessionState | V1SessionState | None = None
    ) -> Verdict:
        """The remembered answer for the request's tool, else the policy's decision."""
        context = context_of(request, state)
        remembered = self.remembered(context)
        return Verdict(context, remembered or self.policy(context), remembered is not None)

    def respond(self, verdict: Verdict) -> Response:
        """The response for an allow/reject verdict (asking with nobody to ask: reject), of
        the request's surface."""
        request = verdict.context.request
        kinds = ALLOW if verdict.decision == "allow" else REJECT
        # a remembered answer repeats the `*_always` option when offered
        response: Response = select(
            _surface(request), request.options, kinds[::-1] if verdict.remembered else kinds
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
        request: v2u.RequestPermissionRequest,
        ask: Ask | None = None,
        state: SessionState | None = None,
    ) -> v2u.RequestPermissionResponse: ...
    @overload
    async def answer(
        self,
        request: v1.RequestPermissionRequest,
        ask: Ask | None = None,
        state: V1SessionState | None = None,
    ) -> v1.RequestPermissionResponse: ...
    @overload
    async def answer(
        self,
        request: v1u.RequestPermissionRequest,
        ask: Ask | None = None,
        state: V1SessionState | None = None,
    ) -> v1u.RequestPermissionResponse: ...
    async def answer(
        self,
        request: Request,
        ask: Ask | None = None,
        state: SessionState | V1SessionState | None = None,
    ) -> Response:
        """The response to `request` (of its surface): the policy's (or a remembered)
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


def _surface(request: object) -> AnySurface:
    surface = surface_of(request)
    if surface is None:
        raise TypeError(
            f"a {type(request).__qualname__} is no session/request_permission request: pass "
            "the params the agent sent (a RequestPermissionRequest of an acp_schema surface)"
        )
    return surface


def select(surface: AnySurface, options: list[Any], kinds: tuple[str, ...]) -> Any:
    """Select the first offered option of the first kind in `kinds`; none: `cancelled`."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return selected_permission(surface, option.option_id)
    return cancelled_permission(surface)


def permission_response(surface: AnySurface, outcome: dict[str, str]) -> Any:
    """The surface's `RequestPermissionResponse` (the result type of its method table's
    `session/request_permission`) with the outcome `outcome`, given in its wire form."""
    result = surface.client_methods[PERMISSION].result
    assert result is not None  # a request: it has a result
    return result.convert({"outcome": outcome})


def selected_permission(surface: AnySurface, option_id: str) -> Any:
    """The surface's `RequestPermissionResponse` selecting the option `option_id`."""
    return permission_response(surface, {"outcome": "selected", "optionId": option_id})


def cancelled_permission(surface: AnySurface) -> Any:
    """The surface's `RequestPermissionResponse` with the `cancelled` outcome."""
    return permission_response(surface, {"outcome": "cancelled"})
