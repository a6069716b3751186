"""A client that speaks ACP on its own stdio (the agent being whoever started it), for
`acpwire replay --as agent -- <client command>`: the hello client's session (initialize, a
session, the prompt "Hi" with its permission allowed, a prompt to an unknown session, the
close); `python stdio_client.py --no-close` leaves the close out."""

from __future__ import annotations

import sys

import trio

from acp_schema import v2
from acpwire import PeerError, connect
from acpwire.examples.hello_client import HelloClient
from acpwire.streams import stdio_stream


async def main(close: bool) -> None:
    async with connect(stdio_stream(), v2=HelloClient) as conn:
        info = v2.Implementation(name="stdio-client", version="1.0")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        agent = conn.v2
        session = await agent.peer.session_new(v2.NewSessionRequest(cwd="/"))
        async with agent.subscribe(session.session_id) as updates:
            prompt = v2.PromptRequest(
                session_id=session.session_id, prompt=[v2.TextContent(text="Hi")]
            )
            await agent.peer.session_prompt(prompt)
            async for update in updates:
                if isinstance(update, v2.SessionStateUpdate) and update.state == "idle":
                    print(f"turn ended: {update.stop_reason}", file=sys.stderr)
                    break
        prompt.session_id = "no-such-session"
        try:
            await agent.peer.session_prompt(prompt)
        except PeerError as error:
            print(f"{error.method} failed: {error.code}", file=sys.stderr)
        if close:
            await agent.peer.session_close(v2.CloseSessionRequest(session_id=session.session_id))


if __name__ == "__main__":
    trio.run(main, "--no-close" not in sys.argv)
