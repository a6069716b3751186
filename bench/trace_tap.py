"""The tap's overhead (`acpwire trace`), side by side with the direct pipe in one run:

    python bench/trace_tap.py [--quick] [--rounds R]

Each measurement runs direct and through `acpwire trace --out FILE -- <agent>`, rounds
interleaved (direct, tap, direct, tap, ...), medians over the rounds:

1. ACP streaming: the fixture client (trio) asks the echo agent for N `agent_message_chunk`
   updates; msgs/s as the client times it; the ratio tap / direct (target >= 0.9).
2. Round trips: M sequential `session/new`; the added latency per line is
   (p50 through the tap - p50 direct) / 2, two lines per round trip (target <= 5 µs).
3. The tap's own CPU per line: the CPU seconds the tap spent forwarding and recording (the
   trace's `exit` record, `cpu`) / the lines it recorded, on the streaming runs (target <= 5 µs).
4. Raw lines: a producer writing L ready-made `session/update` lines as fast as it can into a
   reader that only counts bytes: the tap's ceiling when the peers cost nothing (lines/s,
   ratio; no target: no ACP peer is that fast).

Writes the table to bench/results/trace_tap.txt too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import RESULTS, ROOT, write

OUT = RESULTS / "trace_tap.txt"
PY = sys.executable
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        p
        for p in (str(ROOT / "generated"), str(ROOT / "runtime"), os.environ.get("PYTHONPATH"))
        if p
    ),
}
ECHO_AGENT = [PY, "-m", "acpwire.fixtures.echo_agent"]
CLIENT = [PY, "-m", "acpwire.fixtures.client"]
LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text",'
    b'"text":"a chunk of the answer, about as long as a token or three "}}}}\n'
)
PRODUCER = (
    "import os, sys\n"
    f"block = {LINE!r} * 1000\n"
    "for _ in range(int(sys.argv[1]) // 1000):\n"
    "    view = memoryview(block)\n"
    "    while view:\n"
    "        view = view[os.write(1, view):]\n"
)
READER = (
    "import os, subprocess, sys, time\n"
    "agent = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)\n"
    "total = len(os.read(agent.stdout.fileno(), 1 << 16))\n"
    "started = time.perf_counter()  # from the first byte: start-up aside\n"
    "while data := os.read(agent.stdout.fileno(), 1 << 16):\n"
    "    total += len(data)\n"
    "print(total, time.perf_counter() - started)\n"
    "agent.stdin.close(); agent.wait()\n"
)


FORWARDER = (
    "import os, subprocess, sys, threading\n"
    "agent = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)\n"
    "def forward(source, sink):\n"
    "    while data := os.read(source, 1 << 16):\n"
    "        view = memoryview(data)\n"
    "        while view:\n"
    "            view = view[os.write(sink, view):]\n"
    "    os.close(sink)\n"
    "threading.Thread(target=forward, args=(0, agent.stdin.fileno()), daemon=True).start()\n"
    "out = threading.Thread(target=forward, args=(agent.stdout.fileno(), 1))\n"
    "out.start()\n"
    "code = agent.wait()\n"
    "out.join()\n"
    "sys.exit(code)\n"
)
"""The hop alone: a process forwarding both ways as the tap does, recording nothing."""

HOWS = ("direct", "hop", "tap")


def via(how: str, command: list[str], trace: Path) -> list[str]:
    """The agent command run directly, behind the bare forwarder, or behind the tap."""
    if how == "direct":
        return command
    if how == "hop":
        return [PY, "-c", FORWARDER, *command]
    return tapped(command, trace)


def tapped(command: list[str], trace: Path) -> list[str]:
    return [PY, "-m", "acpwire", "trace", "--out", str(trace), "--", *command]


def client_result(mode: list[str], agent: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [*CLIENT, *mode, "--", *agent], capture_output=True, text=True, env=ENV, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} failed: {done.stderr[-2000:]}")
    last = done.stdout.strip().splitlines()[-1]
    result: dict[str, float] = eval(last, {})  # the fixture client's dict repr
    return result


def tap_cpu_per_line(trace: Path) -> float:
    """µs of the tap's CPU per recorded line (its `exit` record's `cpu`)."""
    records = [json.loads(line) for line in trace.read_bytes().splitlines()[1:]]
    lines = sum(1 for r in records if "line" in r or "text" in r)
    return records[-1]["cpu"] / lines * 1e6


def raw_lines(count: int, how: str, trace: Path) -> float:
    producer = [PY, "-c", PRODUCER, str(count)]
    done = subprocess.run(
        [PY, "-c", READER, *via(how, producer, trace)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    total, seconds = done.stdout.split()
    assert int(total) == count // 1000 * 1000 * len(LINE), done.stdout
    return count / float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: small counts, 2 rounds")
    parser.add_argument("--rounds", type=int)
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 5)
    chunks, trips, raw = (5_000, 300, 50_000) if args.quick else (100_000, 3_000, 1_000_000)
    rates: dict[str, list[float]] = {how: [] for how in HOWS}
    p50s: dict[str, list[float]] = {how: [] for how in HOWS}
    raws: dict[str, list[float]] = {how: [] for how in HOWS}
    cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="acpwire-tap-bench-") as tmp:
        trace = Path(tmp) / "bench.trace"
        for round_ in range(rounds):
            for how in HOWS:
                agent = via(how, ECHO_AGENT, trace)
                rates[how].append(client_result(["--stream", str(chunks)], agent)["msgs_per_sec"])
                if how == "tap":
                    cpu.append(tap_cpu_per_line(trace))
                p50s[how].append(client_result(["--roundtrips", str(trips)], agent)["p50_ms"])
                raws[how].append(raw_lines(raw, how, trace))
            print(f"  round {round_ + 1}/{rounds} done", file=sys.stderr)
    m = {
        name: {how: statistics.median(v[how]) for how in HOWS}
        for name, v in (("rate", rates), ("p50", p50s), ("raw", raws))
    }
    added_us = (m["p50"]["tap"] - m["p50"]["direct"]) / 2 * 1e3
    hop_us = (m["p50"]["hop"] - m["p50"]["direct"]) / 2 * 1e3
    cpu_us = statistics.median(cpu)
    rows = [
        f"acpwire trace overhead ({rounds} interleaved rounds, medians; {time.strftime('%Y-%m-%d')})",
        "direct: the client spawns the agent; hop: behind a bare Python forwarder (two threads,"
        " no trace); tap: behind `acpwire trace`",
        "",
        f"{'measurement':40} {'direct':>11} {'hop':>11} {'tap':>11} {'tap/direct':>11} {'tap/hop':>8} target",
        f"{'1. ACP streaming msgs/s (' + format(chunks, ',') + ')':40} "
        + " ".join(f"{m['rate'][how]:>11,.0f}" for how in HOWS)
        + f" {m['rate']['tap'] / m['rate']['direct']:>10.2f}x {m['rate']['tap'] / m['rate']['hop']:>7.2f}x"
        " >= 0.9x direct",
        f"{'2. round trip p50 ms (' + format(trips, ',') + ')':40} "
        + " ".join(f"{m['p50'][how]:>11.3f}" for how in HOWS)
        + f" {added_us:>8.1f} µs {added_us - hop_us:>5.1f} µs <= 5 µs/line",
        f"{'3. tap CPU µs per line (streaming)':40} {'-':>11} {'-':>11} {cpu_us:>11.2f} "
        f"{cpu_us:>8.2f} µs {'':>8} <= 5 µs/line",
        f"{'4. raw lines/s (' + format(raw, ',') + ', free peers)':40} "
        + " ".join(f"{m['raw'][how]:>11,.0f}" for how in HOWS)
        + f" {m['raw']['tap'] / m['raw']['direct']:>10.2f}x {m['raw']['tap'] / m['raw']['hop']:>7.2f}x"
        " (ceiling)",
        "",
        "2: added latency per line = (p50 - p50 direct) / 2, two lines a round trip; tap/hop column:"
        " the tap's own part (tap - hop).",
        "3: the CPU the tap spent forwarding and recording (the trace's exit record) / lines recorded.",
    ]
    text = "\n".join(rows) + "\n"
    print(text)
    if not args.quick:
        write(text, OUT)


if __name__ == "__main__":
    main()
