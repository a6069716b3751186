# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""`Surface`: one typed description of a protocol surface (`acp_schema.v2`, `.v2.unstable`,
`.v1`, `.v1.unstable`), generated next to its bindings as the module's `SURFACE`; and the
look-ups a runtime asks instead of inspecting modules: `surface_of` (which surface a value or
class belongs to), `load` (a surface by version, importing only that one) and `tag_of` (a
variant's wire tag, shared by the stable and unstable classes of one tag).
"""

from __future__ import annotations

import functools
import importlib
import sys
import typing
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Generic, Literal, TypeVar

import msgspec

from .codec import Codec
from .messages import MessageCodec, MethodSpec
from .schema import OpenVariant, UnionInfo, variants_by_tag

__all__ = ["AnySurface", "Side", "Surface", "load", "surface_of", "tag_of"]

Side = Literal["agent", "client"]

AgentBaseT = TypeVar("AgentBaseT")
ClientBaseT = TypeVar("ClientBaseT")
AgentPeerT = TypeVar("AgentPeerT")
ClientPeerT = TypeVar("ClientPeerT")

PACKAGE = __name__.partition(".")[0]  # `acp_schema`


class Surface(
    msgspec.Struct,
    Generic[AgentBaseT, ClientBaseT, AgentPeerT, ClientPeerT],
    frozen=True,
    eq=False,
    dict=True,  # for the cached properties
):  # a Struct, not a dataclass: defined in microseconds at import (cold start)
    """One protocol surface of the bindings, e.g. `acp_schema.v2.SURFACE`: what a runtime needs
    from it, typed by its handler bases and peers (`acp_schema.v2.SURFACE.agent_peer` is
    `type[acp_schema.v2.AgentPeer]`). One instance per surface module; compared by identity."""

    name: str
    """The surface's module, e.g. `acp_schema.v2.unstable`."""
    protocol_version: int
    """The protocol version number negotiated in `initialize` (the module's `PROTOCOL_VERSION`)."""
    unstable: bool
    """Whether this is the unstable surface (stable plus draft methods and types)."""
    agent_base: type[AgentBaseT]
    """`AgentBase`: the handler base class an agent subclasses."""
    client_base: type[ClientBaseT]
    """`ClientBase`: the handler base class a client subclasses."""
    agent_peer: type[AgentPeerT]
    """`AgentPeer`: typed calls from a client to the agent."""
    client_peer: type[ClientPeerT]
    """`ClientPeer`: typed calls from an agent to the client."""
    agent_codec: MessageCodec
    """`AGENT_CODEC`: decodes what an agent receives."""
    client_codec: MessageCodec
    """`CLIENT_CODEC`: decodes what a client receives."""
    message_codec: MessageCodec
    """`MESSAGE_CODEC`: decodes lines without knowing the receiver (`decode_message`)."""
    error_codec: Codec[Any]
    """`ERROR_CODEC`: the `error` object of a JSON-RPC error response."""
    agent_methods: Mapping[str, MethodSpec[Any, Any]]
    """`AGENT_METHODS`: the methods the agent handles, by name."""
    client_methods: Mapping[str, MethodSpec[Any, Any]]
    """`CLIENT_METHODS`: the methods the client handles, by name."""
    protocol_methods: Mapping[str, MethodSpec[Any, Any]]
    """`PROTOCOL_METHODS`: the methods both sides handle (`$/cancel_request`), by name."""
    proxy_methods: Mapping[str, MethodSpec[Any, Any]]
    """`PROXY_METHODS`: the methods a proxy handles, by name (empty where the schema has none)."""
    methods: Mapping[str, MethodSpec[Any, Any]]
    """`METHODS`: every method whose name alone says which side handles it."""
    initialize: MethodSpec[Any, Any]
    """`INITIALIZE`: the `initialize` row of the method table."""
    session_update: MethodSpec[Any, None]
    """`SESSION_UPDATE`: the `session/update` row of the method table."""
    load_session_update_union: Callable[[], Any]
    """Returns the module's `SessionUpdate` union, importing the area modules defining it: a
    surface is built by the first look-up of any of its values (an agent's `initialize`), which
    should not import the session types it may not use yet."""

    @functools.cached_property
    def session_update_union(self) -> Any:
        """The module's `SessionUpdate` union (as msgspec decodes it)."""
        return self.load_session_update_union()

    @functools.cached_property
    def _session_update_parts(self) -> tuple[Any, UnionInfo]:
        return _union_parts(self.session_update_union, self.name)

    @functools.cached_property
    def session_update_variants(self) -> Mapping[str, type[msgspec.Struct]]:
        """The known `session/update` variant classes by wire tag, in schema order, e.g.
        `{"user_message_chunk": UserMessageChunk, ...}` (each class's `__struct_config__.tag`)."""
        members, info = self._session_update_parts
        return {
            tag: cls
            for tag, cls in variants_by_tag(info, members).items()
            if cls.__struct_config__.tag == tag  # a default variant named by its title is not
        }

    @functools.cached_property
    def unknown_session_update(self) -> type[OpenVariant] | None:
        """The variant class a `session/update` of a tag this surface does not know decodes to
        (`UnknownSessionUpdate`); None where the schema's union is closed (v1: an unknown tag
        is invalid there)."""
        return self._session_update_parts[1].unknown

    def base(self, side: Side) -> type[AgentBaseT] | type[ClientBaseT]:
        """The handler base class of one side: `agent_base` or `client_base`."""
        return self.agent_base if side == "agent" else self.client_base

    def peer(self, side: Side) -> type[AgentPeerT] | type[ClientPeerT]:
        """The peer proxy calling one side: `agent_peer` (calls to the agent) or `client_peer`."""
        return self.agent_peer if side == "agent" else self.client_peer

    def codec(self, side: Side) -> MessageCodec:
        """What one side receives decodes with: `agent_codec` or `client_codec`."""
        return self.agent_codec if side == "agent" else self.client_codec

    @property
    def label(self) -> str:
        """The surface as `SCHEMA_RELEASES` names it, e.g. `v2.unstable`."""
        return self.name.removeprefix(f"{PACKAGE}.")

    @property
    def module(self) -> ModuleType:
        """The surface's module: every type (`RequestPermissionResponse`, ...), message class,
        method-table row and handler class of this surface, by its generated name."""
        return sys.modules[self.name]

    def __repr__(self) -> str:
        return f"<Surface {self.name}>"


AnySurface = Surface[Any, Any, Any, Any]
"""A surface whose bases and peers are not known statically."""


def _union_parts(union: Any, surface: str) -> tuple[Any, UnionInfo]:
    if typing.get_origin(union) is typing.Annotated:
        members, *metadata = typing.get_args(union)
        info = next((m for m in metadata if isinstance(m, UnionInfo)), None)
        if info is not None and info.tag_field is not None:
            return members, info
    raise TypeError(f"{surface}: the session update union is not a tagged union: {union!r}")


_BY_MODULE: dict[str, AnySurface | None] = {}


def _surface_of_module(module: str) -> AnySurface | None:
    """The surface whose generated submodule (`methods`, `handlers`, a `_types` area) `module`
    is: the innermost enclosing package with a `SURFACE` of its own."""
    try:
        return _BY_MODULE[module]
    except KeyError:
        pass
    surface = None
    package = module.rpartition(".")[0]
    while package.startswith(f"{PACKAGE}."):
        found = getattr(sys.modules.get(package), "SURFACE", None)
        if isinstance(found, Surface) and found.name == package:
            surface = found
            break
        package = package.rpartition(".")[0]
    # a miss inside acp_schema may be a surface still being imported: looked up again next time
    if surface is not None or not module.startswith(f"{PACKAGE}."):
        _BY_MODULE[module] = surface
    return surface


def surface_of(value: object) -> AnySurface | None:
    """The surface a generated value or class belongs to: an instance or class of its types
    (structs, unknown variants), messages, handler bases or peers, or a subclass of one (your
    `AgentBase` / `ClientBase` subclass); None for anything else.

    A dict look-up by the class's module, cached; it never imports another surface (a value of
    one exists only once its module was imported), though the first look-up builds the
    surface's `SURFACE` if nothing used it yet (its tables and handlers are imported on first
    use).
    """
    cls = value if isinstance(value, type) else type(value)
    surface = _surface_of_module(cls.__module__)
    if surface is not None:
        return surface
    for base in cls.__mro__[1:]:
        surface = _surface_of_module(base.__module__)
        if surface is not None:
            return surface
    return None


def load(version: int, unstable: bool, available: Mapping[str, object]) -> AnySurface:
    """The surface of protocol `version` (its unstable one with `unstable`), importing that
    surface module alone; `available`: the surfaces generated (`SCHEMA_RELEASES`)."""
    label = f"v{version}{'.unstable' if unstable else ''}"
    if label not in available:
        raise ValueError(
            f"acp_schema has no protocol surface {label}: the generated ones are "
            f"{', '.join(available)}"
        )
    surface = getattr(importlib.import_module(f"{PACKAGE}.{label}"), "SURFACE", None)
    if not isinstance(surface, Surface):
        raise ValueError(f"{PACKAGE}.{label} has no SURFACE: it is not a whole ACP surface")
    return surface


def tag_of(variant: object) -> str | None:
    """The wire tag of a tagged-union variant, e.g. `"user_message_chunk"` for a
    `UserMessageChunk` of any surface (the stable and unstable classes of one tag share it), an
    unknown variant's own tag; None for a value that is not a tagged variant."""
    if isinstance(variant, OpenVariant):
        tag = variant.get(variant.tag_field)
        return tag if isinstance(tag, str) else None
    config = getattr(type(variant), "__struct_config__", None)
    tag = getattr(config, "tag", None)
    return tag if isinstance(tag, str) else None
