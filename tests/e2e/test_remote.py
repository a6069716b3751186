"""Remote agents end to end: `open_remote` <-> `agent_app` served by Hypercorn, over
WebSocket and Streamable HTTP (HTTP/2 by prior knowledge, and over TLS), on every test loop."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_schema import v1, v2
from acpwire import (
    ConnectionClosed,
    RemoteConnectionError,
    RemoteOptions,
    agent_app,
    bearer_token,
    open_remote,
    open_session,
)
from acpwire.agent import turn_agents
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from acpwire.examples.hello_v1_agent import HelloV1Agent
from helpers.remote import Tls, served

pytestmark = pytest.mark.usefixtures("loop")

TRANSPORTS = ["websocket", "http"]
INFO = v2.Implementation(name="remote-test", version="1.0")


async def one_turn(conn: object) -> list[str]:
    """Initialize, open a session, run one prompt turn of the hello agent; what happened."""
    seen: list[str] = []
    assert isinstance(conn.initialize, object)  # type: ignore[attr-defined]
    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))  # type: ignore[attr-defined]
    agent = conn.v2  # type: ignore[attr-defined]
    session = await agent.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
    async with agent.subscribe(session.session_id) as updates:
        prompt = v2.PromptRequest(session_id=session.session_id, prompt=[v2.TextContent(text="Hi")])
        await agent.peer.session_prompt(prompt)
        async for update in updates:
            match update:
                case v2.AgentMessageChunk(content=v2.TextContent(text=text)):
                    seen.append(text.strip())
                case v2.SessionStateUpdate(state="idle", stop_reason=reason):
                    seen.append(f"idle:{reason}")
                    break
                case v2.SessionStateUpdate(state=state):
                    seen.append(state)
    await agent.peer.session_close(v2.CloseSessionRequest(session_id=session.session_id))
    return seen


TURN = ["running", "requires_action", "running", "Hello", "from", "acpwire!", "idle:end_turn"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_turn_over_each_profile(transport: str) -> None:
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url:
            async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                assert await one_turn(conn) == TURN


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_over_tls_streamable_http_negotiates_http2(transport: str, tmp_path: Path) -> None:
    tls = Tls.make(tmp_path)
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent), tls) as url:
            assert url.startswith("https://")
            async with open_remote(
                url,
                v2=HelloClient,
                transport=transport,
                verify=tls.client,  # type: ignore[arg-type]
            ) as conn:
                assert await one_turn(conn) == TURN


async def test_turns_over_http2_never_stall_behind_an_idle_event_stream(tmp_path: Path) -> None:
    """Three responses pending on one HTTP/2 connection (the idle connection-scoped stream, the
    session's stream, a POST) could leave a received `202` unread behind the idle stream's
    read under httpcore's lock (streams/event_connections.py): about one turn in two hung
    over TLS on trio. Each event stream now has a connection of its own."""
    tls = Tls.make(tmp_path)
    with anyio.fail_after(9):
        async with served(agent_app(HelloAgent), tls) as url:
            for _ in range(12):
                async with open_remote(
                    url,
                    v2=HelloClient,
                    transport="http",
                    verify=tls.client,  # type: ignore[arg-type]
                ) as conn:
                    assert await one_turn(conn) == TURN


async def test_v1_and_v2_on_one_server() -> None:
    class V1Client(v1.ClientBase):
        def __init__(self, agent: v1.AgentPeer) -> None:
            pass

    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent, v1=HelloV1Agent)) as url:
            async with open_remote(url, v1=V1Client, transport="http") as conn:
                answer = await conn.initialize(v1.InitializeRequest(protocol_version=1))
                assert answer.protocol_version == 1
            async with open_remote(url, v2=HelloClient) as conn:
                assert await one_turn(conn) == TURN


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_many_connections_each_its_own_agent(transport: str) -> None:
    app = agent_app(HelloAgent)
    with anyio.fail_after(9):
        async with served(app) as url:
            results: list[list[str]] = []

            async def client() -> None:
                async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                    results.append(await one_turn(conn))

            async with anyio.create_task_group() as tasks:
                for _ in range(10):
                    tasks.start_soon(client)
            assert results == [TURN] * 10
            await anyio.sleep(0.2)  # the last ones end as their DELETE / close arrives
            assert app.open_connections == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_bearer_token_is_sent_and_checked(transport: str) -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(authorize=bearer_token("s3cret")))
    with anyio.fail_after(8):
        async with served(app) as url:
            headers = {"Authorization": "Bearer s3cret"}
            async with open_remote(
                url, v2=HelloClient, transport=transport, headers=headers
            ) as conn:  # type: ignore[arg-type]
                assert await one_turn(conn) == TURN
            with pytest.raises(RemoteConnectionError) as refused:
                async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
            assert refused.value.status == 401
            assert url in str(refused.value) and "bearer token" in str(refused.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_unreachable_agent_is_named(transport: str) -> None:
    url = "http://127.0.0.1:9/acp"  # the discard port: nothing listens there
    with anyio.fail_after(5), pytest.raises(RemoteConnectionError) as failed:
        async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
            await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
    assert url in str(failed.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_dropped_connection_fails_calls_naming_the_url(transport: str) -> None:
    app = agent_app(HelloAgent)
    with anyio.fail_after(8):
        async with served(app) as url:
            with pytest.raises(ConnectionClosed) as dropped:
                async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                    agent = conn.v2
                    await agent.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
                    app.end_connections()  # the server drops it
                    await anyio.sleep(0.5)
                    await agent.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
            assert isinstance(dropped.value, RemoteConnectionError)
            assert url in str(dropped.value)
            ended = "closed the WebSocket" if transport == "websocket" else "ended the connection"
            assert ended in str(dropped.value)


async def test_sessions_of_serve_turns_are_loaded_on_a_new_connection() -> None:
    """A session outlives its connection (the store is the server's): reconnect, then
    `open_session` loads it with its history."""

    async def work(turn: object) -> str:
        await turn.say("echo")  # type: ignore[attr-defined]
        return "end_turn"

    agent_v2, agent_v1 = turn_agents(work, name="turns", version="1")
    with anyio.fail_after(9):
        async with served(agent_app(agent_v2, v1=agent_v1)) as url:
            async with open_remote(url, v2=HelloClient, transport="http") as conn:
                await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                opened = await open_session(conn.v2, cwd=os.getcwd())
                session_id = opened.session_id
                async with conn.v2.subscribe(session_id) as updates:
                    prompt = v2.PromptRequest(
                        session_id=session_id, prompt=[v2.TextContent(text="x")]
                    )
                    await conn.v2.peer.session_prompt(prompt)
                    async for update in updates:
                        if isinstance(update, v2.SessionStateUpdate) and update.state == "idle":
                            break
            async with open_remote(url, v2=HelloClient, transport="http") as conn:
                await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
                again = await open_session(conn.v2, cwd=os.getcwd(), session_id=session_id)
                assert (again.session_id, again.how) == (session_id, "resumed")
                said = [
                    block.text
                    for message in again.state.messages.values()
                    if message.role == "agent"
                    for block in message.content
                    if isinstance(block, v2.TextContent)
                ]
                assert said == ["echo"]


def test_the_readme_commands_serve_and_reach_the_hello_agent(tmp_path: Path) -> None:
    """`python -m acpwire.examples.hello_remote` and the hello client's `--url` (both
    profiles), as the README's "Remote agents" runs them."""
    import socket
    import subprocess
    import sys

    from helpers.processes import PYTHONPATH

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, **PYTHONPATH}
    server = [sys.executable, "-m", "acpwire.examples.hello_remote", "--bind", f"127.0.0.1:{port}"]
    with subprocess.Popen(server, env=env, stderr=subprocess.PIPE, text=True) as serving:
        try:
            assert serving.stderr is not None
            assert "Running on" in serving.stderr.readline()
            url = f"http://127.0.0.1:{port}/acp"
            for extra in ([], ["--http"]):
                client = [sys.executable, "-m", "acpwire.examples.hello_client", "--url", url]
                done = subprocess.run(
                    [*client, *extra], env=env, capture_output=True, text=True, timeout=30
                )
                assert done.returncode == 0, done.stderr
                assert "agent: acpwire! \nturn ended: end_turn\n" in done.stdout
                assert "session/prompt failed: -32002" in done.stdout
        finally:
            serving.terminate()
