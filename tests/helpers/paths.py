"""Where things are in the repository, for files the tests read and the peers they run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository (schema/, generated/, runtime/, tests/, README.md, ...)."""

INTEROP = ROOT / "tests" / "interop"
"""The official SDK peers (tests/interop/README.md)."""
