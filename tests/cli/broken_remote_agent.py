"""broken_agent.py served over WebSocket, for `acpwire check --url`'s tests: `python -m
cli.broken_remote_agent` (in tests/, for `helpers`) prints `{"url": "ws://127.0.0.1:PORT/acp"}`
and serves until its stdin closes. A WebSocket to `/acp/DEFECT` runs `broken_agent.py DEFECT` (a new process per
connection, as the RFD's server runs a new ACP connection) and relays: each text frame is a
line to its stdin, each line of its stdout a text frame; when it exits, the socket is closed.
A raw ASGI app under Hypercorn (trio, `helpers.asgi_servers`), no acpwire: the defects are the
broken agent's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from helpers.asgi_servers import hypercorn_serving

BROKEN_AGENT = str(Path(__file__).with_name("broken_agent.py"))
EXIT_GRACE = 3.0

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "websocket" and scope["path"].startswith("/acp/"):
        await relay(scope["path"].removeprefix("/acp/"), receive, send)
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"WebSocket to /acp/DEFECT only"})


async def relay(defect: str, receive: Receive, send: Send) -> None:
    await receive()  # websocket.connect
    process = await trio.lowlevel.open_process(
        [sys.executable, BROKEN_AGENT, defect], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    await send({"type": "websocket.accept"})
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent_to_socket, process, send, nursery.cancel_scope)
            while (message := await receive())["type"] == "websocket.receive":
                if message.get("text") is not None:
                    try:
                        await process.stdin.send_all(message["text"].encode() + b"\n")
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await process.stdin.aclose()
            with trio.move_on_after(EXIT_GRACE):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def agent_to_socket(process: trio.Process, send: Send, scope: trio.CancelScope) -> None:
    assert process.stdout is not None
    buffer = b""
    async for chunk in process.stdout:
        *lines, buffer = (buffer + chunk).split(b"\n")
        for line in lines:
            await send({"type": "websocket.send", "text": line.decode()})
    await send({"type": "websocket.close", "code": 1000})
    scope.cancel()


async def main() -> None:
    async with hypercorn_serving(app) as url:
        print(json.dumps({"url": url.replace("http://", "ws://", 1)}), flush=True)
        await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)  # until it closes


if __name__ == "__main__":
    trio.run(main)
