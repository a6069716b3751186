"""End-to-end stdio benchmark: acpwire vs the official ACP SDKs, side by side.

    python bench/stdio.py [N] [--roundtrips M] [--rounds R] [--quick]
                          [--only LABEL...] [--baseline CHECKOUT [--baseline-loops LOOP...]]

Each pair is a client process that spawns its agent: acpwire client + acpwire echo agent
(v2 and v1, both processes on trio, on asyncio, and on asyncio with uvloop when uvloop is
installed), the Python SDK pair (agent-client-protocol, v1, asyncio) and the TypeScript SDK
pairs (@agentclientprotocol/sdk, v1 and v2) from tests/interop. Two measurements per pair:

- streaming: the agent streams N `agent_message_chunk` updates (prompt text `stream N`);
  rate = chunks / the client's own timing, from sending the prompt to the end of the turn
  (v1: the prompt response; v2: `state_update` idle); process wall time is shown next to it.
- round trips: the client sends M `session/new` requests one after another (after 100
  warm-up ones); p50/p99 of the request -> response latency, timed by the client.

Rounds are interleaved (each round runs every pair, in a rotated order); medians over the
rounds. The tables are printed and written to bench/results/stdio.txt. `--only` keeps the
pairs whose label starts with one of the given prefixes; `--baseline` adds the acpwire pairs
of another checkout (`git worktree add /tmp/before <commit>`), labelled "baseline", on trio
or on `--baseline-loops`, for an A/B of acpwire against another version of itself in the
same interleaved run.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from placement import PLACEMENTS, cpus, pinned, placed_table, unavailable
from report import (  # remote.py imports these from here
    ROOT,
    machine,
    median_of,
    node_version,
    publish,
    ratio,
    spread,
    version,
)

for _p in (ROOT / "generated", ROOT / "runtime"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from acpwire.fixtures.loops import LOOPS, UVLOOP_MISSING, have_uvloop  # noqa: E402

INTEROP = ROOT / "tests" / "interop"
RESULTS = ROOT / "bench" / "results" / "stdio.txt"
PY = sys.executable
TIMEOUT = 900.0
P = TypeVar("P")


def environment(checkout: Path) -> dict[str, str]:
    """The environment that runs acpwire's fixtures from a checkout's source tree."""
    paths = [checkout / "generated", checkout / "runtime", checkout, os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths if p)}


ENV = environment(ROOT)

HAVE_NODE = (
    shutil.which("node") is not None
    and (INTEROP / "ts" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
)
HAVE_PY_SDK = importlib.util.find_spec("acp") is not None
ACPWIRE_CLIENT = [PY, "-m", "acpwire.fixtures.client"]
ACPWIRE_AGENT = [PY, "-m", "acpwire.fixtures.echo_agent"]
OFFICIAL_SDKS = ("python-sdk", "ts-sdk")
STREAMING_TARGET = 8.0  # issue 12: acpwire on asyncio streams >= 8x the Python SDK pair
LABEL = 18  # width of the pair column


@dataclass
class Pair:
    name: str
    protocol: int
    client: list[str]
    agent: list[str]
    missing: str | None = None  # why the pair cannot run here
    loop: str = ""  # the event loop of both acpwire processes
    env: dict[str, str] = field(default_factory=lambda: ENV)
    rates: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    p50s: list[float] = field(default_factory=list)  # ms
    p99s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    placed: dict[str, list[float]] = field(default_factory=dict)  # placement: p50s (ms)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.protocol} {self.loop}".rstrip()


def acpwire_pair(protocol: int, loop: str) -> Pair:
    missing = f"uvloop: {UVLOOP_MISSING}" if loop == "uvloop" and not have_uvloop() else None
    return Pair(
        "acpwire",
        protocol,
        [*ACPWIRE_CLIENT, "--protocol", str(protocol), "--loop", loop],
        [*ACPWIRE_AGENT, "--loop", loop],
        loop=loop,
        missing=missing,
    )


def baseline_pair(protocol: int, loop: str, checkout: Path) -> Pair:
    """acpwire's fixtures from another checkout (on trio without `--loop`: older fixtures
    lack the option)."""
    option = [] if loop == "trio" else ["--loop", loop]
    client = [*ACPWIRE_CLIENT, "--protocol", str(protocol), *option]
    agent = [*ACPWIRE_AGENT, *option]
    return Pair("baseline", protocol, client, agent, loop=loop, env=environment(checkout))


def pairs() -> list[Pair]:
    no_node = None if HAVE_NODE else "node or tests/interop/ts/node_modules missing"
    no_sdk = None if HAVE_PY_SDK else "agent-client-protocol not installed"
    return [
        *(acpwire_pair(protocol, loop) for loop in LOOPS for protocol in (2, 1)),
        Pair("python-sdk", 1, [PY, "py/client_v1.py"], [PY, "py/agent_v1.py"], no_sdk),
        Pair("ts-sdk", 1, ["node", "ts/client_v1.mjs"], ["node", "ts/agent_v1.mjs"], no_node),
        Pair("ts-sdk", 2, ["node", "ts/client_v2.mjs"], ["node", "ts/agent_v2.mjs"], no_node),
    ]


def parse_output(stdout: str) -> tuple[int | None, dict[str, Any]]:
    """(protocol, summary) from a client's output: acpwire's transcript ending in a dict repr
    (snake_case keys), or an SDK client's JSON summary line (camelCase keys)."""
    last = stdout.strip().splitlines()[-1]
    if last.startswith("{'"):
        result: dict[str, Any] = ast.literal_eval(last)
        protocol = int(stdout.split("initialized: protocol version ", 1)[1].split()[0])
        return protocol, result
    summary = json.loads(last)
    if not summary["ok"]:
        raise ValueError(f"client reported errors: {summary['errors']}")
    renamed = {"p50Ms": "p50_ms", "p99Ms": "p99_ms"}
    return summary["protocolVersion"], {renamed.get(k, k): v for k, v in summary.items()}


def run_client(
    pair: Pair, mode: list[str], placement: str | None = None
) -> tuple[dict[str, Any], float] | None:
    """Run the pair once in a mode (`--stream N` / `--roundtrips M`), its two processes pinned
    as `placement` says (None: where the scheduler puts them): its summary and wall time, or
    None after recording the failure."""
    client, agent = pair.client, pair.agent
    if placement is not None:
        client_cpu, agent_cpu = cpus(placement)
        client, agent = pinned(client, client_cpu), pinned(agent, agent_cpu)
    command = [*client, *mode, "--", *agent]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command, cwd=INTEROP, env=pair.env, capture_output=True, text=True, timeout=TIMEOUT
        )
        wall = time.perf_counter() - started
        if proc.returncode != 0 or not proc.stdout.strip():
            raise ValueError(f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        protocol, summary = parse_output(proc.stdout)
        if protocol != pair.protocol:
            raise ValueError(f"protocol {protocol}; expected {pair.protocol}")
        return summary, wall
    except (ValueError, KeyError, IndexError, SyntaxError, subprocess.TimeoutExpired) as exc:
        pair.failures.append(f"{' '.join(mode)}: {exc}")
        print(f"  {pair.label} {' '.join(mode)}: FAILED {exc}", file=sys.stderr)
        return None


def stream_once(pair: Pair, chunks: int) -> None:
    outcome = run_client(pair, ["--stream", str(chunks)])
    if outcome is None:
        return
    summary, wall = outcome
    if summary["chunks"] != chunks:
        pair.failures.append(f"{summary['chunks']} chunks; expected {chunks}")
        return
    pair.rates.append(chunks / summary["seconds"])
    pair.walls.append(wall)
    print(f"  {pair.label} stream: {pair.rates[-1]:,.0f} msgs/s", file=sys.stderr)


def roundtrips_once(pair: Pair, count: int, placement: str | None = None) -> None:
    outcome = run_client(pair, ["--roundtrips", str(count)], placement)
    if outcome is None:
        return
    summary, _ = outcome
    if placement is None:
        pair.p50s.append(summary["p50_ms"])
        pair.p99s.append(summary["p99_ms"])
    else:
        pair.placed.setdefault(placement, []).append(summary["p50_ms"])
    print(
        f"  {pair.label} round trips{f' on {placement}' if placement else ''}: "
        f"p50 {summary['p50_ms']:.3f} ms, p99 {summary['p99_ms']:.3f} ms",
        file=sys.stderr,
    )


def pairs_placed_table(pairs: list[Pair]) -> list[str]:
    """The round-trip p50s with both processes pinned (bench/placement.py), each against the
    faster TypeScript SDK pair's in the same placement."""

    def versus(_: object, placement: str, p50: float) -> str:
        """vs faster ts-sdk"""
        return f"{ratio(p50, fastest_ts(pairs, placement)):>16}"

    return placed_table(pairs, "pair", LABEL, "ms", ".3f", versus)


def fastest_ts(pairs: list[Pair], placement: str) -> float | None:
    """The lower of the TypeScript SDK pairs' median p50s in a placement."""
    medians = [
        statistics.median(pair.placed[placement])
        for pair in pairs
        if pair.name == "ts-sdk" and pair.placed.get(placement)
    ]
    return min(medians, default=None)


def skipped(pair: Pair) -> str:
    reason = pair.missing or f"failed: {pair.failures[-1].splitlines()[-1][:70]}"
    return f"{pair.label:{LABEL}} {'-':>13}  skipped: {reason}"


Row = Callable[[Pair, float | None, float | None], str]
"""A pair's row, given the Python SDK pair's median and the same-version TS SDK pair's."""


def table(pairs: list[Pair], header: str, samples: str, row: Row) -> list[str]:
    lines = [header, "-" * len(header)]
    py_sdk = median_of(pairs, "python-sdk v1", samples)
    for pair in pairs:
        if getattr(pair, samples):
            lines.append(row(pair, py_sdk, median_of(pairs, f"ts-sdk v{pair.protocol}", samples)))
        else:
            lines.append(skipped(pair))
    return lines


def stream_row(pair: Pair, py_sdk: float | None, ts_same: float | None) -> str:
    rate = statistics.median(pair.rates)
    return (
        f"{pair.label:{LABEL}} {rate:13,.0f} {spread(pair.rates)} {ratio(rate, py_sdk):>16} "
        f"{ratio(rate, ts_same):>18} {statistics.median(pair.walls):14.2f}"
    )


def roundtrip_row(pair: Pair, py_sdk: float | None, ts_same: float | None) -> str:
    p50 = statistics.median(pair.p50s)
    faster = [ratio(base, p50) if base else "-" for base in (py_sdk, ts_same)]
    return (
        f"{pair.label:{LABEL}} {p50:8.3f} {spread(pair.p50s)} "
        f"{statistics.median(pair.p99s):8.3f} {spread(pair.p99s)} "
        f"{faster[0]:>20} {faster[1]:>22}"
    )


STREAM_HEADER = (
    f"{'pair':{LABEL}} {'median msgs/s':>13} {'spread':>7} {'vs python-sdk v1':>16} "
    f"{'vs ts-sdk same ver':>18} {'process wall s':>14}"
)
ROUNDTRIP_HEADER = (
    f"{'pair':{LABEL}} {'p50 ms':>8} {'spread':>7} {'p99 ms':>8} {'spread':>7} "
    f"{'p50 vs python-sdk v1':>20} {'p50 vs ts-sdk same ver':>22}"
)


def targets(pairs: list[Pair]) -> list[str]:
    """Issue 12's targets for acpwire off trio, on this run's medians: streaming at least
    STREAMING_TARGET x the Python SDK pair (asyncio itself), round-trip p99 below every
    official SDK pair's."""
    py_sdk = median_of(pairs, "python-sdk v1", "rates")
    official_p99s = [statistics.median(p.p99s) for p in pairs if p.name in OFFICIAL_SDKS and p.p99s]
    if py_sdk is None or not official_p99s:
        return ["asyncio targets: not checked (an official SDK pair did not run)"]
    lowest = min(official_p99s)
    lines = [
        f"asyncio targets: streaming >= {STREAMING_TARGET:g}x python-sdk v1, round-trip p99 "
        f"< {lowest:.3f} ms (the lowest official p99)"
    ]
    for pair in pairs:
        if pair.name == "acpwire" and pair.loop != "trio" and pair.rates and pair.p99s:
            times = statistics.median(pair.rates) / py_sdk
            p99 = statistics.median(pair.p99s)
            lines.append(
                f"  {pair.label:{LABEL}} streaming {times:5.1f}x "
                f"{'met' if times >= STREAMING_TARGET else 'MISSED':6}  "
                f"p99 {p99:.3f} ms {'met' if p99 < lowest else 'MISSED'}"
            )
    return lines


def pair_targets(pairs: list[Pair]) -> list[str]:
    """Issue 18's pair target on this run's medians: acpwire's round-trip p50 below both
    TypeScript SDK pairs', where the scheduler put the processes and in each placement."""
    ts = [median_of(pairs, f"ts-sdk v{protocol}", "p50s") for protocol in (1, 2)]
    if None in ts:
        return ["pair round-trip target: not checked (a TypeScript SDK pair did not run)"]
    lowest = min(p for p in ts if p is not None)
    lines = [f"pair round-trip target: p50 < {lowest:.3f} ms (the faster TypeScript SDK pair)"]
    for pair in pairs:
        if pair.name == "acpwire" and pair.p50s:
            p50 = statistics.median(pair.p50s)
            verdicts = [
                f"p50 {p50:.3f} ms {p50 / lowest:.2f}x {'met' if p50 < lowest else 'MISSED'}"
            ]
            for placement in PLACEMENTS:
                faster_ts = fastest_ts(pairs, placement)
                if pair.placed.get(placement) and faster_ts is not None:
                    placed = statistics.median(pair.placed[placement])
                    verdict = "met" if placed < faster_ts else "MISSED"
                    verdicts.append(f"on {placement} {placed / faster_ts:.2f}x {verdict}")
            lines.append(f"  {pair.label:{LABEL}} " + "; ".join(verdicts))
    return lines


def median_range(values: list[float], form: str) -> str:
    low, high = min(values), max(values)
    return f"{statistics.median(values):{form}} [{low:{form}}-{high:{form}}]"


def against_baseline(pairs: list[Pair]) -> list[str]:
    """acpwire against the baseline checkout's pairs of the same protocol and loop: median
    [min-max] over the rounds and the ratio of the medians (> 1: this checkout is faster)."""
    lines = []
    for pair in pairs:
        same = (pair.protocol, pair.loop)
        base = next(
            (p for p in pairs if p.name == "baseline" and (p.protocol, p.loop) == same), None
        )
        if pair.name != "acpwire" or base is None:
            continue
        for what, attr, form, higher_is_faster in (
            ("msgs/s", "rates", ",.0f", True),
            ("p50 ms", "p50s", ".3f", False),
            ("p99 ms", "p99s", ".3f", False),
        ):
            new, old = getattr(pair, attr), getattr(base, attr)
            if new and old:
                change = statistics.median(new) / statistics.median(old)
                change = change if higher_is_faster else 1 / change
                lines.append(
                    f"  v{pair.protocol} {pair.loop} {what}: {median_range(new, form)} vs baseline "
                    f"{median_range(old, form)}: {change:.3f}x"
                )
    return ["against the baseline (median [min-max]; ratio > 1: faster):", *lines]


def report(pairs: list[Pair], chunks: int, count: int, rounds: int) -> str:
    lines = [
        f"acpwire stdio benchmark, {time.strftime('%Y-%m-%d %H:%M')}: {rounds} interleaved "
        "rounds, median per pair",
        f"python {platform.python_version()}, node {node_version()}, msgspec "
        f"{version('msgspec')}, trio {version('trio')}, anyio {version('anyio')}, uvloop "
        f"{version('uvloop')}, agent-client-protocol "
        f"{version('agent-client-protocol')}, @agentclientprotocol/sdk 2.4.0; "
        f"{machine()}",
        "",
        f"streaming: {chunks:,} agent_message_chunk updates per run",
        *table(pairs, STREAM_HEADER, "rates", stream_row),
        "msgs/s = chunks / the client's own timing from sending the prompt to the end of the "
        "turn (v1: prompt response; v2: state_update idle);",
        "process wall s = the whole client run, incl. start-up. ratio > 1: faster than that pair.",
        "",
        f"round trips: {count:,} session/new requests per run, one after another (after 100 "
        "warm-up ones)",
        *table(pairs, ROUNDTRIP_HEADER, "p50s", roundtrip_row),
        "latency = the client's own timing from issuing a request to its response resolving; "
        "ratio > 1: lower p50 than that pair.",
        "",
        "the same round trips with both processes pinned (bench/placement.py: the scheduler "
        "puts a free run in either mode)",
        *pairs_placed_table(pairs),
        "vs = this p50 / the faster TypeScript SDK pair's in the same placement (< 1: faster).",
        "spread = (max - min) / median over the rounds.",
        "",
        *targets(pairs),
        *pair_targets(pairs),
    ]
    if any(pair.name == "baseline" for pair in pairs):
        lines += ["", *against_baseline(pairs)]
    failed = [f"  {pair.label}: {failure}" for pair in pairs for failure in pair.failures]
    if failed:
        lines += ["", "failed runs:", *failed]
    return "\n".join(lines)


def add_run_options(parser: argparse.ArgumentParser, chunks: int, roundtrips: int) -> None:
    """The options every end-to-end bench takes: N chunks, --roundtrips M, --rounds R, --quick
    (a smoke run: its sizes are the script's), --only LABEL..."""
    parser.add_argument("chunks", type=int, nargs="?", default=chunks)
    parser.add_argument("--roundtrips", type=int, default=roundtrips)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 round, small sizes")
    parser.add_argument("--only", nargs="+", metavar="LABEL", help="pairs whose label starts so")


def interleaved(active: Sequence[P], rounds: int, measure: Callable[[P], None]) -> None:
    """`measure` every pair once per round, each round in a rotated order."""
    for round_no in range(rounds):
        print(f"round {round_no + 1}/{rounds}", file=sys.stderr)
        shift = round_no % len(active)
        for pair in [*active[shift:], *active[:shift]]:
            measure(pair)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(parser, chunks=100_000, roundtrips=5_000)
    parser.add_argument("--baseline", type=Path, help="another checkout: its pairs join in")
    parser.add_argument("--baseline-loops", nargs="+", choices=LOOPS, default=["trio"])
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.roundtrips, args.rounds = 10_000, 500, 1
    runnable = pairs()
    if args.baseline:
        checkout = args.baseline.resolve()
        runnable += [
            baseline_pair(protocol, loop, checkout)
            for loop in args.baseline_loops
            for protocol in (2, 1)
        ]
    if args.only:
        runnable = [pair for pair in runnable if pair.label.startswith(tuple(args.only))]
    active = [pair for pair in runnable if pair.missing is None]

    placements = [p for p in PLACEMENTS if unavailable(p) is None]

    def measure(pair: Pair) -> None:
        stream_once(pair, args.chunks)
        roundtrips_once(pair, args.roundtrips)
        for placement in placements:
            roundtrips_once(pair, args.roundtrips, placement)

    interleaved(active, args.rounds, measure)
    publish(report(runnable, args.chunks, args.roundtrips, args.rounds), RESULTS)


if __name__ == "__main__":
    main()
