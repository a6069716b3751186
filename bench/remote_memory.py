"""What a remote server's clients cost it in memory, for bench/remote.py (also runs alone):

    python bench/remote_memory.py [--connections N]

- idle connections: the server's RSS before and after N WebSocket clients connected and
  initialized (each then holds its connection open and sends nothing), per connection: clients
  that offer no extension (as acpwire's client), and clients that offer permessage-deflate
  (as browsers do: Hypercorn accepts it, and each connection then holds zlib's state);
- the ceiling per slow stream: a client that prompts a turn streaming without end and then
  stops reading (a WebSocket whose client reads nothing; a Streamable HTTP session stream that
  was opened and is never read). The server's bounded outgoing queue (back-pressure on the
  socket, `RemoteOptions.max_stream_bytes` per event stream) should hold its RSS growth to
  that bound plus the kernel's socket buffers, whatever the turn streams; the growth is
  sampled for SLOW_SECONDS and its peak reported.

The clients are raw (the `websockets` library and httpx), in a process of their own
(`python bench/remote_memory.py --client MODE URL ...`), so only the server's memory is
measured, for any server: acpwire's echo agent on trio and asyncio, and the TypeScript SDK's
remote agent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

CONNECTIONS = 1_000
SLOW_SECONDS = 4.0
STREAMED = 10_000_000
"""Chunks the slow reader's turn asks for: far more than it ever reads."""
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}},
}


def rss(pid: int) -> int:
    """The process's resident set, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise ValueError(f"no VmRSS for {pid}")


def _request(id_: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


# ------------------------------------------------------------------ the clients (own process)


async def idle_clients(url: str, count: int, deflate: int = 0) -> None:
    """`count` WebSocket connections, each initialized, then held open; prints "ready".
    `deflate`: 1 to offer permessage-deflate."""
    from websockets.asyncio.client import connect

    sockets = []
    for _ in range(count):
        compression = "deflate" if deflate else None
        socket = await connect(
            url.replace("http://", "ws://"), max_size=None, compression=compression
        )
        await socket.send(json.dumps(INIT))
        await socket.recv()
        sockets.append(socket)
    print("ready", flush=True)
    await asyncio.sleep(3600)


async def slow_websocket(url: str) -> None:
    """Prompts an endless turn over WebSocket, then reads nothing (the library stops reading
    the socket once a frame is queued)."""
    from websockets.asyncio.client import connect

    socket = await connect(url.replace("http://", "ws://"), max_queue=1, max_size=None)
    await socket.send(json.dumps(INIT))
    await socket.recv()
    await socket.send(_request(1, "session/new", {"cwd": "/"}))
    while True:
        answer = json.loads(await socket.recv())
        if answer.get("id") == 1:
            break
    prompt = [{"type": "text", "text": f"stream {STREAMED}"}]
    await socket.send(
        _request(
            2, "session/prompt", {"sessionId": answer["result"]["sessionId"], "prompt": prompt}
        )
    )
    print("ready", flush=True)
    await asyncio.sleep(3600)


async def slow_event_stream(url: str) -> None:
    """Prompts an endless turn over Streamable HTTP (HTTP/1.1), with the session's event
    stream opened and never read."""
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        answered = await client.post(url, content=json.dumps(INIT), headers=_json())
        connection = {"acp-connection-id": answered.headers["acp-connection-id"]}
        events = {**connection, "accept": "text/event-stream"}
        async with client.stream("GET", url, headers=events) as scoped:
            await client.post(
                url,
                content=_request(1, "session/new", {"cwd": "/"}),
                headers={**_json(), **connection},
            )
            session = ""
            async for line in scoped.aiter_lines():
                if line.startswith("data: "):
                    session = json.loads(line[6:])["result"]["sessionId"]
                    break
            ids = {**connection, "acp-session-id": session}
            async with client.stream("GET", url, headers={**events, **ids}):
                prompt = [{"type": "text", "text": f"stream {STREAMED}"}]
                params = {"sessionId": session, "prompt": prompt}
                body = _request(2, "session/prompt", params)
                await client.post(url, content=body, headers={**_json(), **ids})
                print("ready", flush=True)
                await asyncio.sleep(3600)


def _json() -> dict[str, str]:
    return {"content-type": "application/json"}


CLIENTS: dict[str, Callable[..., object]] = {
    "idle": idle_clients,
    "slow-websocket": slow_websocket,
    "slow-http": slow_event_stream,
}


# ------------------------------------------------------------------ the measurements


@dataclass
class Memory:
    """One server's figures (bytes)."""

    label: str
    per_idle_connection: float | None = None
    per_deflating_connection: float | None = None
    slow_websocket: tuple[int, int] | None = None
    slow_http: tuple[int, int] | None = None
    failures: list[str] | None = None


def _client(mode: str, url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--client", mode, url, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_ready(client: subprocess.Popen[str], timeout: float) -> None:
    assert client.stdout is not None
    started = time.monotonic()
    line = client.stdout.readline()
    if line.strip() != "ready":
        client.kill()
        _, err = client.communicate()
        raise ValueError(f"client failed: {err.strip()[-300:]}")
    if time.monotonic() - started > timeout:
        raise ValueError("client too slow")


def _settled_rss(pid: int) -> int:
    """RSS once it stopped moving (the server finished what the clients started)."""
    last = rss(pid)
    for _ in range(20):
        time.sleep(0.25)
        now = rss(pid)
        if abs(now - last) < 64 * 1024:
            return now
        last = now
    return last


def idle_connections(server_pid: int, url: str, count: int, deflate: bool = False) -> float:
    before = _settled_rss(server_pid)
    client = _client("idle", url, str(count), str(int(deflate)))
    try:
        _wait_ready(client, 300)
        after = _settled_rss(server_pid)
    finally:
        client.kill()
        client.wait()
    return (after - before) / count


def slow_reader(server_pid: int, url: str, mode: str) -> tuple[int, int]:
    """The server's peak RSS growth while one slow reader's turn streams: over the first half
    of SLOW_SECONDS, and over all of it (equal when the growth is bounded)."""
    before = _settled_rss(server_pid)
    client = _client(mode, url)
    try:
        _wait_ready(client, 60)
        peaks = []
        for _ in range(2):
            peak = before
            ends = time.monotonic() + SLOW_SECONDS / 2
            while time.monotonic() < ends:
                peak = max(peak, rss(server_pid))
                time.sleep(0.05)
            peaks.append(peak - before)
    finally:
        client.kill()
        client.wait()
    return peaks[0], max(peaks)


def report(rows: list[Memory], count: int, max_stream_bytes: int) -> list[str]:
    def mb(value: tuple[int, int] | None) -> str:
        if value is None:
            return f"{'-':>15}"
        return f"{value[0] / 1e6:7.2f} {value[1] / 1e6:7.2f}"

    half = SLOW_SECONDS / 2
    header = f"{'server':30} {'KB/idle conn':>12} {'+deflate':>8} {'slow ws MB':>15}"
    header += f" {'slow sse MB':>15}"
    lines = [
        f"memory: server RSS per idle WebSocket connection ({count:,} connected and "
        "initialized at once; +deflate: clients offering permessage-deflate); its peak "
        f"growth after {half:g} s and {SLOW_SECONDS:g} s while one slow reader's turn "
        "streams without end (a WebSocket not read; a Streamable HTTP session stream not "
        "read; the same two figures: bounded)",
        header,
        "-" * len(header),
    ]
    for row in rows:
        idle = row.per_idle_connection
        per = f"{idle / 1024:12.1f}" if idle else f"{'-':>12}"
        deflating = row.per_deflating_connection
        zlib = f"{deflating / 1024:8.1f}" if deflating else f"{'-':>8}"
        lines.append(f"{row.label:30} {per} {zlib} {mb(row.slow_websocket)} {mb(row.slow_http)}")
        for failure in row.failures or []:
            lines.append(f"  {row.label}: {failure}")
    lines.append(
        f"the bound of a slow event stream: RemoteOptions.max_stream_bytes "
        f"({max_stream_bytes / 1e6:.2f} MB) plus the socket buffers; a slow WebSocket: the "
        "socket buffers (the agent waits on the socket)"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    args = parser.parse_args()
    if args.client:
        mode, url, *rest = args.client
        asyncio.run(CLIENTS[mode](url, *map(int, rest)))  # type: ignore[arg-type]
        return
    from remote import memory_rows

    print("\n".join(memory_rows(args.connections)))


if __name__ == "__main__":
    main()
