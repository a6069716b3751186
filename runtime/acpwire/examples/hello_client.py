"""Run one prompt turn against an ACP v2 agent and print what happens:

    python -m acpwire.examples.hello_client -- <agent command>
    python -m acpwire.examples.hello_client --url http://127.0.0.1:8000/acp [--http]

Without a command it starts `python -m acpwire.examples.hello_agent`; with `--url` it
connects to an agent served over the network (WebSocket; `--http`: Streamable HTTP).
"""

import os
import sys

import trio

from acp_schema import v2
from acpwire import PeerError, open_agent, open_remote


class HelloClient(v2.ClientBase):
    """Answers the agent's requests; the ones not overridden (fs, terminal) get -32601."""

    def __init__(self, agent: v2.AgentPeer) -> None:
        self.agent = agent

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        choice = next((o for o in params.options if o.kind == "allow_once"), params.options[0])
        print(f"permission: {params.title} -> {choice.name}")
        return v2.RequestPermissionResponse(
            outcome=v2.SelectedPermissionOutcome(option_id=choice.option_id)
        )


async def main(command: list[str], url: str = "", http: bool = False) -> None:
    if url:  # an agent served over the network
        connected = open_remote(url, v2=HelloClient, transport="http" if http else "websocket")
    else:
        connected = open_agent(command, v2=HelloClient)
    async with connected as conn:
        info = v2.Implementation(name="hello-client", version="1.0")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        agent = conn.v2  # typed for v2: `agent.peer` has the agent's methods
        session = await agent.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
        session_id = session.session_id
        async with agent.subscribe(session_id) as updates:  # this session's updates, in order
            prompt = v2.PromptRequest(session_id=session_id, prompt=[v2.TextContent(text="Hi")])
            await agent.peer.session_prompt(prompt)  # answered once the prompt is inserted
            async for update in updates:
                match update:
                    case v2.AgentMessageChunk(content=v2.TextContent(text=text)):
                        print(f"agent: {text}")
                    case v2.SessionStateUpdate(state="idle", stop_reason=reason):
                        print(f"turn ended: {reason}")
                        break
                    case v2.SessionStateUpdate(state=state):
                        print(f"state: {state}")
        try:  # an error the agent answers with is raised as PeerError
            prompt.session_id = "no-such-session"
            await agent.peer.session_prompt(prompt)
        except PeerError as error:
            print(f"{error.method} failed: {error.code} {error.message}")
        # session/close is optional: only when the agent advertised it (v2: `session`)
        capabilities = agent.initialize_response.capabilities
        if isinstance(capabilities, v2.AgentCapabilities) and capabilities.session:
            await agent.peer.session_close(v2.CloseSessionRequest(session_id=session_id))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
    elif sys.argv[1:2] == ["--url"]:
        trio.run(main, [], sys.argv[2], "--http" in sys.argv)
    else:
        command = sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:]
        trio.run(main, command or [sys.executable, "-m", "acpwire.examples.hello_agent"])
