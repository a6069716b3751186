"""Hypercorn's WebSocket floor for bench/remote.py: what Hypercorn itself costs per text frame
sent, with no ACP behind it and a client that costs next to nothing.

    python bench/remote_floor.py serve --loop trio|asyncio    # prints {"url": ...}
    python bench/remote_floor.py --stream N --url URL [--acp]  # prints a JSON summary

The server is a bare ASGI app under Hypercorn (the worker of the loop, the ping interval of
`serve_remote`): a text frame `N` asks for N text frames, each the line acpwire's echo agent
writes for chunk i of a streamed turn (`agent_message_chunk`), sent one `websocket.send` each
as fast as the app can, then the app closes the socket. The client is a blocking socket with
no event loop and no frame parsing: it sends the request and reads until the server closes
(client-timed, from the request to the close). acpwire's server does this and more (the ACP
endpoint, the agent's turn, encoding) per frame, so its streaming rate over WebSocket under
Hypercorn is at most this one.

With `--acp` the same client streams from an ACP agent instead (acpwire's echo agent under
`serve_remote`): `initialize` and `session/new`, then the prompt `stream N` (v2), timed until
the turn's end (the `state_update` with a stop reason) arrives: acpwire's server with a client
that costs nothing.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import socket
import time
import urllib.parse
from typing import Any

from acpwire.agent.remote.serving import WEBSOCKET_PING_INTERVAL

CHUNK = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    '{"sessionUpdate":"agent_message_chunk","messageId":"agent_user_1_0","content":'
    '{"type":"text","text":"chunk %d "}}}}'
)
"""The echo agent's line for one chunk of `stream N` (as it writes it)."""
LEAST_FRAME = len(CHUNK % 0) + 4  # + the header of an unmasked frame of 126 to 65535 bytes


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "websocket":
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    request = await receive()
    if request["type"] == "websocket.receive":
        for i in range(int(request["text"])):
            await send({"type": "websocket.send", "text": CHUNK % i})
    await send({"type": "websocket.close", "code": 1000})


def serve(loop: str) -> None:
    from hypercorn.config import Config

    listener = socket.create_server(("127.0.0.1", 0))
    print(json.dumps({"url": f"http://127.0.0.1:{listener.getsockname()[1]}/"}), flush=True)
    config = Config()
    config.bind = [f"fd://{listener.detach()}"]
    config.accesslog = None
    config.websocket_ping_interval = WEBSOCKET_PING_INTERVAL
    if loop == "trio":
        import hypercorn.trio
        import trio

        trio.run(hypercorn.trio.serve, app, config)  # type: ignore[arg-type]
    else:
        import asyncio

        import hypercorn.asyncio

        asyncio.run(hypercorn.asyncio.serve(app, config))  # type: ignore[arg-type]


def upgraded(url: str) -> tuple[socket.socket, bytes]:
    """A socket upgraded to a WebSocket at `url`, and what it read after the 101."""
    address = urllib.parse.urlsplit(url)
    sock = socket.create_connection((address.hostname, address.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {address.path} HTTP/1.1\r\nHost: {address.netloc}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(65536)
    if not head.startswith(b"HTTP/1.1 101"):
        raise SystemExit(f"upgrade refused: {head.splitlines()[0]!r}")
    return sock, head.split(b"\r\n\r\n", 1)[1]


def frame(text: str) -> bytes:
    """A masked text frame (client to server) of under 64 KiB."""
    payload, mask = text.encode(), os.urandom(4)
    size = (
        bytes([0x80 | len(payload)]) if len(payload) < 126 else b"\xfe" + len(payload).to_bytes(2)
    )
    return b"\x81" + size + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


def stream(url: str, count: int) -> dict[str, Any]:
    sock, rest = upgraded(url)
    started = time.perf_counter()
    sock.sendall(frame(str(count)))
    received = len(rest)
    while data := sock.recv(1 << 20):
        received += len(data)
    seconds = time.perf_counter() - started
    if received < count * LEAST_FRAME:
        raise SystemExit(f"{received} bytes received for {count} chunks")
    return {"ok": True, "protocolVersion": 2, "chunks": count, "seconds": seconds}


def request(id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def stream_acp(url: str, count: int) -> dict[str, Any]:
    sock, data = upgraded(url)
    info = {"name": "remote_floor", "version": "1"}
    sock.sendall(frame(request(0, "initialize", {"protocolVersion": 2, "info": info})))
    sock.sendall(frame(request(1, "session/new", {"cwd": "/", "mcpServers": []})))
    while (opened := re.search(rb'"id":1,"result":\{"sessionId":"([^"]+)"', data)) is None:
        data += sock.recv(65536)
    prompt = {
        "sessionId": opened[1].decode(),
        "prompt": [{"type": "text", "text": f"stream {count}"}],
    }
    started = time.perf_counter()
    sock.sendall(frame(request(2, "session/prompt", prompt)))
    end, tail, received = b'"stopReason":', b"", 0
    while end not in tail:
        data = sock.recv(1 << 20)
        if not data:
            raise SystemExit("the server closed the connection before the turn ended")
        received += len(data)
        tail = tail[-len(end) :] + data
    seconds = time.perf_counter() - started
    if received < count * LEAST_FRAME:
        raise SystemExit(f"{received} bytes received for {count} chunks")
    sock.close()
    return {"ok": True, "protocolVersion": 2, "chunks": count, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=["serve"])
    parser.add_argument("--loop", choices=["trio", "asyncio"], default="trio")
    parser.add_argument("--stream", type=int)
    parser.add_argument("--url")
    parser.add_argument("--transport", choices=["websocket"], default="websocket")
    parser.add_argument("--acp", action="store_true", help="stream from an ACP agent")
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.loop)
    elif args.stream is None or args.url is None:
        parser.error("--stream N --url URL (or serve)")
    else:
        print(json.dumps((stream_acp if args.acp else stream)(args.url, args.stream)))


if __name__ == "__main__":
    main()
