"""CPU time per streamed message of each process of bench/remote.py's WebSocket pairs, or
per `session/new` round trip of its acpwire pairs (`--roundtrips`): the steadier figure where
wall-clock rates and latencies swing with the machine's load.

    python bench/remote_cpu.py [N] [--rounds R] [--only LABEL...] [--baseline CHECKOUT]
    python bench/remote_cpu.py --roundtrips M [--rounds R] [--only LABEL...] [--baseline CHECKOUT]

For each pair (acpwire's v2 WebSocket pairs on trio and asyncio, under Hypercorn and under
uvicorn, or the ASGI servers `--server` names as in bench/remote.py (`hypercorn-buffered`:
Hypercorn's trio worker with bench/hypercorn_buffered.py's writer), and with `--baseline`
another checkout's; the floors and acpwire's server with the
client that costs nothing, bench/remote_floor.py), a fresh server streams 1,000 chunks (a
warm-up), 1,000 chunks again and then N chunks to a client process each; the CPU time (user + system) of the client process
(its rusage) and of the server (/proc/PID/stat, Linux) over the second run less the first,
divided by the N - 1,000 chunks more, is the cost of one message, start-up and the
connection's set-up taken out. Interleaved rounds, medians [min-max], in microseconds.

With `--roundtrips M`, the pairs are acpwire's v2 pairs over every profile (WebSocket,
Streamable HTTP/2 and HTTP/1.1) and the runs are of 100 and M `session/new` round trips (each
after the client's 100 warm-up ones): the cost of one round trip, in milliseconds; over
Streamable HTTP it includes the client opening the new session's event stream (a GET,
bench/remote.py), which the round trip does not wait for but both processes pay.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from remote import (
    PROFILES,
    RemotePair,
    add_server_option,
    baseline_pairs,
    pairs,
    serve,
    serves_remote,
    stop,
)
from stdio import INTEROP, interleaved

FEW = 1_000
FEW_ROUND_TRIPS = 100
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int) -> float:
    """Seconds of CPU time the process `pid` used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def client_run(pair: RemotePair, url: str, mode: str, count: int) -> float:
    """Seconds of CPU time one client process used streaming `count` chunks (`mode`
    "--stream") or making `count` round trips ("--roundtrips")."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [*pair.client, mode, str(count), "--url", url, *PROFILES[pair.profile][0]],
        cwd=INTEROP,
        env=pair.env,
        capture_output=True,
        check=True,
        timeout=600,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


@dataclass(frozen=True)
class Mode:
    """What a run does (the client's option), how many a short run does, and the unit."""

    option: str
    few: int
    what: str
    unit: str
    scale: float


STREAMING = Mode("--stream", FEW, "streamed message", "µs", 1e6)
ROUND_TRIPS = Mode("--roundtrips", FEW_ROUND_TRIPS, "session/new round trip", "ms", 1e3)


def measure(
    pair: RemotePair, mode: Mode, count: int, samples: dict[str, list[tuple[float, float]]]
) -> None:
    server, url = serve(pair)
    try:
        client_run(pair, url, mode.option, mode.few)  # the server's first connection: imports
        costs = []
        for runs in (mode.few, count):
            started = server_cpu(server.pid)
            client = client_run(pair, url, mode.option, runs)
            costs.append((client, server_cpu(server.pid) - started))
    finally:
        stop(server)
    (client_few, server_few), (client_all, server_all) = costs
    more = count - mode.few
    sample = (
        (client_all - client_few) / more * mode.scale,
        (server_all - server_few) / more * mode.scale,
    )
    samples[pair.label].append(sample)
    print(
        f"  {pair.label}: client {sample[0]:.2f} {mode.unit}, server {sample[1]:.2f} "
        f"{mode.unit} per {mode.what}"
    )


def streaming_pair(pair: RemotePair) -> bool:
    return pair.profile == "websocket" and pair.name in (
        "acpwire",
        "baseline",
        "floor",
        "acpwire-server",
    )


def roundtrip_pair(pair: RemotePair) -> bool:
    """acpwire's pairs under Hypercorn (`serve_remote`), every profile."""
    return pair.name in ("acpwire", "baseline") and serves_remote(pair)


def figure(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", nargs="?", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="pairs whose label starts so")
    parser.add_argument("--baseline", type=Path, help="another checkout: its pairs join in")
    parser.add_argument(
        "--roundtrips", type=int, help="CPU per session/new round trip instead, runs of M"
    )
    add_server_option(parser)
    args = parser.parse_args()
    mode, count = (ROUND_TRIPS, args.roundtrips) if args.roundtrips else (STREAMING, args.chunks)
    chosen = pairs(args.server) + (baseline_pairs(args.baseline) if args.baseline else [])
    chosen = [
        pair
        for pair in chosen
        if pair.protocol == 2
        and (roundtrip_pair(pair) if args.roundtrips else streaming_pair(pair))
        and (not args.only or pair.label.startswith(tuple(args.only)))
    ]
    samples: dict[str, list[tuple[float, float]]] = {pair.label: [] for pair in chosen}
    interleaved(chosen, args.rounds, lambda pair: measure(pair, mode, count, samples))
    print(
        f"\nCPU {mode.unit} per {mode.what} ({count:,} - {mode.few:,}), {args.rounds} "
        "rounds, median [min-max]"
    )
    print(f"{'pair':62} {'client':>18} {'server':>18}")
    for label, taken in samples.items():
        clients, servers = [c for c, _ in taken], [s for _, s in taken]
        print(f"{label:62} {figure(clients):>18} {figure(servers):>18}")


if __name__ == "__main__":
    main()
