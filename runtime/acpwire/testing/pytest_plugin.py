"""acpwire's pytest plugin: the fixtures `acp_fake_agent` and `acp_client_for`.

Installing acpwire registers it (the `pytest11` entry point `acpwire`); `-p
acpwire.testing.pytest_plugin` loads it where acpwire is not installed as a distribution (a
source checkout on `PYTHONPATH`), and `-p no:acpwire` turns it off. The fixtures are
synchronous: what they give is used with `async with` / `await` inside the test, so any plugin
that runs async tests will do (anyio's, pytest-trio, pytest-asyncio).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .fake_agent import FakeAgent, MakeFakeAgent
from .fake_client import ClientFor, client_for
from .scenario import AgentScenario

__all__ = ["acp_client_for", "acp_fake_agent"]


@pytest.fixture
def acp_fake_agent(tmp_path: Path) -> MakeFakeAgent:
    """`acp_fake_agent(scenario)` builds a `FakeAgent` whose `command()` writes its files to
    the test's `tmp_path`."""
    numbers = itertools.count()

    def make(scenario: AgentScenario | Mapping[str, Any]) -> FakeAgent:
        return FakeAgent(scenario, directory=tmp_path / f"acp_fake_agent_{next(numbers)}")

    return make


@pytest.fixture
def acp_client_for() -> ClientFor:
    """`client_for` (`acpwire.testing`): `async with acp_client_for(MyAgent) as client:`."""
    return client_for
