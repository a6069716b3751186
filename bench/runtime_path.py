"""Runtime path benchmark: what a session/update costs between the bytes and the handler.

The v2 corpus's notifications (agent -> client `session/update` lines) are fed into an acpwire
`Connection` over an in-memory trio stream pair (trio.testing.memory_stream_pair, written in
64 KiB chunks) with a trivial `session_update` handler, and compared with decoding the same
lines with the bare codec. Stages in between show where the overhead is:

  bare codec       v2.CLIENT_CODEC.decode(line) per line
  + framing        LineReader.feed(64 KiB chunks), then decode each line
  + JSON-RPC core  LineReader + JsonRpcCore.receive_line (decode, Call events)
  + dispatch       ... + `await dispatch(call)` (handler_dispatch -> the handler), in trio
  Connection       the whole thing: Connection.run reading the stream until EOF
  + on_line        the same with a no-op line hook (`ConnectionOptions.on_line`): its cost
  + telemetry      the same with `acpwire.otel.Telemetry` on an OpenTelemetry SDK tracer
                   provider without an exporter: what instrumenting costs a client receiving
                   updates (an event each on its session's open turn span: one is open)

Rounds are interleaved (every stage once per round); figures are medians per message.

    python bench/runtime_path.py             # full run; writes bench/results/runtime.txt
    python bench/runtime_path.py --quick     # smoke run
    python bench/runtime_path.py --profile   # cProfile of the Connection stage
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import math
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (ROOT / "generated", ROOT / "runtime", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import corpus as corpus_mod  # noqa: E402
import trio  # noqa: E402
import trio.testing  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from report import cpu_name, publish, relative_spread  # noqa: E402

from acp_schema import v2  # noqa: E402
from acpwire._wire.connection import READ_CHUNK, Connection  # noqa: E402
from acpwire._wire.dispatch import handler_dispatch  # noqa: E402
from acpwire._wire.framing import LineReader  # noqa: E402
from acpwire._wire.jsonrpc import Call, JsonRpcCore  # noqa: E402
from acpwire._wire.options import ConnectionOptions  # noqa: E402
from acpwire._wire.wire_line import WireLine  # noqa: E402
from acpwire.otel import Telemetry  # noqa: E402
from acpwire.otel.telemetry import ConnectionTelemetry  # noqa: E402

TARGET_RATIO = 2.5
NO_HOOK = ConnectionOptions()


class Client(v2.ClientBase):
    """The trivial handler: counts the updates."""

    def __init__(self) -> None:
        self.count = 0

    async def session_update(self, params: v2.UpdateSessionNotification) -> None:
        self.count += 1


class Stages:
    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        data = b"".join(line + b"\n" for line in lines)
        self.chunks = [data[i : i + READ_CHUNK] for i in range(0, len(data), READ_CHUNK)]
        self.codec = v2.CLIENT_CODEC
        self._sessions: set[str] | None = None  # of the corpus: a turn is open on each

    # -- synchronous stages

    def bare(self) -> int:
        decode = self.codec.decode
        for line in self.lines:
            decode(line)
        return len(self.lines)

    def framing(self) -> int:
        reader, decode, n = LineReader(), self.codec.decode, 0
        for chunk in self.chunks:
            for line in reader.feed(chunk):
                decode(line)  # type: ignore[arg-type]
                n += 1
        return n

    def core(self) -> int:
        reader, core, n = LineReader(), JsonRpcCore(self.codec), 0
        for chunk in self.chunks:
            for line in reader.feed(chunk):
                n += len(core.receive_line(line))  # type: ignore[arg-type]
        return n

    # -- trio stages

    async def dispatch(self) -> int:
        client = Client()
        dispatch = handler_dispatch(client, v2.ClientBase)
        reader, core = LineReader(), JsonRpcCore(self.codec)
        for chunk in self.chunks:
            for line in reader.feed(chunk):
                for event in core.receive_line(line):  # type: ignore[arg-type]
                    assert isinstance(event, Call)
                    await dispatch(event)
        return client.count

    async def connection(
        self,
        options: ConnectionOptions = NO_HOOK,
        prepare: Callable[[Connection], None] | None = None,
    ) -> int:
        client = Client()
        ours, theirs = trio.testing.memory_stream_pair()
        conn = Connection(
            ours, self.codec, handler_dispatch(client, v2.ClientBase), options=options
        )
        if prepare is not None:
            prepare(conn)

        async def feed() -> None:
            for chunk in self.chunks:
                await theirs.send_all(chunk)
            await theirs.send_eof()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed)
            await conn.run()
        return client.count

    async def connection_hooked(self) -> int:
        return await self.connection(ConnectionOptions(on_line=_ignore))

    async def connection_traced(self) -> int:
        telemetry = Telemetry(tracer_provider=TracerProvider())
        return await self.connection(ConnectionOptions(telemetry=telemetry), self._open_turns)

    def _open_turns(self, conn: Connection) -> None:
        """Open a turn on each session of the corpus, as a client's prompt would: the
        updates become events on it (the SDK keeps the first 128 of a span)."""
        if self._sessions is None:  # once: not part of what is timed after the first run
            self._sessions = {call.params.session_id for call in self._calls()}
        telemetry = conn._telemetry
        assert isinstance(telemetry, ConnectionTelemetry)
        tracer = TracerProvider().get_tracer("bench")
        for session in self._sessions:
            telemetry._turns.start(session, tracer.start_span("acp.turn"))

    def _calls(self) -> list[Call]:
        reader, core, calls = LineReader(), JsonRpcCore(self.codec), []
        for chunk in self.chunks:
            for line in reader.feed(chunk):
                calls += [e for e in core.receive_line(line) if isinstance(e, Call)]  # type: ignore[arg-type]
        return calls


def _ignore(line: WireLine) -> None:
    """The trivial line hook: what a hook costs the connection, not what it does."""


STAGES: list[tuple[str, str]] = [
    ("bare codec: CLIENT_CODEC.decode", "bare"),
    ("+ framing: LineReader.feed", "framing"),
    ("+ JSON-RPC core: receive_line", "core"),
    ("+ dispatch: handler_dispatch -> handler", "dispatch"),
    ("Connection.run over memory_stream_pair", "connection"),
    ("Connection.run, on_line set (no-op hook)", "connection_hooked"),
    ("Connection.run, telemetry set (OTel SDK)", "connection_traced"),
]
CONNECTION = STAGES[-3][0]
"""The whole runtime path (the target's): without a line hook."""


async def timed(fn: Callable[[], Any], passes: int) -> tuple[float, int]:
    start = time.perf_counter()
    n = 0
    for _ in range(passes):
        result = fn()
        n = await result if isinstance(result, Awaitable) else result
    return time.perf_counter() - start, n


def run(stages: Stages, rounds: int, target: float) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name, _ in STAGES}
    expected = len(stages.lines)

    async def main() -> None:
        passes = {}
        for _, attr in STAGES:  # calibrate (and warm up)
            once, n = await timed(getattr(stages, attr), 1)
            if n != expected:
                raise SystemExit(f"stage {attr} handled {n} messages, expected {expected}")
            passes[attr] = max(1, math.ceil(target / once))
        for r in range(rounds):
            print(f"  round {r + 1}/{rounds}", end="\r", file=sys.stderr, flush=True)
            for name, attr in STAGES:
                gc.collect()
                elapsed, _ = await timed(getattr(stages, attr), passes[attr])
                samples[name].append(elapsed / (passes[attr] * expected))
        print(" " * 40, end="\r", file=sys.stderr)

    trio.run(main)
    return samples


def report(args: argparse.Namespace, stages: Stages, samples: dict[str, list[float]]) -> str:
    nbytes = sum(map(len, stages.lines))
    out = [
        f"acpwire runtime path benchmark ({'quick' if args.quick else 'full'}), "
        f"{time.strftime('%Y-%m-%d %H:%M')}",
        f"python {platform.python_version()} on {cpu_name()} ({os.cpu_count()} cpus); "
        f"msgspec {metadata.version('msgspec')}, trio {metadata.version('trio')}",
        corpus_mod.code_state(),
        f"input: the {len(stages.lines)} session/update notifications of make_streams.py --version v2"
        f" --direction agent --messages {args.messages} --seed {args.seed} ({nbytes / 1e6:.2f} MB);"
        f" {args.rounds} interleaved rounds; median per message",
        "",
        f"{'stage':42} {'µs/msg':>8} {'spread':>7} {'msgs/s':>9} {'vs bare':>8} {'step':>8}",
    ]
    base = statistics.median(samples[STAGES[0][0]])
    previous = base
    for name, _ in STAGES:
        values = samples[name]
        med = statistics.median(values)
        spread = relative_spread(values) * 100
        step = f"+{(med - previous) * 1e6:.3f}" if name != STAGES[0][0] else ""
        out.append(
            f"  {name:40} {med * 1e6:8.3f} {spread:6.1f}% {1 / med:9.0f} {med / base:7.2f}x {step:>8}"
        )
        if not name.startswith("Connection"):
            previous = med
    full = statistics.median(samples[CONNECTION])
    ratio = full / base
    out += [
        "",
        "target",
        f"  [{'PASS' if ratio <= TARGET_RATIO else 'FAIL'}] runtime per message <= "
        f"{TARGET_RATIO}x bare codec: {ratio:.2f}x ({full * 1e6:.3f} vs {base * 1e6:.3f} µs/msg)",
    ]
    return "\n".join(out)


def profile(stages: Stages) -> None:
    prof = cProfile.Profile()

    async def main() -> None:
        await stages.connection()  # warm up
        prof.enable()
        for _ in range(3):
            await stages.connection()
        prof.disable()

    trio.run(main)
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, 3 rounds (smoke run)")
    parser.add_argument("--messages", type=int, help="v2 corpus lines (full: 20000)")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--profile", action="store_true", help="cProfile the Connection stage")
    parser.add_argument("--out", type=Path, help="default: bench/results/runtime[-quick].txt")
    args = parser.parse_args()
    args.messages = args.messages or (2000 if args.quick else 20000)
    args.rounds = args.rounds or (3 if args.quick else 7)
    target = 0.01 if args.quick else 0.15
    args.out = args.out or corpus_mod.RESULTS / (
        "runtime-quick.txt" if args.quick else "runtime.txt"
    )

    corpus = corpus_mod.load("v2", args.messages, args.seed)
    lines = [
        line
        for line, (kind, method, _) in zip(corpus.lines, corpus.labels, strict=True)
        if kind == "notification" and method == "session/update"
    ]
    stages = Stages(lines)
    gc.collect()
    gc.freeze()  # the inputs are not the runtime's garbage: keep them out of every collection
    if args.profile:
        profile(stages)
        return
    publish(report(args, stages, run(stages, args.rounds, target)), args.out)


if __name__ == "__main__":
    main()
