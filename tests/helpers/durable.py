"""Sessions that outlive connections, in a test: the turn the durability tests run (`story`,
with a gate to hold it mid-turn), a turn run by a client that stays connected
(`connected_turn`), a session opened again (`reopened`), and a session state `described`
as plain data to compare (the state classes have no equality of their own)."""

from __future__ import annotations

import os
from typing import Any

import anyio

from acp_schema import v2
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
from helpers.lines import is_permission_request, selected, text_block
from helpers.raw import RawPeer, request

INFO = v2.Implementation(name="durable-test", version="1.0")
CWD = os.getcwd()


class Story:
    """A turn's work: a message, a tool call with content, the end of the message. With
    `gate` given it stops after the tool call's start until the gate is set (a cut lands
    there), and sets `ended` when done."""

    def __init__(self, gate: anyio.Event | None = None) -> None:
        self.gate = gate
        self.started = anyio.Event()
        self.ended = anyio.Event()

    async def __call__(self, turn: AgentTurn) -> StopReason:
        await turn.say("Reading")
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


def story_app(work: Story, store: SessionStore | None, **options: Any) -> AgentApp:
    """An `agent_app` serving `work` by `turn_agents` over v2 and v1, recording into `store`."""
    agent, v1_agent = turn_agents(work, name="story", version="1", store=store)
    return agent_app(agent, v1=v1_agent, **options)


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
