"""Where the two processes of a latency measurement run: on one CPU, or each on its own.

On a machine with idle CPUs the scheduler decides per run whether a client and its agent
share a CPU (each message is a task switch, a few µs) or not (each message wakes the peer's
CPU; on a VM whose idle vCPUs halt that costs tens of µs). One free run lands in either mode
and stays there, for node's processes as for ours, so a latency ratio between two free runs
measures the placement as much as the runtimes. The placed runs pin both processes (all
their threads) so that every runtime is timed in the same mode.

    python bench/placement.py CPU COMMAND...   # runs COMMAND pinned to CPU (Linux)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PLACEMENTS = ("one CPU", "two CPUs")
# the CPUs this process may use at start (a placed run narrows its own set for a while)
USABLE = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def unavailable(placement: str) -> str | None:
    """Why a placement cannot run here, or None."""
    if not hasattr(os, "sched_setaffinity"):
        return "no sched_setaffinity here"
    if placement == "two CPUs" and len(USABLE) < 2:
        return "one CPU only"
    return None


def cpus(placement: str) -> tuple[int, int]:
    """(the client's CPU, the agent's CPU) in a placement that is not `unavailable`."""
    return USABLE[0], USABLE[0] if placement == "one CPU" else USABLE[1]


def pinned(command: list[str], cpu: int) -> list[str]:
    """`command` run on `cpu` only (its children inherit it)."""
    return [sys.executable, str(Path(__file__).resolve()), str(cpu), *command]


if __name__ == "__main__":
    os.sched_setaffinity(0, {int(sys.argv[1])})
    os.execvp(sys.argv[2], sys.argv[2:])
