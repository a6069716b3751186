"""ACP v1 client of the official Python SDK's remote transports (PyPI
agent-client-protocol[http]==0.12.1: `acp.http.create_http_stream`, httpx, and
`acp.ws.create_websocket_stream`, websockets).

Usage: python remote_client_v1.py --url URL --transport http|websocket [--http2] [--stream N | --roundtrips N]
The SDK's own httpx client asks HTTP/2 by ALPN only, so over http:// it speaks HTTP/1.1;
`--http2` gives it a client that speaks HTTP/2 by prior knowledge.
Runs client_v1.py's scenario (or benchmark) against the agent at URL; the last stdout line is
its JSON summary; exit code 0 iff it says "ok": true.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import acp
import httpx
from acp.http import create_http_stream
from acp.ws import create_websocket_stream
from client_v1 import Args, InteropClient, scenario, summarized

log = logging.getLogger("py-remote-client-v1")


def option(argv: list[str], flag: str, default: str = "") -> str:
    return argv[argv.index(flag) + 1] if flag in argv else default


async def run(argv: list[str], summary: dict[str, Any]) -> None:
    url, transport = option(argv, "--url"), option(argv, "--transport", "http")
    args = Args(int(option(argv, "--stream", "0")), int(option(argv, "--roundtrips", "0")), [])
    if transport == "websocket":
        stream = await create_websocket_stream(url.replace("http://", "ws://", 1))
    elif "--http2" in argv:
        prior_knowledge = httpx.AsyncClient(http1=False, http2=True, timeout=httpx.Timeout(None))
        stream = create_http_stream(url, client=prior_knowledge)
    else:
        stream = create_http_stream(url)
    client = InteropClient()
    conn = acp.connect_to_agent(client, stream)
    try:
        await scenario(conn, client, args, summary)
    finally:
        await conn.close()


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[%(name)s] %(message)s")
    return summarized(lambda summary: run(sys.argv[1:], summary))


if __name__ == "__main__":
    sys.exit(main())
