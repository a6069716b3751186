"""The protocol versions acpwire speaks, each backed by its generated acp_schema module."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import msgspec

from acp_schema import v1, v2
from acp_schema._support import Codec, MessageCodec, MethodSpec


@dataclass(frozen=True)
class Surface:
    """Everything the runtime needs from one generated protocol module."""

    version: int
    module: ModuleType

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


SURFACES: dict[int, Surface] = {1: Surface(1, v1), 2: Surface(2, v2)}


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
