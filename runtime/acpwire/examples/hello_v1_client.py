"""Run one prompt turn against an ACP v1 agent and print what happens:

    python -m acpwire.examples.hello_v1_client -- <agent command>

Without a command it starts `python -m acpwire.examples.hello_v1_agent`. In v1 the
`session/prompt` response comes when the turn ends, after its `session/update` notifications.
"""

import os
import sys

import trio

from acp_schema import v1
from acpwire import open_agent


class HelloV1Client(v1.ClientBase):
    """Answers the agent's requests and notifications; other requests (fs, terminal) get -32601."""

    def __init__(self, agent: v1.AgentPeer) -> None:
        self.agent = agent

    async def session_update(self, params: v1.SessionNotification) -> None:
        match params.update:  # one of the `v1.SessionUpdate` variants
            case v1.AgentMessageChunk(content=v1.TextContent(text=text)):
                print(f"agent: {text}")
            case v1.ToolCall(title=title, status=status):
                print(f"tool call: {title} ({status})")
            case v1.ToolCallProgress(status=status) if status:
                print(f"tool call: {status}")

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        choice = next((o for o in params.options if o.kind == "allow_once"), params.options[0])
        print(f"permission: {choice.name}")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=choice.option_id)
        )


async def main(command: list[str]) -> None:
    async with open_agent(command, v1=HelloV1Client) as conn:
        info = v1.Implementation(name="hello-v1-client", version="1.0")
        await conn.initialize(v1.InitializeRequest(protocol_version=1, client_info=info))
        agent = conn.v1.peer  # typed for v1: the agent's methods
        new = v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[])
        session_id = (await agent.session_new(new)).session_id
        prompt = v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text="Hi")])
        response = await agent.session_prompt(prompt)  # the turn's updates were handled first
        print(f"turn ended: {response.stop_reason}")


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
    else:
        command = sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:]
        trio.run(main, command or [sys.executable, "-m", "acpwire.examples.hello_v1_agent"])
