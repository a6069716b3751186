"""Instructions per streamed WebSocket frame of the server process (callgrind): the figure
the machine's load does not move, for bench/remote.py's floor and acpwire-server rows.

    python bench/server_instructions.py [N] [--server SERVER...] [--only LABEL...]
    python bench/server_instructions.py --roundtrips M [--server SERVER...] [--baseline CHECKOUT]

For each pair (bench/remote.py's `floor` and `acpwire-server` rows, under the ASGI servers
`--server` names: by default Hypercorn on trio and on asyncio and `hypercorn-buffered`, its
trio worker with bench/hypercorn_buffered.py's writer), the server runs under
`valgrind --tool=callgrind` and the client that costs nothing (bench/remote_floor.py) streams
from it 200 chunks (a warm-up: imports, first connection), then 200 and then N chunks; the
server's instruction count (`callgrind_control -e Ir`, all threads) over the run of N less
the run of 200, divided by N - 200, is the cost of one frame, start-up and the connection's
set-up taken out. Needs valgrind (callgrind_control, vgdb) on Linux.

With `--roundtrips M`, the pairs are acpwire's v2 WebSocket pairs (its client,
`acpwire.fixtures.client`, on the server's loop; with `--baseline` another checkout's too) and
the runs are of 100 and M `session/new` round trips, each on a connection of its own after the
client's 100 warm-up ones: the server's instructions per round trip.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

from callgrind import instructions
from remote import SERVERS, RemotePair, baseline_pairs, pairs, serve, stop
from remote_cpu import client_run
from remote_floor import BUFFERED

FEW = 200
FEW_ROUND_TRIPS = 100
DEFAULT_SERVERS = ("hypercorn", BUFFERED)


def per_frame(
    pair: RemotePair, count: int, out_dir: str, mode: str = "--stream", few: int = FEW
) -> float:
    """The server's instructions per frame streamed (runs of `count` less `few` chunks), or
    per round trip (`mode` "--roundtrips")."""
    traced = dataclasses.replace(
        pair,
        server=[
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out_dir}/callgrind.%p",
            *pair.server,
        ],
    )
    server, url = serve(traced)
    try:
        client_run(pair, url, mode, few)
        counts = [instructions(server.pid)]
        for chunks in (few, count):
            client_run(pair, url, mode, chunks)
            counts.append(instructions(server.pid))
    finally:
        stop(server)
    few_run, many = counts[1] - counts[0], counts[2] - counts[1]
    return (many - few_run) / (count - few)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", nargs="?", type=int, default=2_000)
    parser.add_argument("--server", nargs="+", choices=SERVERS, default=list(DEFAULT_SERVERS))
    parser.add_argument("--only", nargs="+", help="pairs whose label starts so")
    parser.add_argument("--roundtrips", type=int, metavar="M", help="session/new round trips")
    parser.add_argument("--baseline", type=Path, help="with --roundtrips: another checkout too")
    args = parser.parse_args()
    if args.roundtrips is not None:
        round_trips(args)
        return
    if args.chunks <= FEW:
        parser.error(f"N must be more than {FEW}")
    chosen = [
        pair
        for pair in pairs(args.server)
        if pair.name in ("floor", "acpwire-server")
        and (not args.only or pair.label.startswith(tuple(args.only)))
    ]
    print(f"server instructions per WebSocket frame (callgrind; runs of {args.chunks:,} - {FEW})")
    with tempfile.TemporaryDirectory() as out_dir:
        for pair in chosen:
            print(f"{pair.label:62} {per_frame(pair, args.chunks, out_dir):12,.0f}", flush=True)


def round_trips(args: argparse.Namespace) -> None:
    """`--roundtrips M`: the server's instructions per `session/new` round trip."""
    if args.roundtrips <= FEW_ROUND_TRIPS:
        raise SystemExit(f"M must be more than {FEW_ROUND_TRIPS}")
    chosen = [
        pair
        for pair in [*pairs(args.server), *(baseline_pairs(args.baseline) if args.baseline else [])]
        if pair.name in ("acpwire", "baseline")
        and pair.protocol == 2
        and pair.profile == "websocket"
        and (not args.only or pair.label.startswith(tuple(args.only)))
    ]
    print(
        "server instructions per WebSocket session/new round trip "
        f"(callgrind; runs of {args.roundtrips:,} - {FEW_ROUND_TRIPS})"
    )
    with tempfile.TemporaryDirectory() as out_dir:
        for pair in chosen:
            count = per_frame(pair, args.roundtrips, out_dir, "--roundtrips", FEW_ROUND_TRIPS)
            print(f"{pair.label:62} {count:12,.0f}", flush=True)


if __name__ == "__main__":
    main()
