"""One prompt turn of the hello agent (acpwire.examples.hello_agent) over a client connection,
for the remote tests that run it many times or behind other servers: `hello_turn(conn)`
initializes (v2), opens a session and prompts; it returns the message chunks' words and the
turn's end (`HELLO_TURN`); `said(conn)`, on an initialized connection, opens a session
(`open_session`) and returns the text chunks of one turn."""

from __future__ import annotations

import os

from acp_schema import v2
from acpwire import ClientConnection, open_session

INFO = v2.Implementation(name="hello-turns", version="1.0")
HELLO_TURN = ["Hello", "from", "acpwire!", "idle:end_turn"]


async def hello_turn(conn: ClientConnection) -> list[str]:
    await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
    agent = conn.v2
    session = await agent.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
    seen: list[str] = []
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
    return seen


async def said(conn: ClientConnection) -> list[str]:
    """One turn in a new session: the agent's text chunks, until it is idle."""
    opened = await open_session(conn.v2, cwd=os.getcwd())
    chunks: list[str] = []
    async with conn.v2.subscribe(opened.session_id) as updates:
        prompt = v2.PromptRequest(session_id=opened.session_id, prompt=[v2.TextContent(text="x")])
        await conn.v2.peer.session_prompt(prompt)
        async for update in updates:
            match update:
                case v2.AgentMessageChunk(content=v2.TextContent(text=text)):
                    chunks.append(text)
                case v2.SessionStateUpdate(state="idle"):
                    break
    return chunks
