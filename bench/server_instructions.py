"""Instructions per streamed WebSocket frame of the server process (callgrind): the figure
the machine's load does not move, for bench/remote.py's floor and acpwire-server rows.

    python bench/server_instructions.py [N] [--server SERVER...] [--only LABEL...]

For each pair (bench/remote.py's `floor` and `acpwire-server` rows, under the ASGI servers
`--server` names: by default Hypercorn on trio and on asyncio and `hypercorn-buffered`, its
trio worker with bench/hypercorn_buffered.py's writer), the server runs under
`valgrind --tool=callgrind` and the client that costs nothing (bench/remote_floor.py) streams
from it 200 chunks (a warm-up: imports, first connection), then 200 and then N chunks; the
server's instruction count (`callgrind_control -e Ir`, all threads) over the run of N less
the run of 200, divided by N - 200, is the cost of one frame, start-up and the connection's
set-up taken out. Needs valgrind (callgrind_control, vgdb) on Linux.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import subprocess
import tempfile

from remote import SERVERS, RemotePair, pairs, serve, stop
from remote_cpu import client_run
from remote_floor import BUFFERED

FEW = 200
DEFAULT_SERVERS = ("hypercorn", BUFFERED)
THREAD_TOTAL = re.compile(r"^\s*Th\s+\d+\s+([\d,]+)\s*$", re.MULTILINE)


def instructions(pid: int) -> int:
    """Instructions the process `pid` (under callgrind) executed so far, all threads."""
    shown = subprocess.run(
        ["callgrind_control", "-e", "Ir", str(pid)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    totals = THREAD_TOTAL.findall(shown)
    if not totals:
        raise ValueError(f"no instruction count in callgrind_control's output: {shown!r}")
    return sum(int(total.replace(",", "")) for total in totals)


def per_frame(pair: RemotePair, count: int, out_dir: str) -> float:
    """The server's instructions per frame streamed (runs of `count` less `FEW` chunks)."""
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
        client_run(pair, url, "--stream", FEW)
        counts = [instructions(server.pid)]
        for chunks in (FEW, count):
            client_run(pair, url, "--stream", chunks)
            counts.append(instructions(server.pid))
    finally:
        stop(server)
    few, many = counts[1] - counts[0], counts[2] - counts[1]
    return (many - few) / (count - FEW)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", nargs="?", type=int, default=2_000)
    parser.add_argument("--server", nargs="+", choices=SERVERS, default=list(DEFAULT_SERVERS))
    parser.add_argument("--only", nargs="+", help="pairs whose label starts so")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
