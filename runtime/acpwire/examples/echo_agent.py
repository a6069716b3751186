"""An echo agent speaking ACP v2 and v1 over stdio: `python -m acpwire.examples.echo_agent`.

Each prompt is echoed back word by word as message chunks, with one tool call that asks
for permission first. A prompt containing "slow" streams slowly (so it can be cancelled
mid-turn); a prompt `stream N` sends N chunks as fast as possible (for benchmarks).
Sessions live as long as the connection; the agent keeps no conversation history, so
`session/resume` has nothing to replay, and `session/list` lists every session it has seen.
"""

from __future__ import annotations

import itertools
import re
from typing import TypeVar

import trio

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acpwire import __version__
from acpwire.agent import serve_agent
from acpwire.capabilities import agent_capabilities
from acpwire.lifecycle import PromptTurns, StopReason, Turn, V1PromptTurns

SLOW_DELAY = 0.05
STREAM = re.compile(r"^stream (\d+)$")


def prompt_text(blocks: list[v2.ContentBlock] | list[v1.ContentBlock]) -> str:
    return " ".join(b.text for b in blocks if isinstance(b, v2.TextContent | v1.TextContent))


def plan(text: str) -> tuple[list[str], float, int]:
    """The words to echo, the delay between chunks, and how many chunks to blast."""
    match = STREAM.match(text.strip())
    if match:
        return [], 0.0, int(match.group(1))
    return text.split() or ["(empty)"], SLOW_DELAY if "slow" in text else 0.0, 0


Info = TypeVar("Info", v2.SessionInfo, v1.SessionInfo)


def session_infos(
    info: type[Info],
    sessions: dict[str, str],
    params: v2.ListSessionsRequest | v1.ListSessionsRequest,
) -> list[Info]:
    """The sessions seen, in `params.cwd` when it is given (one page: no cursor)."""
    wanted = params.cwd if isinstance(params.cwd, str) else None
    return [
        info(session_id=session_id, cwd=cwd)
        for session_id, cwd in sessions.items()
        if wanted is None or cwd == wanted
    ]


class EchoAgentV2(v2.AgentBase):
    def __init__(self, client: v2.ClientPeer) -> None:
        self.client = client
        self.turns = PromptTurns(client)
        self.session_ids = itertools.count(1)
        self.sessions: dict[str, str] = {}  # session id -> cwd

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2,
            info=v2.Implementation(name="acpwire-echo", version=__version__),
            capabilities=agent_capabilities(EchoAgentV2),
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        session_id = f"sess_{next(self.session_ids)}"
        self.sessions[session_id] = params.cwd
        return v2.NewSessionResponse(session_id=session_id)

    async def session_list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        return v2.ListSessionsResponse(
            sessions=session_infos(v2.SessionInfo, self.sessions, params)
        )

    async def session_resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        self.sessions[params.session_id] = params.cwd
        # No history to replay; the current state goes out before the response (a MUST).
        update = v2.UpdateSessionNotification(
            session_id=params.session_id, update=v2.SessionStateUpdate(state="idle")
        )
        await self.client.session_update(update)
        return v2.ResumeSessionResponse()

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        return await self.turns.start(params, self.echo)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return await self.turns.close(params.session_id)

    async def echo(self, turn: Turn) -> StopReason:
        words, delay, blast = plan(prompt_text(turn.prompt))
        for i in range(blast):
            await turn.say(f"chunk {i} ")
        if blast:
            return "end_turn"
        call_id = turn.new_message_id("call")
        await turn.update(
            v2.ToolCallProgress(
                tool_call_id=call_id, title="Echo the prompt", kind="other", status="pending"
            )
        )
        answer = await turn.request_permission(
            v2.RequestPermissionRequest(
                session_id=turn.session_id,
                title="Echo the prompt back?",
                subject=v2.ToolCallPermissionSubject(
                    tool_call=v2.ToolCallUpdate(tool_call_id=call_id)
                ),
                options=[
                    v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    v2.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
        )
        allowed = isinstance(answer.outcome, v2.SelectedPermissionOutcome) and (
            answer.outcome.option_id == "allow"
        )
        if not allowed:
            await turn.update(v2.ToolCallProgress(tool_call_id=call_id, status="failed"))
            return "end_turn"
        await turn.update(v2.ToolCallProgress(tool_call_id=call_id, status="in_progress"))
        for word in words:
            await turn.say(word + " ")
            if delay:
                await trio.sleep(delay)
        await turn.update(
            v2.ToolCallContentChunk(
                tool_call_id=call_id,
                content=v2.Content(content=v2.TextContent(text=f"echoed {len(words)} words")),
            )
        )
        await turn.update(v2.ToolCallProgress(tool_call_id=call_id, status="completed"))
        return "end_turn"


class EchoAgentV1(v1.AgentBase):
    def __init__(self, client: v1.ClientPeer) -> None:
        self.client = client
        self.turns = V1PromptTurns(client)
        self.session_ids = itertools.count(1)
        self.sessions: dict[str, str] = {}  # session id -> cwd

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="acpwire-echo", version=__version__),
            agent_capabilities=agent_capabilities(EchoAgentV1),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"sess_{next(self.session_ids)}"
        self.sessions[session_id] = params.cwd
        return v1.NewSessionResponse(session_id=session_id)

    async def session_list(self, params: v1.ListSessionsRequest) -> v1.ListSessionsResponse:
        return v1.ListSessionsResponse(
            sessions=session_infos(v1.SessionInfo, self.sessions, params)
        )

    async def session_resume(self, params: v1.ResumeSessionRequest) -> v1.ResumeSessionResponse:
        self.sessions[params.session_id] = params.cwd
        return v1.ResumeSessionResponse()

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        async def work() -> v1.StopReason:
            return await self.echo(params.session_id, prompt_text(params.prompt))

        return v1.PromptResponse(stop_reason=await self.turns.run(params.session_id, work))

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
        return await self.turns.close(params.session_id)

    async def update(self, session_id: str, update: v1.SessionUpdate) -> None:
        await self.client.session_update(
            v1.SessionNotification(session_id=session_id, update=update)
        )

    async def say(self, session_id: str, text: str) -> None:
        await self.update(session_id, v1.AgentMessageChunk(content=v1.TextContent(text=text)))

    async def echo(self, session_id: str, text: str) -> v1.StopReason:
        words, delay, blast = plan(text)
        for i in range(blast):
            await self.say(session_id, f"chunk {i} ")
        if blast:
            return "end_turn"
        call = v1.ToolCall(tool_call_id="call_1", title="Echo the prompt", status="pending")
        await self.update(session_id, call)
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id=session_id,
                tool_call=v1.ToolCallUpdate(tool_call_id="call_1"),
                options=[
                    v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
        )
        if isinstance(answer.outcome, v1.CancelledPermissionOutcome):
            return "cancelled"
        allowed = answer.outcome.option_id == "allow"
        status: v1.ToolCallStatus = "in_progress" if allowed else "failed"
        await self.update(session_id, v1.ToolCallProgress(tool_call_id="call_1", status=status))
        if not allowed:
            return "end_turn"
        for word in words:
            await self.say(session_id, word + " ")
            if delay:
                await trio.sleep(delay)
        await self.update(
            session_id, v1.ToolCallProgress(tool_call_id="call_1", status="completed")
        )
        return "end_turn"


def main() -> None:
    trio.run(lambda: serve_agent(EchoAgentV2, v1=EchoAgentV1))


if __name__ == "__main__":
    main()
