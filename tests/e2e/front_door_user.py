"""A user's agent and client as the README writes them, every value annotated, importing acpwire
only through its public modules: tests/test_front_door.py checks it with `mypy --strict` and
runs it on both loops.

The agent side: a v2 agent on `PromptTurns` (`Turn`, `TurnToolCall`) with a v1 twin on
`V1PromptTurns` (`V1Turn`, `V1TurnToolCall`), and one work function for `serve_turns`
(`AgentTurn`, `ToolCallHandle`) over a session store of the user's own (`SessionStore`,
`StoredSession`). The client side: the typed views (`Negotiated`, `V1Negotiated`), a
subscription (`UpdateStream`), `open_session` (`Opened`), `prompt` (`TurnEvents`,
`V1TurnEvents`, `TurnEvent`, `V1TurnEvent`) and a permission policy (`Policy`, `Decision`,
`Verdict`).
"""

import itertools
from collections.abc import Callable, Iterable, Iterator

import anyio

from acp_schema import v1, v2
from acpwire import (
    AgentRequests,
    AgentTurn,
    AnyWork,
    Decision,
    Negotiated,
    Opened,
    PermissionChoice,
    PermissionContext,
    PermissionRequested,
    Permissions,
    Policy,
    PromptTurns,
    SessionState,
    SessionStore,
    SessionUpdateEvent,
    StopReason,
    StoredSession,
    ToolCallHandle,
    Turn,
    TurnEvent,
    TurnEvents,
    TurnToolCall,
    UpdateStream,
    V1Negotiated,
    V1PromptTurns,
    V1SessionState,
    V1Turn,
    V1TurnEvent,
    V1TurnEvents,
    V1TurnToolCall,
    Verdict,
    agent_capabilities,
    connect,
    open_session,
    prompt,
    serve_agent,
    serve_turns,
)
from acpwire.client import Message
from acpwire.errors import RpcError
from acpwire.streams import ByteStream
from acpwire.testing import memory_stream_pair

ASK: tuple[PermissionChoice, ...] = (
    PermissionChoice("go", "Go ahead", "allow_once"),
    PermissionChoice("stop", "Stop", "reject_once"),
)

# ------------------------------------------------------------------ the agent side


class NotesAgent(v2.AgentBase):
    """A v2 agent on the prompt lifecycle helpers."""

    def __init__(self, client: v2.ClientPeer) -> None:
        self.turns: PromptTurns = PromptTurns(client)
        self.ids: Iterator[int] = itertools.count(1)

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2,
            info=v2.Implementation(name="notes", version="1.0"),
            capabilities=agent_capabilities(NotesAgent),
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id=f"notes-{next(self.ids)}")

    async def session_list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        return v2.ListSessionsResponse(sessions=[])

    async def session_resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        raise RpcError.resource_not_found(params.session_id)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return await self.turns.close(params.session_id)

    async def work(self, turn: Turn) -> StopReason:
        call: TurnToolCall = await turn.tool_call("Read notes", kind="read", locations=["/n"])
        if await call.request_permission("Read /n?", ASK) != "go":
            return "refusal"
        await call.stream("first line")
        await call.update(status="completed")
        await turn.say(f"v2 read for {turn.prompt_text}")
        return "end_turn"


class NotesAgentV1(v1.AgentBase):
    """Its v1 twin."""

    def __init__(self, client: v1.ClientPeer) -> None:
        self.turns: V1PromptTurns = V1PromptTurns(client)

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="notes", version="1.0"),
            agent_capabilities=agent_capabilities(NotesAgentV1),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="notes-v1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.turns.cancel(params.session_id)

    async def work(self, turn: V1Turn) -> StopReason:
        call: V1TurnToolCall = await turn.tool_call("Read notes", kind="read")
        if await call.request_permission("Read?", ASK) != "go":
            return "refusal"
        await call.update(status="completed")
        await turn.say(f"v1 read for {turn.prompt_text}")
        return "end_turn"


class ListStore:
    """A session store of one's own: sessions in a list."""

    def __init__(self) -> None:
        self.kept: list[StoredSession] = []

    def add(self, session: StoredSession) -> None:
        self.kept.append(session)

    def get(self, session_id: str) -> StoredSession | None:
        return next((s for s in self.kept if s.session_id == session_id), None)

    def sessions(self) -> Iterable[StoredSession]:
        return self.kept

    def recorder(self, session_id: str) -> Callable[[v2.SessionUpdate | v1.SessionUpdate], object]:
        session = self.get(session_id)
        assert session is not None
        return session.history.append


async def edit(turn: AgentTurn) -> StopReason:
    """Work written once for both versions."""
    handle: ToolCallHandle = await turn.tool_call("Edit notes", kind="edit", locations=["/n"])
    if await handle.request_permission("Edit /n?") is None:
        return "cancelled"
    await handle.diff("/n", "old\n", "new\n")
    await handle.update(status="completed")
    await turn.say("edited")
    return "end_turn"


WORK: AnyWork = edit
STORE: SessionStore = ListStore()

# ------------------------------------------------------------------ the client side


def go_for_reads(context: PermissionContext) -> Decision:
    return "allow" if context.kind == "read" else "ask"


POLICY: Policy = go_for_reads


def agent_name(view: Negotiated) -> str:
    return view.initialize_response.info.name


def agent_text(message: Message[v2.ContentBlock] | Message[v1.ContentBlock]) -> str:
    return message.text() if message.role == "agent" else ""


def texts(state: SessionState | V1SessionState) -> list[str]:
    return [agent_text(message) for message in state.messages.values()]


def ended(turn: TurnEvents | V1TurnEvents) -> str:
    return f"[{turn.stop_reason}] " + " ".join(text for text in texts(turn.state) if text)


async def run_v2(view: Negotiated, requests: AgentRequests, log: list[str]) -> None:
    log.append(f"v2 agent {agent_name(view)}")
    opened: Opened[SessionState] = await open_session(view, cwd="/")
    text = v2.TextContent(text="notes")
    params = v2.PromptRequest(session_id=opened.session_id, prompt=[text])
    async with prompt(view, requests, params) as turn:
        events: TurnEvents = turn
        async for event in events:
            current: TurnEvent = event
            if isinstance(current, PermissionRequested):
                verdict: Verdict = requests.permissions.decide(current.request, turn.state)
                log.append(f"v2 asked: {verdict.decision}")
                current.select(current.request.options[0].option_id)
    log.append(ended(turn))
    updates: UpdateStream[v2.SessionUpdate]
    async with view.subscribe(opened.session_id) as updates:  # the README's client, by hand
        await view.peer.session_prompt(params)
        async for update in updates:
            if isinstance(update, v2.SessionStateUpdate) and update.state == "idle":
                log.append(f"by hand: {update.stop_reason}")
                break
    await view.peer.session_close(v2.CloseSessionRequest(session_id=opened.session_id))


async def run_v1(view: V1Negotiated, requests: AgentRequests, log: list[str]) -> None:
    opened: Opened[V1SessionState] = await open_session(view, cwd="/")
    text = v1.TextContent(text="notes")
    params = v1.PromptRequest(session_id=opened.session_id, prompt=[text])
    async with prompt(view, requests, params) as turn:
        events: V1TurnEvents = turn
        async for event in events:
            update: V1TurnEvent = event
            if isinstance(update, SessionUpdateEvent):
                continue
            if isinstance(update, PermissionRequested):
                update.select("go")
    log.append(ended(turn))


async def session(
    agent_stream: ByteStream, client_stream: ByteStream, version: int, log: list[str]
) -> None:
    requests = AgentRequests(Permissions(POLICY))
    async with anyio.create_task_group() as tasks:
        if version == 0:
            tasks.start_soon(
                lambda: serve_turns(WORK, name="edits", version="1.0", stream=agent_stream)
            )
        else:
            tasks.start_soon(lambda: serve_agent(NotesAgent, v1=NotesAgentV1, stream=agent_stream))
        async with connect(client_stream, v2=requests.v2_client, v1=requests.v1_client) as conn:
            info = v2.Implementation(name="user", version="1.0")
            if version == 1:
                await conn.initialize(v1.InitializeRequest(protocol_version=1))
                await run_v1(conn.v1, requests, log)
            else:
                await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
                await run_v2(conn.v2, requests, log)
        await client_stream.aclose()


async def main() -> list[str]:
    log: list[str] = []
    for version in (2, 1, 0):
        agent_stream, client_stream = memory_stream_pair()
        await session(agent_stream, client_stream, version, log)
    return log


if __name__ == "__main__":
    print(*anyio.run(main), sep="\n")
