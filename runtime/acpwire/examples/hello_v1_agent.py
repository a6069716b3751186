"""A small ACP v1 agent over stdio: `python -m acpwire.examples.hello_v1_agent`.

The v1 twin of hello_agent: each prompt is answered with a greeting once the user allowed it.
In v1 the `session/prompt` response carries the stop reason, and permission is asked for a
tool call.
"""

import itertools

import trio

from acp_schema import v1
from acpwire import RpcError, StopReason, V1PromptTurns, V1Turn, agent_capabilities, serve_agent


class HelloV1Agent(v1.AgentBase):
    """Override the methods you serve; every other request is answered -32601."""

    def __init__(self, client: v1.ClientPeer) -> None:
        self.turns = V1PromptTurns(client)  # runs each prompt's work as the request's turn
        self.sessions: set[str] = set()
        self.ids = itertools.count(1)

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="hello-v1-agent", version="1.0"),
            agent_capabilities=agent_capabilities(HelloV1Agent),  # session/close: see below
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"session-{next(self.ids)}"
        self.sessions.add(session_id)
        return v1.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        if params.session_id not in self.sessions:
            raise RpcError.resource_not_found(params.session_id)
        return await self.turns.start(params, self.greet)  # answered when the turn ends

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.turns.cancel(params.session_id)  # the prompt is then answered `cancelled`

    async def session_close(self, params: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
        self.sessions.discard(params.session_id)
        return await self.turns.close(params.session_id)  # optional in v1: advertised above

    async def greet(self, turn: V1Turn) -> StopReason:
        """The turn's work: its updates go out before the `session/prompt` response."""
        call = await turn.tool_call("Say hello")  # a `tool_call` update, status pending
        answer = await turn.request_permission(
            v1.RequestPermissionRequest(
                session_id=turn.session_id,
                tool_call=v1.ToolCallUpdate(tool_call_id=call.tool_call_id),
                options=[
                    v1.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                    v1.PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
        )
        outcome = answer.outcome
        if not (isinstance(outcome, v1.SelectedPermissionOutcome) and outcome.option_id == "yes"):
            await call.update(status="failed")
            return "refusal"
        for word in ("Hello", "from", "acpwire!"):
            await turn.say(word + " ")  # an agent_message_chunk update
        await call.update(status="completed")
        return "end_turn"


if __name__ == "__main__":
    trio.run(lambda: serve_agent(v1=HelloV1Agent))
