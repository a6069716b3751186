"""The streaming client's work per update after a read, in one process: where its CPU time
goes (bench/streaming.py measures the whole process).

    python bench/client_path.py [--rounds R] [--baseline CHECKOUT]

The corpus's `session/update` lines (bench/streaming.py's file), written as an acpwire agent
writes them, cut into the 64 KiB reads the client makes; per update, thread CPU time, the
fastest of 9 passes over the reads:

- `split`: the tree's `LineReader.feed_block` over each read;
- `decode_lines`: msgspec's `decode_lines` of each read's block alone (part of the next);
- `receive_block`: `JsonRpcCore.receive_block` of each read's block (the proof that its lines
  are one message each, msgspec's `decode_lines`, the events), on the client's codec with
  the `session/update` direct route where the tree has one;
- `deliver`: each event to a `session_update` handler counting updates through the client's
  `UpdateRouter` (its direct route where the tree has one, else its dispatch), the handler's
  coroutine awaited, as the connection's reader does;
- `floor`: the floor reader's split and per-line decode (bench/stream_peers.py), for scale.

Each tree runs in a subprocess of its own (its `generated/` and `runtime/` on the path),
rounds interleaved; medians over the rounds with their spread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from report import ROOT, spread

HERE = Path(__file__).resolve().parent
READ_SIZE = 64 * 1024
PASSES = 9
PARTS = ("split", "decode_lines", "receive_block", "deliver", "floor")


def measure(updates_path: str) -> dict[str, float]:
    """In the child: the per-update CPU µs of each part, on the tree on sys.path."""
    import msgspec
    from msgspec import UNSET

    import acp_schema.v2 as v2
    from acp_schema import Notification
    from acpwire._wire.framing import LineBlock, LineReader
    from acpwire._wire.jsonrpc import Call, JsonRpcCore
    from acpwire.client.router import UpdateRouter

    encode = msgspec.json.Encoder().encode
    lines = Path(updates_path).read_bytes().splitlines()
    wire = b"".join(
        encode(Notification(method="session/update", params=v2.CLIENT_CODEC.decode(line).params))
        + b"\n"
        for line in lines
    )
    reads = [wire[at : at + READ_SIZE] for at in range(0, len(wire), READ_SIZE)]
    blocks = [
        item.data
        for read in reads
        for item in LineReader().feed_block(read)
        if type(item) is LineBlock
    ]
    spec = v2.CLIENT_CODEC.inbound["session/update"]
    core = JsonRpcCore(v2.CLIENT_CODEC)
    core.prepare()

    class Counting(v2.ClientBase):
        count = 0

        async def session_update(self, params: v2.UpdateSessionNotification) -> None:
            Counting.count += 1

    routes: Any = UpdateRouter().routing(lambda call: None, spec, Counting().session_update)
    if isinstance(routes, tuple):  # a direct route
        route, direct = routes
        core.switch_codec(v2.CLIENT_CODEC, direct.spec)
        deliver, direct_message = direct.start, core.direct_message
    else:
        route, deliver, direct_message = routes, None, None
    events = [core.receive_block(block) for block in blocks]
    updates = sum(len(each) for each in events)
    assert updates == sum(block.count(b"\n") + 1 for block in blocks), "a block fell back"
    decode, decode_block = (
        v2.CLIENT_CODEC.fast_decoder.decode,
        v2.CLIENT_CODEC.fast_decoder.decode_lines,
    )

    def split() -> None:
        reader = LineReader()
        for read in reads:
            reader.feed_block(read)

    def decode_lines() -> None:
        for block in blocks:
            decode_block(block)

    def receive_block() -> None:
        for block in blocks:
            core.receive_block(block)

    async def reader() -> None:
        for each in events:
            for event in each:
                if type(event) is direct_message:
                    pending = deliver(event.params)  # type: ignore[misc]
                elif type(event) is Call and event.id is UNSET:
                    pending = route(event)
                else:
                    raise AssertionError(f"not an update: {event!r}")
                if pending is not None:
                    await pending

    def delivered() -> None:
        try:
            reader().send(None)
        except StopIteration:
            pass

    def floor() -> None:
        tail = b""
        for read in reads:
            *found, tail = (tail + read).split(b"\n")
            for line in found:
                decode(line)

    result = {}
    for name, part in zip(
        PARTS, (split, decode_lines, receive_block, delivered, floor), strict=True
    ):
        best = float("inf")
        for _ in range(PASSES):
            started = time.thread_time()
            part()
            best = min(best, time.thread_time() - started)
        result[name] = best / updates * 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout: measured alongside")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    sys.path.insert(0, str(HERE))
    from streaming import environment, updates_file

    path, _, what = updates_file(20_000)
    trees = {"acpwire": ROOT, **({"baseline": args.baseline} if args.baseline else {})}
    found: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
    for round_ in range(args.rounds):
        for label, tree in trees.items():
            env = {k: v for k, v in environment(tree).items() if k != "PYTHONPYCACHEPREFIX"}
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(path)],
                env={**env, "PYTHONPATH": env["PYTHONPATH"] + os.pathsep + str(HERE)},
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            found[label].append(json.loads(out))
        print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr)
    print(f"{what.split(' sent')[0]}, in {READ_SIZE // 1024} KiB reads; CPU µs per update,")
    print(f"median of {args.rounds} rounds (spread), each the fastest of {PASSES} passes")
    print(f"{'tree':10}" + "".join(f"{part:>22}" for part in PARTS))
    for label, rounds in found.items():
        cells = []
        for part in PARTS:
            values = [each[part] for each in rounds]
            cells.append(f"{statistics.median(values):.3f} ({spread(values).strip()})")
        print(f"{label:10}" + "".join(f"{cell:>22}" for cell in cells))


if __name__ == "__main__":
    main()
