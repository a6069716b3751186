"""Why a request costs what it costs on an idle machine: per round trip, how often each process
sleeps and wakes, what system calls it makes, and which of its threads run; counted by the
kernel (`perf stat`), so the figures do not depend on the machine's load as wall times do.

    python bench/wakeups.py [--only LABEL...] [--counts N1 N2] [--baseline CHECKOUT]

Linux only; needs `perf` with tracepoints (root, or perf_event_paranoid <= -1).

Cases, each run with N1 and then N2 `session/new` round trips; a figure is the difference of
the two runs' totals divided by N2 - N1, so start-up and shut-down cancel out:

- `agent ...`: bench/agents.py's raw client (this script: blocking `os.write` / `os.read`)
  against each agent (acpwire's echo agent on trio and asyncio, the TypeScript SDK's v2 and
  v1 agents, bench/floor_agent.py); the agent process is counted.
- `pair ...`: bench/stdio.py's pairs (`--roundtrips N`), client and agent counted apart (the
  agent runs under a `perf stat` of its own; the client's is the whole tree less the agent's).

Columns per process and round trip: `sleeps` (voluntary context switches: the process blocked,
and each wake-up of a sleeping CPU costs microseconds on a VM), `preempted` (involuntary),
`migr` (CPU migrations), `syscalls` (all) and the ones that matter here by name, `cpu µs`
(task-clock: the one figure the differencing leaves noisy, start-up's CPU time varies by
milliseconds between runs, and the load inflates it); sampled every 5 ms while the longer run
ran: `threads` (the most the process had) and `same cpu` (the share of samples in which
client and agent had last run on one CPU). On a busy machine a process that would sleep is
often preempted first (its peer, woken on the same CPU, runs): read `sleeps` + `preempted`
as the times it was switched out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import agents as raw  # the raw client and the agents' commands (bench/ is on the path)
import stdio  # the pairs' commands

SYSCALLS = ("read", "write", "writev", "epoll_wait", "epoll_pwait", "epoll_ctl", "futex")
EVENTS = [
    "-e", "task-clock", "-e", "context-switches", "-e", "cpu-migrations",
    "-e", "sched:sched_switch", "--filter", "prev_state == 0",  # preempted while runnable
    "-e", "raw_syscalls:sys_enter",
    *(arg for name in SYSCALLS for arg in ("-e", f"syscalls:sys_enter_{name}")),
]  # fmt: skip
SAMPLED = ("threads", "same cpu")  # of the second run, not differenced
COLUMNS = ("sleeps", "preempted", "migr", "syscalls", *SYSCALLS, "cpu µs", *SAMPLED)


def perf_stat(output: Path) -> list[str]:
    return ["perf", "stat", "-x", ",", "-o", str(output), *EVENTS, "--"]


def read_perf(output: Path) -> dict[str, float]:
    counts: dict[str, float] = {}
    for row in output.read_text().splitlines():
        fields = row.split(",")
        if len(fields) < 3 or row.startswith("#"):
            continue
        value, name = fields[0], fields[2]
        if value.startswith("<"):  # <not counted>
            raise RuntimeError(f"perf could not count {name}: {row}")
        counts[name] = float(value)
    switches = counts["context-switches"]
    preempted = counts["sched:sched_switch"]
    result = {
        "sleeps": switches - preempted,
        "preempted": preempted,
        "migr": counts["cpu-migrations"],
        "syscalls": counts["raw_syscalls:sys_enter"],
        "cpu µs": counts["task-clock"] * 1e3,  # msec
    }
    for name in SYSCALLS:
        result[name] = counts[f"syscalls:sys_enter_{name}"]
    return result


def threads_of_tree(root: int) -> dict[int, tuple[str, int]]:
    """pid -> (command, threads) of `root` and its descendants (perf left out, but for the
    root)."""
    found: dict[int, tuple[str, int]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
        threads = int(status.split("Threads:")[1].split()[0])
        if cmdline[0] != b"perf" or pid == root:
            found[pid] = (b" ".join(cmdline[:3]).decode(errors="replace"), threads)
    return found


def last_cpu(pid: int) -> int | None:
    """The CPU the process's main thread last ran on (None once it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[36])
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


class Watch:
    """Sampled every few ms while a case runs: the most threads the client and the agent had,
    and how often the two had last run on the same CPU (a wake-up on the CPU the waker runs
    on costs a task switch; on an idle CPU of a VM, that vCPU's wake-up)."""

    def __init__(self, root: int, client: int) -> None:
        self.root, self.client = root, client  # the tree's root: the client, or perf
        self.most: dict[str, int] = {}
        self.samples = self.together = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.wait(0.005):
            agent = None
            for pid, (_, threads) in threads_of_tree(self.root).items():
                role = "client" if pid == self.client else "agent"
                self.most[role] = max(self.most.get(role, 0), threads)
                agent = pid if role == "agent" else agent
            cpus = (last_cpu(self.client), last_cpu(agent) if agent else None)
            if None not in cpus:
                self.samples += 1
                self.together += cpus[0] == cpus[1]

    def stop(self) -> Watch:
        self.done.set()
        self.thread.join()
        return self


@dataclass
class Case:
    label: str
    kind: str  # "agent" (raw client) or "pair"
    client: list[str]
    agent: list[str]
    protocol: int
    env: dict[str, str]
    per_process: dict[str, dict[str, float]] = field(default_factory=dict)


def agent_run(case: Case, count: int, work: Path) -> dict[str, dict[str, float]]:
    """The raw client against the agent (under perf stat): the agent's totals."""
    output = work / "agent.txt"
    agent = raw.Agent(case.label, [*perf_stat(output), *case.agent], case.protocol, env=case.env)
    client = raw.RawClient(agent)
    watch = Watch(client.proc.pid, os.getpid())
    try:
        raw.answered(client.call(raw.initialize(case.protocol)), 0)
        for i in range(1, count + 1):
            raw.answered(client.call(raw.new_session(i, case.protocol)), i)
    finally:
        client.close()
    watch.stop()
    counts = read_perf(output)
    counts["threads"] = watch.most.get("agent", 0)
    counts["same cpu"] = watch.together / max(watch.samples, 1)
    return {"agent": counts}


def pair_run(case: Case, count: int, work: Path) -> dict[str, dict[str, float]]:
    """The pair: the agent under a perf stat of its own, the client's threads under one
    attached once the client has spawned the agent (an inherited count would take in the
    agent too, or not, depending on which exits first)."""
    client_out, agent_out = work / "client.txt", work / "agent.txt"
    command = [*case.client, "--roundtrips", str(count), "--", *perf_stat(agent_out), *case.agent]
    proc = subprocess.Popen(
        command, cwd=raw.INTEROP, env=case.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    while len(threads_of_tree(proc.pid)) < 2 and proc.poll() is None:
        time.sleep(0.001)
    client_perf = subprocess.Popen(
        ["perf", "stat", "--no-inherit", "-p", str(proc.pid), "-x", ",", "-o", str(client_out),
         *EVENTS]
    )  # fmt: skip
    watch = Watch(proc.pid, proc.pid)
    _, err = proc.communicate(timeout=300)
    watch.stop()
    client_perf.wait(timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"{case.label}: exit {proc.returncode}: {err.decode()[-500:]}")
    agent, client = read_perf(agent_out), read_perf(client_out)
    agent["threads"], client["threads"] = watch.most.get("agent", 0), watch.most.get("client", 0)
    agent["same cpu"] = client["same cpu"] = watch.together / max(watch.samples, 1)
    return {"client": client, "agent": agent}


def measure(case: Case, counts: tuple[int, int]) -> None:
    runs = []
    for count in counts:
        with tempfile.TemporaryDirectory() as work:
            run = agent_run if case.kind == "agent" else pair_run
            runs.append(run(case, count, Path(work)))
    first, second = runs
    for process, totals in second.items():
        case.per_process[process] = {
            k: v if k in SAMPLED else (v - first[process][k]) / (counts[1] - counts[0])
            for k, v in totals.items()
        }


def cases(baseline: Path | None) -> list[Case]:
    found = []
    for agent in raw.agents(baseline):
        if agent.missing is None and not agent.label.startswith("python-sdk"):
            found.append(Case(f"agent {agent.label}", "agent", [], agent.command,
                              agent.protocol, agent.env))  # fmt: skip
    pair_list = [p for p in stdio.pairs() if p.missing is None and p.name != "python-sdk"]
    if baseline is not None:
        pair_list += [stdio.baseline_pair(2, loop, baseline) for loop in ("trio", "asyncio")]
    for pair in pair_list:
        if pair.protocol == 2 or pair.name == "ts-sdk":
            found.append(Case(f"pair {pair.label}", "pair", pair.client, pair.agent,
                              pair.protocol, pair.env))  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="LABEL", help="cases whose label starts so")
    parser.add_argument("--counts", nargs=2, type=int, default=(1000, 6000), metavar="N")
    parser.add_argument("--baseline", type=Path, help="another checkout: its agent and pair too")
    args = parser.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("wakeups.py counts with `perf stat`: install perf (linux-perf)")
    selected = [
        c for c in cases(args.baseline)
        if not args.only or any(c.label.startswith(o) for o in args.only)
    ]  # fmt: skip
    header = f"{'case':<24} {'process':<7} " + " ".join(f"{c:>9}" for c in COLUMNS)
    print(f"per round trip (runs of {args.counts[0]} and {args.counts[1]}, differenced)")
    print(header)
    for case in selected:
        measure(case, tuple(args.counts))
        for process, figures in case.per_process.items():
            cells = " ".join(
                f"{figures[c]:>9.0f}" if c == "threads" else f"{figures[c]:>9.2f}" for c in COLUMNS
            )
            print(f"{case.label:<24} {process:<7} {cells}", flush=True)


if __name__ == "__main__":
    main()
