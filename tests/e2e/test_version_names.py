"""One version-naming rule across the public names: no prefix for v2, a `V1` prefix for v1
(`SessionState` / `V1SessionState`, `Negotiated` / `V1Negotiated`, ...). The names of earlier
releases still resolve, with a DeprecationWarning, and still type-check, until the next one."""

from __future__ import annotations

import importlib
from pathlib import Path

import anyio
import pytest

import acpwire.agent
import acpwire.client
from acpwire.client import Negotiated, TurnEvents, V1Negotiated, V1TurnEvents, prompt
from helpers.constants import PROMPT_V1, PROMPT_V2
from helpers.lines import state, user_message
from helpers.raw import response
from helpers.serving import raw_agent
from helpers.typecheck import mypy_strict_errors

pytestmark = pytest.mark.usefixtures("loop")

RENAMED = [
    ("acpwire.agent", "V2Factory", "AgentFactory"),
    ("acpwire.agent", "V1Factory", "V1AgentFactory"),
    ("acpwire.client", "V2Factory", "ClientFactory"),
    ("acpwire.client", "V1Factory", "V1ClientFactory"),
    ("acpwire.client", "V2Connection", "Negotiated"),
    ("acpwire.client", "V1Connection", "V1Negotiated"),
    ("acpwire.client", "V2Event", "TurnEvent"),
    ("acpwire.client", "V1Event", "V1TurnEvent"),
    ("acpwire.client", "V2TurnEvents", "TurnEvents"),
    ("acpwire", "V2Connection", "Negotiated"),
    ("acpwire", "V1Connection", "V1Negotiated"),
    ("acpwire", "V2Event", "TurnEvent"),
    ("acpwire", "V1Event", "V1TurnEvent"),
    ("acpwire", "V2TurnEvents", "TurnEvents"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED, ids=lambda x: x)
def test_an_old_name_warns_and_gives_the_new_one(module: str, old: str, new: str) -> None:
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{old} is called {module}\.{new}"):
        assert getattr(package, old) is getattr(package, new)
    assert new in package.__all__ and old not in package.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"'acpwire\.client' has no attribute 'V3Connection'"):
        acpwire.client.V3Connection  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError):
        from acpwire.agent import V3Factory  # type: ignore[attr-defined]  # noqa: F401


def test_no_public_name_carries_a_v2_mark() -> None:
    for package in (acpwire, acpwire.agent, acpwire.client):
        marked = [name for name in package.__all__ if "V2" in name or name.endswith("V1")]
        assert marked == [], package.__name__


async def test_the_views_and_turns_are_the_classes_of_their_version() -> None:
    async with raw_agent(version=2) as (conn, peer):
        assert type(conn.v2) is Negotiated
        async with anyio.create_task_group() as nursery:

            async def agent() -> None:
                call = await peer.receive()
                await peer.send(response(call["id"], {"messageId": "u1"}), user_message("u1"))
                await peer.send(state("idle", "end_turn"))

            nursery.start_soon(agent)
            async with prompt(conn.v2, conn.client.requests, PROMPT_V2) as turn:
                assert type(turn) is TurnEvents
                events = [event async for event in turn]
        assert turn.stop_reason == "end_turn" and events
    async with raw_agent(version=1) as (conn, peer):
        assert type(conn.v1) is V1Negotiated
        async with anyio.create_task_group() as nursery:

            async def v1_agent() -> None:
                call = await peer.receive()
                await peer.send(response(call["id"], {"stopReason": "end_turn"}))

            nursery.start_soon(v1_agent)
            async with prompt(conn.v1, conn.client.requests, PROMPT_V1) as v1_turn:
                assert type(v1_turn) is V1TurnEvents
                assert [event async for event in v1_turn] == []
        assert v1_turn.stop_reason == "end_turn"


TYPED = """
from typing import assert_type
import acp_schema.v2 as v2
from acpwire.agent import AgentFactory, V2Factory
from acpwire.client import AgentRequests, ClientConnection, Negotiated, TurnEvents
from acpwire.client import V1Negotiated, V2Connection, V2TurnEvents, prompt
from acpwire import TurnEvent, V2Event

def make(client: v2.ClientPeer) -> v2.AgentBase:
    return v2.AgentBase()

async def use(conn: ClientConnection, requests: AgentRequests, params: v2.PromptRequest) -> None:
    assert_type(conn.v2, Negotiated)
    assert_type(conn.v1, V1Negotiated)
    old: V2Connection = conn.v2
    async with prompt(old, requests, params) as turn:
        assert_type(turn, TurnEvents)
        again: V2TurnEvents = turn
    factory: AgentFactory = make
    old_factory: V2Factory = factory
    event: V2Event | None = None
    same: TurnEvent | None = event
    conn.v2.no_such_field
"""


def test_the_new_and_the_old_names_type_check(tmp_path: Path) -> None:
    errors = mypy_strict_errors(TYPED, tmp_path)
    assert len(errors) == 1 and ":23: error:" in errors[0] and "no_such_field" in errors[0], errors
