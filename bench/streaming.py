"""Streaming the realistic payload mix between two processes, against the raw msgspec pipe
floor; and the memory a connection holds.

    python bench/streaming.py [--quick] [--rounds R] [--updates N] [--baseline CHECKOUT]

Streaming: an agent process sends N `session/update` notifications to its client process over
a pipe, taken from the codec benchmark's corpus (bench/corpus.py: the v2 traffic of
`make_streams.py`, text chunks of 10 B - 4 KiB with non-ASCII text, tool calls with diffs,
plans, ...; its session/update lines, repeated up to N). Pairs (bench/stream_peers.py says
what each process does):

- `acpwire trio`, `acpwire asyncio`: an acpwire agent (`serve_agent`) and client (`open_agent`,
  a `session_update` handler), both on that loop; the agent sends the updates as its answer to
  `session/new`, the client times that request;
- `floor`: a writer that msgspec-encodes the same typed notifications and writes them with
  blocking `os.write`, and a reader that decodes every line with the same typed decoder; no
  event loop, no JSON-RPC state;
- with `--baseline CHECKOUT`: `baseline trio`, `baseline asyncio`, acpwire from another
  checkout.

Rates are updates per second as the client times them; the peak resident memory (VmHWM) of
both processes and the CPU time each used per update while streaming (user + system, from
/proc: what each side costs, steadier than the rate on a shared machine) are shown next to it. Memory per connection: in one process, K agents served
and K clients connected to them over `acpwire.testing` in-memory streams, each initialized
with one `session/new`, on each loop; tracemalloc's count of what they hold, per pair.

Results are printed and written to bench/results/streaming.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from report import RESULTS, ROOT, load_average, machine, publish, spread

HERE = Path(__file__).resolve().parent
PEERS = str(HERE / "stream_peers.py")
PY = sys.executable
TARGET = 0.8  # issue 18: streaming >= 0.8x the raw msgspec pipe floor
LABEL = 17

sys.path[:0] = [str(ROOT / "generated"), str(ROOT / "runtime"), str(HERE)]

import corpus as corpus_mod  # noqa: E402


def environment(checkout: Path) -> dict[str, str]:
    paths = [checkout / "generated", checkout / "runtime", os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths if p)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(RESULTS / "pycache")
    return env


@dataclass
class Pair:
    label: str
    command: list[str]
    env: dict[str, str]
    rates: list[float] = field(default_factory=list)
    agent_rss: list[int] = field(default_factory=list)  # kB
    client_rss: list[int] = field(default_factory=list)
    agent_cpu: list[float] = field(default_factory=list)  # µs per update
    client_cpu: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def pairs(updates: Path, repeat: int, checkout: Path, baseline: Path | None) -> list[Pair]:
    env = environment(checkout)
    sent = [str(updates), str(repeat)]

    def acpwire(label: str, loop: str, pair_env: dict[str, str]) -> Pair:
        agent = [PY, PEERS, "agent", *sent, "--loop", loop]
        client = [PY, PEERS, "client", *sent, "--loop", loop, "--", *agent]
        return Pair(label, client, pair_env)

    writer = [PY, PEERS, "floor-writer", *sent]
    found = [
        acpwire("acpwire trio", "trio", env),
        acpwire("acpwire asyncio", "asyncio", env),
        Pair("floor", [PY, PEERS, "floor-reader", *sent, "--", *writer], env),
    ]
    if baseline is not None:
        base_env = environment(baseline)
        found += [
            acpwire("baseline trio", "trio", base_env),
            acpwire("baseline asyncio", "asyncio", base_env),
        ]
    return found


def stream_once(pair: Pair) -> None:
    proc = subprocess.run(pair.command, env=pair.env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not proc.stdout.strip():
        pair.failures.append(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        print(f"  {pair.label}: FAILED {pair.failures[-1]}", file=sys.stderr)
        return
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    pair.rates.append(result["updates"] / result["seconds"])
    if result.get("agent_rss_kb"):
        pair.agent_rss.append(result["agent_rss_kb"])
    if result.get("client_rss_kb"):
        pair.client_rss.append(result["client_rss_kb"])
    if "agent_cpu_s" in result:
        pair.agent_cpu.append(result["agent_cpu_s"] / result["updates"] * 1e6)
    if "client_cpu_s" in result:
        pair.client_cpu.append(result["client_cpu_s"] / result["updates"] * 1e6)
    print(f"  {pair.label}: {pair.rates[-1]:,.0f} updates/s", file=sys.stderr)


def updates_file(count: int) -> tuple[Path, int, str]:
    """The corpus's session/update lines in a file, and how many times to send them for about
    `count` updates; a summary."""
    corpus = corpus_mod.load("v2", 20_000)
    lines = [line for line in corpus.lines if b'"method":"session/update"' in line]
    path = RESULTS / "stream-updates.ndjson"
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    repeat = max(1, round(count / len(lines)))
    size = sum(len(line) for line in lines) / len(lines)
    what = (
        f"the {len(lines):,} session/update lines of the v2 corpus ({size:.0f} B each on "
        f"average) sent {repeat} times over: {len(lines) * repeat:,} updates"
    )
    return path, repeat, what


# --------------------------------------------------------------------------- memory


MEMORY_PROBE = """
import sys, tracemalloc, anyio
import acp_schema.v2 as v2
from acpwire import connect, serve_agent
from acpwire.testing import memory_stream_pair

K = int(sys.argv[1])

class Agent(v2.AgentBase):
    def __init__(self, client):
        self.client = client
    async def initialize(self, params):
        return v2.InitializeResponse(protocol_version=2, info=v2.Implementation(name="a", version="1"))
    async def session_new(self, params):
        return v2.NewSessionResponse(session_id="s")

class Client(v2.ClientBase):
    def __init__(self, agent):
        self.agent = agent

async def one(task_status=anyio.TASK_STATUS_IGNORED):
    client_end, agent_end = memory_stream_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_agent(Agent, stream=agent_end))
        async with connect(client_end, v2=Client) as conn:
            info = v2.Implementation(name="c", version="1")
            await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
            await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
            task_status.started()
            await anyio.sleep_forever()

async def main():
    async with anyio.create_task_group() as tasks:
        await tasks.start(one)  # warm: imports, decoders built
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(K):
            await tasks.start(one)
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        print(held / K)
        tasks.cancel_scope.cancel()

anyio.run(main, backend=sys.argv[2])
"""


@dataclass
class Memory:
    label: str
    loop: str
    env: dict[str, str]
    per_pair: list[float] = field(default_factory=list)  # bytes
    failure: str = ""


def memory_once(case: Memory, count: int) -> None:
    command = [PY, "-c", MEMORY_PROBE, str(count), case.loop]
    proc = subprocess.run(command, env=case.env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        case.failure = proc.stderr.strip()[-200:]
        return
    case.per_pair.append(float(proc.stdout.strip().splitlines()[-1]))


# --------------------------------------------------------------------------- report


def report(found: list[Pair], memory: list[Memory], what: str, args: argparse.Namespace) -> str:
    floor = next((statistics.median(p.rates) for p in found if p.label == "floor" and p.rates), 0)
    header = (
        f"{'pair':{LABEL}} {'updates/s':>11} {'spread':>7} {'vs floor':>9} "
        f"{'agent MB':>9} {'client MB':>10} {'agent µs':>9} {'client µs':>10}"
    )
    lines = [
        f"acpwire streaming benchmark, {time.strftime('%Y-%m-%d %H:%M')}: {args.rounds} "
        f"interleaved rounds; python {platform.python_version()}, {machine()}, load average "
        f"{load_average()}",
        "",
        f"streaming: {what}",
        header,
        "-" * len(header),
    ]
    for pair in found:
        if not pair.rates:
            lines.append(
                f"{pair.label:{LABEL}} failed: {pair.failures[-1] if pair.failures else ''}"
            )
            continue
        rate = statistics.median(pair.rates)
        agent = (
            f"{statistics.median(pair.agent_rss) / 1024:9.1f}" if pair.agent_rss else "        -"
        )
        client = (
            f"{statistics.median(pair.client_rss) / 1024:10.1f}" if pair.client_rss else " " * 10
        )
        versus = f"{rate / floor:.2f}x" if floor else "-"
        cpu = "".join(
            f" {statistics.median(used):{width}.2f}" if used else " " * (width + 1)
            for used, width in ((pair.agent_cpu, 9), (pair.client_cpu, 10))
        )
        lines.append(
            f"{pair.label:{LABEL}} {rate:11,.0f} {spread(pair.rates)} {versus:>9} {agent} {client}"
            f"{cpu}"
        )
    lines += [
        "MB = peak resident set (VmHWM) of the process; spread = (max - min) / median.",
        "µs = CPU time (user + system, /proc, 10 ms ticks) of the process per update while "
        "streaming: what the process costs, less noisy than the rate on a shared machine.",
        "",
        f"memory per connection: {args.connections} agent + client pairs in one process "
        "(in-memory streams), each initialized with one session/new; tracemalloc",
    ]
    for case in memory:
        if not case.per_pair:
            lines.append(f"  {case.label:{LABEL}} failed: {case.failure}")
            continue
        lines.append(
            f"  {case.label:{LABEL}} {statistics.median(case.per_pair) / 1024:8.1f} KiB per pair "
            f"(spread {spread(case.per_pair).strip()})"
        )
    lines += ["", f"issue 18's target: streaming >= {TARGET:g}x the floor"]
    for pair in found:
        if pair.label.startswith("acpwire") and pair.rates and floor:
            ratio = statistics.median(pair.rates) / floor
            lines.append(
                f"  {pair.label:{LABEL}} {ratio:.2f}x {'met' if ratio >= TARGET else 'MISSED'}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20k updates, 2 rounds")
    parser.add_argument("--baseline", type=Path, help="another checkout: its pairs join in")
    args = parser.parse_args()
    if args.quick:
        args.updates, args.rounds, args.connections = 20_000, 2, 50
    baseline = args.baseline.resolve() if args.baseline else None
    updates, repeat, what = updates_file(args.updates)
    found = pairs(updates, repeat, ROOT, baseline)
    memory = [Memory(f"acpwire {loop}", loop, environment(ROOT)) for loop in ("trio", "asyncio")]
    if baseline is not None:
        memory += [
            Memory(f"baseline {loop}", loop, environment(baseline)) for loop in ("trio", "asyncio")
        ]
    for round_no in range(args.rounds):
        print(f"round {round_no + 1}/{args.rounds}", file=sys.stderr)
        shift = round_no % len(found)
        for pair in found[shift:] + found[:shift]:
            stream_once(pair)
        for case in memory:
            memory_once(case, args.connections)
    publish(report(found, memory, what, args), RESULTS / "streaming.txt")


if __name__ == "__main__":
    main()
