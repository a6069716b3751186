"""The agent endpoint: capabilities that match what is served, requests pipelined behind
`initialize`, unstable surfaces, and start-up errors that name the fix.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1u
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from acp_schema import surface_of
from acpwire._wire.versions import check_factory, handler_surface
from acpwire.agent import CapabilityMismatch, agent_capabilities, capability_mismatches, serve_agent
from acpwire.agent.capabilities import GATES, gates
from acpwire.agent.endpoint import AgentEndpoint
from acpwire.errors import RpcError
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2
from acpwire.testing import memory_stream_pair
from helpers.agents import echo_agent
from helpers.constants import RAW_INIT_V2
from helpers.loops import until
from helpers.paths import INTEROP, ROOT
from helpers.raw import RawPeer, error_response, notification, request, response
from helpers.surfaces import AnySurface, module
from helpers.typecheck import mypy_strict_errors

pytestmark = pytest.mark.usefixtures("loop")

RAW_INIT_V1 = {"protocolVersion": 1}
NOT_INITIALIZED = "the connection is not initialized: send `initialize` first"


@asynccontextmanager
async def served(endpoint: AgentEndpoint) -> AsyncIterator[RawPeer]:
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(endpoint.serve, agent_end)
        yield RawPeer(client_end)
        nursery.cancel_scope.cancel()


# =========================================================================== item 2: capabilities


def _schema(surface: AnySurface) -> dict[str, Any]:
    name = "schema.unstable.json" if surface.unstable else "schema.json"
    path = ROOT / "schema" / f"v{surface.protocol_version}" / name
    defs: dict[str, Any] = json.loads(path.read_text())
    return defs["$defs"]


def _capability_fields(surface: AnySurface) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every field of the initialize response down through the capability objects, with its
    description: (wire path, description)."""
    defs = _schema(surface)

    def walk(name: str, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
        for key, node in defs[name].get("properties", {}).items():
            if key == "_meta":
                continue
            yield (*path, key), node.get("description", "")
            alternatives = node.get("anyOf", []) + node.get("allOf", [])
            refs = [node.get("$ref")] + [alt.get("$ref") for alt in alternatives]
            for ref in refs:
                if ref and "Capabilit" in ref:
                    yield from walk(ref.rsplit("/", 1)[1], (*path, key))

    yield from walk("InitializeResponse", ())


# Fields whose description names an agent method without advertising it (they say what the
# advertised method returns or accepts).
MENTIONED_NOT_GATED: dict[tuple[str, ...], set[str]] = {
    ("capabilities", "session", "prompt"): {"session/prompt"},
    ("capabilities", "session", "prompt", "embeddedContext"): {"session/prompt"},
    ("capabilities", "session", "delete"): {"session/list"},
    ("capabilities", "session", "archive"): {"session/list"},
    ("capabilities", "session", "title"): {"session/list"},
    ("capabilities", "auth"): {"auth/login", "auth/logout", "initialize"},
    ("agentCapabilities", "promptCapabilities", "embeddedContext"): {"session/prompt"},
    ("agentCapabilities", "sessionCapabilities", "delete"): {"session/list"},
    ("agentCapabilities", "sessionCapabilities", "additionalDirectories"): {"session/list"},
    ("agentCapabilities", "sessionCapabilities", "archive"): {"session/list"},
    ("agentCapabilities", "sessionCapabilities", "title"): {"session/list"},
}


def test_gates_table_agrees_with_the_schema_descriptions(surface: AnySurface) -> None:
    """Each table entry's field says it advertises the method, and every agent method a
    capability field's description names is either in the table there or listed above."""
    methods = set(surface.agent_methods)
    table = gates(surface)
    seen_paths = set()
    for path, description in _capability_fields(surface):
        seen_paths.add(path)
        named = {m for m in re.findall(r"`([a-z_/]+)`", description) if m in methods}
        named |= {m for m in methods if f"the {m} method" in description}
        gated_here = {method for method, gate in table.items() if gate == path}
        assert named - MENTIONED_NOT_GATED.get(path, set()) == gated_here, (path, description)
    assert set(table.values()) <= seen_paths
    assert set(GATES[surface.protocol_version]) >= set(table)


class BaselineSessions:
    """v2's baseline session handlers (`capabilities.session` advertises them together), for
    an agent class of either v2 surface: `class A(BaselineSessions, v2.AgentBase)`."""

    async def session_new(self, params: Any) -> Any:
        return _v2_module(params).NewSessionResponse(session_id="s1")

    async def session_list(self, params: Any) -> Any:
        return _v2_module(params).ListSessionsResponse(sessions=[])

    async def session_resume(self, params: Any) -> Any:
        return _v2_module(params).ResumeSessionResponse()

    async def session_close(self, params: Any) -> Any:
        return _v2_module(params).CloseSessionResponse()

    async def session_prompt(self, params: Any) -> Any:
        return _v2_module(params).PromptResponse(message_id="m1")

    async def session_cancel(self, params: Any) -> None:
        pass


def _v2_module(params: Any) -> Any:
    return v2u if type(params).__module__.startswith(v2u.__name__) else v2


class SessionsV2(BaselineSessions, v2.AgentBase):
    async def session_delete(self, params: v2.DeleteSessionRequest) -> v2.DeleteSessionResponse:
        return v2.DeleteSessionResponse()


class LoadAndListV1(v1.AgentBase):
    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        return v1.LoadSessionResponse()

    async def session_list(self, params: v1.ListSessionsRequest) -> v1.ListSessionsResponse:
        return v1.ListSessionsResponse(sessions=[])


class ForkV2(BaselineSessions, v2u.AgentBase):
    async def session_fork(self, params: v2u.ForkSessionRequest) -> v2u.ForkSessionResponse:
        return v2u.ForkSessionResponse(session_id="fork")


def wire(value: msgspec.Struct) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def test_agent_capabilities_advertise_the_overridden_handlers() -> None:
    assert wire(agent_capabilities(SessionsV2)) == {"session": {"delete": {}}}
    assert wire(agent_capabilities(v2.AgentBase)) == {}
    assert wire(agent_capabilities(LoadAndListV1)) == {
        "loadSession": True,
        "sessionCapabilities": {"list": {}},
    }
    assert wire(agent_capabilities(ForkV2)) == {"session": {"fork": {}}}
    assert isinstance(agent_capabilities(ForkV2), v2u.AgentCapabilities)
    assert wire(agent_capabilities(EchoAgentV1)) == {
        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}
    }


class LoadAndList:
    """v1's `session/load` and `session/list`, for an agent class of either v1 surface."""

    async def session_load(self, params: Any) -> Any:
        return _result_type(params, "session/load")()

    async def session_list(self, params: Any) -> Any:
        return _result_type(params, "session/list")(sessions=[])


def _result_type(params: Any, method: str) -> Any:
    """The class the surface of `params` answers `method` with."""
    return surface_of(params).agent_methods[method].result.type  # type: ignore[union-attr]


def test_agent_capabilities_and_their_mismatches_on_every_surface(surface: AnySurface) -> None:
    """Each surface's agent is advertised by the capabilities of its own surface, and its
    `initialize` answer is checked against its own method table."""
    types = module(surface)
    handlers = BaselineSessions if surface.protocol_version == 2 else LoadAndList
    agent = type("Agent", (handlers, surface.agent_base), {})
    capabilities = agent_capabilities(agent)
    assert type(capabilities) is types.AgentCapabilities
    if surface.protocol_version == 2:
        assert wire(capabilities) == {"session": {}}
        info = types.Implementation(name="a", version="1")
        answer = types.InitializeResponse(protocol_version=2, info=info, capabilities=capabilities)
        field = "capabilities"
    else:
        assert wire(capabilities) == {"loadSession": True, "sessionCapabilities": {"list": {}}}
        answer = types.InitializeResponse(protocol_version=1, agent_capabilities=capabilities)
        field = "agent_capabilities"
    assert capability_mismatches(agent, answer) == []
    bare = msgspec.structs.replace(answer, **{field: types.AgentCapabilities()})
    assert capability_mismatches(agent, bare)
    assert all(mismatch.served for mismatch in capability_mismatches(agent, bare))


def test_agent_capabilities_keep_what_the_start_says() -> None:
    start = v2.AgentCapabilities(
        session=v2.SessionCapabilities(
            prompt=v2.PromptCapabilities(image=v2.PromptImageCapabilities())
        )
    )
    assert wire(agent_capabilities(SessionsV2(), start)) == {
        "session": {"prompt": {"image": {}}, "delete": {}}
    }


TYPED_CAPABILITIES = """
from typing import assert_type
import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1u
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from acpwire import agent_capabilities

class AgentV2(v2.AgentBase): ...
class AgentV2u(v2u.AgentBase): ...
class AgentV1(v1.AgentBase): ...
class AgentV1u(v1u.AgentBase): ...

assert_type(agent_capabilities(AgentV2), v2.AgentCapabilities)
assert_type(agent_capabilities(AgentV2(), v2.AgentCapabilities()), v2.AgentCapabilities)
assert_type(agent_capabilities(AgentV2u), v2u.AgentCapabilities)
assert_type(agent_capabilities(AgentV1()), v1.AgentCapabilities)
assert_type(agent_capabilities(AgentV1u, v1u.AgentCapabilities()), v1u.AgentCapabilities)
info = v2.Implementation(name="a", version="1")
v2.InitializeResponse(protocol_version=2, info=info, capabilities=agent_capabilities(AgentV1))
"""


def test_agent_capabilities_are_typed_by_the_agents_surface(tmp_path: Path) -> None:
    errors = mypy_strict_errors(TYPED_CAPABILITIES, tmp_path)
    # only the deliberate mistake: v1 capabilities in a v2 response
    assert len(errors) == 1 and ":20: error:" in errors[0], errors
    assert re.search(r'"acp_schema\.v1\.[\w.]*AgentCapabilities"; expected', errors[0]), errors


class NewOnlyV2(v2.AgentBase):
    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="s1")


def test_capability_mismatches_in_both_directions() -> None:
    bare = v2.InitializeResponse(protocol_version=2, info=v2.Implementation(name="a", version="1"))
    assert capability_mismatches(SessionsV2, bare) == [
        CapabilityMismatch(method, "capabilities.session", served=True)
        for method in ("session/new", "session/list", "session/resume", "session/close")
    ] + [
        CapabilityMismatch("session/prompt", "capabilities.session", served=True),
        CapabilityMismatch("session/cancel", "capabilities.session", served=True),
        CapabilityMismatch("session/delete", "capabilities.session.delete", served=True),
    ]
    built = msgspec.structs.replace(bare, capabilities=agent_capabilities(SessionsV2))
    assert capability_mismatches(SessionsV2, built) == []
    by_hand = msgspec.structs.replace(
        bare, capabilities=v2.AgentCapabilities(session=v2.SessionCapabilities())
    )
    assert [str(m) for m in capability_mismatches(NewOnlyV2, by_hand)] == [
        f"`capabilities.session` advertises {method}, which is not implemented"
        for method in ("session/list", "session/resume", "session/close", "session/prompt")
    ] + ["`capabilities.session` advertises session/cancel, which is not implemented"]
    v1_answer = v1.InitializeResponse(
        protocol_version=1, agent_capabilities=agent_capabilities(LoadAndListV1)
    )
    assert capability_mismatches(LoadAndListV1, v1_answer) == []


async def test_example_v2_agent_advertises_session_and_serves_list_and_resume(
    v2_surface: AnySurface, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    async with served(AgentEndpoint({2: echo_agent(v2_surface)})) as peer:
        answer = await peer.call(1, "initialize", RAW_INIT_V2)
        assert answer["result"]["capabilities"] == {"session": {}}
        assert (await peer.call(2, "session/new", {"cwd": "/a"}))["result"] == {
            "sessionId": "sess_1"
        }
        await peer.call(3, "session/new", {"cwd": "/b"})
        assert await peer.call(4, "session/list", {"cwd": "/a"}) == response(
            4, {"sessions": [{"sessionId": "sess_1", "cwd": "/a"}]}
        )
        await peer.send(request(5, "session/resume", {"sessionId": "old_7", "cwd": "/c"}))
        assert await peer.receive() == notification(
            "session/update",
            {"sessionId": "old_7", "update": {"sessionUpdate": "state_update", "state": "idle"}},
        )
        assert await peer.receive() == response(5, {})
        listed = await peer.call(6, "session/list", {})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [
            "sess_1",
            "sess_2",
            "old_7",
        ]
    assert caplog.records == []


async def test_example_v1_agent_advertises_list_resume_close(v1_surface: AnySurface) -> None:
    async with served(AgentEndpoint({1: echo_agent(v1_surface)})) as peer:
        answer = await peer.call(1, "initialize", RAW_INIT_V1)
        assert answer["result"]["agentCapabilities"] == {
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}}
        }
        assert await peer.call(2, "session/resume", {"sessionId": "s9", "cwd": "/r"}) == response(
            2, {}
        )
        assert await peer.call(3, "session/list", {}) == response(
            3, {"sessions": [{"sessionId": "s9", "cwd": "/r"}]}
        )


class Unadvertised(v2.AgentBase):
    def __init__(self, client: v2.ClientPeer) -> None:
        pass

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2, info=v2.Implementation(name="u", version="1")
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="s1")


async def test_unadvertised_methods_log_one_warning_naming_the_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    async with served(AgentEndpoint({2: Unadvertised})) as peer:
        await peer.call(1, "initialize", RAW_INIT_V2)
        await peer.call(2, "initialize", RAW_INIT_V2)  # served by the agent: no second check
        assert (await peer.call(3, "session/new", {"cwd": "/"}))["result"] == {"sessionId": "s1"}
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "session/new is served but `capabilities.session` does not advertise it" in message
    assert "Unadvertised does not implement session/list, session/resume" in message


TS_CLIENT = """
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawnAgent, stopAgent } from "./common.mjs";
const A = acp.methods.agent;
const proc = spawnAgent(acp.ndJsonStream, JSON.parse(process.argv[1]));
const out = { errors: [] };
try {
  await acp.client({ name: "t" }).connectWith(proc.stream, async (ctx) => {
    const init = await ctx.request(A.initialize,
      { protocolVersion: 2, info: { name: "t", version: "0" }, capabilities: {} });
    out.session = init.capabilities?.session ?? null;
    const created = await ctx.request(A.session.new, { cwd: "/repo", mcpServers: [] });
    out.listed = (await ctx.request(A.session.list, {})).sessions.map((s) => s.sessionId);
    out.resumed = await ctx.request(A.session.resume,
      { sessionId: created.sessionId, cwd: "/repo" });
  });
} catch (e) { out.errors.push(String(e?.message ?? e)); }
await stopAgent(proc);
console.log(JSON.stringify(out));
"""
TS_DIR = INTEROP / "ts"


@pytest.mark.skipif(
    shutil.which("node") is None or not (TS_DIR / "node_modules").is_dir(),
    reason="node or tests/interop/ts/node_modules missing",
)
def test_typescript_v2_client_sees_session_and_uses_list_and_resume() -> None:
    agent = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
    paths = [ROOT / "generated", ROOT / "runtime", ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}
    done = subprocess.run(
        ["node", "--input-type=module", "-e", TS_CLIENT, json.dumps(agent)],
        cwd=TS_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"errors": [], "session": {}, "listed": ["sess_1"], "resumed": {}}, done.stderr


# =========================================================================== item 4: pipelining


class GatedInit:
    """A v2 echo agent whose initialize waits for the test (and fails when told to)."""

    def __init__(self, fail: bool = False) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.fail = fail

    def __call__(self, client: v2.ClientPeer) -> EchoAgentV2:
        gate = self

        class Agent(EchoAgentV2):
            async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
                gate.entered.set()
                await gate.release.wait()
                if gate.fail:
                    raise RpcError.invalid_params("no, thanks")
                return await super().initialize(params)

        return Agent(client)


async def test_requests_pipelined_behind_initialize_are_served_in_arrival_order() -> None:
    gate = GatedInit()
    endpoint = AgentEndpoint({2: gate})
    async with served(endpoint) as peer:
        await peer.send(request(1, "initialize", RAW_INIT_V2))
        await gate.entered.wait()
        for held, id in enumerate((2, 3), start=1):
            await peer.send(request(id, "session/new", {"cwd": f"/{id}"}))
            await until(lambda held=held: len(endpoint._held) == held)  # type: ignore[misc]
        await peer.send(request(4, "session/list", {}))
        await until(lambda: len(endpoint._held) == 3)
        gate.release.set()
        assert (await peer.receive())["id"] == 1
        assert await peer.receive() == response(2, {"sessionId": "sess_1"})
        assert await peer.receive() == response(3, {"sessionId": "sess_2"})
        assert await peer.receive() == response(
            4,
            {
                "sessions": [
                    {"sessionId": "sess_1", "cwd": "/2"},
                    {"sessionId": "sess_2", "cwd": "/3"},
                ]
            },
        )


async def test_requests_written_with_initialize_in_one_write_are_served(
    v2_surface: AnySurface,
) -> None:
    """A quick initialize: the requests behind it may start first in the same scheduler pass."""
    for _ in range(10):
        async with served(AgentEndpoint({2: echo_agent(v2_surface)})) as peer:
            lines = [request(1, "initialize", RAW_INIT_V2), request(2, "session/new", {"cwd": "/"})]
            await peer.stream.send_all(b"".join(msgspec.json.encode(x) + b"\n" for x in lines))
            answers = {
                answer["id"]: answer for answer in (await peer.receive(), await peer.receive())
            }
            assert answers[2] == response(2, {"sessionId": "sess_1"})
            assert "result" in answers[1]


async def test_requests_behind_a_failed_initialize_are_not_initialized() -> None:
    gate = GatedInit(fail=True)
    endpoint = AgentEndpoint({2: gate})
    async with served(endpoint) as peer:
        await peer.send(request(1, "initialize", RAW_INIT_V2))
        await gate.entered.wait()
        await peer.send(request(2, "session/new", {"cwd": "/"}))
        await until(lambda: len(endpoint._held) == 1)
        gate.release.set()
        assert await peer.receive() == error_response(1, -32602, "Invalid params: no, thanks")
        assert await peer.receive() == error_response(
            2, -32600, f"Invalid request: {NOT_INITIALIZED}"
        )
        # the connection is as it was: not initialized
        assert (await peer.call(3, "session/new", {"cwd": "/"}))["error"]["code"] == -32600


# =========================================================================== item 5: unstable surfaces


class StatusAgent(BaselineSessions, v2u.AgentBase):
    def __init__(self, client: v2u.ClientPeer | None = None) -> None:
        pass

    async def initialize(self, params: v2u.InitializeRequest) -> v2u.InitializeResponse:
        return v2u.InitializeResponse(
            protocol_version=2,
            info=v2u.Implementation(name="s", version="1"),
            capabilities=agent_capabilities(StatusAgent),
        )

    async def session_status(self, params: v2u.SessionStatusRequest) -> v2u.SessionStatusResponse:
        return v2u.SessionStatusResponse(status="active")


def status_agent_factory(client: v2u.ClientPeer) -> StatusAgent:
    return StatusAgent()


@pytest.mark.parametrize("factory", [StatusAgent, status_agent_factory], ids=["class", "function"])
async def test_an_unstable_agent_is_served_its_unstable_methods(
    factory: Callable[..., Any],
) -> None:
    async with served(AgentEndpoint({2: factory})) as peer:
        answer = await peer.call(1, "initialize", RAW_INIT_V2)
        assert answer["result"]["capabilities"] == {"session": {"status": {}}}
        assert await peer.call(2, "session/status", {"sessionId": "s1"}) == response(
            2, {"status": "active"}
        )


def test_surface_lookup_by_base_class() -> None:
    assert handler_surface(StatusAgent, "agent") is v2u.SURFACE
    assert handler_surface(EchoAgentV1, "agent") is v1.SURFACE
    assert handler_surface(v1u.ClientBase, "client") is v1u.SURFACE
    assert handler_surface(EchoAgentV2, "client") is None
    assert handler_surface(v2.ClientPeer, "client") is None  # a peer is no handler
    assert check_factory(lambda client: EchoAgentV2(client), 2, "agent") is None


# =========================================================================== item 9: misuse


class NotAnAgent:
    def __init__(self, client: Any) -> None:
        pass


class UnreadableStream:
    """Fails the test if the endpoint reads or writes: errors must come first."""

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        raise AssertionError("wrote before checking its arguments")

    async def wait_send_all_might_not_block(self) -> None:
        raise AssertionError("wrote before checking its arguments")

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        raise AssertionError("read before checking its arguments")

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    ("kwargs", "error", "fix"),
    [
        ({}, ValueError, "pass your AgentBase subclass, e.g. serve_agent(MyAgent)"),
        ({"v2": EchoAgentV1}, TypeError, "pass it as v1=EchoAgentV1"),
        ({"v1": EchoAgentV2}, TypeError, "pass it as v2=EchoAgentV2"),
        ({"v2": NotAnAgent}, TypeError, "subclass acp_schema.v2.AgentBase"),
        ({"v2": StatusAgent()}, TypeError, "pass the class itself (v2=StatusAgent)"),
        ({"v2": "EchoAgentV2"}, TypeError, "pass a acp_schema.v2.AgentBase subclass"),
        ({"v2": status_agent_factory, "v1": status_agent_factory}, TypeError, "pass it as v2="),
    ],
    ids=["nothing", "v1-as-v2", "v2-as-v1", "no-base", "instance", "not-callable", "annotated"],
)
async def test_misuse_raises_at_start_up_naming_the_fix(
    kwargs: dict[str, Any], error: type[Exception], fix: str
) -> None:
    with pytest.raises(error) as raised:
        await serve_agent(**kwargs, stream=UnreadableStream())
    assert fix in str(raised.value)


def any_typed_unstable_factory(client: Any) -> Any:
    return StatusAgent()


@pytest.mark.parametrize(
    ("factory", "fix"),
    [
        (lambda client: EchoAgentV1(client), "returned a EchoAgentV1: EchoAgentV1 is a v1"),
        (lambda client: None, "returned a NoneType: NoneType subclasses no generated AgentBase"),
        (any_typed_unstable_factory, "annotate the factory's return type (-> StatusAgent)"),
    ],
    ids=["v1-for-v2", "none", "unstable-typed-any"],
)
async def test_a_factory_returning_the_wrong_thing_fails_initialize_naming_the_fix(
    factory: Callable[..., Any], fix: str
) -> None:
    async with served(AgentEndpoint({2: factory})) as peer:
        answer = await peer.call(1, "initialize", RAW_INIT_V2)
        assert answer["error"]["code"] == -32603
        assert fix in answer["error"]["message"]


async def test_serve_agent_takes_explicit_limits() -> None:
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(lambda: serve_agent(EchoAgentV2, stream=agent_end, max_line_bytes=200))
        peer = RawPeer(client_end)
        long_line = request(1, "initialize", {**RAW_INIT_V2, "pad": "x" * 300})
        answer = await peer.call(1, "initialize", long_line["params"])
        assert answer["error"]["code"] == -32600
        assert answer["id"] == 1  # read from the head kept of the dropped line
        nursery.cancel_scope.cancel()
