"""The protocol surfaces a test runs on (tests/conftest.py parametrises `surface`, `v2_surface`
and `v1_surface` with them, as it does `loop`), and what a test needs to talk over any one of
them: the classes of the surface by their generated name, a handler class on its base, raw
`session/update` objects decoded as its client reads them.

`ACPWIRE_TEST_SURFACES` (comma-separated labels, default every one: `v1,v1.unstable,v2,
v2.unstable`) chooses the surfaces; an unknown label is an error.
"""

from __future__ import annotations

import json
import os
from typing import Any

import acp_schema
from acp_schema import Surface
from acpwire.client import SessionState, V1SessionState

AnySurface = Surface[Any, Any, Any, Any]

KNOWN = ("v1", "v1.unstable", "v2", "v2.unstable")
"""Every surface the bindings have, by label (`Surface.label`)."""

CHOSEN = tuple(
    label for label in os.environ.get("ACPWIRE_TEST_SURFACES", ",".join(KNOWN)).split(",") if label
)
"""The surfaces the tests run on (`ACPWIRE_TEST_SURFACES`)."""

FIXTURES: dict[str, int | None] = {"surface": None, "v2_surface": 2, "v1_surface": 1}
"""The surface arguments a test can take: any surface, or those of one protocol version."""


def unknown_labels(labels: tuple[str, ...]) -> list[str]:
    return [label for label in labels if label not in KNOWN]


def by_label(label: str) -> AnySurface:
    """`v2.unstable` -> `acp_schema.v2.unstable.SURFACE` (imported when asked for)."""
    version, _, unstable = label.partition(".")
    return acp_schema.surface(int(version.removeprefix("v")), unstable == "unstable")


def chosen(version: int | None) -> list[str]:
    """The chosen labels of one protocol version (None: of every version)."""
    return [label for label in CHOSEN if version is None or label.split(".")[0] == f"v{version}"]


def module(surface: AnySurface) -> Any:
    """The surface's module, untyped: `module(surface).TextContent(text="hi")`."""
    return surface.module


def state_for(surface: AnySurface) -> SessionState | V1SessionState:
    """A fresh fold of the surface's protocol version."""
    return SessionState() if surface.protocol_version == 2 else V1SessionState()


def decode_update(surface: AnySurface, update: dict[str, Any], session_id: str = "s1") -> Any:
    """`update` (a `session/update`'s update object) as the surface's client decodes it."""
    line = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }
    return surface.client_codec.decode(json.dumps(line).encode()).params.update


def decode_params(surface: AnySurface, method: str, params: dict[str, Any]) -> Any:
    """The params of a request of `method` the agent sends, as the surface's client decodes
    them."""
    line = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return surface.client_codec.decode(json.dumps(line).encode()).params
