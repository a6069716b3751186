"""The official Python SDK's remote server (PyPI agent-client-protocol[http]==0.12.1:
`acp.http.asgi.create_asgi_app`, Streamable HTTP and WebSocket) serving agent_v1.py's agent,
under Hypercorn's asyncio worker (HTTP/1.1, cleartext HTTP/2 by prior knowledge, WebSocket).

Usage: python remote_agent_v1.py
The first stdout line is {"url": "http://127.0.0.1:PORT/acp"}; it serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
from typing import Any

from acp import schema as s
from acp.http.asgi import create_asgi_app
from agent_v1 import InteropAgent
from hypercorn.asyncio import serve
from hypercorn.config import Config

log = logging.getLogger("py-remote-agent-v1")


class RemoteInteropAgent(InteropAgent):
    """agent_v1.py's agent without `session/close`: the SDK's HTTP server builds its
    connections without `use_unstable_protocol`, where 0.12.1 routes `session/close`."""

    async def initialize(self, protocol_version: int, **kwargs: Any) -> s.InitializeResponse:
        answer = await super().initialize(protocol_version, **kwargs)
        answer.agent_capabilities = s.AgentCapabilities()
        return answer


async def main() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{listener.detach()}"]
    config.accesslog = None
    app = create_asgi_app(lambda conn: RemoteInteropAgent())
    print(json.dumps({"url": f"http://127.0.0.1:{port}/acp"}), flush=True)
    stdin_closed = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(
        sys.stdin.fileno(), lambda: sys.stdin.buffer.read1(1 << 16) or stdin_closed.set()
    )
    await serve(app, config, shutdown_trigger=stdin_closed.wait)  # type: ignore[arg-type]


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[%(name)s] %(message)s")
    asyncio.run(main())
