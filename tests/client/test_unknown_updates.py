"""Nothing dropped silently: a `session/update` of a type these bindings do not know reaches
the session's subscribers and the client's handler as an unknown variant carrying the raw
update, on v1 (a closed union in the bindings) as on v2, and the folds keep it in `unknown`.
v1 logs a WARNING once per type."""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

import pytest

import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1_unstable
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2_unstable
from acp_schema import OpenVariant
from acpwire import V1UnknownSessionUpdate
from acpwire.client import SessionState, V1SessionState
from acpwire.client.unknown_updates import open_session_updates
from helpers.clients import TurnClientV1, TurnClientV2
from helpers.constants import SESSION
from helpers.lines import update
from helpers.loops import wait_all_tasks_blocked
from helpers.serving import raw_agent

pytestmark = pytest.mark.usefixtures("loop")

VENDOR = {"sessionUpdate": "_vendor_progress", "percent": 40, "detail": {"step": [1, 2]}}
FUTURE = {"sessionUpdate": "turn_summary", "summary": "done", "_meta": {"k": 1}}
CHUNK = {
    "sessionUpdate": "agent_message_chunk",
    "messageId": "m",
    "content": {"type": "text", "text": "hi"},
}


class Handler:
    """Keeps what the client's `session_update` handler is given."""

    seen: ClassVar[list[Any]] = []

    async def session_update(self, params: Any) -> None:
        self.seen.append(params.update)


class V1Handler(Handler, TurnClientV1):
    pass


class V2Handler(Handler, TurnClientV2):
    pass


async def receive(version: int, bodies: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """What a subscriber of the session and the client's handler receive of `bodies`."""
    client: Any = V1Handler if version == 1 else V2Handler
    client.seen = []
    async with raw_agent(version=version, client=client) as (conn, peer):
        async with conn.subscribe(SESSION) as updates:
            await peer.send(*[update(body) for body in bodies])
            await wait_all_tasks_blocked()
            received = [await updates.__anext__() for _ in range(len(updates._items))]
    return received, client.seen


async def test_v1_an_update_of_an_unknown_type_is_delivered_with_its_raw_payload(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    received, handled = await receive(1, [VENDOR, FUTURE, CHUNK, VENDOR])
    assert [type(u) for u in received] == [
        V1UnknownSessionUpdate,
        V1UnknownSessionUpdate,
        v1.AgentMessageChunk,
        V1UnknownSessionUpdate,
    ]
    assert received[0] == VENDOR and received[1] == FUTURE and received[3] == VENDOR
    assert [u.tag for u in received if isinstance(u, OpenVariant)] == [
        "_vendor_progress",
        "turn_summary",
        "_vendor_progress",
    ]
    assert v1.encode_message(received[1]) == v1.encode_message(FUTURE)  # re-encodes unchanged
    assert handled == received  # the client's session_update handler gets them too
    warnings = [r.getMessage() for r in caplog.records if r.name == "acpwire"]
    assert len(warnings) == 2  # once per type
    assert "'_vendor_progress'" in warnings[0] and "'turn_summary'" in warnings[1]
    assert all("delivered to subscribers as V1UnknownSessionUpdate" in w for w in warnings)
    assert all(r.levelno == logging.WARNING for r in caplog.records if r.name == "acpwire")


async def test_v1_a_malformed_update_of_a_known_type_is_still_refused() -> None:
    """Only an unknown tag is delivered as unknown: a known one that does not decode (here
    a chunk without its required content) is invalid, as before."""
    broken = {"sessionUpdate": "agent_message_chunk", "messageId": "m"}
    received, _ = await receive(1, [broken, CHUNK])
    assert [type(u) for u in received] == [v1.AgentMessageChunk]


async def test_v2_an_update_of_an_unknown_type_is_delivered_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    received, handled = await receive(2, [VENDOR, CHUNK])
    assert [type(u) for u in received] == [v2.UnknownSessionUpdate, v2.AgentMessageChunk]
    assert received[0] == VENDOR and handled == received
    assert not [r for r in caplog.records if r.name == "acpwire"]  # v2's union is open


@pytest.mark.parametrize("version", [1, 2])
async def test_the_folds_keep_unknown_updates_in_unknown(version: int) -> None:
    received, _ = await receive(version, [VENDOR, CHUNK, FUTURE])
    state: SessionState | V1SessionState = SessionState() if version == 2 else V1SessionState()
    for item in received:
        state.apply(item)
    assert [u.tag for u in state.unknown] == ["_vendor_progress", "turn_summary"]
    assert [m.text() for m in state.messages.values()] == ["hi"]


def test_the_codec_opens_every_closed_update_union_and_leaves_open_ones_as_they_are() -> None:
    """Keyed by what a surface's codec holds, not by stable classes: v1.unstable is opened
    too, and the v2 surfaces (open already) keep their own codec."""
    line = json.dumps(update(VENDOR)).encode()
    opened = open_session_updates(v1_unstable.CLIENT_CODEC, "agent")
    assert opened.decode(line).params.update == VENDOR  # type: ignore[union-attr]
    for module in (v2, v2_unstable):
        assert open_session_updates(module.CLIENT_CODEC, "agent") is module.CLIENT_CODEC
