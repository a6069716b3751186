"""Trips through trio's scheduler per WebSocket frame under Hypercorn's trio worker, stock and
with bench/hypercorn_buffered.py's writer: where the instructions of bench/server_instructions.py
go on trio.

    python bench/trio_passes.py [N]

In this process, a trio instrument counts task steps and the run loop's I/O waits (one per
pass of the scheduler) while Hypercorn's trio worker serves: bench/remote_floor.py's bare ASGI
app (text frames, and the same frames as binary ones) and acpwire's echo agent (`--acp`),
each stock and buffered. A client thread (remote_floor.py's, no event loop) streams 200
chunks (warm-up), 200 and N; the counts over the run of N less the run of 200, per frame, and
the task that took the most steps are printed. Deterministic: the load does not change them.
"""

from __future__ import annotations

import argparse
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import hypercorn.trio
import hypercorn_buffered
import trio
from remote_floor import app, echo_app, hypercorn_config, stream, stream_acp

FEW = 200


class Passes(trio.abc.Instrument):
    def __init__(self) -> None:
        self.steps: Counter[str] = Counter()  # task name -> steps
        self.waits = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps[task.name] += 1

    def after_io_wait(self, timeout: float) -> None:
        self.waits += 1


def binary(served: Any) -> Any:
    """`served` with each text frame it sends sent as a binary frame of the same bytes."""

    async def as_bytes(scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def send_bytes(event: dict[str, Any]) -> None:
            if event["type"] == "websocket.send" and event.get("text") is not None:
                event = {"type": "websocket.send", "bytes": event["text"].encode()}
            await send(event)

        await served(scope, receive, send_bytes)

    return as_bytes


def measure(served: Any, client: Callable[[str, int], object], count: int) -> str:
    """Serve `served` in this process until a client thread has streamed; its figures."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/acp"
    passes, figures = Passes(), []

    def run_client() -> None:
        client(url, FEW)  # Hypercorn listens on the socket before the first trio.run step
        for chunks in (FEW, count):
            steps, waits = passes.steps.copy(), passes.waits
            client(url, chunks)
            time.sleep(0.2)  # the connection's end
            figures.append((passes.steps - steps, passes.waits - waits))
        trio.from_thread.run_sync(nursery.cancel_scope.cancel, trio_token=token)

    async def serving() -> None:
        nonlocal nursery, token
        token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            threading.Thread(target=run_client, daemon=True).start()
            nursery.start_soon(hypercorn.trio.serve, served, hypercorn_config(listener))

    nursery: trio.Nursery
    token: trio.lowlevel.TrioToken
    trio.run(serving, instruments=[passes])
    (few_steps, few_waits), (steps, waits) = figures
    more = count - FEW
    busiest, taken = (steps - few_steps).most_common(1)[0] if steps - few_steps else ("-", 0)
    return (
        f"{sum((steps - few_steps).values()) / more:10.2f} {(waits - few_waits) / more:10.2f}"
        f"  {busiest} ({taken / more:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", nargs="?", type=int, default=2_000)
    args = parser.parse_args()
    cases = {
        "floor, text frames": (app, stream),
        "floor, binary frames": (binary(app), stream),
        "acpwire's echo agent": (echo_app(), stream_acp),
    }
    print(f"per WebSocket frame (runs of {args.chunks:,} - {FEW}), Hypercorn's trio worker")
    print(f"{'case':44} {'task steps':>10} {'I/O waits':>10}  busiest task (steps)")
    for writer in ("stock", "buffered"):
        if writer == "buffered":
            hypercorn_buffered.install()
        for case, (served, client) in cases.items():
            print(f"{case + ', ' + writer:44} {measure(served, client, args.chunks)}", flush=True)


if __name__ == "__main__":
    main()
