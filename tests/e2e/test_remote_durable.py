"""Sessions that outlive connections and servers (remote agents): a client leaves, comes back
with a new connection and resumes the session, and its folded state is the state of a client
that never left; over each profile, with the SQLite store, across a restart of the server
process; the server knows sessions from the store (its 404 rule on session streams)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_schema
from acp_schema import v2
from acpwire import (
    AgentRequests,
    ConnectionClosed,
    MemorySessionStore,
    SqliteSessionStore,
    open_remote,
    open_session,
    prompt,
)
from acpwire.client import SessionState
from helpers.clients import turn_client
from helpers.constants import RAW_INITIALIZE
from helpers.durable import (
    CWD,
    Story,
    connected_turn,
    described,
    initialized,
    reopened,
    story_app,
    surface_described,
    surface_reopened,
    surface_turn,
)
from helpers.processes import PYTHONPATH
from helpers.redis_server import redis_server
from helpers.relay import relay
from helpers.remote import raw_client, served
from helpers.surfaces import AnySurface

pytestmark = pytest.mark.usefixtures("loop")

TRANSPORTS = ["websocket", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_session_is_resumed_on_a_new_connection_as_it_was(
    transport: str, tmp_path: Path
) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    app = story_app(Story(), store)
    requests = AgentRequests()
    try:
        with anyio.fail_after(9):
            async with served(app) as url:
                async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                    await initialized(conn)
                    session_id, live = await connected_turn(conn, requests)
                async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                    await initialized(conn)
                    assert described(await reopened(conn, session_id)) == described(live)
        assert described(live)["run"] == ("idle", "end_turn")
    finally:
        store.close()


async def test_the_server_knows_sessions_from_its_store(tmp_path: Path) -> None:
    """A session-scoped stream of a session this server process never saw: 200 when its
    store has the session (a restart, another process), 404 otherwise."""
    path = tmp_path / "sessions.db"
    first = SqliteSessionStore(path)
    requests = AgentRequests()
    with anyio.fail_after(9):
        async with served(story_app(Story(), first)) as url:
            async with open_remote(url, v2=requests.v2_client) as conn:
                await initialized(conn)
                session_id, _ = await connected_turn(conn, requests)
        first.close()
        for store, status in ((SqliteSessionStore(path), 200), (None, 404)):
            async with served(story_app(Story(), store)) as url, raw_client() as client:
                answer = await client.post(url, json=RAW_INITIALIZE)
                headers = {
                    "accept": "text/event-stream",
                    "acp-connection-id": answer.headers["acp-connection-id"],
                    "acp-session-id": session_id,
                }
                async with client.stream("GET", url, headers=headers) as response:
                    assert response.status_code == status
            if store is not None:
                store.close()


SERVER = """
import sys
import anyio
from acpwire import SqliteSessionStore, serve_remote
from acpwire.agent import RedisSessionStore
from helpers.durable import Story, story_app, surface_story

where = sys.argv[1]
store = RedisSessionStore(where) if where.startswith("redis:") else SqliteSessionStore(where)
try:
    if len(sys.argv) > 3:  # the surfaces' story, served on them
        unstable = sys.argv[3] == "unstable"
        app = story_app(surface_story(unstable), store, unstable=unstable)
    else:
        app = story_app(Story(), store)
    anyio.run(lambda: serve_remote(app, bind=sys.argv[2]), backend="asyncio")
finally:
    store.close()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(db: Path | str, port: int, unstable: bool | None = None) -> subprocess.Popen[str]:
    """A server process on `port` with the SQLite store `db` (or the Redis server at a
    `redis://` URL); with `unstable` given, serving `surface_story` on the stable or the
    unstable surfaces."""
    return start_servers(db, [port], unstable)[0]


def start_servers(
    db: Path | str, ports: Iterable[int], unstable: bool | None = None
) -> list[subprocess.Popen[str]]:
    """`start_server` on each port, the processes starting side by side."""
    tests = str(Path(__file__).resolve().parents[1])
    env = {"PYTHONPATH": PYTHONPATH["PYTHONPATH"] + ":" + tests}
    surfaces = [] if unstable is None else ["unstable" if unstable else "stable"]
    servers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(SERVER),
                str(db),
                f"127.0.0.1:{port}",
                *surfaces,
            ],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for port in ports
    ]
    for server in servers:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert "Running on" in line, line + server.stderr.read()
    return servers


def stop(*servers: subprocess.Popen[str]) -> None:
    """Stops the servers side by side (gracefully: Hypercorn shuts down, the store closes)."""
    for server in servers:
        server.send_signal(signal.SIGTERM)
    for server in servers:
        try:
            server.wait(timeout=10)
        finally:
            server.kill()


async def test_sessions_outlive_a_restart_of_the_server_process(tmp_path: Path) -> None:
    """A session over each profile; the server process stops (gracefully: the store closes)
    and a new one starts on the same file; each session is resumed as it was."""
    db, port = tmp_path / "sessions.db", free_port()
    url = f"http://127.0.0.1:{port}/acp"
    requests = AgentRequests()
    sessions: dict[str, tuple[str, SessionState]] = {}
    server = start_server(db, port)
    try:
        with anyio.fail_after(9):
            for transport in TRANSPORTS:
                async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                    await initialized(conn)
                    sessions[transport] = await connected_turn(conn, requests)
    finally:
        stop(server)
    assert server.returncode == 0, server.stderr.read() if server.stderr else ""
    server = start_server(db, port)  # the same file, a new process
    try:
        with anyio.fail_after(9):
            for transport, (session_id, live) in sessions.items():
                async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                    await initialized(conn)
                    assert described(await reopened(conn, session_id)) == described(live)
    finally:
        stop(server)


async def test_two_server_processes_share_sessions_through_redis() -> None:
    """Scale-out: two server processes on one Redis store; a session opened through one is
    resumed through the other, over each profile."""
    requests = AgentRequests()
    with redis_server() as redis_url:
        ports = free_port(), free_port()
        servers = start_servers(redis_url, ports)
        try:
            first, second = (f"http://127.0.0.1:{port}/acp" for port in ports)
            with anyio.fail_after(9):
                for transport in TRANSPORTS:
                    async with open_remote(
                        first, v2=requests.v2_client, transport=transport
                    ) as conn:  # type: ignore[arg-type]
                        await initialized(conn)
                        session_id, live = await connected_turn(conn, requests)
                    async with open_remote(
                        second, v2=requests.v2_client, transport=transport
                    ) as conn:  # type: ignore[arg-type]
                        await initialized(conn)
                        assert described(await reopened(conn, session_id)) == described(live)
        finally:
            stop(*servers)


# each starts and stops server processes: Hypercorn's graceful shutdown alone takes ~3 s
SERVER_PROCESSES = pytest.mark.async_timeout(30)
UNSTABLE = pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])


@UNSTABLE
@SERVER_PROCESSES
async def test_sessions_of_any_surface_outlive_a_restart(unstable: bool, tmp_path: Path) -> None:
    """`turn_agents` on the stable or the unstable surfaces (then with the unstable-only
    `plan_removed`), over each version and profile: a session is resumed (v1: loaded) as it
    was after the server process restarted on the same SQLite file."""
    db, port = tmp_path / "sessions.db", free_port()
    url = f"http://127.0.0.1:{port}/acp"
    sessions: dict[tuple[AnySurface, str], tuple[str, Any]] = {}
    server = start_server(db, port, unstable)
    try:
        with anyio.fail_after(9):
            for surface, transport in surfaces_and_transports(unstable):
                async with open_remote(url, transport=transport, **client_of(surface)) as conn:  # type: ignore[call-overload]
                    sessions[surface, transport] = await surface_turn(conn, surface)
    finally:
        stop(server)
    server = start_server(db, port, unstable)  # the same file, a new process
    try:
        with anyio.fail_after(9):
            for (surface, transport), (session_id, live) in sessions.items():
                async with open_remote(url, transport=transport, **client_of(surface)) as conn:  # type: ignore[call-overload]
                    again = await surface_reopened(conn, surface, session_id)
                    assert surface_described(again) == surface_described(live)
                assert len(surface_described(live)["unknown"]) == int(unstable)
    finally:
        stop(server)


@UNSTABLE
@SERVER_PROCESSES
async def test_two_server_processes_share_sessions_of_any_surface_through_redis(
    unstable: bool,
) -> None:
    """As above, a session opened through one server process on Redis resumed (v1: loaded)
    through another."""
    with redis_server() as redis_url:
        ports = free_port(), free_port()
        servers = start_servers(redis_url, ports, unstable)
        try:
            first, second = (f"http://127.0.0.1:{port}/acp" for port in ports)
            with anyio.fail_after(9):
                for surface, transport in surfaces_and_transports(unstable):
                    client = client_of(surface)
                    async with open_remote(first, transport=transport, **client) as conn:  # type: ignore[call-overload]
                        session_id, live = await surface_turn(conn, surface)
                    async with open_remote(second, transport=transport, **client) as conn:  # type: ignore[call-overload]
                        again = await surface_reopened(conn, surface, session_id)
                    assert surface_described(again) == surface_described(live)
                    assert len(surface_described(live)["unknown"]) == int(unstable)
        finally:
            stop(*servers)


def surfaces_and_transports(unstable: bool) -> list[tuple[AnySurface, str]]:
    chosen = [acp_schema.surface(version, unstable) for version in (2, 1)]
    return [(surface, transport) for surface in chosen for transport in TRANSPORTS]


def client_of(surface: AnySurface) -> dict[str, Any]:
    """`open_remote`'s keyword for a client on `surface`."""
    return {f"v{surface.protocol_version}": turn_client(surface)}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_turn_cut_midway_runs_on_and_is_resumed_whole(transport: str) -> None:
    """The network drops mid-turn (no close frame, no DELETE): the turn runs on, recorded;
    the client reconnects, resumes the session, and its state is the state of a client that
    never lost the connection."""
    gate = anyio.Event()
    story = Story(gate)
    app = story_app(story, MemorySessionStore())
    requests = AgentRequests()
    with anyio.fail_after(9):
        async with served(app) as url:
            async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                gate.set()
                _, live = await connected_turn(conn, requests)  # the reference: never cut
            gate = story.gate = anyio.Event()
            story.started, story.ended = anyio.Event(), anyio.Event()
            async with relay(url) as (cutter, through):
                with pytest.raises(ConnectionClosed):
                    async with open_remote(
                        through, v2=requests.v2_client, transport=transport
                    ) as conn:  # type: ignore[arg-type]
                        await initialized(conn)
                        opened = await open_session(conn.v2, cwd=CWD)
                        session_id = opened.session_id
                        params = v2.PromptRequest(
                            session_id=session_id, prompt=[v2.TextContent(text="go")]
                        )
                        async with prompt(conn.v2, requests, params) as turn:
                            async for _ in turn:
                                if story.started.is_set():
                                    cutter.cut()  # mid-turn: the tool call is in progress
            gate.set()
            await story.ended.wait()  # the turn ran on without its client
            await anyio.sleep(0.1)  # its last updates recorded
            async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                assert described(await reopened(conn, session_id)) == described(live)
