"""acpwire's pytest plugin (the `pytest11` entry point `acpwire`, registered when acpwire is
installed; `-p acpwire.testing.pytest_plugin` loads it explicitly): the fixtures
`acp_fake_agent` and `acp_client_for`. acpwire itself is imported when a test first asks for
one of them, not when pytest starts."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from acpwire.testing import AgentScenario, FakeAgent, FakeClient

__all__ = ["acp_client_for", "acp_fake_agent"]


@pytest.fixture
def acp_fake_agent(tmp_path: Path) -> Callable[[AgentScenario | Mapping[str, Any]], FakeAgent]:
    """`acp_fake_agent(scenario)` builds a `FakeAgent` (`acpwire.testing`) whose `command()`
    writes its files to the test's `tmp_path`."""
    from acpwire.testing import FakeAgent

    numbers = itertools.count()

    def make(scenario: AgentScenario | Mapping[str, Any]) -> FakeAgent:
        return FakeAgent(scenario, directory=tmp_path / f"acp_fake_agent_{next(numbers)}")

    return make


@pytest.fixture
def acp_client_for() -> Callable[..., AbstractAsyncContextManager[FakeClient]]:
    """`acpwire.testing.client_for`: `async with acp_client_for(MyAgent) as client:`."""
    from acpwire.testing import client_for

    return client_for
