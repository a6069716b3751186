"""A small ACP v2 agent over stdio: `python -m acpwire.examples.hello_agent`.

Each prompt is answered with a greeting, streamed in chunks, once the user allowed it.
"""

import itertools

import trio

from acp_schema import v2
from acpwire import PromptTurns, RpcError, StopReason, Turn, agent_capabilities, serve_agent


class HelloAgent(v2.AgentBase):
    """Override the methods you serve; every other request is answered -32601."""

    def __init__(self, client: v2.ClientPeer) -> None:
        self.turns = PromptTurns(client)  # runs the v2 prompt lifecycle for you
        self.sessions: set[str] = set()
        self.ids = itertools.count(1)

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2,
            info=v2.Implementation(name="hello-agent", version="1.0"),
            capabilities=agent_capabilities(HelloAgent),  # what the methods below implement
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        self.sessions.add(session_id)
        return v2.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        if params.session_id not in self.sessions:
            raise RpcError.resource_not_found(params.session_id)  # the error the client gets
        return await self.turns.start(params, self.greet)  # answered at once; the turn runs on

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)  # the turn then ends idle with "cancelled"

    async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        self.sessions.discard(params.session_id)
        return await self.turns.close(params.session_id)  # cancels the turn, then answers

    # Sessions end with the connection: there is none from an earlier one to list or resume.
    async def session_list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        return v2.ListSessionsResponse(sessions=[])

    async def session_resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        raise RpcError.resource_not_found(params.session_id)

    async def greet(self, turn: Turn) -> StopReason:
        """The turn's work: its updates go out between `running` and `idle`."""
        answer = await turn.request_permission(  # the session is `requires_action` meanwhile
            v2.RequestPermissionRequest(
                session_id=turn.session_id,
                title="Say hello?",
                options=[
                    v2.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                    v2.PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
        )
        outcome = answer.outcome
        if not (isinstance(outcome, v2.SelectedPermissionOutcome) and outcome.option_id == "yes"):
            return "refusal"
        for word in ("Hello", "from", "acpwire!"):
            await turn.say(word + " ")  # an agent_message_chunk update
        return "end_turn"


if __name__ == "__main__":
    trio.run(serve_agent, HelloAgent)
