"""What the bench scripts' reports share: a case's median and spread over the rounds, ratios,
the machine and tool versions a report names, and writing it to bench/results/."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def relative_spread(values: list[float]) -> float:
    """(max - min) / median of a case's values over the rounds."""
    return (max(values) - min(values)) / statistics.median(values)


def spread(values: list[float]) -> str:
    """`relative_spread` as a column (`  12.3%`); `      -` for fewer than two values."""
    if len(values) < 2:
        return "      -"
    return f"{relative_spread(values) * 100:6.1f}%"


class Sampled:
    """A case measured once a round (`samples`): its median and relative spread."""

    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return relative_spread(self.samples)


def median_of(rows: Iterable[Any], label: str, attr: str) -> float | None:
    """The median of attribute `attr` (a list of values) of the row whose `label` is `label`;
    None when there is no such row or it has no values."""
    for row in rows:
        values = getattr(row, attr)
        if row.label == label and values:
            return statistics.median(values)
    return None


def ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else "-"


def version(dist: str) -> str:
    """An installed distribution's version, or `not installed`."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def node_version() -> str:
    if shutil.which("node") is None:
        return "not installed"
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def machine() -> str:
    """`x86_64 Linux, 2 CPUs`."""
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: `0.52 0.61 0.70`."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_name() -> str:
    """The processor's model name (/proc/cpuinfo), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(
                line.split(":", 1)[1].strip() for line in f if line.startswith("model name")
            )
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def write(text: str, path: Path) -> None:
    """Write the report `text` to `path` and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n")
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"\nwritten to {where}")


def publish(text: str, path: Path) -> None:
    """Print the report `text` and write it to `path`."""
    print(text)
    write(text, path)
