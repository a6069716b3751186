"""The protocol versions acpwire speaks, each backed by its generated acp_schema module.

Each version has a stable surface (`acp_schema.v2`) and an unstable one
(`acp_schema.v2.unstable`: stable plus draft methods). An endpoint serves the surface whose
generated base class the implementation subclasses (`surface_of`, `check_factory`).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import msgspec

import acp_schema.v1.unstable
import acp_schema.v2.unstable
from acp_schema import Codec, MessageCodec, MethodSpec, v1, v2

Side = Literal["agent", "client"]


@dataclass(frozen=True)
class Surface:
    """Everything the runtime needs from one generated protocol module."""

    version: int
    module: ModuleType
    unstable: bool = False

    @property
    def name(self) -> str:
        """The module's import path, e.g. `acp_schema.v2.unstable`."""
        return self.module.__name__

    @property
    def agent_codec(self) -> MessageCodec:
        """Decodes what an agent receives."""
        codec: MessageCodec = self.module.AGENT_CODEC
        return codec

    @property
    def client_codec(self) -> MessageCodec:
        """Decodes what a client receives."""
        codec: MessageCodec = self.module.CLIENT_CODEC
        return codec

    @property
    def initialize(self) -> MethodSpec[Any, Any]:
        spec: MethodSpec[Any, Any] = self.module.INITIALIZE
        return spec

    @property
    def agent_base(self) -> type:
        base: type = self.module.AgentBase
        return base

    @property
    def client_base(self) -> type:
        base: type = self.module.ClientBase
        return base

    def base(self, side: Side) -> type:
        """The handler base class of one side: `AgentBase` or `ClientBase`."""
        return self.agent_base if side == "agent" else self.client_base


SURFACES: dict[int, Surface] = {1: Surface(1, v1), 2: Surface(2, v2)}
"""The stable surface of each version."""

UNSTABLE_SURFACES: dict[int, Surface] = {
    1: Surface(1, acp_schema.v1.unstable, unstable=True),
    2: Surface(2, acp_schema.v2.unstable, unstable=True),
}
ALL_SURFACES: tuple[Surface, ...] = (*SURFACES.values(), *UNSTABLE_SURFACES.values())


def surface_of(cls: type, side: Side) -> Surface | None:
    """The surface whose generated `AgentBase` (side "agent") or `ClientBase` `cls`
    subclasses; None when it subclasses none of them."""
    for surface in ALL_SURFACES:
        if issubclass(cls, surface.base(side)):
            return surface
    return None


def check_factory(factory: object, version: int, side: Side) -> Surface | None:
    """Check what an endpoint was given for `version` before it serves anything.

    `factory` must build the implementation from the typed peer: the handler class itself or
    a function returning one. Returns the surface to serve, read from the class (or from the
    function's return annotation when it names a handler class); None when a function does
    not say (`check_built` checks what it returns). Raises TypeError naming the fix otherwise.
    """
    base = f"acp_schema.v{version}.{_base_name(side)}"
    if _is_implementation(factory, side):
        name = type(factory).__name__
        raise TypeError(
            f"v{version}= got an instance of {name}, but it takes a factory called with the "
            f"{_peer_name(side)} once per connection: pass the class itself (v{version}={name}) "
            f"or a function taking the {_peer_name(side)} and returning a {base} instance"
        )
    if not callable(factory):
        raise TypeError(
            f"v{version}= got {factory!r}: pass a {base} subclass (or a function taking the "
            f"{_peer_name(side)} and returning an instance of one)"
        )
    built = factory if isinstance(factory, type) else _declared_return(factory, side)
    return None if built is None else _check_class(built, version, side)


def check_built(implementation: object, version: int, side: Side, expected: Surface) -> None:
    """Check what a factory returned: an instance of `expected`'s base class."""
    if isinstance(implementation, expected.base(side)):
        return
    name = type(implementation).__name__
    try:
        surface = _check_class(type(implementation), version, side)
    except TypeError as exc:
        raise TypeError(f"the v{version} factory returned a {name}: {exc}") from None
    raise TypeError(
        f"the v{version} factory returned a {name} ({surface.name}), but {expected.name} was "
        f"expected: annotate the factory's return type (-> {name}) or pass the class itself"
    )


def _check_class(cls: type, version: int, side: Side) -> Surface:
    surface = surface_of(cls, side)
    base = _base_name(side)
    if surface is None:
        raise TypeError(
            f"{cls.__name__} subclasses no generated {base}: subclass acp_schema.v{version}.{base} "
            f"(or acp_schema.v{version}.unstable.{base} for the draft methods)"
        )
    if surface.version != version:
        raise TypeError(
            f"{cls.__name__} is a v{surface.version} implementation (it subclasses "
            f"{surface.name}.{base}), given as v{version}=: pass it as v{surface.version}="
            f"{cls.__name__}"
        )
    return surface


def _is_implementation(value: object, side: Side) -> bool:
    return any(isinstance(value, surface.base(side)) for surface in ALL_SURFACES)


def _declared_return(function: Callable[..., Any], side: Side) -> type | None:
    """The handler class a factory function says it returns, when it names one."""
    try:
        declared = typing.get_type_hints(function).get("return")
    except Exception:  # unresolvable string annotations: treat as unannotated
        return None
    if inspect.isclass(declared) and surface_of(declared, side) is not None:
        return declared
    return None


def _base_name(side: Side) -> str:
    return "AgentBase" if side == "agent" else "ClientBase"


def _peer_name(side: Side) -> str:
    return "ClientPeer" if side == "agent" else "AgentPeer"


class _VersionProbe(msgspec.Struct):
    protocolVersion: int


_PROBE = msgspec.json.Decoder(_VersionProbe)


def protocol_version_of(raw: msgspec.Raw | bytes) -> int:
    """The `protocolVersion` of an initialize request or response, before its version is known."""
    return _PROBE.decode(raw).protocolVersion


def negotiate(requested: int, supported: list[int]) -> int | None:
    """The agent's answer: the requested version if supported, else the latest one at or below
    it; None when every supported version is newer (the agent then answers -32022)."""
    candidates = [v for v in supported if v <= requested]
    return max(candidates) if candidates else None


def bootstrap_codec(result_of_initialize: Codec[Any] | None = None) -> MessageCodec:
    """The codec of a connection before `initialize` picked a version: nothing is typed yet.

    On the client side the initialize result is kept raw, to be decoded with the version the
    agent chose.
    """
    outbound: dict[str, MethodSpec[Any, Any]] = {}
    if result_of_initialize is not None:
        spec = v2.INITIALIZE
        outbound["initialize"] = MethodSpec(
            spec.name,
            spec.side,
            spec.kind,
            spec.params,
            result_of_initialize,
            spec.message,
            spec.handler,
        )
    return MessageCodec({}, outbound, v2.ERROR_CODEC)
