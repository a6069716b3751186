"""A process under `valgrind --tool=callgrind`, read while it runs: the instruction count the
deterministic benchmarks (agent_instructions.py, server_instructions.py) difference."""

from __future__ import annotations

import re
import subprocess

THREAD_TOTAL = re.compile(r"^\s*Th\s+\d+\s+([\d,]+)\s*$", re.MULTILINE)


def instructions(pid: int) -> int:
    """Instructions the process `pid` (under callgrind) executed so far, all threads."""
    shown = subprocess.run(
        ["callgrind_control", "-e", "Ir", str(pid)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    totals = THREAD_TOTAL.findall(shown)
    if not totals:
        raise ValueError(f"no instruction count in callgrind_control's output: {shown!r}")
    return sum(int(total.replace(",", "")) for total in totals)
