"""Sessions that outlive connections, in a test: the turn the durability tests run (`story`,
with a gate to hold it mid-turn), a turn run by a client that stays connected
(`connected_turn`), a session opened again (`reopened`), and a session state `described`
as plain data to compare (the state classes have no equality of their own)."""

from __future__ import annotations

import os
from typing import Any

import anyio

import acp_schema
from acp_schema import surface_of, v2
from acpwire import (
    AgentRequests,
    AgentTurn,
    ClientConnection,
    SessionStore,
    StopReason,
    agent_app,
    open_session,
    prompt,
)
from acpwire.agent import AgentApp, turn_agents
from acpwire.client import SessionState
from helpers.constants import INIT_V1, INIT_V2
from helpers.lines import is_permission_request, selected, text_block
from helpers.raw import RawPeer, request
from helpers.surfaces import AnySurface, module

INFO = v2.Implementation(name="durable-test", version="1.0")
CWD = os.getcwd()


class Story:
    """A turn's work: a message, a tool call with content, the end of the message. With
    `gate` given it stops after the tool call's start until the gate is set (a cut lands
    there), and sets `ended` when done."""

    def __init__(self, gate: anyio.Event | None = None, own: dict[int, Any] | None = None) -> None:
        """`own`: an update of the agent's surface by protocol version, sent after the first
        words."""
        self.gate = gate
        self.own = own
        self.started = anyio.Event()
        self.ended = anyio.Event()

    async def __call__(self, turn: AgentTurn) -> StopReason:
        await turn.say("Reading")
        if self.own is not None:
            surface = surface_of(turn.client)  # type: ignore[attr-defined]
            assert surface is not None
            await turn.update(self.own[surface.protocol_version])  # type: ignore[attr-defined]
        call = await turn.tool_call("Read notes", kind="read", locations=["/repo/notes.txt"])
        await call.update(status="in_progress")
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        await call.stream("first line")
        await call.update(status="completed")
        await turn.say(" done.")
        self.ended.set()
        return "end_turn"


def described(state: SessionState) -> dict[str, Any]:
    """Everything the story's turn changes of a state, as plain data."""
    return {
        "messages": [
            (key, message.role, [getattr(block, "text", block) for block in message.content])
            for key, message in state.messages.items()
        ],
        "tool_calls": {
            key: (
                call.title,
                call.kind,
                call.status,
                [repr(item) for item in call.content],
                [repr(place) for place in call.locations],
            )
            for key, call in state.tool_calls.items()
        },
        "run": None if state.run is None else (state.run.state, state.run.stop_reason),
    }


async def initialized(conn: ClientConnection) -> None:
    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))


async def connected_turn(
    conn: ClientConnection, requests: AgentRequests
) -> tuple[str, SessionState]:
    """A new session and one turn of it, by a client that stays connected: its id and state."""
    opened = await open_session(conn.v2, cwd=CWD)
    params = v2.PromptRequest(session_id=opened.session_id, prompt=[v2.TextContent(text="go")])
    async with prompt(conn.v2, requests, params, state=opened.state) as turn:
        async for _ in turn:
            pass
    return opened.session_id, turn.state


async def reopened(conn: ClientConnection, session_id: str) -> SessionState:
    """The session resumed on a new connection, its history replayed and folded."""
    opened = await open_session(conn.v2, cwd=CWD, session_id=session_id)
    assert (opened.session_id, opened.how) == (session_id, "resumed")
    return opened.state


def story_app(
    work: Story, store: SessionStore | None, *, unstable: bool = False, **options: Any
) -> AgentApp:
    """An `agent_app` serving `work` by `turn_agents` over v2 and v1 (their unstable surfaces
    with `unstable`), recording into `store`."""
    agent, v1_agent = turn_agents(
        work,
        name="story",
        version="1",
        store=store,
        unstable=unstable,  # type: ignore[call-overload]
    )
    return agent_app(agent, v1=v1_agent, **options)


def own_update(surface: AnySurface) -> Any:
    """An update of the surface's own classes: `plan_removed` on an unstable surface (the
    stable ones lack it), a `session_info_update` on a stable one."""
    types = module(surface)
    if surface.unstable:
        return types.PlanRemoved(plan_id="p1")
    return types.SessionInfoUpdate(title="t")


def surface_story(unstable: bool) -> Story:
    """The story told by agents on the stable or unstable surfaces, with an update of the
    surface's own."""
    return Story(
        own={version: own_update(acp_schema.surface(version, unstable)) for version in (1, 2)}
    )


async def surface_turn(conn: ClientConnection, surface: AnySurface) -> tuple[str, Any]:
    """`connected_turn` by a client on any surface (initialized here): its session and state."""
    await conn.initialize(INIT_V2 if surface.protocol_version == 2 else INIT_V1)
    types, peer = module(surface), negotiated(conn, surface)
    opened = await open_session(peer, cwd=CWD)
    params = types.PromptRequest(
        session_id=opened.session_id, prompt=[types.TextContent(text="go")]
    )
    async with prompt(peer, AgentRequests(), params, state=opened.state) as turn:
        async for _ in turn:
            pass
    return opened.session_id, turn.state


async def surface_reopened(conn: ClientConnection, surface: AnySurface, session_id: str) -> Any:
    """`reopened` by a client on any surface (initialized here): v2 resumes, v1 loads."""
    await conn.initialize(INIT_V2 if surface.protocol_version == 2 else INIT_V1)
    opened = await open_session(negotiated(conn, surface), cwd=CWD, session_id=session_id)
    assert opened.session_id == session_id and opened.how in ("resumed", "loaded")
    return opened.state


def negotiated(conn: ClientConnection, surface: AnySurface) -> Any:
    return conn.v2 if surface.protocol_version == 2 else conn.v1


def surface_described(state: Any) -> dict[str, Any]:
    """What the surface story changes of a state of either version, as plain data (the
    unstable-only update it sends lands in `unknown`). The agent's messages only: a v1 load
    replays the prompt too, which a v1 client does not fold as it sends it."""
    return {
        "messages": [
            [getattr(block, "text", block) for block in message.content]
            for message in state.messages.values()
            if message.role == "agent"
        ],
        "tool_calls": sorted(repr(call.status) for call in state.tool_calls.values()),
        "title": state.title,
        "unknown": [repr(update) for update in state.unknown],
    }


async def finished_turn(peer: RawPeer, session_id: str, version: int) -> list[dict[str, Any]]:
    """Run one turn of the example agent, allowing its tool call; every message it sent."""
    await peer.send(
        request("p", "session/prompt", {"sessionId": session_id, "prompt": [text_block("hi")]})
    )
    sent: list[dict[str, Any]] = []
    while True:
        message = await peer.receive()
        if is_permission_request(message):
            await peer.send(selected(message, "allow"))
            continue
        sent.append(message)
        update = message.get("params", {}).get("update", {})
        if (message.get("id") == "p" and version == 1) or update.get("state") == "idle":
            return sent
