"""A client's `session/update`s read with others in one read go to the session's subscribers
and the `session_update` handler without a call built or the generic dispatch (the connection's
direct route, issue 18). What the client sees is what it sees when each line arrives in a read
of its own: the same updates to the subscriber and the handler, in the same order, a failing
handler logged and the reading going on, a permission request among the updates held until
the subscriber took the updates before it, an update of another session to the handler only,
on v1 (unknown update types too) and v2."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from helpers.clients import ClientV1, ClientV2
from helpers.constants import SESSION
from helpers.lines import on
from helpers.loops import wait_all_tasks_blocked
from helpers.raw import request
from helpers.serving import raw_agent

pytestmark = pytest.mark.usefixtures("loop")

FAILING = "boom"


def chunk(text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    return {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": content}


def text_of(item: Any) -> Any:
    content = getattr(item, "content", None)
    return getattr(content, "text", None) or msgspec.to_builtins(item)


class Failing:
    """Logs each update with its session; fails on the text `FAILING` (after logging it)."""

    log: list[Any]

    async def session_update(self, params: Any) -> None:
        self.log.append((params.session_id, text_of(params.update)))
        if text_of(params.update) == FAILING:
            raise RuntimeError("the handler failed")


class FailingV2(Failing, ClientV2):
    pass


class FailingV1(Failing, ClientV1):
    pass


def permission(version: int, id: int) -> dict[str, Any]:
    module: Any = v2 if version == 2 else v1
    options = [module.PermissionOption(option_id="allow", name="allow", kind="allow_once")]
    params: Any = (
        v2.RequestPermissionRequest(session_id=SESSION, title="Run?", options=options)
        if version == 2
        else v1.RequestPermissionRequest(
            session_id=SESSION, tool_call=v1.ToolCallUpdate(tool_call_id="c"), options=options
        )
    )
    return request(id, "session/request_permission", msgspec.to_builtins(params))


VENDOR = {"sessionUpdate": "_vendor_progress", "percent": 40}  # v1's union is closed
PERMISSION = "permission"
SENT = [
    (SESSION, "first"),
    (SESSION, "a"),
    ("sess_other", "elsewhere"),
    (SESSION, FAILING),
    (SESSION, "b"),
    PERMISSION,
    (SESSION, "c"),
    (SESSION, "d"),
]


def sent(vendor_at: int) -> list[Any]:
    """What is sent: `SENT` with an update of an unknown type at `vendor_at`."""
    return [*SENT[:vendor_at], (SESSION, VENDOR), *SENT[vendor_at:]]


def lines(version: int, vendor_at: int) -> list[bytes]:
    messages = [
        permission(version, 1)
        if item == PERMISSION
        else on(item[0], VENDOR if item[1] == VENDOR else chunk(item[1]))
        for item in sent(vendor_at)
    ]
    return [msgspec.json.encode(message) + b"\n" for message in messages]


async def seen(
    version: int, vendor_at: int, *, one_read: bool, caplog: pytest.LogCaptureFixture
) -> Any:
    """What the subscriber, the handler, the log and the agent see of the lines, sent in one
    write (one read: the lines after the first decoded together) or a line at a time; and how
    many updates went through the connection's dispatch (not the direct route)."""
    caplog.clear()
    client: Any = FailingV2 if version == 2 else FailingV1
    async with raw_agent(version=version, client=client) as (conn, peer):
        handlers: Any = conn.client
        handlers.log = []
        dispatched: list[str] = []
        connection = conn._connection
        dispatch = connection._dispatch

        def counting(call: Any) -> Any:
            dispatched.append(call.method)
            return dispatch(call)

        connection._dispatch = counting
        async with conn.subscribe(SESSION) as updates:
            sent = lines(version, vendor_at)
            for data in [b"".join(sent)] if one_read else sent:
                await peer.send(data)
                await wait_all_tasks_blocked()
            handled_before_taking = list(handlers.log)
            received = [text_of(await updates.__anext__()) for _ in range(len(updates._items))]
            await wait_all_tasks_blocked()  # the permission request, let through
            answer = await peer.receive()
        failures = [r.getMessage() for r in caplog.records if "handler" in r.getMessage()]
        log = [entry if isinstance(entry, tuple) else PERMISSION for entry in handlers.log]
    return (handled_before_taking, received, log, answer, failures), dispatched.count(
        "session/update"
    )


@pytest.mark.parametrize(("version", "vendor_at"), [(2, 0), (2, 5), (1, 0), (1, 5)])
async def test_updates_of_one_read_reach_subscribers_and_handler_as_line_by_line(
    version: int, vendor_at: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    together, dispatched = await seen(version, vendor_at, one_read=True, caplog=caplog)
    assert together == (await seen(version, vendor_at, one_read=False, caplog=caplog))[0]
    handled_before_taking, received, log, answer, failures = together
    updates = [item for item in sent(vendor_at) if item != PERMISSION]
    assert received == [text for session, text in updates if session == SESSION]
    assert PERMISSION not in handled_before_taking  # held behind the untaken updates
    assert log == [*updates, PERMISSION]
    assert answer["id"] == 1 and "result" in answer
    assert failures == ["notification handler for session/update failed"]
    # the first line of the read is read alone (dispatched); the rest went direct, unless one
    # is an update the one-pass decoder does not read (an unknown type): then line by line
    assert dispatched == (1 if vendor_at == 0 else len(updates))
