"""Agent capabilities that match the methods an agent serves.

A client may call an optional method only when the agent's `initialize` response advertises
it (v2: `capabilities.session` for every `session/*` method, `session.delete` for
`session/delete`, ...; v1: `loadSession`, `sessionCapabilities.list`, ...).

    capabilities = agent_capabilities(MyAgent)          # from the handlers MyAgent overrides
    mismatches = capability_mismatches(MyAgent, response)   # [] when they agree

The endpoint runs `capability_mismatches` on the first `initialize` it answers and logs one
WARNING on the `acpwire` logger naming the methods and the fix. In v2, `capabilities.session`
advertises six session methods at once (`session/new`, `list`, `resume`, `close`, `prompt`,
`cancel`): an agent serving some of them but not all gets a TypeError from
`agent_capabilities`, and the warning, naming the handlers to add.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import msgspec
from msgspec import UNSET

from .._wire.dispatch import overrides
from .._wire.versions import AnySurface, handler_surface

if TYPE_CHECKING:  # for the overloads: importing acpwire imports no surface for them
    import acp_schema.v1 as v1
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2 as v2
    import acp_schema.v2.unstable as v2u

Path = tuple[str, ...]

GATES: dict[int, dict[str, Path]] = {
    2: {
        **dict.fromkeys(
            (
                "session/new",
                "session/list",
                "session/resume",
                "session/close",
                "session/prompt",
                "session/cancel",
            ),
            ("capabilities", "session"),
        ),
        "session/delete": ("capabilities", "session", "delete"),
        "session/fork": ("capabilities", "session", "fork"),
        "session/archive": ("capabilities", "session", "archive"),
        "session/unarchive": ("capabilities", "session", "archive"),
        "session/status": ("capabilities", "session", "status"),
        "session/set_title": ("capabilities", "session", "title"),
        "auth/status": ("capabilities", "auth", "status"),
        "auth/login": ("authMethods",),
        "auth/logout": ("authMethods",),
    },
    1: {
        "session/load": ("agentCapabilities", "loadSession"),
        "session/list": ("agentCapabilities", "sessionCapabilities", "list"),
        "session/delete": ("agentCapabilities", "sessionCapabilities", "delete"),
        "session/resume": ("agentCapabilities", "sessionCapabilities", "resume"),
        "session/close": ("agentCapabilities", "sessionCapabilities", "close"),
        "session/fork": ("agentCapabilities", "sessionCapabilities", "fork"),
        "session/archive": ("agentCapabilities", "sessionCapabilities", "archive"),
        "session/unarchive": ("agentCapabilities", "sessionCapabilities", "archive"),
        "session/status": ("agentCapabilities", "sessionCapabilities", "status"),
        "session/set_title": ("agentCapabilities", "sessionCapabilities", "title"),
        "auth/status": ("agentCapabilities", "auth", "status"),
        "logout": ("agentCapabilities", "auth", "logout"),
    },
}
"""Which field of the `initialize` response (wire names, from the response down) advertises
each optional agent method, per version; a surface uses the entries of methods it has. The
schema says this only in prose (field descriptions): tests/agent/test_agent_endpoint.py checks
this table against those descriptions in every schema file."""


CAPABILITIES: dict[int, str] = {2: "capabilities", 1: "agentCapabilities"}
"""The `InitializeResponse` field (wire name) holding the agent's `AgentCapabilities`, per
version."""

SESSION: Path = ("capabilities", "session")
"""v2: the field advertising the baseline session methods, and holding every other session
method's capability (`session.delete`, `session.fork`, ...)."""


@dataclass(frozen=True)
class CapabilityMismatch:
    """An optional method served but not advertised (`served`), or advertised but not served."""

    method: str
    """The optional agent method, e.g. `session/list`."""
    field: str
    """The field advertising it: the dotted wire path in the `initialize` response, e.g.
    `capabilities.session`."""
    served: bool
    """True: the agent overrides the method's handler but the field does not advertise it;
    False: the field advertises a method the agent does not override."""

    def __str__(self) -> str:
        if self.served:
            return f"{self.method} is served but `{self.field}` does not advertise it"
        return f"`{self.field}` advertises {self.method}, which is not implemented"


def gates(surface: AnySurface) -> dict[str, Path]:
    """The gated agent methods of one surface and the response field advertising each."""
    methods = surface.agent_methods
    table = GATES[surface.protocol_version]
    return {method: path for method, path in table.items() if method in methods}


@overload
def agent_capabilities(
    agent: type[v2.AgentBase] | v2.AgentBase, start: v2.AgentCapabilities | None = None
) -> v2.AgentCapabilities: ...
@overload
def agent_capabilities(
    agent: type[v2u.AgentBase] | v2u.AgentBase, start: v2u.AgentCapabilities | None = None
) -> v2u.AgentCapabilities: ...
@overload
def agent_capabilities(
    agent: type[v1.AgentBase] | v1.AgentBase, start: v1.AgentCapabilities | None = None
) -> v1.AgentCapabilities: ...
@overload
def agent_capabilities(
    agent: type[v1u.AgentBase] | v1u.AgentBase, start: v1u.AgentCapabilities | None = None
) -> v1u.AgentCapabilities: ...
def agent_capabilities(
    agent: type | object,
    start: v2.AgentCapabilities
    | v2u.AgentCapabilities
    | v1.AgentCapabilities
    | v1u.AgentCapabilities
    | None = None,
) -> v2.AgentCapabilities | v2u.AgentCapabilities | v1.AgentCapabilities | v1u.AgentCapabilities:
    """The `AgentCapabilities` (of the agent's own surface) advertising exactly the optional
    methods `agent` (a class or an instance) overrides, on top of `start` (for what handlers
    cannot tell: prompt content types, MCP transports, ...). `authMethods` lives outside the
    capabilities: list the methods there yourself when the agent implements authentication.

    v2 advertises its session methods as a set: `session: {}` means the agent implements
    `session/new`, `session/list`, `session/resume`, `session/close`, `session/prompt` and
    `session/cancel`, and the other session methods (`session.delete`, ...) are advertised
    inside it. A v2 agent that implements some of those but not all raises TypeError naming
    the missing handlers (no answer would be right: with `session` the client calls the
    missing ones, without it none); `serve_turns` implements them all.

    Typed by the generated base class `agent` subclasses: an `acp_schema.v2.AgentBase`
    subclass gets `acp_schema.v2.AgentCapabilities` (likewise v1 and the `.unstable`
    modules), so a type checker sees capabilities of the wrong version in a response."""
    cls = agent if isinstance(agent, type) else type(agent)
    surface = _surface(cls)
    missing = missing_session_methods(cls, surface)
    if missing:
        raise TypeError(incomplete_sessions(cls, surface, missing))
    capabilities_field = _capabilities_field(surface)
    result = start if start is not None else _struct_type(capabilities_field.type)()
    for method, path in gates(surface).items():
        if path[0] == capabilities_field.encode_name and _implements(cls, surface, method):
            result = _filled(result, path[1:])
    return result


def capability_mismatches(
    agent: type | object, response: msgspec.Struct
) -> list[CapabilityMismatch]:
    """Where `response` (the agent's `InitializeResponse`) and the handlers `agent` overrides
    disagree about an optional method."""
    cls = agent if isinstance(agent, type) else type(agent)
    surface = _surface(cls)
    mismatches = []
    for method, path in gates(surface).items():
        served = _implements(cls, surface, method)
        if served != _advertised(response, path):
            mismatches.append(CapabilityMismatch(method, ".".join(path), served))
    return mismatches


def describe(agent: type, mismatches: list[CapabilityMismatch]) -> str:
    """One log message for the mismatches, naming the fix."""
    items = "; ".join(str(mismatch) for mismatch in mismatches)
    summary = f"{agent.__name__}'s initialize response does not match the methods it serves: "
    surface = _surface(agent)
    missing = missing_session_methods(agent, surface)
    if missing:
        return f"{summary}{items}. {incomplete_sessions(agent, surface, missing)}"
    return (
        f"{summary}{items}. Set those fields (acpwire.agent_capabilities({agent.__name__}) "
        f"builds them from the handlers) or implement / remove the handlers"
    )


def missing_session_methods(cls: type, surface: AnySurface) -> list[str]:
    """v2: the baseline session methods `cls` leaves out while it serves a method advertised
    by `capabilities.session` or inside it. The schema: `session: {}` means the agent
    supports all of them, so an agent serving sessions cannot advertise only some (and a
    client may call no `session/*` method without it)."""
    table = gates(surface)
    baseline = [method for method, path in table.items() if path == SESSION]
    sessions = [method for method, path in table.items() if path[: len(SESSION)] == SESSION]
    if not any(_implements(cls, surface, method) for method in sessions):
        return []
    return [method for method in baseline if not _implements(cls, surface, method)]


def incomplete_sessions(cls: type, surface: AnySurface, missing: list[str]) -> str:
    """What to do about `missing_session_methods`."""
    baseline = [method for method, path in gates(surface).items() if path == SESSION]
    handlers = ", ".join(surface.agent_methods[method].handler for method in missing)
    return (
        f"{cls.__name__} does not implement {', '.join(missing)}: in ACP v2, "
        f"`capabilities.session` advertises {', '.join(baseline)} together (the agent "
        f"supports all of them), and every other session method inside it. Implement "
        f"{handlers} (with PromptTurns, session_close is "
        f"`return await self.turns.close(params.session_id)`; an agent that keeps no "
        f"session beyond its connection answers session_list with "
        f"`ListSessionsResponse(sessions=[])` and session_resume with "
        f"`raise RpcError.resource_not_found(params.session_id)`), or serve one turn "
        f"function with acpwire.serve_turns, which implements them all"
    )


def _surface(cls: type) -> AnySurface:
    surface = handler_surface(cls, "agent")
    if surface is None:
        raise TypeError(f"{cls.__name__} subclasses no generated AgentBase (acp_schema.vN)")
    return surface


def _implements(cls: type, surface: AnySurface, method: str) -> bool:
    return overrides(cls, surface.agent_base, surface.agent_methods[method].handler)


def _capabilities_field(surface: AnySurface) -> msgspec.structs.FieldInfo:
    """The InitializeResponse field holding the AgentCapabilities."""
    response = surface.initialize.result
    assert response is not None  # a request: it has a result
    return _field(response.type, CAPABILITIES[surface.protocol_version])


@functools.cache  # `msgspec.structs.fields` evaluates every annotation of the class, each call
def _field(struct_type: type, wire_name: str) -> msgspec.structs.FieldInfo:
    for field in msgspec.structs.fields(struct_type):
        if field.encode_name == wire_name:
            return field
    raise KeyError(f"{struct_type.__name__} has no field {wire_name!r}")


def _attribute(struct_type: type[msgspec.Struct], wire_name: str) -> str:
    """The attribute holding the field `wire_name` (no annotation evaluated: see `_field`)."""
    try:
        index = struct_type.__struct_encode_fields__.index(wire_name)
    except ValueError:
        raise KeyError(f"{struct_type.__name__} has no field {wire_name!r}") from None
    return struct_type.__struct_fields__[index]


def _struct_type(annotation: Any) -> type:
    """The Struct class in a field's annotation (`X | None | UnsetType`, or `X` itself)."""
    candidates = typing.get_args(annotation) or (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
            return candidate
    raise TypeError(f"no Struct in {annotation!r}")


def _present(value: object) -> bool:
    return value is not UNSET and value is not None and value is not False and value != []


def _filled(struct: Any, path: Path) -> Any:
    """`struct` with the field at `path` set to advertise: `{}` for an object, True for a flag."""
    struct_type: type = type(struct)
    field = _field(struct_type, path[0])
    current = getattr(struct, field.name)
    if bool in (typing.get_args(field.type) or (field.type,)):
        value: Any = True
    else:
        value = current if _present(current) else _struct_type(field.type)()
        if len(path) > 1:
            value = _filled(value, path[1:])
    return msgspec.structs.replace(struct, **{field.name: value})


def _advertised(struct: Any, path: Path) -> bool:
    value = getattr(struct, _attribute(type(struct), path[0]))
    if not _present(value):
        return False
    return True if len(path) == 1 else _advertised(value, path[1:])
