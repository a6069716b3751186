"""The floor under acpwire's Streamable HTTP/2 figures in bench/remote.py: the same libraries
(Hypercorn serving, httpx + h2 reading) with no ACP in between.

    python bench/http_floor.py [N] [--roundtrips M] [--rounds R] [--loop trio|asyncio] [--http1]

A server process runs a bare ASGI app under Hypercorn (`--serve`, as `serve_remote` configures
it: cleartext HTTP/2 by prior knowledge): `POST` without `Acp-Connection-Id` is answered 200
with one; any other `POST` puts a canned `session/new` answer on the connection's event stream
and is answered 202; `GET` opens an event stream: the connection's (`Acp-Connection-Id`
alone), a session's (it stays open, quiet), or with `X-Stream: N` N canned
`agent_message_chunk` events, written 32 to an ASGI body message, then the end.

The client process (`--client`) does what acpwire's client does on the wire, with httpx only:
POSTs on one HTTP/2 connection, each event stream on a connection of its own; streaming reads
N events (split at the blank line, no JSON decoding); a round trip POSTs, waits for the answer
on the connection's stream and opens the new session's stream (as acpwire's client does while
the next round trip goes on). Printed: msgs/s, round-trip p50/p99, and both processes' CPU
time (user + system) per message or round trip, the figure that holds on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
CHUNK = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello "}}}}'
)
PER_SEND = 32
WARM_UP = 100


# ------------------------------------------------------------------ the server (own process)


class FloorApp:
    def __init__(self) -> None:
        self.answers: tuple[
            anyio.abc.ObjectSendStream[bytes], anyio.abc.ObjectReceiveStream[bytes]
        ] = anyio.create_memory_object_stream[bytes](1000)

    async def __call__(self, scope: dict, receive, send) -> None:  # type: ignore[no-untyped-def]
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = dict(scope["headers"])
        if scope["method"] == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            if b"acp-connection-id" not in headers:
                await _respond(send, 200, b'{"jsonrpc":"2.0","id":0,"result":{}}', True)
                return
            request_id = json.loads(body)["id"]
            answer = b'{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"s%d"}}' % (
                request_id,
                request_id,
            )
            await self.answers[0].send(b"data: " + answer + b"\n\n")
            await _respond(send, 202, b"", False)
            return
        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
        }
        await send(start)
        if b"x-stream" in headers:
            event = b"data: " + CHUNK + b"\n\n"
            left = int(headers[b"x-stream"])
            while left:
                count = min(left, PER_SEND)
                left -= count
                await send({"type": "http.response.body", "body": event * count, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif b"acp-session-id" in headers:
            while (await receive())["type"] != "http.disconnect":
                pass
        else:
            async for data in self.answers[1]:
                await send({"type": "http.response.body", "body": data, "more_body": True})


async def _respond(send, status: int, body: bytes, connection: bool) -> None:  # type: ignore[no-untyped-def]
    headers = [(b"content-length", b"%d" % len(body))]
    if connection:
        headers.append((b"acp-connection-id", b"c1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def serve() -> None:
    from hypercorn.config import Config

    if anyio.get_current_task is None:  # pragma: no cover
        raise AssertionError
    config = Config()
    import socket

    listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
    port = listener.getsockname()[1]
    config.bind = [f"fd://{listener.detach()}"]
    config.keep_alive_timeout = 30.0
    config.keep_alive_max_requests = 1 << 40
    config.backlog = 1024
    config.accesslog = None
    print(json.dumps({"url": f"http://127.0.0.1:{port}/acp"}), flush=True)
    try:
        import sniffio

        library = sniffio.current_async_library()
    except ImportError:  # pragma: no cover
        library = "asyncio"
    if library == "trio":
        from hypercorn.trio import serve as run
    else:
        from hypercorn.asyncio import serve as run
    await run(FloorApp(), config)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the client (own process)


_TLS: list[object] = []


def _client(http1: bool) -> httpx.AsyncClient:
    """A client of its own connection; the TLS context built once (acpwire's is too: loading
    the CA bundle costs ~45 ms, over http:// as well)."""
    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return httpx.AsyncClient(http1=http1, http2=not http1, timeout=None, verify=_TLS[0])  # type: ignore[arg-type]


async def stream(url: str, count: int, http1: bool) -> dict[str, float]:
    async with _client(http1) as client:
        started = time.perf_counter()
        seen = 0
        pending = b""
        headers = {"accept": "text/event-stream", "acp-connection-id": "c1", "x-stream": str(count)}
        async with client.stream("GET", url, headers=headers) as response:
            async for chunk in response.aiter_raw():
                *events, pending = (pending + chunk).split(b"\n\n")
                seen += len(events)
        seconds = time.perf_counter() - started
    assert seen == count, (seen, count)
    return {"msgs_per_sec": count / seconds, "seconds": seconds}


async def roundtrips(url: str, count: int, http1: bool) -> dict[str, float]:
    async with _client(http1) as posts, anyio.create_task_group() as tasks:
        init = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'
        json_type = {"content-type": "application/json"}
        assert (await posts.post(url, content=init, headers=json_type)).status_code == 200
        answers = anyio.create_memory_object_stream[bytes](1000)
        headers = {"accept": "text/event-stream", "acp-connection-id": "c1"}
        tasks.start_soon(_read_events, url, headers, answers[0], http1)
        latencies = []
        for request_id in range(1, WARM_UP + count + 1):
            started = time.perf_counter()
            line = b'{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{}}' % request_id
            response = await posts.post(
                url, content=line, headers={**json_type, "acp-connection-id": "c1"}
            )
            assert response.status_code == 202
            answer = await answers[1].receive()
            session = json.loads(answer[6:])["result"]["sessionId"]
            tasks.start_soon(_read_events, url, {**headers, "acp-session-id": session}, None, http1)
            if request_id > WARM_UP:
                latencies.append((time.perf_counter() - started) * 1000)
        tasks.cancel_scope.cancel()
    latencies.sort()
    return {"p50_ms": statistics.median(latencies), "p99_ms": latencies[int(len(latencies) * 0.99)]}


async def _read_events(url: str, headers: dict[str, str], out, http1: bool) -> None:  # type: ignore[no-untyped-def]
    async with _client(http1) as client, client.stream("GET", url, headers=headers) as response:
        pending = b""
        async for chunk in response.aiter_raw():
            *events, pending = (pending + chunk).split(b"\n\n")
            for event in events:
                if out is not None:
                    await out.send(event)


# ------------------------------------------------------------------ the driver


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(loop: str, mode: str, count: int, http1: bool) -> dict[str, float]:
    me = [sys.executable, __file__, "--loop", loop]
    server = subprocess.Popen(
        [*me, "--serve"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["url"]
        server_before = cpu_of(server.pid)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = subprocess.run(
            [*me, "--client", mode, str(count), url, *(["--http1"] if http1 else [])],
            capture_output=True,
            text=True,
        )
        if client.returncode:
            raise RuntimeError(f"the client failed: {client.stderr.strip()[-800:]}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result: dict[str, float] = json.loads(client.stdout.strip().splitlines()[-1])
        result["client_cpu"] = (after.ru_utime + after.ru_stime) - (
            before.ru_utime + before.ru_stime
        )
        result["server_cpu"] = cpu_of(server.pid) - server_before
        return result
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", type=int, nargs="?", default=20_000)
    parser.add_argument("--roundtrips", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loop", choices=("trio", "asyncio"), default="trio")
    parser.add_argument("--http1", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=3, metavar=("MODE", "N", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        anyio.run(serve, backend=args.loop)
        return
    if args.client:
        mode, count, url = args.client
        work = stream if mode == "stream" else roundtrips
        print(json.dumps(anyio.run(work, url, int(count), args.http1, backend=args.loop)))
        return
    profile = "HTTP/1.1" if args.http1 else "HTTP/2"
    rates, per_msg, p50s, per_trip = [], [], [], []
    for _ in range(args.rounds):
        streamed = run_once(args.loop, "stream", args.chunks, args.http1)
        rates.append(streamed["msgs_per_sec"])
        per_msg.append((streamed["client_cpu"], streamed["server_cpu"]))
        timed = run_once(args.loop, "roundtrips", args.roundtrips, args.http1)
        p50s.append(timed["p50_ms"])
        per_trip.append((timed["client_cpu"], timed["server_cpu"]))
    trips = WARM_UP + args.roundtrips
    print(
        f"floor ({profile}, {args.loop}; Hypercorn + httpx, no ACP), {args.rounds} rounds, medians:\n"
        f"  streaming {args.chunks:,} events: {statistics.median(rates):,.0f} msgs/s; CPU per "
        f"message (whole process runs, start-up included): client "
        f"{statistics.median(c for c, _ in per_msg) / args.chunks * 1e6:.1f} us, server "
        f"{statistics.median(s for _, s in per_msg) / args.chunks * 1e6:.1f} us\n"
        f"  round trips ({args.roundtrips:,} after {WARM_UP} warm-up): p50 "
        f"{statistics.median(p50s):.3f} ms; CPU per round trip: client "
        f"{statistics.median(c for c, _ in per_trip) / trips * 1e3:.2f} ms, server "
        f"{statistics.median(s for _, s in per_trip) / trips * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
