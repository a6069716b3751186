"""The Connection, on every loop: one side is a Connection, the other a raw JSON-lines s.peer.

The Connection (`helpers.connection.serving`) uses the v2 agent codec and a test dispatch that
routes `_`-prefixed extension methods (their params stay raw) to small behaviours: echo, fail,
refuse with an RpcError, wait on a gate, ask the peer something back.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acp_schema.v2 as v2
from acpwire._wire.connection import Connection
from acpwire.errors import ConnectionClosed, RpcError
from helpers.connection import serving
from helpers.constants import PERMISSION_REQUEST
from helpers.loops import run_async, until, wait_all_tasks_blocked
from helpers.raw import (
    CANCELLED,
    cancel_request,
    error_response,
    notification,
    request,
    response,
)

pytestmark = pytest.mark.usefixtures("loop")


# --------------------------------------------------------------------------- handlers


async def test_handler_exception_is_internal_error_and_serving_goes_on() -> None:
    async with serving() as s:
        assert await s.peer.call(1, "_fail") == error_response(
            1, -32603, "Internal error: ValueError: kaboom"
        )
        assert await s.peer.call(2, "_echo", {"still": "here"}) == response(2, {"still": "here"})


async def test_result_with_a_raw_newline_is_internal_error_and_serving_goes_on() -> None:
    async with serving() as s:
        answer = await s.peer.call(1, "_pretty")
        assert answer["error"]["code"] == -32603
        assert "raw newline" in answer["error"]["message"]
        assert await s.peer.call(2, "_echo", "next") == response(2, "next")


async def test_rpc_error_from_handler_is_sent_as_is() -> None:
    async with serving() as s:
        assert await s.peer.call("r", "_refuse") == error_response(
            "r", -32002, "Resource not found", {"uri": "file:///nope"}
        )


async def test_unknown_method_from_dispatch_is_method_not_found() -> None:
    async with serving() as s:
        assert await s.peer.call(3, "nope/nothing") == error_response(
            3, -32601, "Method not found", {"method": "nope/nothing"}
        )


@pytest.mark.parametrize("id", [1, "abc"])
async def test_cancel_request_stops_the_handler_and_answers_request_cancelled(id: Any) -> None:
    async with serving() as s:
        await s.peer.send(request(id, "_wait"))
        await until(lambda: s.handlers.started == [id])
        await s.peer.send(cancel_request(id))
        assert await s.peer.receive() == {"jsonrpc": "2.0", "id": id, "error": CANCELLED}
        assert s.handlers.cancelled == [id]
        assert await s.peer.call(2, "_echo", 2) == response(2, 2)


async def test_cancel_request_right_behind_its_request_is_not_lost() -> None:
    async with serving() as s:
        both = msgspec.json.encode(request(1, "_wait")) + b"\n"
        both += msgspec.json.encode(cancel_request(1)) + b"\n"
        await s.peer.send(both)  # one chunk: the reader sees both before the handler runs
        with anyio.fail_after(0.5):
            assert await s.peer.receive() == {"jsonrpc": "2.0", "id": 1, "error": CANCELLED}


async def test_cancel_for_unknown_or_finished_requests_is_harmless() -> None:
    async with serving() as s:
        assert await s.peer.call(1, "_echo", 1) == response(1, 1)
        await s.peer.send(cancel_request(1), cancel_request(42), cancel_request("nope"))
        await s.peer.expect_silence()
        assert await s.peer.call(2, "_echo", 2) == response(2, 2)
        assert s.handlers.cancelled == []


async def test_cancelled_result_replaces_request_cancelled() -> None:
    async with serving(cancelled_result=lambda call: {"outcome": "cancelled"}) as s:
        await s.peer.send(request(7, "_wait"))
        await until(lambda: s.handlers.started == [7])
        await s.peer.send(cancel_request(7))
        assert await s.peer.receive() == response(7, {"outcome": "cancelled"})


@pytest.mark.parametrize("batched", [False, True])
async def test_cancel_request_sent_as_a_request_is_still_answered(batched: bool) -> None:
    async with serving() as s:
        cancel = request("c", "$/cancel_request", {"requestId": 99})
        await s.peer.send([request(1, "_echo", 1), cancel] if batched else cancel)
        with anyio.fail_after(0.5):
            answer = await s.peer.receive()
        answers = answer if batched else [answer]
        assert sorted(str(a["id"]) for a in answers) == (["1", "c"] if batched else ["c"])


# --------------------------------------------------------------------------- our requests


async def request_in_background(
    nursery: anyio.abc.TaskGroup, connection: Connection
) -> dict[str, Any]:
    """Start `session/request_permission` from our side; the dict gets its outcome."""
    outcome: dict[str, Any] = {}

    async def ask() -> None:
        try:
            outcome["result"] = await connection.request(
                v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST
            )
        except (RpcError, ConnectionClosed) as exc:
            outcome["error"] = exc

    nursery.start_soon(ask)
    return outcome


async def test_our_request_gets_its_typed_result() -> None:
    async with serving() as s:
        outcome = await request_in_background(s.nursery, s.connection)
        sent = await s.peer.receive()
        assert sent == request(
            0, "session/request_permission", msgspec.to_builtins(PERMISSION_REQUEST)
        )
        await s.peer.send(response(0, {"outcome": {"outcome": "selected", "optionId": "allow"}}))
        await until(lambda: outcome)
        assert outcome == {
            "result": v2.RequestPermissionResponse(
                outcome=v2.SelectedPermissionOutcome(option_id="allow")
            )
        }


async def test_our_request_raises_the_error_it_gets() -> None:
    async with serving() as s:
        outcome = await request_in_background(s.nursery, s.connection)
        assert (await s.peer.receive())["id"] == 0
        await s.peer.send(error_response(0, -32002, "Resource not found", {"uri": "x"}))
        await until(lambda: outcome)
        error = outcome["error"]
        assert isinstance(error, RpcError)
        assert (error.code, error.message, error.data) == (
            -32002,
            "Resource not found",
            {"uri": "x"},
        )


async def test_giving_up_on_our_request_tells_the_peer() -> None:
    async with serving() as s:
        with anyio.move_on_after(0.05):
            await s.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
        assert (await s.peer.receive())["id"] == 0
        assert await s.peer.receive() == cancel_request(0)
        await s.peer.send(response(0, {"outcome": {"outcome": "cancelled"}}))  # late: dropped
        assert await s.peer.call(1, "_echo", 1) == response(1, 1)


async def test_peer_closing_fails_pending_requests_at_once() -> None:
    async with serving() as s:
        outcome = await request_in_background(s.nursery, s.connection)
        assert (await s.peer.receive())["id"] == 0
        await s.peer.close()
        await until(lambda: outcome, seconds=0.5)
        assert isinstance(outcome["error"], ConnectionClosed)
        assert s.connection.closed
        with pytest.raises(ConnectionClosed):
            await s.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
        await until(s.stopped.is_set, seconds=0.5)


async def test_peer_closing_cancels_handlers_past_the_grace_period_and_run_returns() -> None:
    async with serving(eof_grace_period=0.05) as s:
        await s.peer.send(request(1, "_wait"))
        await until(lambda: s.handlers.started == [1])
        await s.peer.stream.send_eof()
        assert await s.peer.receive() == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": RpcError.input_ended(0.05).to_wire(),
        }
        await until(s.stopped.is_set, seconds=0.5)
        assert s.handlers.cancelled == [1]


async def test_pending_request_fails_once_writing_to_the_peer_fails() -> None:
    async with serving() as s:
        outcome = await request_in_background(s.nursery, s.connection)
        assert (await s.peer.receive())["id"] == 0
        await s.peer.stream.aclose_receiving()  # the peer stops reading
        await s.peer.send(request(1, "_echo", 1))  # so this reply cannot be written
        await until(lambda: outcome, seconds=0.5)
        assert isinstance(outcome["error"], ConnectionClosed)


async def test_replies_to_a_peer_that_stopped_reading_do_not_crash_run() -> None:
    async with serving() as s:
        await s.peer.stream.aclose_receiving()  # the peer stops reading
        for id in range(2):
            await s.peer.send(request(id, "_echo", id))
            await wait_all_tasks_blocked()
        await s.peer.stream.send_eof()
        await until(s.stopped.is_set, seconds=0.5)


async def test_a_sender_that_never_waits_still_lets_the_writer_run() -> None:
    """Far below the buffer bound, a burst of notifications is written while it is being
    queued, not only once the sender stops (the peer would sit idle meanwhile)."""
    update = v2.UpdateSessionNotification(
        session_id="s",
        update=v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x")),
    )
    sending = True
    received_while_sending = 0
    async with serving(max_buffered_bytes=1 << 30) as s:

        async def read() -> None:
            nonlocal received_while_sending
            while sending:
                received_while_sending += len(await s.peer.stream.receive_some())

        s.nursery.start_soon(read)
        for _ in range(5_000):  # ~0.7 MB
            await s.connection.notify(v2.SESSION_UPDATE, update)
        sending = False
    assert received_while_sending >= 256 * 1024


# --------------------------------------------------------------------------- flow


async def test_max_concurrent_requests_bounds_running_handlers() -> None:
    async with serving(max_concurrent_requests=2) as s:
        await s.peer.send(*(request(i, "_wait") for i in range(4)))  # 2 run, 2 wait their turn
        await until(lambda: len(s.handlers.started) == 2)
        await wait_all_tasks_blocked()
        assert s.handlers.running == 2
        s.handlers.gate.set()
        answers = [await s.peer.receive() for _ in range(4)]
        assert sorted(a["id"] for a in answers) == list(range(4))
        assert all(a["result"] == "released" for a in answers)
        assert s.handlers.peak == 2


async def test_requests_past_the_backlog_are_refused_and_queued_ones_cancellable() -> None:
    async with serving(max_concurrent_requests=1) as s:
        await s.peer.send(request(0, "_wait"), request(1, "_wait"), request(2, "_wait"))
        refused = await s.peer.receive()  # 0 runs, 1 is queued, 2 is one too many
        assert (refused["id"], refused["error"]["code"]) == (2, -32603)
        await s.peer.send(cancel_request(1))  # cancelled while still queued
        s.handlers.gate.set()
        answers = {a["id"]: a for a in [await s.peer.receive(), await s.peer.receive()]}
        assert answers == {
            0: response(0, "released"),
            1: {"jsonrpc": "2.0", "id": 1, "error": CANCELLED},
        }
        await s.peer.expect_silence()


async def test_full_request_slots_still_let_answers_through() -> None:
    async with serving(max_concurrent_requests=1) as s:
        await s.peer.send(request("ask", "_ask"))
        asked = await s.peer.receive()  # our handler asks the peer something
        await s.peer.send(request("echo", "_echo", 1))  # waits for the only slot
        await s.peer.send(response(asked["id"], {"outcome": {"outcome": "cancelled"}}))
        with anyio.fail_after(0.5):
            answers = [await s.peer.receive(), await s.peer.receive()]
        assert answers == [
            response("ask", {"outcome": {"outcome": "cancelled"}}),
            response("echo", 1),
        ]


async def test_notifications_are_handled_in_order() -> None:
    async with serving() as s:
        await s.peer.send(*(notification("_note", {"seq": i}) for i in range(40)))
        assert await s.peer.call("barrier", "_echo", 0) == response("barrier", 0)
        assert s.handlers.notes == list(range(40))


async def test_failing_notification_handler_sends_nothing_and_serving_goes_on() -> None:
    async with serving() as s:
        await s.peer.send(notification("_note_fail"), notification("_note", {"seq": 1}))
        assert await s.peer.call(1, "_echo", 1) == response(1, 1)
        assert s.handlers.notes == [1]


def _cut_id_line() -> dict[str, Any]:
    """A request whose id's digits straddle the end of the 200 bytes kept of it."""
    line = {"jsonrpc": "2.0", "method": "_echo", "pad": "", "id": 1234567, "params": "x" * 500}
    line["pad"] = "p" * (200 - len(msgspec.json.encode(line).split(b"1234567")[0]) - 3)
    assert msgspec.json.encode(line)[:200].endswith(b'"id":123')
    return line


OVERSIZED = {  # a line over the 200-byte limit -> the id it is answered with
    "request": (request(1, "_echo", "x" * 500), 1),
    "string id": (request("r-1", "_echo", "x" * 500), "r-1"),
    "id past the head": ({"jsonrpc": "2.0", "method": "_echo", "params": "x" * 500, "id": 1}, None),
    "id cut by the head": (_cut_id_line(), None),
    "notification": (notification("_note", "x" * 500), None),
    "response": ({"jsonrpc": "2.0", "id": 1, "result": "x" * 500}, None),
    "boolean id": ({"jsonrpc": "2.0", "id": True, "method": "_echo", "params": "x" * 500}, None),
    "batch": ([request(1, "_echo", "x" * 500)], None),
}


@pytest.mark.parametrize("kind", OVERSIZED)
async def test_oversized_line_is_invalid_request_with_its_id_and_the_next_line_is_served(
    kind: str,
) -> None:
    """A request is answered with its own id when the head kept of the line holds it."""
    line, answered_id = OVERSIZED[kind]
    async with serving(max_line_bytes=200) as s:
        big = msgspec.json.encode(line)
        await s.peer.send(big, request(2, "_echo", "small"))
        assert await s.peer.receive() == error_response(
            answered_id,
            -32600,
            f"Invalid request: message of {len(big)} bytes is over the line limit",
        )
        assert await s.peer.receive() == response(2, "small")


# --------------------------------------------------------------------------- one answer each

EXPECTED = {  # op -> what its response carries
    "ok": ("result", "ok"),
    "fail": ("error", -32603),
    "refuse": ("error", -32002),
    "unknown": ("error", -32601),
    "cancel": ("error", -32800),
    "release": ("result", "released"),
}


def op_request(op: str, id: int) -> dict[str, Any]:
    method = {
        "ok": "_echo",
        "fail": "_fail",
        "refuse": "_refuse",
        "unknown": "no/such",
        "cancel": "_wait",
        "release": "_wait",
    }[op]
    return request(id, method, "ok" if op == "ok" else None)


def outcome_of(response: dict[str, Any]) -> tuple[str, Any]:
    if "result" in response:
        return ("result", response["result"])
    return ("error", response["error"]["code"])


ops = st.sampled_from(sorted(EXPECTED))
mix = st.lists(
    st.one_of(ops, st.lists(ops, min_size=1, max_size=4), st.just("notification")),
    min_size=1,
    max_size=12,
)


# `loop` is a fixture only by name: a constant string, nothing to reset between examples
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mix)
def test_every_request_gets_exactly_one_response(loop: str, plan: list[Any]) -> None:
    """Single requests, batches and notifications; some fail, some are cancelled."""
    expected: dict[int, tuple[str, Any]] = {}
    lines: list[Any] = []
    for step in plan:
        if step == "notification":
            lines.append(notification("_note", {"seq": 0}))
            continue
        batch = []
        for op in [step] if isinstance(step, str) else step:
            expected[len(expected)] = EXPECTED[op]
            batch.append(op_request(op, len(expected) - 1))
        lines.append(batch[0] if isinstance(step, str) else batch)
    batches = sum(isinstance(line, list) for line in lines)

    async def scenario() -> None:
        with anyio.fail_after(5):
            async with serving() as s:
                await s.peer.send(*lines)
                await wait_all_tasks_blocked()
                to_cancel = [
                    id for id, outcome in expected.items() if outcome == EXPECTED["cancel"]
                ]
                await s.peer.send(*(cancel_request(id) for id in to_cancel))
                await until(lambda: len(s.handlers.cancelled) == len(to_cancel))
                s.handlers.gate.set()
                seen: list[dict[str, Any]] = []
                arrays = 0
                while len(seen) < len(expected):
                    message = await s.peer.receive()
                    arrays += isinstance(message, list)
                    seen.extend(message if isinstance(message, list) else [message])
                await s.peer.expect_silence(0.02)
        assert sorted(r["id"] for r in seen) == sorted(expected)  # each id exactly once
        assert {r["id"]: outcome_of(r) for r in seen} == expected
        assert arrays == batches

    run_async(scenario, loop)
