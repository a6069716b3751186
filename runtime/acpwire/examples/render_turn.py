"""A client that renders a prompt turn and answers permission, for ACP v2 and v1 with the same
code: `python -m acpwire.examples.render_turn "<prompt>" -- <agent command>`. Reads are
allowed by policy; for any other tool it asks on stdin (an option id; anything else cancels)."""

import os
import sys

import trio

import acpwire
from acp_schema import v1, v2

requests = acpwire.AgentRequests(acpwire.Permissions(acpwire.approve_reads))  # others: asked


async def main(text: str, command: list[str]) -> None:
    async with acpwire.open_agent(command, v2=requests.v2_client, v1=requests.v1_client) as conn:
        info = v2.Implementation(name="render-turn", version="1.0")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        view, acp = (conn.v2, v2) if conn.protocol_version == 2 else (conn.v1, v1)
        session = await acpwire.open_session(view, cwd=os.getcwd())
        params = acp.PromptRequest(
            session_id=session.session_id, prompt=[acp.TextContent(text=text)]
        )
        async with acpwire.prompt(view, requests, params) as turn:  # events in wire order
            async for event in turn:
                if isinstance(event, acpwire.PermissionRequested):
                    ids = [option.option_id for option in event.request.options]
                    print(f"\n{' / '.join(ids)}? ", end="", flush=True)
                    answer = (await trio.to_thread.run_sync(sys.stdin.readline)).strip()
                    event.select(answer) if answer in ids else event.cancel()  # not approved
                elif isinstance(event, acpwire.SessionUpdateEvent):
                    if isinstance(event.update, v2.AgentMessageChunk | v1.AgentMessageChunk):
                        print(getattr(event.update.content, "text", ""), end="")
        calls = [f"{call.title}: {call.status}" for call in turn.state.tool_calls.values()]
        print(f"\n[{turn.stop_reason}]", *calls)  # the state the turn's updates folded into


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[3:])
