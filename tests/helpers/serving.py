"""An agent and a client run in-process over `acpwire.testing` memory streams, through the
front door only (`serve_agent`, `connect`):

- `raw_client`: an agent served, the test its client in raw JSON lines (`session`: initialized,
  with session `sess_1`; `served_tool_agent`: the tool agent example, initialized);
- `raw_agent`: a typed client connection, initialized, the test its agent in raw JSON lines;
- `pair`: a served agent and a typed client, the bytes between them recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import msgspec

from acp_schema import Surface
from acpwire.agent import SessionStore, serve_agent, turn_agents
from acpwire.agent.turns import AnyWork
from acpwire.client import ClientConnection, connect
from acpwire.examples import tool_agent
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.testing import MemoryStream, memory_stream_pair
from helpers.clients import ClientV2, TurnClientV1, TurnClientV2, turn_client
from helpers.constants import INIT_V1, INIT_V2, RAW_INIT_V1, RAW_INIT_V2, SESSION
from helpers.loops import wait_all_tasks_blocked
from helpers.raw import RawPeer, response

# --------------------------------------------------------------------------- the test is the client


@asynccontextmanager
async def raw_client(
    agent: Callable[..., Any] | None = EchoAgentV2,
    *,
    v1: Callable[..., Any] | None = None,
    **options: Any,
) -> AsyncIterator[RawPeer]:
    """`serve_agent(agent, v1=v1, **options)` over an in-memory stream, talked to in raw JSON
    lines (not initialized)."""
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(partial(serve_agent, agent, v1=v1, stream=agent_end, **options))
        yield RawPeer(client_end)
        nursery.cancel_scope.cancel()


async def initialized_raw(peer: RawPeer) -> None:
    reply = await peer.call("init", "initialize", RAW_INIT_V2)
    assert reply["result"]["protocolVersion"] == 2


@asynccontextmanager
async def session(
    agent: Callable[..., Any] | None = None, v1_agent: Callable[..., Any] | None = None
) -> AsyncIterator[RawPeer]:
    """`agent` served over an in-memory stream, initialized, with session `sess_1` (v1 when
    only `v1_agent` is given)."""
    v2_agent = None if v1_agent is not None else agent
    async with raw_client(v2_agent, v1=v1_agent) as peer:
        new: dict[str, Any] = {} if v1_agent is None else {"mcpServers": []}
        init = RAW_INIT_V2 if v1_agent is None else RAW_INIT_V1
        assert "result" in await peer.call("init", "initialize", init)
        reply = await peer.call("new", "session/new", {"cwd": "/repo", **new})
        assert reply["result"] == {"sessionId": SESSION}
        yield peer


@asynccontextmanager
async def served_tool_agent(
    version: int,
    store: SessionStore | None = None,
    page_size: int = 50,
    *,
    work: AnyWork = tool_agent.work,
    unstable: bool = False,
) -> AsyncIterator[RawPeer]:
    """The tool agent example's work (or `work`) served by `turn_agents` (on the unstable
    surfaces with `unstable`; checking what it sends), initialized over `version`."""
    agent_v2, agent_v1 = turn_agents(
        work,
        name="tool-agent",
        version="1.0",
        store=store,
        page_size=page_size,
        unstable=unstable,  # type: ignore[call-overload]
    )
    async with raw_client(agent_v2, v1=agent_v1, check_outgoing=True) as peer:
        init = RAW_INIT_V2 if version == 2 else RAW_INIT_V1
        assert "result" in await peer.call("init", "initialize", init)
        yield peer


# --------------------------------------------------------------------------- the test is the agent


@asynccontextmanager
async def raw_agent(
    version: int = 2,
    client: Any = None,
    capabilities: dict[str, Any] | None = None,
    *,
    surface: Surface[Any, Any, Any, Any] | None = None,
    **options: Any,
) -> AsyncIterator[tuple[ClientConnection, RawPeer]]:
    """A client connection (`client`, by default TurnClientV2 / TurnClientV1), initialized over
    `version`, whose agent is written in raw JSON lines; it advertises `capabilities`.
    `surface`: the client's surface instead (its version, and by default `turn_client(surface)`).
    `options`: `connect`'s (`max_line_bytes=...`)."""
    if surface is not None:
        version = surface.protocol_version
        client = client or turn_client(surface)
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    factories: dict[str, Any] = (
        {"v2": client or TurnClientV2} if version == 2 else {"v1": client or TurnClientV1}
    )
    init: Any = INIT_V2 if version == 2 else INIT_V1
    result: dict[str, Any] = dict(RAW_INIT_V2) if version == 2 else {"protocolVersion": 1}
    if capabilities is not None:
        result["capabilities" if version == 2 else "agentCapabilities"] = capabilities
    async with (
        connect(client_end, **factories, **options) as conn,
        anyio.create_task_group() as nursery,
    ):
        nursery.start_soon(conn.initialize, init)
        message = await peer.receive()
        await peer.send(response(message["id"], result))
        await wait_all_tasks_blocked()
        yield conn, peer


# --------------------------------------------------------------------------- both typed


class Tap:
    """The client's stream, recording the bytes it sends and receives."""

    def __init__(self, inner: MemoryStream) -> None:
        self.inner = inner
        self.sent = bytearray()
        self.received = bytearray()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.sent += data
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.inner.receive_some(max_bytes)
        self.received += data
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


def messages(data: bytearray) -> list[Any]:
    return [msgspec.json.decode(line) for line in bytes(data).splitlines() if line.strip()]


@dataclass
class Pair:
    conn: ClientConnection
    wire: Tap

    @property
    def client(self) -> Any:
        return self.conn.client


@asynccontextmanager
async def pair(
    agent_v2: Callable[..., Any] | None = EchoAgentV2,
    agent_v1: Callable[..., Any] | None = None,
    *,
    client_v2: Callable[..., Any] | None = ClientV2,
    client_v1: Callable[..., Any] | None = None,
    serve: Callable[..., Coroutine[Any, Any, None]] = serve_agent,
) -> AsyncIterator[Pair]:
    """An agent served and a client connection over an in-memory stream. `serve` is called as
    `serve_agent` is: `serve(agent_v2, v1=agent_v1, stream=...)`."""
    agent_end, client_end = memory_stream_pair()
    wire = Tap(client_end)
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(partial(serve, agent_v2, v1=agent_v1, stream=agent_end))
        async with connect(wire, v2=client_v2, v1=client_v1) as conn:
            yield Pair(conn, wire)
        nursery.cancel_scope.cancel()
