"""Test agents on any surface: the echo agent (`acpwire.fixtures.echo_agent`) served on the
`AgentBase` of the surface a test runs on."""

from __future__ import annotations

import functools
from typing import Any

from acp_schema import Surface
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2, EchoV1, EchoV2


@functools.cache
def echo_agent(surface: Surface[Any, Any, Any, Any]) -> type[Any]:
    """`EchoAgentV2` / `EchoAgentV1`, or the same handlers on an unstable surface's base
    (answering with that surface's classes). One class per surface."""
    stable = {2: EchoAgentV2, 1: EchoAgentV1}[surface.protocol_version]
    if not surface.unstable:
        return stable
    handlers = EchoV2 if surface.protocol_version == 2 else EchoV1
    name = f"{stable.__name__}Unstable"
    return type(name, (handlers, surface.agent_base), {"types": surface.module})
