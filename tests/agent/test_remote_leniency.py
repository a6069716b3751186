"""Where the remote server accepts what the RFD's letter would refuse, because the message
says all it needs and a peer sends it so (tests/interop/README.md lists the peers): an
answer to a session's request without `Acp-Session-Id`, `session/load` / `session/resume`
without it (answered on the connection-scoped stream, as the RFD routes them)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acpwire import agent_app
from acpwire.examples.hello_agent import HelloAgent
from acpwire.streams.sse import SseParser
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

JSON = {"content-type": "application/json"}


def rpc(id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


async def next_event(chunks: Any, parser: SseParser, ready: list[bytes]) -> dict[str, Any]:
    while not ready:
        ready.extend(parser.feed(await chunks.__anext__()))
    return json.loads(ready.pop(0))  # type: ignore[no-any-return]


@pytest.mark.parametrize("method", ["session/resume", "session/load"])
async def test_loading_a_session_without_its_header_is_answered_on_the_connection_stream(
    method: str,
) -> None:
    with anyio.fail_after(8):
        async with served(agent_app(HelloAgent)) as url, raw_client() as client:
            init = rpc(0, "initialize", protocolVersion=2, info={"name": "raw", "version": "1"})
            answered = await client.post(url, json=init, headers=JSON)
            connection = answered.headers["acp-connection-id"]
            headers = {**JSON, "acp-connection-id": connection}
            stream_headers = {"accept": "text/event-stream", "acp-connection-id": connection}
            async with client.stream("GET", url, headers=stream_headers) as stream:
                chunks, parser, ready = stream.aiter_raw(), SseParser(1 << 20), []
                load = rpc(7, method, sessionId="s-elsewhere", cwd="/", mcpServers=[])
                posted = await client.post(url, json=load, headers=headers)
                assert posted.status_code == 202, posted.text
                answer = await next_event(chunks, parser, ready)
                assert answer["id"] == 7  # the hello agent keeps no sessions: an error
                prompt = rpc(8, "session/prompt", sessionId="s-elsewhere", prompt=[])
                refused = await client.post(url, json=prompt, headers=headers)
                assert refused.status_code == 400 and "Acp-Session-Id" in refused.text
