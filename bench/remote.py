"""Remote benchmark: acpwire's server and client against the official SDKs' remote pairs, over
WebSocket and Streamable HTTP on loopback, side by side in one run.

    python bench/remote.py [N] [--roundtrips M] [--rounds R] [--quick] [--only LABEL...]
                           [--baseline CHECKOUT]

Each pair is a server process and a client process that connects to the URL the server prints:

- acpwire: `python -m acpwire.fixtures.echo_agent --serve 127.0.0.1:0` (`agent_app` under
  `serve_remote`, Hypercorn) and `python -m acpwire.fixtures.client --url URL` (`open_remote`),
  both on trio or both on asyncio; over WebSocket, Streamable HTTP/2 (cleartext, prior
  knowledge) and Streamable HTTP/1.1 (`--http1`);
- the TypeScript SDK 2.4.0 (v2): tests/interop/ts/remote_agent.mjs (`AcpServer`, Node adapter)
  and ts/client_v2.mjs `--url` (its experimental WebSocket client, and its HTTP client, which
  speaks HTTP/1.1: Node's fetch);
- the Python SDK 0.12.1 (v1, `[http]`): py/remote_agent_v1.py (its ASGI app under Hypercorn's
  asyncio worker) and py/remote_client_v1.py (websockets; httpx, which over http:// speaks
  HTTP/1.1: the SDK asks HTTP/2 by ALPN only), beside acpwire v1 on asyncio; its round trips
  over HTTP are not measured (`PY_SDK_SESSION_STREAMS`);
- Hypercorn's WebSocket floor (bench/remote_floor.py): a bare ASGI app streaming the same
  chunk lines under Hypercorn (trio, asyncio) to a client with no event loop: the most any
  ASGI app under Hypercorn streams (no round trips), and acpwire's server (trio, asyncio) with
  that client ("acpwire-server": what acpwire's server adds to Hypercorn's floor);
- on asyncio, the same under uvicorn (rows ending `uvicorn-<ws>`: its `websockets-sansio`,
  legacy `websockets` and `wsproto` implementations): acpwire's v2 WebSocket pair with its
  server under uvicorn, uvicorn's floor and acpwire's server with that client;
- with `--server hypercorn-buffered` (`--server` names the ASGI servers of acpwire's and the
  floor's rows; by default Hypercorn and uvicorn's three), the same on trio under Hypercorn's
  trio worker with the buffered TCP writer of bench/hypercorn_buffered.py (rows ending
  `hypercorn-buffered`; acpwire's server is `serve_remote` there too): the measurement of a
  change proposed to Hypercorn, not something acpwire ships;
- with `--baseline CHECKOUT`, acpwire's v2 pairs of another checkout, labelled "baseline".

The measurements are those of bench/stdio.py (streaming N chunks, client-timed; M sequential
`session/new` round trips after 100 warm-up ones, p50/p99), over interleaved rounds, medians;
each run against a fresh server; the round trips run again with the server and the client
pinned (bench/placement.py: on one CPU, and each on its own), compared in the same placement.
Over Streamable HTTP a client opens the new session's event
stream (a GET) as part of `session/new`, so the round trip includes opening a stream.
Ratios compare each pair with the TypeScript pair of the same profile (its HTTP/1.1 for either
HTTP row): issue 19's targets are >= 5x its streaming and a lower round-trip p50. The tables
are printed and written to bench/results/remote.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import remote_memory
from placement import PLACEMENTS, cpus, pinned, placed_table, unavailable
from remote_floor import BUFFERED, UVICORN
from stdio import (
    ENV,
    HAVE_NODE,
    HAVE_PY_SDK,
    INTEROP,
    PY,
    ROOT,
    add_run_options,
    environment,
    interleaved,
    node_version,
    parse_output,
    publish,
    spread,
    version,
)

from acpwire import RemoteOptions  # after stdio: it puts the checkout on sys.path

RESULTS = ROOT / "bench" / "results" / "remote.txt"
TIMEOUT = 600.0
SERVER_START = 30.0
STREAMING_TARGET = 5.0  # issue 19: >= 5x the TypeScript pair's streaming on each profile
LABEL = 62
PROFILES = {  # profile -> (the client's options, the TypeScript pair it is compared with)
    "websocket": (["--transport", "websocket"], "websocket"),
    "http/2": (["--transport", "http"], "http/1.1"),
    "http/1.1": (["--transport", "http", "--http1"], "http/1.1"),
}


PY_SDK_SESSION_STREAMS = (
    "its HTTP client opens an event stream per session on a connection of its own and hangs "
    "at httpx's pool limit (100) in a run of session/new requests"
)


@dataclass
class RemotePair:
    name: str
    protocol: int
    profile: str
    server: list[str]
    client: list[str]  # without --url and the transport options
    loop: str = ""
    server_name: str = ""  # an ASGI server other than Hypercorn (remote_floor.UVICORN)
    missing: str | None = None
    no_roundtrips: str | None = None  # why the round trips cannot be measured
    env: dict[str, str] = field(default_factory=lambda: ENV)
    rates: list[float] = field(default_factory=list)
    p50s: list[float] = field(default_factory=list)  # ms
    p99s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    placed: dict[str, list[float]] = field(default_factory=dict)  # placement: p50s (ms)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.protocol} {self.profile} {self.loop} {self.server_name}".strip()


def acpwire_pair(
    protocol: int, profile: str, loop: str, name: str = "acpwire", python: Sequence[str] = (PY,)
) -> RemotePair:
    """acpwire's pair; its server run by `python` (another interpreter, or PATCHED)."""
    server = [
        *python,
        "-m",
        "acpwire.fixtures.echo_agent",
        "--loop",
        loop,
        "--serve",
        "127.0.0.1:0",
    ]
    client = [PY, "-m", "acpwire.fixtures.client", "--loop", loop, "--protocol", str(protocol)]
    return RemotePair(name, protocol, profile, server, client, loop=loop)


def baseline_pairs(checkout: Path) -> list[RemotePair]:
    """acpwire's v2 pairs run from another checkout."""
    env = environment(checkout.resolve())
    made = [acpwire_pair(2, p, loop, "baseline") for loop in ("trio", "asyncio") for p in PROFILES]
    for pair in made:
        pair.env = env
    return made


FLOOR = [PY, str(ROOT / "bench" / "remote_floor.py")]
PATCHED = [PY, str(ROOT / "bench" / "hypercorn_buffered.py")]
"""A command run with Hypercorn's trio worker patched (bench/hypercorn_buffered.py)."""
SERVERS = ("hypercorn", BUFFERED, *UVICORN)
"""The ASGI servers acpwire's and the floor's rows run under (`--server`)."""
DEFAULT_SERVERS = ("hypercorn", *UVICORN)


def add_server_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        nargs="+",
        choices=SERVERS,
        default=list(DEFAULT_SERVERS),
        help="the ASGI servers of acpwire's and the floor's rows (default: all but "
        f"{BUFFERED}, a change proposed to Hypercorn: bench/hypercorn_buffered.py)",
    )


def serves_remote(pair: RemotePair) -> bool:
    """Whether the pair's server is acpwire's `serve_remote` (Hypercorn, patched or not)."""
    return pair.server_name in ("", BUFFERED)


def buffered_pair(profile: str) -> RemotePair:
    """acpwire's pair (v2, trio) with `serve_remote` under Hypercorn's patched trio worker."""
    pair = acpwire_pair(2, profile, "trio", python=PATCHED)
    pair.server_name = BUFFERED
    return pair


def uvicorn_pairs(servers: Sequence[str] = UVICORN) -> list[RemotePair]:
    """acpwire's WebSocket pair (v2, asyncio) with its server under uvicorn, for each of
    uvicorn's WebSocket implementations."""
    made = []
    for server in servers:
        pair = acpwire_pair(2, "websocket", "asyncio")
        pair.server = [*FLOOR, "serve", "--loop", "asyncio", "--server", server, "--acp"]
        pair.server_name = server
        made.append(pair)
    return made


def floor_pairs(loop: str, server: str = "") -> list[RemotePair]:
    """The ASGI server's floor (Hypercorn's, or uvicorn's or the patched Hypercorn's with
    `server`), and acpwire's server under it, each with a client that costs nothing."""
    serving = [*FLOOR, "serve", "--loop", loop, *(["--server", server] if server else [])]
    if server == BUFFERED:
        acpwire = buffered_pair("websocket").server
    else:
        acpwire = [*serving, "--acp"] if server else acpwire_pair(2, "websocket", loop).server
    streaming_only = "streaming only"
    return [
        RemotePair(
            "floor",
            2,
            "websocket",
            serving,
            FLOOR,
            loop,
            server,
            no_roundtrips=streaming_only,
        ),
        RemotePair(
            "acpwire-server",
            2,
            "websocket",
            acpwire,
            [*FLOOR, "--acp"],
            loop,
            server,
            no_roundtrips=streaming_only,
        ),
    ]


def pairs(servers: Sequence[str] = DEFAULT_SERVERS) -> list[RemotePair]:
    """Every pair; acpwire's and the floor's under the ASGI servers named."""
    no_node = None if HAVE_NODE else "node or tests/interop/ts/node_modules missing"
    no_sdk = None if HAVE_PY_SDK else "agent-client-protocol[http] not installed"
    ts_server, ts_client = ["node", "ts/remote_agent.mjs"], ["node", "ts/client_v2.mjs"]
    py_server, py_client = [PY, "py/remote_agent_v1.py"], [PY, "py/remote_client_v1.py"]
    hypercorn_loops = ("trio", "asyncio") if "hypercorn" in servers else ()
    buffered = BUFFERED in servers
    uvicorn = [server for server in UVICORN if server in servers]
    return [
        *(acpwire_pair(2, profile, loop) for loop in hypercorn_loops for profile in PROFILES),
        *(buffered_pair(profile) for profile in PROFILES if buffered),
        *(
            acpwire_pair(1, profile, "asyncio")
            for profile in ("websocket", "http/1.1")
            if hypercorn_loops
        ),
        *(
            RemotePair("ts-sdk", 2, profile, ts_server, ts_client, missing=no_node)
            for profile in ("websocket", "http/1.1")
        ),
        RemotePair("python-sdk", 1, "websocket", py_server, py_client, missing=no_sdk),
        RemotePair(
            "python-sdk",
            1,
            "http/1.1",  # its client asks HTTP/2 only by ALPN: over http:// it speaks HTTP/1.1
            py_server,
            py_client,
            missing=no_sdk,
            no_roundtrips=PY_SDK_SESSION_STREAMS,
        ),
        *uvicorn_pairs(uvicorn),
        *(pair for loop in hypercorn_loops for pair in floor_pairs(loop)),
        *(floor_pairs("trio", BUFFERED) if buffered else []),
        *(pair for server in uvicorn for pair in floor_pairs("asyncio", server)),
    ]


def serve(pair: RemotePair, cpu: int | None = None) -> tuple[subprocess.Popen[str], str]:
    """The pair's server, started (pinned to `cpu` if given), and the URL its first line
    names."""
    server = subprocess.Popen(
        pair.server if cpu is None else pinned(pair.server, cpu),
        cwd=INTEROP,
        env=pair.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    first = server.stdout.readline()
    if not first:
        server.wait(SERVER_START)
        raise ValueError(f"the server exited ({server.returncode}) before printing its URL")
    return server, json.loads(first)["url"]


def stop(server: subprocess.Popen[str]) -> None:
    server.terminate()
    try:
        server.wait(5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def run_client(
    pair: RemotePair, mode: list[str], placement: str | None = None
) -> dict[str, object] | None:
    """One client run against a fresh server (`--stream N` / `--roundtrips M`), the two
    processes pinned as `placement` says (None: where the scheduler puts them): its summary,
    or None after recording the failure."""
    client_cpu, server_cpu = (None, None) if placement is None else cpus(placement)
    try:
        server, url = serve(pair, server_cpu)
        try:
            client = pair.client if client_cpu is None else pinned(pair.client, client_cpu)
            proc = subprocess.run(
                [*client, *mode, "--url", url, *PROFILES[pair.profile][0]],
                cwd=INTEROP,
                env=pair.env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        finally:
            stop(server)
        if proc.returncode != 0 or not proc.stdout.strip():
            raise ValueError(f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        protocol, summary = parse_output(proc.stdout)
        if protocol != pair.protocol:
            raise ValueError(f"protocol {protocol}; expected {pair.protocol}")
        return summary
    except (ValueError, KeyError, IndexError, SyntaxError, subprocess.TimeoutExpired) as exc:
        pair.failures.append(f"{' '.join(mode)}: {exc}")
        print(f"  {pair.label} {' '.join(mode)}: FAILED {exc}", file=sys.stderr)
        return None


def measure(pair: RemotePair, chunks: int, count: int, placements: list[str]) -> None:
    streamed = run_client(pair, ["--stream", str(chunks)])
    if streamed is not None:
        if streamed["chunks"] != chunks:
            pair.failures.append(f"{streamed['chunks']} chunks; expected {chunks}")
        else:
            pair.rates.append(chunks / float(streamed["seconds"]))  # type: ignore[arg-type]
            print(f"  {pair.label} stream: {pair.rates[-1]:,.0f} msgs/s", file=sys.stderr)
    if pair.no_roundtrips is not None:
        return
    for placement in [None, *placements]:
        timed = run_client(pair, ["--roundtrips", str(count)], placement)
        if timed is None:
            continue
        p50, p99 = float(timed["p50_ms"]), float(timed["p99_ms"])  # type: ignore[arg-type]
        if placement is None:
            pair.p50s.append(p50)
            pair.p99s.append(p99)
        else:
            pair.placed.setdefault(placement, []).append(p50)
        print(
            f"  {pair.label} round trips{f' on {placement}' if placement else ''}: "
            f"p50 {p50:.3f} ms, p99 {p99:.3f} ms",
            file=sys.stderr,
        )


def placed_trips(pairs: list[RemotePair]) -> list[str]:
    """The round-trip p50s with the server and the client pinned (bench/placement.py), each
    against the TypeScript pair of its profile in the same placement."""

    def versus(pair: RemotePair, placement: str, p50: float) -> str:
        """p50 vs ts-sdk"""
        profile = PROFILES[pair.profile][1]
        ts = [p.placed.get(placement) for p in pairs if p.name == "ts-sdk" and p.profile == profile]
        if not ts or not ts[0]:
            return f"{'-':>13}"
        return f"{ratio(statistics.median(ts[0]), p50):>13}"

    rows = [pair for pair in pairs if pair.no_roundtrips is None]
    return placed_table(rows, "pair", LABEL, "ms", ".3f", versus)


def typescript(pairs: list[RemotePair], pair: RemotePair, samples: str) -> float | None:
    """The median of the TypeScript pair `pair` is compared with."""
    profile = PROFILES[pair.profile][1]
    for other in pairs:
        if other.name == "ts-sdk" and other.profile == profile and getattr(other, samples):
            return statistics.median(getattr(other, samples))
    return None


def ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else "-"


def missing(pair: RemotePair, reason: str | None = None) -> str:
    reason = reason or pair.missing or f"failed: {pair.failures[-1].splitlines()[-1][:70]}"
    return f"{pair.label:{LABEL}} {'-':>13}  not measured: {reason}"


def report(pairs: list[RemotePair], chunks: int, count: int, rounds: int) -> str:
    stream_header = f"{'pair':{LABEL}} {'median msgs/s':>13} {'spread':>7} {'vs ts-sdk':>10}"
    trip_header = (
        f"{'pair':{LABEL}} {'p50 ms':>8} {'spread':>7} {'p99 ms':>8} {'p50 vs ts-sdk':>14}"
    )
    streaming, trips = [stream_header, "-" * len(stream_header)], [trip_header]
    trips.append("-" * len(trip_header))
    targets = []
    for pair in pairs:
        ts_rate, ts_p50 = typescript(pairs, pair, "rates"), typescript(pairs, pair, "p50s")
        if pair.rates:
            rate = statistics.median(pair.rates)
            streaming.append(
                f"{pair.label:{LABEL}} {rate:13,.0f} {spread(pair.rates)} {ratio(rate, ts_rate):>10}"
            )
        else:
            streaming.append(missing(pair))
        if pair.p50s:
            p50 = statistics.median(pair.p50s)
            trips.append(
                f"{pair.label:{LABEL}} {p50:8.3f} {spread(pair.p50s)} "
                f"{statistics.median(pair.p99s):8.3f} {ratio(ts_p50, p50) if ts_p50 else '-':>14}"
            )
        else:
            trips.append(missing(pair, pair.no_roundtrips))
        if pair.name == "acpwire" and pair.protocol == 2 and pair.rates and pair.p50s:
            if ts_rate is None or ts_p50 is None:
                targets.append(f"  {pair.label:{LABEL}} not checked (no TypeScript pair ran)")
                continue
            times, p50 = statistics.median(pair.rates) / ts_rate, statistics.median(pair.p50s)
            targets.append(
                f"  {pair.label:{LABEL}} streaming {times:5.1f}x "
                f"{'met' if times >= STREAMING_TARGET else 'MISSED':6}  p50 {p50:.3f} ms vs "
                f"{ts_p50:.3f} ms {'met' if p50 < ts_p50 else 'MISSED'}"
            )
    lines = [
        f"acpwire remote benchmark, {time.strftime('%Y-%m-%d %H:%M')}: {rounds} interleaved "
        "rounds, median per pair, loopback",
        f"python {platform.python_version()}, node {node_version()}, hypercorn "
        f"{version('hypercorn')}, httpx {version('httpx')}, h2 {version('h2')}, httpx-ws "
        f"{version('httpx-ws')}, agent-client-protocol {version('agent-client-protocol')}, "
        f"@agentclientprotocol/sdk 2.4.0; {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} CPUs",
        "",
        f"streaming: {chunks:,} agent_message_chunk updates per run",
        *streaming,
        "",
        f"round trips: {count:,} session/new requests per run, one after another (after 100 "
        "warm-up ones)",
        *trips,
        "ratio > 1: faster than the TypeScript pair of the same profile (HTTP/1.1 for both "
        "HTTP rows: its client has no HTTP/2). spread = (max - min) / median over the rounds.",
        "",
        "the same round trips with the server and the client pinned (bench/placement.py: the "
        "scheduler puts a free run in either mode)",
        *placed_trips(pairs),
        "",
        f"issue 19's targets: streaming >= {STREAMING_TARGET:g}x the TypeScript pair, "
        "round-trip p50 below it",
        *targets,
    ]
    failed = [f"  {pair.label}: {failure}" for pair in pairs for failure in pair.failures]
    if failed:
        lines += ["", "failed runs:", *failed]
    return "\n".join(lines)


def memory_rows(connections: int) -> list[str]:
    """bench/remote_memory.py's table: each server fresh for each measurement."""
    servers = [
        pair
        for pair in pairs()
        if pair.profile == "websocket"
        and pair.protocol == 2
        and pair.missing is None
        and pair.name in ("acpwire", "ts-sdk")
        and not pair.server_name
    ]
    rows = []
    for pair in servers:
        label = f"{pair.name} {pair.loop}".rstrip()
        row = remote_memory.Memory(label, failures=[])
        for name, mode in (
            ("per_idle_connection", "idle"),
            ("per_deflating_connection", "idle-deflate"),
            ("slow_websocket", "slow-websocket"),
            ("slow_http", "slow-http"),
        ):
            try:
                server, url = serve(pair)
            except ValueError as exc:
                row.failures.append(f"{name}: {exc}")  # type: ignore[union-attr]
                continue
            try:
                if mode.startswith("idle"):
                    deflate = mode == "idle-deflate"
                    setattr(
                        row,
                        name,
                        remote_memory.idle_connections(server.pid, url, connections, deflate),
                    )
                else:
                    setattr(row, name, remote_memory.slow_reader(server.pid, url, mode))
            except (ValueError, OSError, subprocess.SubprocessError) as exc:
                row.failures.append(f"{name}: {exc}")  # type: ignore[union-attr]
            finally:
                stop(server)
            print(f"  {label} {name}: {getattr(row, name)}", file=sys.stderr)
        rows.append(row)
    return remote_memory.report(rows, connections, RemoteOptions().max_stream_bytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(parser, chunks=20_000, roundtrips=1_000)
    parser.add_argument(
        "--connections",
        type=int,
        default=remote_memory.CONNECTIONS,
        help="idle WebSocket connections of the memory measurement (0: no memory table)",
    )
    parser.add_argument(
        "--baseline", type=Path, help="another checkout: its acpwire v2 pairs join in"
    )
    add_server_option(parser)
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.roundtrips, args.rounds = 2_000, 200, 1
        args.connections = min(args.connections, 100)
    runnable = pairs(args.server) + (baseline_pairs(args.baseline) if args.baseline else [])
    if args.only:
        runnable = [pair for pair in runnable if pair.label.startswith(tuple(args.only))]
    active = [pair for pair in runnable if pair.missing is None]
    placements = [p for p in PLACEMENTS if unavailable(p) is None]
    interleaved(
        active, args.rounds, lambda pair: measure(pair, args.chunks, args.roundtrips, placements)
    )
    text = report(runnable, args.chunks, args.roundtrips, args.rounds)
    if args.connections:
        text += "\n\n" + "\n".join(memory_rows(args.connections))
    publish(text, RESULTS)


if __name__ == "__main__":
    main()
