"""The remote server's limits on what clients leave behind: connections without a client are
ended after `idle_timeout` (logged; a WebSocket that dropped lingers that long, one closed
ends at once), the sessions of one connection are bounded (an error naming the limit), and
nothing leaks when many clients vanish mid-turn (tasks, file descriptors, memory)."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import tracemalloc
from functools import partial

import anyio
import msgspec._utils
import pytest

from acp_schema import v2
from acpwire import (
    AgentRequests,
    ConnectionClosed,
    MemorySessionStore,
    PeerError,
    RemoteOptions,
    open_remote,
    open_session,
    prompt,
)
from acpwire.agent import AgentApp, agent_app
from acpwire.agent.remote import serving
from acpwire.examples.hello_agent import HelloAgent
from helpers.constants import RAW_INITIALIZE
from helpers.durable import CWD, Story, initialized, story_app
from helpers.loops import run_async
from helpers.relay import relay
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

TRANSPORTS = ["websocket", "http"]
HTTP2 = {"websocket": True, "http": False}
"""Streamable HTTP over HTTP/1.1 where idle event streams would share one HTTP/2 connection:
what is tested is the server's, and httpcore can leave a 202 unread behind an idle stream's
read on a shared HTTP/2 connection (a client bug, fixed apart: its own test)."""


async def test_an_http_connection_without_a_client_is_ended_after_idle_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = agent_app(HelloAgent, remote=RemoteOptions(idle_timeout=0.3))
    with anyio.fail_after(8), caplog.at_level(logging.INFO, logger="acpwire"):
        async with served(app) as url, raw_client() as client:
            idle = (await client.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            watched = (await client.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            headers = {"accept": "text/event-stream", "acp-connection-id": watched}
            async with client.stream("GET", url, headers=headers) as events:
                assert events.status_code == 200
                await anyio.sleep(0.8)  # the stream is open: this one stays
                assert set(app._hub.connections) == {watched}
            ping = {"jsonrpc": "2.0", "method": "_ping", "params": {}}
            gone = await client.post(url, json=ping, headers={"acp-connection-id": idle})
            assert gone.status_code == 404
    assert f"ending remote ACP connection {idle}: no client for 0.3 s" in caplog.text


async def test_requests_keep_an_http_connection_and_idle_timeout_runs_from_the_last() -> None:
    """The idle timeout runs from the connection's last request or closed event stream: one
    that keeps sending (or keeps a stream open) for longer than `idle_timeout` stays, and
    is ended `idle_timeout` after it stopped (not before). (Over HTTP/1.1: with this HTTP/2
    client the server saw the closed stream still open, under Hypercorn 0.18.)"""
    app = agent_app(HelloAgent, remote=RemoteOptions(idle_timeout=1.0))
    ping = {"jsonrpc": "2.0", "method": "_ping", "params": {}}
    with anyio.fail_after(12):
        async with served(app) as url, raw_client(http2=False) as client:
            posting = (await client.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            streaming = (await client.post(url, json=RAW_INITIALIZE)).headers["acp-connection-id"]
            headers = {"accept": "text/event-stream", "acp-connection-id": streaming}
            async with client.stream("GET", url, headers=headers) as events:
                assert events.status_code == 200
                for _ in range(12):  # 2.4 s of requests, 0.2 s apart
                    await anyio.sleep(0.2)
                    sent = await client.post(url, json=ping, headers={"acp-connection-id": posting})
                    assert sent.status_code == 202
            await anyio.sleep(0.4)
            assert set(app._hub.connections) == {posting, streaming}  # not idle long enough
            with anyio.fail_after(3):
                while app._hub.connections:
                    await anyio.sleep(0.05)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_turn_outlives_its_client_for_idle_timeout(transport: str) -> None:
    """A client that leaves with no turn running ends its connection at once; one whose turn
    is running (it left, or dropped) leaves the connection running that turn for
    `idle_timeout` (the turn waits for a gate here, so it never ends by itself)."""
    story = Story(anyio.Event())
    app = story_app(story, MemorySessionStore(), remote=RemoteOptions(idle_timeout=1.0))
    requests = AgentRequests()
    with anyio.fail_after(8):
        async with served(app) as url:
            async with open_remote(url, v2=requests.v2_client, transport=transport) as conn:  # type: ignore[arg-type]
                await initialized(conn)
            await anyio.sleep(0.2)
            assert app.open_connections == 0  # nothing running: ended at once
            for cut in (False, True):
                async with relay(url) as (cutter, through):
                    with pytest.raises(ConnectionClosed) if cut else contextlib.nullcontext():
                        async with open_remote(
                            through, v2=requests.v2_client, transport=transport
                        ) as conn:  # type: ignore[arg-type]
                            await initialized(conn)
                            opened = await open_session(conn.v2, cwd=CWD)
                            params = v2.PromptRequest(
                                session_id=opened.session_id, prompt=[v2.TextContent(text="go")]
                            )
                            await conn.v2.peer.session_prompt(params)  # the turn starts
                            await story.started.wait()
                            if cut:
                                cutter.cut()
                                await initialized(conn)  # fails: the connection is gone
                            # else: leaves mid-turn without cancelling it
                    await anyio.sleep(0.2)
                    assert app.open_connections == 1  # its turn runs on, for now
                    await _until_no_connections(app, within=5)
                story.started = anyio.Event()


async def _until_no_connections(app: AgentApp, *, within: float) -> None:
    with anyio.fail_after(within):
        while app.open_connections:
            await anyio.sleep(0.05)


def _client() -> object:
    return AgentRequests().v2_client


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_sessions_per_connection_are_bounded(
    transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = story_app(Story(), None, remote=RemoteOptions(max_sessions_per_connection=2))
    with anyio.fail_after(8):
        async with served(app) as url:
            async with open_remote(
                url, v2=_client(), transport=transport, http2=HTTP2[transport]
            ) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                first = await open_session(conn.v2, cwd=CWD)
                await open_session(conn.v2, cwd=CWD)
                with pytest.raises(PeerError) as refused:
                    await open_session(conn.v2, cwd=CWD)
                assert refused.value.code == -32603 and refused.value.data == {"limit": 2}
                assert "2 sessions open, the server's limit" in str(refused.value)
                await conn.v2.peer.session_close(
                    v2.CloseSessionRequest(session_id=first.session_id)
                )
                await open_session(conn.v2, cwd=CWD)  # room again, and full again
                with pytest.raises(PeerError) as refused:  # resuming one opens it too
                    await open_session(conn.v2, cwd=CWD, session_id=first.session_id)
                assert refused.value.code == -32603
    assert "max_sessions_per_connection" in caplog.text


CLIENTS = 20
"""Clients that go at once in the leak test (each Streamable HTTP one holds three TCP
connections through the relay)."""
WAVES = 3
"""Waves of `CLIENTS` in the leak test: what one leaves behind adds up."""
KEEP_ALIVE_TIMEOUT = 4.0
"""Hypercorn's keep-alive timeout in the leak test (`serve_remote`'s is 30 s): longer than a
client's POST connection stays idle mid-turn here (a POST on a keep-alive connection the
server closes at that moment fails: httpx does not retry it)."""
LEAK_TIMEOUT = 90.0
"""Seconds for the leak test's waves (a sync test: beyond the 10 s of an async test; 5 to 15 s
over WebSocket, 25 to 40 s over Streamable HTTP (its idle timeout) on a shared 2-core machine)."""
PER_CLIENT = 400
"""Objects a vanished client may leave on the server: its session in the store (about 130
measured); its connection, agent and tasks would be thousands."""
BYTES_PER_CLIENT = 12 * 1024
"""Memory (tracemalloc) a vanished client may leave on the server: its session in the store
(about 5 KB measured, on either loop); one leaked `AgentStream` (a connection's byte stream)
adds about 20 KB, a whole connection with its agent and tasks far more."""


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _task_names(loop: str) -> list[str]:
    if loop == "trio":
        import trio

        def names(task: trio.lowlevel.Task) -> list[str]:
            nested = [names(child) for n in task.child_nurseries for child in n.child_tasks]
            return [task.name, *(name for group in nested for name in group)]

        return names(trio.lowlevel.current_root_task())  # type: ignore[arg-type]
    import asyncio

    return [task.get_name() + repr(task.get_coro()) for task in asyncio.all_tasks()]


def _tasks(loop: str) -> int:
    if loop == "trio":
        import trio

        def count(task: trio.lowlevel.Task) -> int:
            return 1 + sum(count(child) for n in task.child_nurseries for child in n.child_tasks)

        return count(trio.lowlevel.current_root_task())  # type: ignore[arg-type]
    import asyncio

    return len(asyncio.all_tasks())


@pytest.mark.parametrize("how", ["vanish", "leave"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_nothing_leaks_when_clients_vanish_or_leave_mid_turn(
    transport: str, how: str, loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many clients go mid-turn, all at once, in waves: they vanish (the network cut while
    the turn waits: no close frame, no DELETE) or leave (closing as they should, while their
    turn runs on). Once `idle_timeout` passed their connections, tasks and file descriptors
    are gone, and the objects and memory they held are given back. (Streamable HTTP over
    HTTP/1.1 (`HTTP2`): many HTTP/2 clients meet the httpcore hang above; and the HTTP/1.1
    sockets of the clients gone are Hypercorn's until its keep-alive timeout, 30 s in
    `serve_remote`, shortened here.)"""
    monkeypatch.setattr(serving, "KEEP_ALIVE_TIMEOUT", KEEP_ALIVE_TIMEOUT)
    run_async(partial(_clients_go_mid_turn, transport, how, loop), loop)


async def _clients_go_mid_turn(transport: str, how: str, loop: str) -> None:
    gate = anyio.Event()  # never set: every turn waits until its connection ends
    story = Story(gate)
    # a Streamable HTTP client has no stream open between its initialize and its first GET:
    # 0.3 s would reap some of 20 clients starting at once on a busy machine, and 2 s did
    # under a full CI run (tracemalloc slows every client down too)
    idle_timeout = 0.3 if transport == "websocket" else 5.0
    app = story_app(story, MemorySessionStore(), remote=RemoteOptions(idle_timeout=idle_timeout))
    requests = AgentRequests()

    async def client(through: str, leave: anyio.Event) -> None:
        with pytest.raises(ConnectionClosed) if how == "vanish" else contextlib.nullcontext():
            async with open_remote(
                through, v2=requests.v2_client, transport=transport, http2=HTTP2[transport]
            ) as conn:  # type: ignore[arg-type]
                await initialized(conn)
                opened = await open_session(conn.v2, cwd=CWD)
                params = v2.PromptRequest(
                    session_id=opened.session_id, prompt=[v2.TextContent(text="go")]
                )
                async with prompt(conn.v2, requests, params) as turn:
                    if how == "leave":
                        await leave.wait()  # and leave the turn running
                        return
                    async for _ in turn:
                        pass

    async def wave(url: str, clients: int) -> None:
        leave, story.started = anyio.Event(), anyio.Event()
        async with relay(url) as (cutter, through):
            async with anyio.create_task_group() as clients_group:
                for _ in range(clients):  # a client that leaves needs no relay
                    clients_group.start_soon(client, through if how == "vanish" else url, leave)
                with anyio.fail_after(15):  # a client stuck on its way in: named below
                    while app.open_connections < clients or not story.started.is_set():
                        await anyio.sleep(0.05)
                await anyio.sleep(0.2)  # every turn is waiting at the gate
                cutter.cut() if how == "vanish" else leave.set()
        await _until_no_connections(app, within=idle_timeout + 5)

    with anyio.fail_after(LEAK_TIMEOUT):
        # Hypercorn's ping task of a dropped socket ends at its next ping: soon, here
        async with served(app, websocket_ping_interval=0.1) as url:
            await wave(url, 3)  # warm up: imports, caches, the first connections' pools
            fds, tasks = _open_fds(), _tasks(loop)
            gc.collect()
            objects = len(gc.get_objects())
            tracemalloc.start()  # traces what is allocated from here on, and still held
            try:
                for _ in range(WAVES):
                    await wave(url, CLIENTS)
                assert app.open_connections == 0
                # the server's own tasks end soon after (load); Hypercorn's keep-alive ones later
                with anyio.move_on_after(3 + (KEEP_ALIVE_TIMEOUT if transport == "http" else 0)):
                    while _tasks(loop) > tasks or _open_fds() > fds:
                        await anyio.sleep(0.1)
                gc.collect()
                _, peak = tracemalloc.get_traced_memory()
                # msgspec builds a type's decoding info once, on first use: not the clients'
                snapshot = tracemalloc.take_snapshot().filter_traces(
                    [tracemalloc.Filter(False, msgspec._utils.__file__)]
                )
                kept = snapshot.statistics("lineno")
                held = sum(stat.size for stat in kept)
            finally:
                tracemalloc.stop()
            grown = len(gc.get_objects()) - objects
            assert _tasks(loop) <= tasks, f"tasks were left behind: {_task_names(loop)}"
            assert _open_fds() <= fds, "file descriptors were left open"
            gone = WAVES * CLIENTS
            assert grown < gone * PER_CLIENT, f"{grown} objects kept by {gone} clients gone"
            assert peak > CLIENTS * BYTES_PER_CLIENT  # the clients were there: not vacuous
            assert held < gone * BYTES_PER_CLIENT, (
                f"{held} bytes (of {peak} at the peak) kept by {gone} clients gone; most by "
                + "; ".join(map(str, kept[:5]))
            )
