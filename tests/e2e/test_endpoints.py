"""Agent and client endpoints end to end: the example echo agents served by serve_agent over
an in-memory stream, the typed client from acpwire.client.connect, and real subprocesses
through acpwire.client.open_agent. What concerns a protocol surface runs on each surface of
its version (`v2_surface`, `v1_surface`: both endpoints on that surface).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET
from acpwire.client import open_agent
from acpwire.errors import PeerExited, ProtocolMismatch, RpcError
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2
from helpers.agents import echo_agent
from helpers.clients import (
    ClientV1,
    ClientV2,
    describe,
    new_v1_session,
    new_v2_session,
    prompt_v1,
    prompt_v2,
    recording_client,
    until_idle,
    until_state,
)
from helpers.constants import INIT_V1, INIT_V2, RAW_INIT_V1, RAW_INIT_V2
from helpers.loops import until
from helpers.processes import PYTHONPATH, python
from helpers.raw import error_response, notification, request, response
from helpers.serving import initialized_raw, messages, pair, raw_client
from helpers.surfaces import AnySurface, module

pytestmark = pytest.mark.usefixtures("loop")


# --------------------------------------------------------------------------- version negotiation


async def test_v2_client_and_v2_agent_agree_on_2(v2_surface: AnySurface) -> None:
    async with pair(
        agent_v2=echo_agent(v2_surface),
        agent_v1=EchoAgentV1,
        client_v2=recording_client(v2_surface),
        client_v1=ClientV1,
    ) as p:
        init = await p.conn.initialize(INIT_V2)
        assert isinstance(init, module(v2_surface).InitializeResponse)
        assert (init.protocol_version, init.info.name) == (2, "acpwire-echo")
        assert p.conn.protocol_version == 2
        assert messages(p.wire.sent)[0] == request(
            0, "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "0"}}
        )


async def test_client_falls_back_to_v1_when_the_agent_only_speaks_v1(
    v1_surface: AnySurface,
) -> None:
    client_v1 = recording_client(v1_surface)
    async with pair(agent_v2=None, agent_v1=echo_agent(v1_surface), client_v1=client_v1) as p:
        init = await p.conn.initialize(INIT_V2)
        assert isinstance(init, module(v1_surface).InitializeResponse)
        assert init.protocol_version == 1
        assert p.conn.protocol_version == 1
        new = v1.NewSessionRequest(cwd="/repo", mcp_servers=[])
        assert (await p.conn.v1_agent.session_new(new)).session_id == "sess_1"


async def test_client_without_v1_rejects_a_v1_only_agent() -> None:
    async with pair(agent_v2=None, agent_v1=EchoAgentV1, client_v2=ClientV2) as p:
        with pytest.raises(ProtocolMismatch):
            await p.conn.initialize(INIT_V2)


async def test_v1_request_to_a_v2_only_agent_is_unsupported_protocol_version() -> None:
    async with pair(agent_v2=EchoAgentV2, client_v2=None, client_v1=ClientV1) as p:
        with pytest.raises(RpcError) as caught:
            await p.conn.initialize(INIT_V1)
        error = caught.value
        assert (error.code, error.message) == (-32022, "Unsupported protocol version")
        assert msgspec.to_builtins(error.data) == {"requested": 1, "supported": [2]}
        assert messages(p.wire.received) == [
            error_response(
                0, -32022, "Unsupported protocol version", {"requested": 1, "supported": [2]}
            )
        ]


async def test_agent_answers_a_newer_version_with_its_latest() -> None:
    async with raw_client() as peer:
        reply = await peer.call(0, "initialize", {**RAW_INIT_V2, "protocolVersion": 7})
        assert reply["result"]["protocolVersion"] == 2


# Which agent answers which requested version with what (a version, or -32022 with its data):
# when no version the agent speaks is at or below the request, the rules of the agent's latest
# version decide. v1's (its schema has no -32022, and the spec's "Otherwise, the Agent MUST
# respond with the latest version it supports") give the latest; v2's schema gives -32022.
NEGOTIATIONS: list[tuple[str, int, int | dict[str, Any]]] = [
    ("v1", 0, 1),
    ("v1", 1, 1),
    ("v1", 7, 1),
    ("v2+v1", 0, {"requested": 0, "supported": [1, 2]}),
    ("v2+v1", 1, 1),
    ("v2+v1", 7, 2),
    ("v2", 0, {"requested": 0, "supported": [2]}),
    ("v2", 1, {"requested": 1, "supported": [2]}),
    ("v2", 2, 2),
]
SERVED: dict[str, tuple[type[EchoAgentV2] | None, type[EchoAgentV1] | None]] = {
    "v1": (None, EchoAgentV1),
    "v2+v1": (EchoAgentV2, EchoAgentV1),
    "v2": (EchoAgentV2, None),
}


@pytest.mark.parametrize(("served", "asked", "answer"), NEGOTIATIONS)
async def test_agent_negotiates_by_the_rules_of_its_latest_version(
    served: str, asked: int, answer: int | dict[str, Any]
) -> None:
    v2_agent, v1_agent = SERVED[served]
    params = RAW_INIT_V1 if answer == 1 else RAW_INIT_V2
    async with raw_client(v2_agent, v1=v1_agent) as peer:
        reply = await peer.call(0, "initialize", {**params, "protocolVersion": asked})
    if isinstance(answer, int):
        assert reply["result"]["protocolVersion"] == answer
    else:
        assert reply == error_response(0, -32022, "Unsupported protocol version", answer)


# --------------------------------------------------------------------------- routing


async def test_requests_before_initialize_are_invalid_and_notifications_ignored() -> None:
    async with raw_client() as peer:
        assert await peer.call(1, "session/new", {"cwd": "/repo"}) == error_response(
            1, -32600, "Invalid request: the connection is not initialized: send `initialize` first"
        )
        await peer.send(notification("session/cancel", {"sessionId": "s"}))
        await peer.expect_silence()
        await initialized_raw(peer)
        assert (await peer.call(2, "session/new", {"cwd": "/repo"}))["result"] == {
            "sessionId": "sess_1"
        }


@pytest.mark.parametrize("method", ["foo/bar", "auth/logout", "_acme/ping"])
async def test_unhandled_method_is_method_not_found(method: str) -> None:
    async with raw_client() as peer:
        await initialized_raw(peer)
        assert await peer.call(5, method, {}) == error_response(
            5, -32601, "Method not found", {"method": method}
        )


class ExtensionAgent(EchoAgentV2):
    calls: list[tuple[str, Any]]

    async def extension(self, method: str, params: Any) -> Any:
        decoded = None if params is UNSET else msgspec.json.decode(params)
        type(self).calls.append((method, decoded))
        return {"method": method, "params": decoded}


async def test_underscore_methods_go_to_the_extension_handler() -> None:
    ExtensionAgent.calls = []
    async with raw_client(ExtensionAgent) as peer:
        await initialized_raw(peer)
        assert (await peer.call(6, "_acme/ping", {"n": 1}))["result"] == {
            "method": "_acme/ping",
            "params": {"n": 1},
        }
        await peer.send(notification("_acme/note", {"n": 2}))
        assert (await peer.call(7, "foo/bar", {}))["error"]["code"] == -32601  # not `_`
        assert ExtensionAgent.calls == [("_acme/ping", {"n": 1}), ("_acme/note", {"n": 2})]


class FlakyAgent(EchoAgentV2):
    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        if params.cwd == "/boom":
            raise RuntimeError("disk on fire")
        return await super().session_new(params)


async def test_agent_handler_exception_is_internal_error_and_serving_goes_on() -> None:
    async with pair(agent_v2=FlakyAgent) as p:
        await p.conn.initialize(INIT_V2)
        with pytest.raises(RpcError) as caught:
            await p.conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/boom"))
        assert caught.value.code == -32603
        assert caught.value.message == "Internal error: RuntimeError: disk on fire"
        new = await p.conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/repo"))
        assert new.session_id == "sess_1"


# --------------------------------------------------------------------------- v2 prompt turns


async def test_v2_prompt_turn_reports_every_step_in_order(v2_surface: AnySurface) -> None:
    async with pair(echo_agent(v2_surface), client_v2=recording_client(v2_surface)) as p:
        session_id = await new_v2_session(p.conn)
        async with p.conn.subscribe(session_id) as updates:
            accepted = await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "hello world"))
            await until_idle(updates)
        assert [describe(item) for item in p.client.log] == [
            "user_message",
            "state running",
            "tool_call pending",
            "state requires_action",
            "permission",
            "state running",
            "tool_call in_progress",
            "chunk hello",
            "chunk world",
            "tool_call_content",
            "tool_call completed",
            "state idle end_turn",
        ]
        user_message, *_ = p.client.log
        assert user_message.message_id == accepted.message_id
        assert user_message.content == [module(v2_surface).TextContent(text="hello world")]
        chunks = [u for u in p.client.log if describe(u).startswith("chunk")]
        assert len({chunk.message_id for chunk in chunks}) == 1
        # On the wire, the prompt is answered (with its messageId) before the turn's updates.
        prompt = next(m for m in messages(p.wire.sent) if m.get("method") == "session/prompt")
        received = messages(p.wire.received)
        answered_at = received.index(response(prompt["id"], {"messageId": accepted.message_id}))
        methods = [m.get("method") for m in received]
        assert answered_at < methods.index("session/update")


async def test_v2_cancel_mid_turn_ends_cancelled_and_answers_the_permission_cancelled(
    v2_surface: AnySurface,
) -> None:
    holding = recording_client(v2_surface, holding=True)
    async with pair(echo_agent(v2_surface), client_v2=holding) as p:
        session_id = await new_v2_session(p.conn)
        async with p.conn.subscribe(session_id) as updates:
            await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "hello"))
            await until_state(updates, "requires_action")
            await p.client.asked.wait()
            await p.conn.cancel(session_id)
            await until_idle(updates)
        assert [describe(item) for item in p.client.log] == [
            "user_message",
            "state running",
            "tool_call pending",
            "state requires_action",
            "permission",
            "state idle cancelled",
        ]
        asked = next(
            m for m in messages(p.wire.received) if m.get("method") == "session/request_permission"
        )

        def answers() -> list[Any]:
            sent = messages(p.wire.sent)
            return [m for m in sent if "method" not in m and m["id"] == asked["id"]]

        await until(answers)
        assert answers() == [response(asked["id"], {"outcome": {"outcome": "cancelled"}})]
        # The agent cascades: its own permission request is cancelled with $/cancel_request.
        await until(
            lambda: (
                notification("$/cancel_request", {"requestId": asked["id"]})
                in messages(p.wire.received)
            )
        )


# --------------------------------------------------------------------------- v1 prompt turns


async def test_v1_prompt_response_carries_the_stop_reason(v1_surface: AnySurface) -> None:
    agent, client = echo_agent(v1_surface), recording_client(v1_surface)
    async with pair(agent_v2=None, agent_v1=agent, client_v2=None, client_v1=client) as p:
        session_id = await new_v1_session(p.conn)
        response = await p.conn.v1_agent.session_prompt(prompt_v1(session_id, "hi there"))
        assert response.stop_reason == "end_turn"
        assert [describe(item) for item in p.client.log] == [
            "tool_call pending",
            "permission",
            "tool_call in_progress",
            "chunk hi",
            "chunk there",
            "tool_call completed",
        ]


@pytest.mark.parametrize(
    ("holding", "text", "started"),
    [
        (True, "hello", lambda client: client.asked.is_set()),
        (False, "slow " * 40, lambda client: "chunk slow" in map(describe, client.log)),
    ],
    ids=["waiting-for-permission", "streaming"],
)
async def test_v1_cancel_mid_turn_answers_the_prompt_cancelled(
    v1_surface: AnySurface, holding: bool, text: str, started: Callable[[Any], bool]
) -> None:
    agent, client = echo_agent(v1_surface), recording_client(v1_surface, holding)
    async with pair(agent_v2=None, agent_v1=agent, client_v2=None, client_v1=client) as p:
        session_id = await new_v1_session(p.conn)
        response: list[v1.PromptResponse] = []

        async def prompt() -> None:
            response.append(await p.conn.v1_agent.session_prompt(prompt_v1(session_id, text)))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(prompt)
            await until(lambda: started(p.client))
            await p.conn.cancel(session_id)
        assert response[0].stop_reason == "cancelled"
        assert "tool_call completed" not in map(describe, p.client.log)


# --------------------------------------------------------------------------- subprocesses


CRASH_AT_ONCE = "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"
CRASH_ON_FIRST_LINE = "import sys; sys.stdin.readline(); sys.stderr.write('boom\\n'); sys.exit(3)"


@pytest.mark.parametrize(
    ("code", "delay"),
    [(CRASH_AT_ONCE, 0.0), (CRASH_AT_ONCE, 0.5), (CRASH_ON_FIRST_LINE, 0.0)],
    ids=["crashes-at-once", "already-dead", "crashes-on-initialize"],
)
async def test_crashed_agent_subprocess_reports_exit_code_and_stderr(
    code: str, delay: float
) -> None:
    async with open_agent(python(code), v2=ClientV2) as conn:
        await anyio.sleep(delay)
        with anyio.fail_after(5), pytest.raises(PeerExited) as caught:
            await conn.initialize(INIT_V2)
    assert caught.value.exit_code == 3
    assert "boom" in caught.value.stderr_tail


async def test_stderr_written_just_before_exit_is_in_the_tail() -> None:
    # A grandchild keeps stderr open a little, so the agent's last (unterminated) words are
    # read but not yet at EOF when the agent's exit is reported.
    code = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.5)'], "
        "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL); "
        "sys.stderr.write('last words'); sys.stderr.flush(); sys.exit(3)"
    )
    async with open_agent(python(code), v2=ClientV2) as conn:
        with pytest.raises(PeerExited) as caught:
            await conn.initialize(INIT_V2)
    assert caught.value.stderr_tail == "last words"


# The agent answers `initialize` with an error whose message reports two variables.
REPORT_ENV = """
import json, os, sys
request = json.loads(sys.stdin.readline())
found = [os.environ.get(name, "-") for name in ("ACPWIRE_TEST_INHERITED", "ACPWIRE_TEST_ADDED")]
error = {"code": -32000, "message": " ".join(found)}
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}), flush=True)
sys.stdin.read()
"""


async def test_agent_subprocess_keeps_the_callers_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACPWIRE_TEST_INHERITED", "from-parent")
    env = {"ACPWIRE_TEST_ADDED": "added"}
    async with open_agent(python(REPORT_ENV), v2=ClientV2, env=env) as conn:
        with pytest.raises(RpcError) as caught:
            await conn.initialize(INIT_V2)
    assert caught.value.message == "from-parent added"


async def test_echo_agent_subprocess_runs_a_v2_turn_over_stdio() -> None:
    command = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
    async with open_agent(command, v2=ClientV2, env=PYTHONPATH) as conn:
        session_id = await new_v2_session(conn)
        async with conn.subscribe(session_id) as updates:
            await conn.v2_agent.session_prompt(prompt_v2(session_id, "over stdio"))
            await until_idle(updates)
        assert describe(conn.client.log[-1]) == "state idle end_turn"
        assert "chunk stdio" in map(describe, conn.client.log)
