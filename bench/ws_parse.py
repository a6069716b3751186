"""CPU time per WebSocket text frame received by a client, parsed by wsproto (what httpx-ws
uses) and by `websockets`' sans-IO protocol (what acpwire's client uses), no I/O.

    python bench/ws_parse.py [N] [--rounds R]

The input is what acpwire's client reads while a turn streams: N unmasked text frames, each
the echo agent's line for one `agent_message_chunk` (bench/remote_floor.py's CHUNK), in 64 KiB
reads (the client's `READ_BYTES`). Each parser is fed the reads and its text frames are taken
as acpwire's client takes them (wsproto: `TextMessage` events, str; websockets: `Frame`s,
bytes, checked as UTF-8). Interleaved rounds; CPU time (`time.process_time`) per frame.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import cast

import wsproto.events
from remote_floor import CHUNK
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri
from wsproto.connection import Connection, ConnectionType

from acpwire.streams.websocket_session import READ_BYTES


def server_frames(count: int) -> list[bytes]:
    """`count` chunk lines as unmasked text frames, cut in `READ_BYTES` reads."""
    frames = []
    for i in range(count):
        payload = (CHUNK % i).encode()
        size = bytes([len(payload)]) if len(payload) < 126 else b"\x7e" + len(payload).to_bytes(2)
        frames.append(b"\x81" + size + payload)
    wire = b"".join(frames)
    return [wire[at : at + READ_BYTES] for at in range(0, len(wire), READ_BYTES)]


def with_wsproto(reads: list[bytes]) -> int:
    connection = Connection(ConnectionType.CLIENT)
    texts = 0
    for data in reads:
        connection.receive_data(data)
        for event in connection.events():
            if isinstance(event, wsproto.events.TextMessage) and event.message_finished:
                texts += 1
    return texts


def with_websockets(reads: list[bytes]) -> int:
    protocol = ClientProtocol(parse_uri("ws://localhost/"), state=State.OPEN, max_size=None)
    texts = 0
    for data in reads:
        protocol.receive_data(data)
        for frame in cast("list[Frame]", protocol.events_received()):
            if frame.opcode is Opcode.TEXT:
                bytes(frame.data).decode()
                texts += 1
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", nargs="?", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    reads = server_frames(args.count)
    parsers: dict[str, Callable[[list[bytes]], int]] = {
        "wsproto 1.3 (httpx-ws)": with_wsproto,
        "websockets 15 ClientProtocol": with_websockets,
    }
    times: dict[str, list[float]] = {name: [] for name in parsers}
    for _ in range(args.rounds):
        for name, parse in parsers.items():
            started = time.process_time()
            texts = parse(reads)
            times[name].append((time.process_time() - started) / args.count * 1e6)
            assert texts == args.count, (name, texts)
    print(f"{args.count:,} text frames, {args.rounds} rounds: CPU µs per frame, median [min-max]")
    for name, samples in times.items():
        print(
            f"  {name:30} {statistics.median(samples):5.2f} [{min(samples):.2f}-{max(samples):.2f}]"
        )


if __name__ == "__main__":
    main()
