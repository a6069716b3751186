"""An asyncio application with an agent inside: one agent and session for the application's
life, prompts taken over TCP (a line in, the reply streamed back), all on the app's own loop:

    python -m acpwire.examples.asyncio_service 8765 -- <agent command>
    nc localhost 8765        # then type a prompt

acpwire brings no loop of its own: the same calls work in a Jupyter cell or a web app.
"""

import asyncio
import os
import sys

import acpwire
from acp_schema import v1, v2

requests = acpwire.AgentRequests(acpwire.Permissions(acpwire.approve_reads))


async def serve(command: list[str], port: int) -> None:
    async with acpwire.open_agent(command, v2=requests.v2_client, v1=requests.v1_client) as conn:
        info = v2.Implementation(name="asyncio-service", version="1.0")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        view, acp = (conn.v2, v2) if conn.protocol_version == 2 else (conn.v1, v1)
        session = await acpwire.open_session(view, cwd=os.getcwd())
        one_turn_at_a_time = asyncio.Lock()

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := (await reader.readline()).decode().strip():
                text = acp.TextContent(text=line)
                params = acp.PromptRequest(session_id=session.session_id, prompt=[text])
                async with one_turn_at_a_time, acpwire.prompt(view, requests, params) as turn:
                    async for event in turn:
                        if isinstance(event, acpwire.PermissionRequested):
                            event.select(event.request.options[0].option_id)  # the first
                        elif isinstance(event, acpwire.SessionUpdateEvent):
                            if isinstance(
                                event.update, v2.AgentMessageChunk | v1.AgentMessageChunk
                            ):
                                writer.write(getattr(event.update.content, "text", "").encode())
                                await writer.drain()
                writer.write(f"\n[{turn.stop_reason}]\n".encode())
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", port)
        port = server.sockets[0].getsockname()[1]
        print(f"serving {session.session_id} on port {port}", flush=True)
        async with server:
            await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) < 4 or not sys.argv[1].isdigit() or sys.argv[2] != "--":  # --help, ...
        print(__doc__)
    else:
        asyncio.run(serve(sys.argv[3:], int(sys.argv[1])))
