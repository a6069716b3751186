"""Instructions per cheap request of the agent process (callgrind): bench/agents.py's request
figure in a unit the machine's load does not move.

    python bench/agent_instructions.py [N] [--only LABEL...] [--baseline CHECKOUT] [--profile K]

Each agent (bench/agents.py's `acpwire trio`, `acpwire asyncio` and `floor`; with
`--baseline CHECKOUT`, that checkout's echo agent on both loops beside them) runs under
`valgrind --tool=callgrind` with PYTHONHASHSEED=0, driven by agents.py's raw client (blocking
`os.write` / `os.read`, one `session/new` line, then its answer): `initialize`, WARM_UP
requests, then runs of FEW and N requests; the agent's instruction count
(`callgrind_control -e Ir`, user space) over the run of N less the run of FEW, divided by
N - FEW, is the cost of one request, start-up and warm-up taken out. Runs of the same code
agree within about 0.2% (one in ten was 0.6% off: repeat a run before trusting a smaller
difference). Needs valgrind (callgrind_control, vgdb) on Linux; ~1.5 min per agent.

`--profile K`: instead, no valgrind: each agent under cProfile, runs of FEW and N requests in
two processes, and the K functions called most per request (call counts differenced: exact;
a coroutine's every resumption counts as a call), with the calls per request in all.
"""

from __future__ import annotations

import argparse
import pstats
import re
import tempfile
from dataclasses import replace
from pathlib import Path

from agents import PY, Agent, RawClient, agents, answered, initialize, new_session
from callgrind import instructions

WARM_UP = 200
FEW = 500
LABELS = ("acpwire trio", "acpwire asyncio", "floor", "baseline trio", "baseline asyncio")


def requests(client: RawClient, agent: Agent, first: int, count: int) -> int:
    """`count` session/new requests, ids from `first`, each answered; the next id."""
    for request_id in range(first, first + count):
        answered(client.call(new_session(request_id, agent.protocol)), request_id)
    return first + count


def under_callgrind(agent: Agent, count: int, out_dir: str) -> float:
    """The agent's instructions per request (runs of `count` less `FEW`)."""
    traced = replace(
        agent,
        command=[
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out_dir}/{file_name(agent)}.%p",
            *agent.command,
        ],
        env={**agent.env, "PYTHONHASHSEED": "0"},
    )
    client = RawClient(traced)
    try:
        answered(client.call(initialize(agent.protocol)), 0)
        next_id = requests(client, agent, 1, WARM_UP)
        counts = [instructions(client.proc.pid)]
        for run in (FEW, count):
            next_id = requests(client, agent, next_id, run)
            counts.append(instructions(client.proc.pid))
    finally:
        client.close()
    few, many = counts[1] - counts[0], counts[2] - counts[1]
    return (many - few) / (count - FEW)


def profiled_calls(agent: Agent, count: int, out_dir: str) -> dict[str, int]:
    """Calls per function (cProfile) of one agent process answering WARM_UP + `count`
    requests after `initialize`."""
    out = f"{out_dir}/{file_name(agent)}.{count}.prof"
    assert agent.command[0] == PY, agent.command  # every profiled agent is a Python program
    client = RawClient(
        replace(agent, command=[PY, "-m", "cProfile", "-o", out, *agent.command[1:]])
    )
    try:
        answered(client.call(initialize(agent.protocol)), 0)
        requests(client, agent, 1, WARM_UP + count)
    finally:
        client.close()
    calls: dict[str, int] = {}
    for (file, line, name), row in pstats.Stats(out).stats.items():  # type: ignore[attr-defined]
        where = f"{shorten(file)}:{line}({name})" if line else name  # line 0: a builtin
        calls[where] = calls.get(where, 0) + row[1]
    return calls


def file_name(agent: Agent) -> str:
    return re.sub(r"\W", "_", agent.label)


def shorten(file: str) -> str:
    """A source path from its package on (`acpwire/_wire/connection.py`, `trio/_core/...`)."""
    parts = Path(file).parts
    for anchor in ("site-packages", "runtime", "generated", "bench", "lib"):
        if anchor in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(anchor) :])
    return file


def profile_table(agent: Agent, count: int, out_dir: str, top: int) -> list[str]:
    few, many = (profiled_calls(agent, n, out_dir) for n in (FEW, count))
    per_request = {
        name: (many.get(name, 0) - few.get(name, 0)) / (count - FEW)
        for name in few.keys() | many.keys()
    }
    ranked = sorted(
        ((calls, name) for name, calls in per_request.items() if calls >= 0.005), reverse=True
    )
    python_level = sum(calls for calls, name in ranked if not name.startswith(("<", "{")))
    lines = [
        f"{agent.label}: {sum(calls for calls, _ in ranked):.1f} calls per request "
        f"({python_level:.1f} of Python functions), the {top} most:"
    ]
    lines += [f"  {calls:6.2f}  {name}" for calls, name in ranked[:top]]
    return lines


def chosen_agents(args: argparse.Namespace) -> list[Agent]:
    baseline = args.baseline.resolve() if args.baseline else None
    found = [agent for agent in agents(baseline) if agent.label in LABELS]
    if args.only:
        found = [agent for agent in found if agent.label.startswith(tuple(args.only))]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requests", nargs="?", type=int, default=2_500)
    parser.add_argument("--only", nargs="+", metavar="LABEL", help="agents whose label starts so")
    parser.add_argument("--baseline", type=Path, help="another checkout: its agent joins in")
    parser.add_argument("--profile", type=int, default=0, metavar="K", help="cProfile instead")
    args = parser.parse_args()
    if args.requests <= FEW:
        parser.error(f"N must be more than {FEW}")
    found = chosen_agents(args)
    with tempfile.TemporaryDirectory() as out_dir:
        if args.profile:
            print(f"calls per cheap request (cProfile; runs of {args.requests:,} - {FEW})")
            for agent in found:
                print("\n".join(profile_table(agent, args.requests, out_dir, args.profile)))
            return
        print(
            f"agent instructions per cheap request (session/new; callgrind, runs of "
            f"{args.requests:,} - {FEW} after initialize and {WARM_UP} more)",
            flush=True,
        )
        measured = {}
        for agent in found:
            measured[agent.label] = per_request = under_callgrind(agent, args.requests, out_dir)
            print(f"{agent.label:17} {per_request:10,.0f}", flush=True)
    print("\n".join(table(measured)))


def table(measured: dict[str, float]) -> list[str]:
    """Instructions per request of each agent, against the baseline's and the floor's."""
    header = f"{'agent':17} {'per request':>11} {'vs baseline':>11} {'vs floor':>9}"
    lines = ["", header, "-" * len(header)]
    for label, per_request in measured.items():
        own = label.startswith("acpwire")
        bases = (
            measured.get(label.replace("acpwire", "baseline")) if own else None,
            measured.get("floor") if label != "floor" else None,
        )
        ratios = [f"{per_request / base:.3f}x" if base else "-" for base in bases]
        lines.append(f"{label:17} {per_request:11,.0f} {ratios[0]:>11} {ratios[1]:>9}")
    return lines


if __name__ == "__main__":
    main()
