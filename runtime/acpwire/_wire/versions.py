"""The protocol versions acpwire speaks, each backed by its generated acp_schema surfaces.

Each version has a stable surface (`acp_schema.v2`) and an unstable one
(`acp_schema.v2.unstable`: stable plus draft methods), each described by its generated
`SURFACE` (an `acp_schema.Surface`). An endpoint serves the surface whose generated base class
the implementation subclasses (`handler_surface`, `check_factory`); nothing here imports a
surface before it is asked for.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Literal

import msgspec

import acp_schema
from acp_schema import Codec, MessageCodec, MethodSpec, Surface, surface_of

Side = Literal["agent", "client"]

AnySurface = Surface[Any, Any, Any, Any]
"""A surface whose bases and peers are not known statically (chosen at run time)."""


def stable_surface(version: int) -> AnySurface:
    """The stable surface of `version` (imported when first asked for)."""
    return acp_schema.surface(version)


def handler_surface(cls: type, side: Side) -> AnySurface | None:
    """The surface whose generated `AgentBase` (side "agent") or `ClientBase` `cls` is or
    subclasses; None when it subclasses neither (a peer, a type, anything else)."""
    surface = surface_of(cls)
    if surface is None or not issubclass(cls, surface.base(side)):
        return None
    return surface


def check_factory(factory: object, version: int, side: Side) -> AnySurface | None:
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


def check_built(implementation: object, version: int, side: Side, expected: AnySurface) -> None:
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


def _check_class(cls: type, version: int, side: Side) -> AnySurface:
    surface = handler_surface(cls, side)
    base = _base_name(side)
    if surface is None:
        raise TypeError(
            f"{cls.__name__} subclasses no generated {base}: subclass acp_schema.v{version}.{base} "
            f"(or acp_schema.v{version}.unstable.{base} for the draft methods)"
        )
    if surface.protocol_version != version:
        raise TypeError(
            f"{cls.__name__} is a v{surface.protocol_version} implementation (it subclasses "
            f"{surface.name}.{base}), given as v{version}=: pass it as "
            f"v{surface.protocol_version}={cls.__name__}"
        )
    return surface


def _is_implementation(value: object, side: Side) -> bool:
    return not isinstance(value, type) and handler_surface(type(value), side) is not None


def _declared_return(function: Callable[..., Any], side: Side) -> type | None:
    """The handler class a factory function says it returns, when it names one."""
    try:
        declared = typing.get_type_hints(function).get("return")
    except Exception:  # unresolvable string annotations: treat as unannotated
        return None
    if inspect.isclass(declared) and handler_surface(declared, side) is not None:
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
    it. When every supported version is newer, the rules of the latest one decide: v1's give
    that version (its schema has no -32022: "or the latest protocol version supported by the
    agent"), v2's give None, and the agent answers -32022 ("If no such version exists,
    initialization fails with error code -32022")."""
    candidates = [v for v in supported if v <= requested]
    if candidates:
        return max(candidates)
    latest = max(supported)
    return latest if latest == 1 else None


def bootstrap_codec(result_of_initialize: Codec[Any] | None = None) -> MessageCodec:
    """The codec of a connection before `initialize` picked a version: nothing is typed yet.

    On the client side the initialize result is kept raw, to be decoded with the version the
    agent chose.
    """
    outbound: dict[str, MethodSpec[Any, Any]] = {}
    latest = stable_surface(2)
    if result_of_initialize is not None:
        spec = latest.initialize
        outbound["initialize"] = MethodSpec(
            spec.name,
            spec.side,
            spec.kind,
            spec.params,
            result_of_initialize,
            spec.message,
            spec.handler,
        )
    return MessageCodec({}, outbound, latest.error_codec)
