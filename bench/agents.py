"""What a user sees of an agent, measured from outside: a cheap request answered, the agent's
start, and the import time of each package; acpwire next to the official SDKs' agents and the
raw-pipe floor, side by side in one run.

    python bench/agents.py [--quick] [--rounds R] [--requests N] [--only LABEL...]
                           [--baseline CHECKOUT]

The client is this script itself, a raw one: it spawns each agent as a process and talks
JSON-RPC lines over its stdin/stdout with blocking `os.write` / `os.read` (no event loop, no
SDK), so what is timed is the agent. Agents:

- `acpwire trio`, `acpwire asyncio`: `python -m acpwire.fixtures.echo_agent --loop L` (serves
  v2 and v1; asked for v2);
- `ts-sdk v2`, `ts-sdk v1`: the official TypeScript SDK's agents from tests/interop (node);
- `python-sdk v1`: the official Python SDK's agent from tests/interop;
- `floor`: bench/floor_agent.py, a Python loop that decodes each line with msgspec and writes
  a canned answer: what is left of any agent's work (two system calls, one decode/encode);
- with `--baseline CHECKOUT`: `baseline trio`, `baseline asyncio`, acpwire's echo agent from
  another checkout (`git worktree add /tmp/before <commit>`), for an A/B in the same run.

Measurements, per round (rounds are interleaved and rotated; medians over the rounds, with the
spread (max - min) / median):

- requests: after `initialize` and WARM_UP `session/new` requests, N more one after another;
  latency from writing a request to reading its answer's line; p50 and p99 per run.
- start: from spawning the process to reading the `initialize` answer, with bytecode cached as
  an installed package has it: PYTHONDONTWRITEBYTECODE is unset for every Python process and
  PYTHONPYCACHEPREFIX points at bench/results/pycache (written by a first, unmeasured start).
- imports: `import X` timed inside a fresh interpreter (its own start-up excluded), after the
  event loop library the program is written for, and which of trio / anyio / asyncio it
  pulled in; `python -c pass` as a whole process for scale. The top entries of
  `python -X importtime -c "import acp_schema.v2"` (median self times of --importtime runs;
  the baseline's too) follow the table.

Results are printed and written to bench/results/agents.txt.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from placement import PLACEMENTS, cpus, pinned, placed_median, placed_table, unavailable
from report import (
    RESULTS,
    ROOT,
    load_average,
    machine,
    median_of,
    node_version,
    publish,
    ratio,
    spread,
)

INTEROP = ROOT / "tests" / "interop"
PYCACHE = RESULTS / "pycache"
PY = sys.executable
WARM_UP = 200
TIMEOUT = 60.0
LABEL = 17
AGENT_TARGET = 0.7  # issue 18: p50 <= 0.7x the TypeScript SDK agent's
FLOOR_MOONSHOT = 3.0  # ... and within 3x of the raw-pipe floor
START_TARGET_MS, START_MOONSHOT_MS = 150.0, 100.0


def environment(checkout: Path | None) -> dict[str, str]:
    """Every process's environment: bytecode cached in PYCACHE, and acpwire's source tree of
    `checkout` first on the path (None: whatever this interpreter imports)."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if checkout is not None:
        paths = [checkout / "generated", checkout / "runtime", os.environ.get("PYTHONPATH")]
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths if p)
    return env


ENV = environment(ROOT)
HAVE_NODE = (
    shutil.which("node") is not None
    and (INTEROP / "ts" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
)
HAVE_PY_SDK = importlib.util.find_spec("acp") is not None
ECHO_AGENT = [PY, "-m", "acpwire.fixtures.echo_agent", "--loop"]


@dataclass
class Agent:
    label: str
    command: list[str]
    protocol: int
    env: dict[str, str] = field(default_factory=lambda: ENV)
    missing: str | None = None
    p50s: list[float] = field(default_factory=list)  # µs
    p99s: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)  # ms
    failures: list[str] = field(default_factory=list)
    placed: dict[str, list[float]] = field(default_factory=dict)  # placement: p50s (µs)


def agents(baseline: Path | None) -> list[Agent]:
    no_node = None if HAVE_NODE else "node or tests/interop/ts/node_modules missing"
    no_sdk = None if HAVE_PY_SDK else "agent-client-protocol not installed"
    found = [
        Agent("acpwire trio", [*ECHO_AGENT, "trio"], 2),
        Agent("acpwire asyncio", [*ECHO_AGENT, "asyncio"], 2),
        Agent("ts-sdk v2", ["node", "ts/agent_v2.mjs"], 2, missing=no_node),
        Agent("ts-sdk v1", ["node", "ts/agent_v1.mjs"], 1, missing=no_node),
        Agent("python-sdk v1", [PY, "py/agent_v1.py"], 1, missing=no_sdk),
        Agent("floor", [PY, str(ROOT / "bench" / "floor_agent.py")], 2),
    ]
    if baseline is not None:
        env = environment(baseline)
        found += [
            Agent("baseline trio", [*ECHO_AGENT, "trio"], 2, env=env),
            Agent("baseline asyncio", [*ECHO_AGENT, "asyncio"], 2, env=env),
        ]
    return found


def line(request_id: int, method: str, params: object) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def initialize(protocol: int) -> bytes:
    if protocol == 2:
        return line(
            0, "initialize", {"protocolVersion": 2, "info": {"name": "raw", "version": "1"}}
        )
    return line(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})


def new_session(request_id: int, protocol: int) -> bytes:
    params = {"cwd": "/tmp"} if protocol == 2 else {"cwd": "/tmp", "mcpServers": []}
    return line(request_id, "session/new", params)


class RawClient:
    """One agent process and its pipes, spoken to with blocking reads and writes."""

    def __init__(self, agent: Agent, command: list[str] | None = None) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            command or agent.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=INTEROP,
            env=agent.env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.send_fd, self.receive_fd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.pending = b""

    def call(self, data: bytes) -> bytes:
        """Write one request line; the next line read (the agents answer in order)."""
        os.write(self.send_fd, data)
        pending = self.pending
        while b"\n" not in pending:
            chunk = os.read(self.receive_fd, 65536)
            if not chunk:
                raise ValueError(f"the agent closed its stdout: {self.error_tail()}")
            pending += chunk
        answer, _, self.pending = pending.partition(b"\n")
        return answer

    def error_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-500:]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


def answered(answer: bytes, request_id: int) -> None:
    message = json.loads(answer)
    if message.get("id") != request_id or "result" not in message:
        raise ValueError(f"request {request_id} answered {answer[:200]!r}")


def start_once(agent: Agent, placement: str | None = None) -> RawClient:
    """Spawn the agent and initialize it; its start time is recorded when it runs where the
    scheduler puts it (`placement` None), else it runs pinned (bench/placement.py)."""
    command = None if placement is None else pinned(agent.command, cpus(placement)[1])
    started = time.perf_counter()
    client = RawClient(agent, command)
    try:
        answer = client.call(initialize(agent.protocol))
        if placement is None:
            agent.starts.append((time.perf_counter() - started) * 1e3)
        answered(answer, 0)
    except BaseException:
        client.close()
        raise
    return client


def requests_once(agent: Agent, count: int, placement: str | None = None) -> None:
    """One run: start the agent, then WARM_UP + count `session/new` requests one by one; with
    a placement, this process (the client) and the agent are pinned for the run."""
    if placement is None:
        timed_requests(agent, count, None)
        return
    own_cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpus(placement)[0]})
    try:
        timed_requests(agent, count, placement)
    finally:
        os.sched_setaffinity(0, own_cpus)


def timed_requests(agent: Agent, count: int, placement: str | None) -> None:
    try:
        client = start_once(agent, placement)
    except (ValueError, OSError) as exc:
        agent.failures.append(f"start: {exc}")
        return
    try:
        lines = [new_session(i, agent.protocol) for i in range(1, WARM_UP + count + 1)]
        latencies = []
        for i, data in enumerate(lines):
            started = time.perf_counter_ns()
            answer = client.call(data)
            latencies.append(time.perf_counter_ns() - started)
            answered(answer, i + 1)
        timed = sorted(latencies[WARM_UP:])
        if placement is None:
            agent.p50s.append(percentile(timed, 50) / 1e3)
            agent.p99s.append(percentile(timed, 99) / 1e3)
        else:
            agent.placed.setdefault(placement, []).append(percentile(timed, 50) / 1e3)
    except (ValueError, OSError) as exc:
        agent.failures.append(f"requests: {exc}")
    finally:
        client.close()


def starts_once(agent: Agent, count: int) -> None:
    """`count` more starts of the agent (spawn to `initialize` answered), each then closed."""
    for _ in range(count):
        try:
            start_once(agent).close()
        except (ValueError, OSError) as exc:
            agent.failures.append(f"start: {exc}")
            return


def percentile(sorted_values: list[int], p: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return float(sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)])


# --------------------------------------------------------------------------- imports


@dataclass
class ImportCase:
    label: str
    program: str  # the event loop library the program imports first ("" for none)
    module: str
    env: dict[str, str] = field(default_factory=lambda: ENV)
    times: list[float] = field(default_factory=list)  # ms
    pulled: str = ""  # which of trio / anyio / asyncio the import pulled in
    failure: str = ""


PROBE = """
import sys, time
{program}
before = set(sys.modules)
started = time.perf_counter()
import {module}
took = time.perf_counter() - started
new = set(sys.modules) - before
print(took, ",".join(m for m in ("trio", "anyio", "asyncio") if m in new))
"""


def import_cases(baseline: Path | None) -> list[ImportCase]:
    cases = [
        ImportCase("msgspec", "", "msgspec"),
        ImportCase("asyncio", "", "asyncio"),
        ImportCase("trio", "", "trio"),
        ImportCase("acp_schema", "", "acp_schema"),
        ImportCase("acp_schema.v2", "", "acp_schema.v2"),
        ImportCase("acpwire", "asyncio", "acpwire"),
        ImportCase("acpwire", "trio", "acpwire"),
    ]
    if HAVE_PY_SDK:
        cases.append(ImportCase("acp (python-sdk)", "asyncio", "acp"))
    if baseline is not None:
        env = environment(baseline)
        cases += [
            ImportCase("baseline acp_schema.v2", "", "acp_schema.v2", env=env),
            ImportCase("baseline acpwire", "asyncio", "acpwire", env=env),
            ImportCase("baseline acpwire", "trio", "acpwire", env=env),
        ]
    return cases


def import_once(case: ImportCase) -> None:
    program = f"import {case.program}" if case.program else ""
    code = PROBE.format(program=program, module=case.module)
    proc = subprocess.run([PY, "-c", code], env=case.env, capture_output=True, text=True)
    if proc.returncode != 0:
        case.failure = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
        return
    took, _, pulled = proc.stdout.strip().partition(" ")
    case.times.append(float(took) * 1e3)
    case.pulled = pulled


def interpreter_once(times: list[float]) -> None:
    started = time.perf_counter()
    subprocess.run([PY, "-c", "pass"], env=ENV, check=True)
    times.append((time.perf_counter() - started) * 1e3)


def importtime_top(module: str, env: dict[str, str], runs: int, count: int = 8) -> list[str]:
    """The modules that take longest to import themselves (median self time over `runs` runs)
    for `import module`, and the self time of acp_schema's own modules in all."""
    own: dict[str, list[int]] = {}
    cumulative: dict[str, list[int]] = {}
    totals: list[int] = []
    package: list[int] = []
    for _ in range(runs):
        proc = subprocess.run(
            [PY, "-X", "importtime", "-c", f"import {module}"],
            env=env,
            capture_output=True,
            text=True,
        )
        rows = [
            (int(match[1]), int(match[2]), match[4])
            for entry in proc.stderr.splitlines()
            if (match := re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", entry))
        ]
        for self_us, cumulative_us, name in rows:
            own.setdefault(name, []).append(self_us)
            cumulative.setdefault(name, []).append(cumulative_us)
        totals.append(sum(row[0] for row in rows))
        package.append(sum(row[0] for row in rows if row[2].split(".")[0] == "acp_schema"))
    acp_schema = sum(1 for name in own if name.split(".")[0] == "acp_schema")
    lines = [
        f"  {len(own)} modules, {statistics.median(totals) / 1e3:.1f} ms self time in all; "
        f"acp_schema's {acp_schema} modules {statistics.median(package) / 1e3:.1f} ms "
        f"(medians of {runs} runs)"
    ]
    ranked = sorted(((statistics.median(v), name) for name, v in own.items()), reverse=True)
    for median_us, name in ranked[:count]:
        lines.append(
            f"  {median_us / 1e3:7.1f} ms self {statistics.median(cumulative[name]) / 1e3:7.1f} ms "
            f"cumulative  {name}"
        )
    return lines


# --------------------------------------------------------------------------- report


def requests_table(found: list[Agent]) -> list[str]:
    header = (
        f"{'agent':{LABEL}} {'p50 µs':>8} {'spread':>7} {'p99 µs':>9} {'spread':>7} "
        f"{'vs ts-sdk v2':>12} {'vs ts-sdk v1':>12} {'vs floor':>9}"
    )
    lines = [header, "-" * len(header)]
    bases = [median_of(found, label, "p50s") for label in ("ts-sdk v2", "ts-sdk v1", "floor")]
    for agent in found:
        if not agent.p50s:
            lines.append(f"{agent.label:{LABEL}} skipped: {why(agent)}")
            continue
        p50 = statistics.median(agent.p50s)
        ratios = [ratio(p50, base) for base in bases]
        lines.append(
            f"{agent.label:{LABEL}} {p50:8.1f} {spread(agent.p50s)} "
            f"{statistics.median(agent.p99s):9.1f} {spread(agent.p99s)} "
            f"{ratios[0]:>12} {ratios[1]:>12} {ratios[2]:>9}"
        )
    return lines


def agents_placed_table(found: list[Agent]) -> list[str]:
    """The p50s with the client and the agent pinned (bench/placement.py), each against the
    faster TypeScript SDK agent's and the floor's in the same placement."""

    def versus(_: object, placement: str, p50: float) -> str:
        """vs ts-sdk vs floor"""
        bases = fastest_ts(found, placement), placed_median(found, "floor", placement)
        return f"{ratio(p50, bases[0]):>9} {ratio(p50, bases[1]):>8}"

    return placed_table(found, "agent", LABEL, "µs", ".1f", versus)


def fastest_ts(found: list[Agent], placement: str | None) -> float | None:
    """The lower of the TypeScript SDK agents' median p50s: free (None) or in a placement."""
    labels = ("ts-sdk v2", "ts-sdk v1")
    if placement is None:
        medians = [median_of(found, label, "p50s") for label in labels]
    else:
        medians = [placed_median(found, label, placement) for label in labels]
    return min((p for p in medians if p is not None), default=None)


def starts_table(found: list[Agent]) -> list[str]:
    header = f"{'agent':{LABEL}} {'median ms':>9} {'spread':>7} {'min ms':>7} {'max ms':>7}"
    lines = [header, "-" * len(header)]
    for agent in found:
        if not agent.starts:
            lines.append(f"{agent.label:{LABEL}} skipped: {why(agent)}")
            continue
        lines.append(
            f"{agent.label:{LABEL}} {statistics.median(agent.starts):9.1f} {spread(agent.starts)} "
            f"{min(agent.starts):7.1f} {max(agent.starts):7.1f}"
        )
    return lines


def imports_table(cases: list[ImportCase], interpreter: list[float]) -> list[str]:
    header = (
        f"{'import':24} {'in a program of':>15} {'median ms':>9} {'spread':>7} "
        f"{'min ms':>7}  pulled in"
    )
    lines = [header, "-" * len(header)]
    lines.append(
        f"{'(python -c pass, whole process)':40} {statistics.median(interpreter):9.1f} "
        f"{spread(interpreter)} {min(interpreter):7.1f}"
    )
    for case in cases:
        program = case.program or "-"
        if not case.times:
            lines.append(f"{case.label:24} {program:>15} failed: {case.failure}")
            continue
        lines.append(
            f"{case.label:24} {program:>15} {statistics.median(case.times):9.1f} "
            f"{spread(case.times)} {min(case.times):7.1f}  {case.pulled or '-'}"
        )
    return lines


def why(agent: Agent) -> str:
    return agent.missing or (agent.failures[-1][:100] if agent.failures else "no result")


def targets(found: list[Agent], cases: list[ImportCase]) -> list[str]:
    faster_ts = fastest_ts(found, None)
    floor = median_of(found, "floor", "p50s")
    lines = [
        f"issue 18's targets: p50 <= {AGENT_TARGET:g}x the faster TypeScript SDK agent's "
        f"(moonshot: <= {FLOOR_MOONSHOT:g}x the floor); start <= {START_TARGET_MS:g} ms "
        f"(moonshot {START_MOONSHOT_MS:g} ms); `import acpwire` in an asyncio program "
        "imports no trio"
    ]
    for agent in found:
        if not agent.label.startswith("acpwire") or not agent.p50s:
            continue
        p50 = statistics.median(agent.p50s)
        verdicts = []
        if faster_ts is not None:
            met = "met" if p50 <= AGENT_TARGET * faster_ts else "MISSED"
            verdicts.append(f"p50 {p50 / faster_ts:.2f}x ts-sdk {met}")
        if floor is not None:
            met = "met" if p50 <= FLOOR_MOONSHOT * floor else "missed"
            verdicts.append(f"{p50 / floor:.2f}x floor (moonshot {met})")
        for placement in PLACEMENTS:
            placed_ts = fastest_ts(found, placement)
            if agent.placed.get(placement) and placed_ts is not None:
                placed = statistics.median(agent.placed[placement])
                met = "met" if placed <= AGENT_TARGET * placed_ts else "MISSED"
                verdicts.append(f"on {placement} {placed / placed_ts:.2f}x ts-sdk {met}")
        if agent.starts:
            start = statistics.median(agent.starts)
            met = "met" if start <= START_TARGET_MS else "MISSED"
            moon = "met" if start <= START_MOONSHOT_MS else "missed"
            verdicts.append(f"start {start:.0f} ms {met} (moonshot {moon})")
        lines.append(f"  {agent.label:{LABEL}} " + "; ".join(verdicts))
    for case in cases:
        if case.label == "acpwire" and case.program == "asyncio" and case.times:
            trio = "trio" in case.pulled.split(",")
            verdict = "MISSED: it imports trio" if trio else "met: no trio"
            lines.append(f"  import acpwire in an asyncio program: {verdict}")
    return lines


def report(
    found: list[Agent], cases: list[ImportCase], interpreter: list[float], args: argparse.Namespace
) -> str:
    lines = [
        f"acpwire agents benchmark, {time.strftime('%Y-%m-%d %H:%M')}: {args.rounds} interleaved "
        f"rounds; python {platform.python_version()}, node {node_version()}; "
        f"{machine()}, load average {load_average()} at the end",
        "",
        f"a cheap request answered: {args.requests:,} session/new requests per run, one after "
        f"another, from a raw client (after initialize and {WARM_UP} warm-up ones)",
        *requests_table(found),
        "latency = writing the request to reading its answer's line; ratio < 1: faster than "
        "that agent.",
        "",
        "the same requests with the client and the agent pinned (bench/placement.py: the "
        "scheduler puts a free run in either mode)",
        *agents_placed_table(found),
        "vs ts-sdk = this p50 / the faster TypeScript SDK agent's in the same placement.",
        "",
        f"agent start: spawn to `initialize` answered, bytecode cached; {args.rounds} x "
        f"{args.starts} starts",
        *starts_table(found),
        "",
        f"import time, inside the interpreter, {args.rounds} x {args.imports} runs",
        *imports_table(cases, interpreter),
        "",
        "python -X importtime -c 'import acp_schema.v2', the longest self times:",
        *importtime_top("acp_schema.v2", ENV, args.importtime),
        *(
            [
                "... and the baseline's:",
                *importtime_top("acp_schema.v2", environment(args.baseline), args.importtime),
            ]
            if args.baseline
            else []
        ),
        "spread = (max - min) / median over the runs.",
        "",
        *targets(found, cases),
    ]
    failed = [f"  {agent.label}: {failure}" for agent in found for failure in agent.failures]
    if failed:
        lines += ["", "failed runs:", *failed]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--starts", type=int, default=3, help="starts per agent per round")
    parser.add_argument("--imports", type=int, default=3, help="imports per case per round")
    parser.add_argument("--importtime", type=int, default=9, help="-X importtime runs")
    parser.add_argument("--quick", action="store_true", help="500 requests, 2 rounds")
    parser.add_argument("--only", nargs="+", metavar="LABEL", help="agents whose label starts so")
    parser.add_argument("--baseline", type=Path, help="another checkout: its agent joins in")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds, args.starts, args.imports, args.importtime = 500, 2, 1, 1, 1
    baseline = args.baseline = args.baseline.resolve() if args.baseline else None
    found = agents(baseline)
    if args.only:
        found = [agent for agent in found if agent.label.startswith(tuple(args.only))]
    active = [agent for agent in found if agent.missing is None]
    cases = import_cases(baseline)
    interpreter: list[float] = []
    PYCACHE.mkdir(parents=True, exist_ok=True)
    for agent in active:  # write the bytecode cache: not measured
        starts_once(agent, 1)
        agent.starts.clear()
    for case in cases:
        import_once(case)
        case.times.clear()
    placements = [p for p in PLACEMENTS if unavailable(p) is None]
    for round_no in range(args.rounds):
        print(f"round {round_no + 1}/{args.rounds}", file=sys.stderr)
        shift = round_no % max(1, len(active))
        for agent in active[shift:] + active[:shift]:
            requests_once(agent, args.requests)
            starts_once(agent, args.starts - 1)  # requests_once started it once too
            for placement in placements:
                requests_once(agent, args.requests, placement)
            if agent.p50s:
                print(
                    f"  {agent.label}: p50 {agent.p50s[-1]:.1f} µs, start {agent.starts[-1]:.0f} ms",
                    file=sys.stderr,
                )
        for _ in range(args.imports):
            interpreter_once(interpreter)
            for case in cases:
                import_once(case)
    publish(report(found, cases, interpreter, args), RESULTS / "agents.txt")


if __name__ == "__main__":
    main()
