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
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from report import spread

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


class Placed(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def placed(self) -> dict[str, list[float]]: ...  # placement: p50s


R = TypeVar("R", bound=Placed)


def placed_table(
    rows: Sequence[R],
    first: str,
    label_width: int,
    unit: str,
    form: str,
    versus: Callable[[R, str, float], str],
) -> list[str]:
    """One row per agent or pair: per placement its median p50 (`form`), spread, and the
    cells `versus(row, placement, p50)` gives (comparing it with others' in the same
    placement; `versus.__doc__` heads them), or why it did not run."""
    comparison = versus.__doc__ or "vs"
    header = f"{first:{label_width}}" + "".join(
        f" {placement + ' p50 ' + unit:>16} {'spread':>7} {comparison}" for placement in PLACEMENTS
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        cells = []
        for placement in PLACEMENTS:
            p50s = row.placed.get(placement)
            if not p50s:
                why = unavailable(placement) or "no result"
                cells.append(f" {'-':>16} {'':7} {why:>{len(comparison)}}")
                continue
            p50 = statistics.median(p50s)
            cells.append(f" {p50:16{form}} {spread(p50s)} {versus(row, placement, p50)}")
        lines.append(f"{row.label:{label_width}}" + "".join(cells))
    return lines


def placed_median(rows: Sequence[Placed], label: str, placement: str) -> float | None:
    """The median p50 of the row `label` in a placement (None: it has none)."""
    for row in rows:
        if row.label == label and row.placed.get(placement):
            return statistics.median(row.placed[placement])
    return None


if __name__ == "__main__":
    os.sched_setaffinity(0, {int(sys.argv[1])})
    os.execvp(sys.argv[2], sys.argv[2:])
