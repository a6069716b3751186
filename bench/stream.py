"""End-to-end stdio streaming benchmark: acpwire vs the official ACP SDKs, side by side.

    python bench/stream.py [N] [--rounds R]

An agent streams N `agent_message_chunk` updates (prompt text `stream N`) to a client over
stdio; each pair is a client process that spawns its agent. Pairs: acpwire client + acpwire
echo agent (v2 and v1), the Python SDK pair (agent-client-protocol, v1) and the TypeScript SDK
pairs (@agentclientprotocol/sdk, v1 and v2) from tests/interop. Rounds are interleaved (each
round runs every pair, in a rotated order). The rate is chunks / the client's own timing, from
sending the prompt to the end of the turn (v1: the prompt response; v2: `state_update` idle);
process wall time (start-up included) is shown next to it. The table is printed and written to
bench/results/stream.txt.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "tests" / "interop"
RESULTS = ROOT / "bench" / "results" / "stream.txt"
PATHS = [ROOT / "generated", ROOT / "runtime", ROOT, os.environ.get("PYTHONPATH")]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in PATHS if p)}
PY = sys.executable
TIMEOUT = 900.0

HAVE_NODE = (
    shutil.which("node") is not None
    and (INTEROP / "ts" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
)
HAVE_PY_SDK = importlib.util.find_spec("acp") is not None
ACPWIRE_CLIENT = [PY, "-m", "acpwire.examples.client"]
ACPWIRE_AGENT = [PY, "-m", "acpwire.examples.echo_agent"]


@dataclass
class Pair:
    name: str
    protocol: int
    client: list[str]
    agent: list[str]
    missing: str | None = None  # why the pair cannot run here
    rates: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def pairs() -> list[Pair]:
    no_node = None if HAVE_NODE else "node or tests/interop/ts/node_modules missing"
    no_sdk = None if HAVE_PY_SDK else "agent-client-protocol not installed"
    return [
        Pair("acpwire", 2, [*ACPWIRE_CLIENT, "--protocol", "2"], ACPWIRE_AGENT),
        Pair("acpwire", 1, [*ACPWIRE_CLIENT, "--protocol", "1"], ACPWIRE_AGENT),
        Pair("python-sdk", 1, [PY, "py/client_v1.py"], [PY, "py/agent_v1.py"], no_sdk),
        Pair("ts-sdk", 1, ["node", "ts/client_v1.mjs"], ["node", "ts/agent_v1.mjs"], no_node),
        Pair("ts-sdk", 2, ["node", "ts/client_v2.mjs"], ["node", "ts/agent_v2.mjs"], no_node),
    ]


def parse_output(stdout: str) -> tuple[int, int, float]:
    """(protocol, chunks, seconds) from a client's output: acpwire's transcript ending in a dict
    repr, or an SDK client's JSON summary line."""
    last = stdout.strip().splitlines()[-1]
    if last.startswith("{'"):
        result: dict[str, Any] = ast.literal_eval(last)
        protocol = int(stdout.split("initialized: protocol version ", 1)[1].split()[0])
        return protocol, result["chunks"], result["seconds"]
    summary = json.loads(last)
    if not summary["ok"]:
        raise ValueError(f"client reported errors: {summary['errors']}")
    return summary["protocolVersion"], summary["chunks"], summary["seconds"]


def run_once(pair: Pair, chunks: int) -> None:
    command = [*pair.client, "--stream", str(chunks), "--", *pair.agent]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command, cwd=INTEROP, env=ENV, capture_output=True, text=True, timeout=TIMEOUT
        )
        wall = time.perf_counter() - started
        if proc.returncode != 0 or not proc.stdout.strip():
            raise ValueError(f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        protocol, got, seconds = parse_output(proc.stdout)
        if (protocol, got) != (pair.protocol, chunks):
            raise ValueError(
                f"protocol {protocol}, {got} chunks; expected {pair.protocol}, {chunks}"
            )
    except (ValueError, KeyError, IndexError, SyntaxError, subprocess.TimeoutExpired) as exc:
        pair.failures.append(str(exc))
        print(f"  {pair.name} v{pair.protocol}: FAILED {exc}", file=sys.stderr)
        return
    pair.rates.append(chunks / seconds)
    pair.walls.append(wall)
    print(f"  {pair.name} v{pair.protocol}: {chunks / seconds:,.0f} msgs/s", file=sys.stderr)


def median_rate(pairs: list[Pair], name: str, protocol: int) -> float | None:
    for pair in pairs:
        if (pair.name, pair.protocol) == (name, protocol) and pair.rates:
            return statistics.median(pair.rates)
    return None


def ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else "-"


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def node_version() -> str:
    if not HAVE_NODE:
        return "not installed"
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def table(pairs: list[Pair], chunks: int, rounds: int) -> str:
    py_sdk = median_rate(pairs, "python-sdk", 1)
    header = (
        f"{'pair':14} {'median msgs/s':>13} {'spread':>7} {'vs python-sdk v1':>16} "
        f"{'vs ts-sdk same ver':>18} {'process wall s':>14}  timing"
    )
    lines = [
        f"stdio streaming: {chunks:,} agent_message_chunk updates per run, {rounds} interleaved "
        f"rounds, median per pair",
        f"python {platform.python_version()}, node {node_version()}, msgspec "
        f"{version('msgspec')}, trio {version('trio')}, agent-client-protocol "
        f"{version('agent-client-protocol')}, @agentclientprotocol/sdk 2.4.0; "
        f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs",
        "",
        header,
        "-" * len(header),
    ]
    for pair in pairs:
        label = f"{pair.name} v{pair.protocol}"
        if not pair.rates:
            reason = pair.missing or f"failed: {pair.failures[-1][:60]}"
            lines.append(f"{label:14} {'-':>13}  skipped: {reason}")
            continue
        rate = statistics.median(pair.rates)
        spread = (max(pair.rates) - min(pair.rates)) / rate * 100
        ts_same = median_rate(pairs, "ts-sdk", pair.protocol)
        failed = f" ({len(pair.failures)} failed runs)" if pair.failures else ""
        lines.append(
            f"{label:14} {rate:13,.0f} {spread:6.1f}% {ratio(rate, py_sdk):>16} "
            f"{ratio(rate, ts_same):>18} {statistics.median(pair.walls):14.2f}  "
            f"client: prompt -> end of turn{failed}"
        )
    lines += [
        "",
        "msgs/s = chunks / the client's own measurement from sending the prompt to the end of "
        "the turn",
        "(v1: prompt response; v2: state_update idle). process wall s = the whole client run, "
        "incl. start-up.",
        "spread = (max - min) / median over the rounds. ratio > 1: faster than that pair.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", type=int, nargs="?", default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10k chunks, one round")
    args = parser.parse_args()
    if args.quick:
        args.chunks, args.rounds = 10_000, 1
    runnable = pairs()
    active = [pair for pair in runnable if pair.missing is None]
    for round_no in range(args.rounds):
        print(f"round {round_no + 1}/{args.rounds}", file=sys.stderr)
        shift = round_no % len(active)
        for pair in active[shift:] + active[:shift]:
            run_once(pair, args.chunks)
    report = table(runnable, args.chunks, args.rounds)
    print(report)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report + "\n")
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
