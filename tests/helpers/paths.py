"""Where things are in the repository, for files the tests read and the peers they run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository (schema/, generated/, runtime/, tests/, README.md, ...)."""

INTEROP = ROOT / "tests" / "interop"
"""The official SDK peers (tests/interop/README.md)."""


def types_source(surface: Path) -> str:
    """Every generated definition of the surface package at `surface` (e.g.
    `.../acp_schema/v2`): the modules of its `_types` package, one per area, concatenated."""
    return "\n".join(path.read_text() for path in sorted((surface / "_types").glob("*.py")))
