"""The front door: what a user imports from `acpwire`, and the endpoints' runtime options as
explicit keyword parameters (the API reference itself is built and checked by `nox -s docs`)."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

import acpwire
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV2
from helpers.paths import ROOT
from helpers.raw import RawPeer, error_response, request

pytestmark = pytest.mark.usefixtures("loop")

ENTRY_POINTS = {
    "serve_agent",
    "open_agent",
    "connect",
    "PromptTurns",
    "Turn",
    "V1PromptTurns",
    "StopReason",
    "CustomStopReason",
    "agent_capabilities",
    "RpcError",
    "PeerError",
    "PeerExited",
    "ConnectionClosed",
    "ProtocolMismatch",
    "AgentNotFound",
}
OPTIONS = (
    "max_line_bytes",
    "max_concurrent_requests",
    "max_buffered_bytes",
    "eof_grace_period",
    "check_outgoing",
)


def test_the_entry_points_are_importable_from_acpwire() -> None:
    assert ENTRY_POINTS <= set(acpwire.__all__)
    namespace: dict[str, Any] = {}
    exec("from acpwire import *", namespace)
    assert set(acpwire.__all__) <= namespace.keys()


def test_every_front_door_name_has_a_docstring_of_its_own() -> None:
    for name in acpwire.__all__:
        obj = getattr(acpwire, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert (obj.__doc__ or "").strip(), f"acpwire.{name} has no docstring"


@functools.cache
def _docs_build() -> Any:
    path = ROOT / "docs" / "build.py"
    spec = importlib.util.spec_from_file_location("docs_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("module", _docs_build().MODULES)
def test_every_public_member_has_a_docstring(module: str) -> None:
    """What `nox -s docs` checks: every export, and every public member of the package's
    classes (generated fields and constants, the JSON-RPC envelopes, the peers' `caller`)."""
    assert _docs_build().undocumented_in(module) == []


def _options(function: Callable[..., Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters.values()
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters), function
    return {p.name: p.default for p in parameters if p.name in OPTIONS}


@pytest.mark.parametrize(
    "endpoint",
    [acpwire.connect, acpwire.open_agent, acpwire.serve_agent, acpwire.ClientConnection],
    ids=lambda endpoint: endpoint.__name__,
)
def test_endpoint_options_are_explicit_with_the_connection_defaults(
    endpoint: Callable[..., Any],
) -> None:
    function = endpoint.__init__ if inspect.isclass(endpoint) else endpoint
    assert _options(function) == _options(acpwire.ConnectionOptions)
    assert set(_options(function)) == set(OPTIONS)


def test_a_misspelt_option_fails_before_the_agent_is_spawned() -> None:
    with pytest.raises(TypeError, match="max_line_byte"):
        acpwire.open_agent(["no-such-agent-is-run"], v2=ClientV2, max_line_byte=100)  # type: ignore[call-arg]


async def test_connect_passes_its_options_to_the_connection() -> None:
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    long_line = msgspec.json.encode(request(1, "session/request_permission", {"pad": "x" * 200}))
    async with acpwire.connect(client_end, v2=ClientV2, max_line_bytes=100):
        await peer.send(long_line)
        assert await peer.receive() == error_response(
            1,  # its id, read from the head kept of the dropped line
            -32600,
            f"Invalid request: message of {len(long_line)} bytes is over the line limit",
        )


async def test_open_agent_passes_its_options_to_the_connection() -> None:
    until_stdin_closes = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    options = {"max_concurrent_requests": 3, "eof_grace_period": 0.5}
    async with acpwire.open_agent(until_stdin_closes, v2=ClientV2, **options) as conn:
        assert conn._connection.options.max_concurrent_requests == 3
        assert conn._connection.options.eof_grace_period == 0.5
