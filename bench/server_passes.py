"""Scheduler passes and Python calls of the server per WebSocket `session/new` round trip:
where the server's CPU per round trip of bench/remote.py goes, counted (the load does not
change the counts).

    python bench/server_passes.py [M] [--loop trio asyncio] [--calls]

The echo agent (`acpwire.fixtures.echo_agent`'s `--serve`: `agent_app` under `serve_remote`,
Hypercorn) is served in this process; a thread runs acpwire's client
(`python -m acpwire.fixtures.client --roundtrips N`, over WebSocket, on the same loop) once
(a warm-up), then for 100 and for M round trips (the client is this checkout's), each run after the client's own 100 warm-up
ones on a connection of its own. Counted over the run of M less the run of 100, per round
trip: on trio the task steps (a trio instrument) and the scheduler's I/O waits (one per pass);
on asyncio the passes of the loop (`_run_once` calls); with `--calls`, the Python calls of the
loop's thread (`sys.setprofile` "call" events: calls and coroutine resumptions) and the calls
of C functions ("c_call"). Run it with another checkout's `runtime` first on PYTHONPATH to
count that checkout's server.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

FEW = 100
ROOT = Path(__file__).resolve().parents[1]
CLIENT_ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'generated'}{os.pathsep}{ROOT / 'runtime'}"}
"""The client is this checkout's whatever server is counted."""


class Counts:
    """What the server's loop thread did so far."""

    def __init__(self) -> None:
        self.steps: Counter[str] = Counter()  # trio: task name -> steps
        self.passes = 0  # trio: I/O waits; asyncio: `_run_once` calls
        self.calls = 0
        self.c_calls = 0

    def by_task(self) -> Counter[str]:
        return self.steps.copy()

    def snapshot(self) -> tuple[int, int, int, int]:
        return sum(self.steps.values()), self.passes, self.calls, self.c_calls

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.calls += 1
        elif event == "c_call":
            self.c_calls += 1


def client_run(url: str, loop: str, round_trips: int) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "acpwire.fixtures.client",
            "--loop",
            loop,
            "--roundtrips",
            str(round_trips),
            "--url",
            url,
            "--transport",
            "websocket",
        ],
        env=CLIENT_ENV,
        capture_output=True,
        check=True,
        timeout=600,
    )


def measure(loop: str, many: int, calls: bool) -> str:
    from acpwire import RemoteOptions, agent_app, serve_remote
    from acpwire.fixtures.echo_agent import BENCH_SESSIONS, EchoAgentV1, EchoAgentV2

    counts = Counts()
    figures: list[tuple[int, int, int, int]] = []
    tasks: list[Counter[str]] = []  # steps by task name, per run
    stop: Callable[[], None] | None = None

    def run_client(url: str) -> None:
        client_run(url, loop, FEW)
        for round_trips in (FEW, many):
            before, tasks_before = counts.snapshot(), counts.by_task()
            client_run(url, loop, round_trips)
            time.sleep(0.3)  # the connection's end
            after = counts.snapshot()
            tasks.append(counts.by_task() - tasks_before)
            figures.append(tuple(a - b for a, b in zip(after, before, strict=True)))  # type: ignore[arg-type]
        assert stop is not None
        stop()

    async def serve(done: Any) -> None:
        import anyio

        async with anyio.create_task_group() as tasks:
            remote = RemoteOptions(max_sessions_per_connection=BENCH_SESSIONS)
            app = agent_app(EchoAgentV2, v1=EchoAgentV1, remote=remote)
            [url] = await tasks.start(functools.partial(serve_remote, app, bind="127.0.0.1:0"))
            done(tasks.cancel_scope.cancel)
            if calls:
                sys.setprofile(counts.profile)
            threading.Thread(target=run_client, args=(url,), daemon=True).start()

    if loop == "trio":
        import trio

        class Passes(trio.abc.Instrument):
            def before_task_step(self, task: trio.lowlevel.Task) -> None:
                counts.steps[task.name] += 1

            def after_io_wait(self, timeout: float) -> None:
                counts.passes += 1

        def on_trio(cancel: Callable[[], None]) -> None:
            nonlocal stop
            token = trio.lowlevel.current_trio_token()
            stop = functools.partial(trio.from_thread.run_sync, cancel, trio_token=token)

        trio.run(serve, on_trio, instruments=[Passes()])
    else:
        import asyncio

        original = asyncio.base_events.BaseEventLoop._run_once  # type: ignore[attr-defined]

        def run_once(self: Any) -> None:
            counts.passes += 1
            original(self)

        asyncio.base_events.BaseEventLoop._run_once = run_once  # type: ignore[attr-defined]

        def on_asyncio(cancel: Callable[[], None]) -> None:
            nonlocal stop
            running = asyncio.get_running_loop()
            stop = functools.partial(running.call_soon_threadsafe, cancel)

        async def main() -> None:
            await serve(on_asyncio)

        logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # Hypercorn's cancelled tasks
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(main())
    sys.setprofile(None)
    (few_steps, few_passes, few_calls, few_c), (steps, passes, py_calls, c_calls) = figures
    more = many - FEW
    row = f"{(steps - few_steps) / more:10.2f} " if loop == "trio" else f"{'-':>10} "
    row += f"{(passes - few_passes) / more:10.2f}"
    if calls:
        row += f" {(py_calls - few_calls) / more:12.1f} {(c_calls - few_c) / more:12.1f}"
    few_tasks, many_tasks = tasks
    for name, taken in (many_tasks - few_tasks).most_common(4):
        row += f"\n{'':8} {taken / more:10.2f}  {name}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("round_trips", nargs="?", type=int, default=1_100)
    parser.add_argument("--loop", nargs="+", choices=("trio", "asyncio"), default=["trio"])
    parser.add_argument("--calls", action="store_true", help="count Python and C calls")
    args = parser.parse_args()
    if args.round_trips <= FEW:
        parser.error(f"M must be more than {FEW}")
    print(f"server per WebSocket session/new round trip (runs of {args.round_trips:,} - {FEW})")
    header = f"{'loop':8} {'task steps':>10} {'passes':>10}"
    if args.calls:
        header += f" {'Python calls':>12} {'C calls':>12}"
    print(header)
    for loop in args.loop:
        print(f"{loop:8} {measure(loop, args.round_trips, args.calls)}", flush=True)


if __name__ == "__main__":
    main()
