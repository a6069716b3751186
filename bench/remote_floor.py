"""The ASGI servers' WebSocket floor for bench/remote.py: what Hypercorn (or uvicorn) itself
costs per text frame sent, with no ACP behind it and a client that costs next to nothing.

    python bench/remote_floor.py serve --loop trio|asyncio [--server SERVER] [--acp]
                                                               # prints {"url": ...}
    python bench/remote_floor.py --stream N --url URL [--acp]  # prints a JSON summary

The server is a bare ASGI app under Hypercorn (the worker of the loop, the ping interval of
`serve_remote`; `--server hypercorn-buffered`: its trio worker with the buffered TCP writer of
bench/hypercorn_buffered.py, a change proposed to Hypercorn and measured here), or with `--server uvicorn-<implementation>` under uvicorn (asyncio's own
loop, not uvloop, as Hypercorn's asyncio worker; its WebSocket implementation named:
`websockets-sansio`, the legacy `websockets` or `wsproto`; the same ping interval): a text
frame `N` asks for N text frames, each the line acpwire's echo agent writes for chunk i of a
streamed turn (`agent_message_chunk`), sent one `websocket.send` each as fast as the app can,
then the app closes the socket. `serve --acp` serves acpwire's echo agent instead (as
`echo_agent --serve` does, under the server named). The client is a blocking socket with no
event loop and no frame parsing: it sends the request and reads until the server's close
frame (client-timed, from the request to the close). acpwire's server does this and more (the
ACP endpoint, the agent's turn, encoding) per frame, so its streaming rate over WebSocket
under the same server is at most this one.

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

from acpwire import RemoteOptions
from acpwire.agent.remote.serving import WEBSOCKET_PING_INTERVAL

CHUNK = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    '{"sessionUpdate":"agent_message_chunk","messageId":"agent_user_1_0","content":'
    '{"type":"text","text":"chunk %d "}}}}'
)
"""The echo agent's line for one chunk of `stream N` (as it writes it)."""
CLOSE = b"\x88\x02\x03\xe8"
"""The server's close frame (unmasked, code 1000): no byte of it occurs in the text frames."""
UVICORN = ("uvicorn-websockets-sansio", "uvicorn-websockets", "uvicorn-wsproto")
"""uvicorn with each of its WebSocket implementations (`--server`)."""
BUFFERED = "hypercorn-buffered"
"""Hypercorn's trio worker with bench/hypercorn_buffered.py's writer (`--server`)."""
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


def echo_app() -> Any:
    """acpwire's echo agent as `echo_agent --serve` builds it."""
    from acpwire import agent_app
    from acpwire.fixtures.echo_agent import BENCH_SESSIONS, EchoAgentV1, EchoAgentV2

    remote = RemoteOptions(max_sessions_per_connection=BENCH_SESSIONS)
    return agent_app(EchoAgentV2, v1=EchoAgentV1, remote=remote)


def serve(loop: str, server: str, acp: bool) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(json.dumps({"url": f"http://127.0.0.1:{listener.getsockname()[1]}/acp"}), flush=True)
    served = echo_app() if acp else app
    if server.startswith("uvicorn-"):
        serve_uvicorn(served, listener, server.removeprefix("uvicorn-"))
    elif server == BUFFERED:
        import hypercorn_buffered

        hypercorn_buffered.install()
        serve_hypercorn(served, listener, "trio")
    else:
        serve_hypercorn(served, listener, loop)


def serve_uvicorn(served: Any, listener: socket.socket, ws: str) -> None:
    import asyncio

    import uvicorn

    config = uvicorn.Config(
        served,
        loop="asyncio",
        ws=ws,  # type: ignore[arg-type]
        ws_ping_interval=WEBSOCKET_PING_INTERVAL,
        ws_max_size=RemoteOptions().max_message_bytes,  # as serve_remote sets Hypercorn's
        lifespan="on",
        log_level="warning",
        access_log=False,
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[listener]))


def hypercorn_config(listener: socket.socket) -> Any:
    """Hypercorn's configuration serving on `listener` (which it then owns)."""
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"fd://{listener.detach()}"]
    config.accesslog = None
    config.websocket_ping_interval = WEBSOCKET_PING_INTERVAL
    return config


def serve_hypercorn(served: Any, listener: socket.socket, loop: str) -> None:
    config = hypercorn_config(listener)
    if loop == "trio":
        import hypercorn.trio
        import trio

        trio.run(hypercorn.trio.serve, served, config)
    else:
        import asyncio

        import hypercorn.asyncio

        asyncio.run(hypercorn.asyncio.serve(served, config))


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
    received, tail = len(rest), rest[-len(CLOSE) :]
    # until the close frame: uvicorn closes the socket only after the client's close frame
    # (or its close timeout), Hypercorn at once
    while CLOSE not in tail and (data := sock.recv(1 << 20)):
        received += len(data)
        tail = tail[-len(CLOSE) :] + data
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
    parser.add_argument(
        "--server", choices=["hypercorn", BUFFERED, *UVICORN], default="hypercorn", help="(serve)"
    )
    parser.add_argument("--stream", type=int)
    parser.add_argument("--url")
    parser.add_argument("--transport", choices=["websocket"], default="websocket")
    parser.add_argument(
        "--acp", action="store_true", help="stream from an ACP agent (serve: serve one)"
    )
    args = parser.parse_args()
    if args.mode == "serve":
        if args.server in UVICORN and args.loop != "asyncio":
            parser.error("uvicorn runs on asyncio only")
        if args.server == BUFFERED and args.loop != "trio":
            parser.error(f"{BUFFERED} is Hypercorn's trio worker: --loop trio")
        serve(args.loop, args.server, args.acp)
    elif args.stream is None or args.url is None:
        parser.error("--stream N --url URL (or serve)")
    else:
        print(json.dumps((stream_acp if args.acp else stream)(args.url, args.stream)))


if __name__ == "__main__":
    main()
