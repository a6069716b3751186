"""The client endpoint: wire order of updates and requests, single exceptions out of
`open_agent` / `connect`, typed per-version views, a bounded `initialize`, misuse errors."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import trio

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import surface_of
from acpwire._groups import SingleException
from acpwire.client import ClientConnection, connect, open_agent
from acpwire.client.connection import InitializeTimeout, NotInitialized
from acpwire.client.permissions import selected_permission
from acpwire.errors import ConnectionClosed, InvalidResponse, PeerExited, ProtocolMismatch
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV1, ClientV2, describe
from helpers.constants import INIT_V1, INIT_V2, PERMISSION_REQUEST, RAW_INIT_V2, SESSION
from helpers.lines import chunk_notification
from helpers.loops import until, wait_all_tasks_blocked
from helpers.processes import PYTHONPATH, python
from helpers.raw import RawPeer, notification, request, response
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, module
from helpers.typecheck import mypy_strict_errors

pytestmark = pytest.mark.usefixtures("loop")


def permission_line(request_id: int) -> dict[str, Any]:
    params = msgspec.to_builtins(PERMISSION_REQUEST)
    return request(request_id, "session/request_permission", params)


class StreamReading:
    """Logs permission requests; the test reads the updates from `subscribe` into the log.
    The handlers of a client class that subclasses a `ClientBase` too (`stream_reading`)."""

    def __init__(self, agent: Any) -> None:
        self.log: list[Any] = []

    async def session_request_permission(self, params: Any) -> Any:
        self.log.append(params)
        return selected_permission(surface_of(params), "ok")


@functools.cache
def stream_reading(surface: AnySurface) -> type[Any]:
    """The stream-reading client on `surface`'s `ClientBase`."""
    return type(f"StreamReading_{surface.label}", (StreamReading, surface.client_base), {})


async def initialized_by(peer: RawPeer, conn: ClientConnection, answer: dict[str, Any]) -> None:
    """`conn.initialize(INIT_V2)`, the raw agent `peer` answering it with `answer`; what
    `initialize` raises leaves as itself (not in the task group's ExceptionGroup)."""
    failed: Exception | None = None
    async with anyio.create_task_group() as nursery:

        async def answering() -> None:
            init = await peer.receive()
            await peer.send(response(init["id"], answer))

        nursery.start_soon(answering)
        try:
            await conn.initialize(INIT_V2)
        except Exception as exc:
            failed = exc
    if failed is not None:
        raise failed


# --------------------------------------------------------------------------- item 6: order


async def test_permission_reaches_the_handler_after_the_updates_before_it_were_read(
    v2_surface: AnySurface,
) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_1") as updates:
            # three updates and a permission request, in one write
            lines = [chunk_notification("sess_1", str(i)) for i in range(3)]
            await peer.send(*lines, permission_line(7))
            await wait_all_tasks_blocked()
            assert conn.client.log == []  # the request waits for the subscriber
            async for update in updates:
                conn.client.log.append(update)
                if len(conn.client.log) == 3:
                    break
            answer = await peer.receive()
        assert answer["id"] == 7
        assert [describe(item) for item in conn.client.log] == [
            "chunk 0",
            "chunk 1",
            "chunk 2",
            "permission",
        ]


async def test_each_request_waits_only_for_the_updates_before_it(v2_surface: AnySurface) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_1") as updates:
            chunks = [chunk_notification("sess_1", str(i)) for i in range(3)]
            await peer.send(chunks[0], chunks[1], permission_line(1), chunks[2], permission_line(2))
            await wait_all_tasks_blocked()
            assert conn.client.log == []
            for handled_once_taken in (0, 1, 2):  # after taking the 1st, 2nd, 3rd update
                await updates.__anext__()
                await wait_all_tasks_blocked()
                assert len(conn.client.log) == handled_once_taken
        assert [(await peer.receive())["id"] for _ in range(2)] == [1, 2]


async def test_a_request_held_for_a_subscriber_is_released_when_it_stops_reading(
    v2_surface: AnySurface,
) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_1"):
            await peer.send(chunk_notification("sess_1", "unread"), permission_line(8))
            await wait_all_tasks_blocked()
            assert conn.client.log == []
        assert (await peer.receive())["id"] == 8
        assert [describe(item) for item in conn.client.log] == ["permission"]


async def test_a_subscription_raises_why_the_connection_ended_after_its_updates(
    v2_surface: AnySurface,
) -> None:
    """The agent going away ends no subscription quietly, as if the session were done: the
    updates queued before go out, then the connection's error is raised."""
    taken: list[str] = []
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_1") as updates:
            await peer.send(chunk_notification("sess_1", "0"), chunk_notification("sess_1", "1"))
            await peer.close()
            with pytest.raises(ConnectionClosed, match="closed the connection"):
                async for update in updates:
                    taken.append(describe(update))
        async with conn.subscribe("sess_1") as updates:  # subscribed after the end: raises too
            with pytest.raises(ConnectionClosed):
                await updates.__anext__()
    assert taken == ["chunk 0", "chunk 1"]


async def test_leaving_the_subscription_ends_it_quietly(v2_surface: AnySurface) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_1") as updates:
            await peer.send(chunk_notification("sess_1", "0"))
            assert describe(await updates.__anext__()) == "chunk 0"
        assert [update async for update in updates] == []


CHUNK_THEN_EXIT = f"""import json, sys
init = json.loads(sys.stdin.readline())
answer = {{"jsonrpc": "2.0", "id": init["id"], "result": json.loads({json.dumps(RAW_INIT_V2)!r})}}
chunk = {json.dumps(chunk_notification("sess_1", "last"))!r}
sys.stdout.write(json.dumps(answer) + "\\n" + chunk + "\\n")
sys.stdout.flush()
sys.stderr.write("out of memory\\n")
sys.exit(3)
"""


async def test_an_update_read_with_the_initialize_answer_arrives_then_peer_exited() -> None:
    """The update written with the `initialize` answer (one read) is the negotiated version's
    (it was dropped, dispatched before the switch); the agent's death is raised after it."""
    taken: list[str] = []
    with pytest.raises(PeerExited) as caught:
        async with open_agent(python(CHUNK_THEN_EXIT), v2=ClientV2) as conn:
            async with conn.subscribe("sess_1") as updates:
                await conn.initialize(INIT_V2)
                async for update in updates:
                    taken.append(describe(update))
    assert taken == ["chunk last"]
    assert caught.value.exit_code == 3
    assert "out of memory" in str(caught.value)


async def test_a_request_over_the_line_limit_is_answered_with_its_id() -> None:
    """As on the agent's side: the head kept of the dropped line names the request."""
    async with raw_agent(client=ClientV2, max_line_bytes=500) as (_, peer):
        line = permission_line(7)
        line["params"]["pad"] = "x" * 1000
        await peer.send(line, permission_line(8))
        too_large = await peer.receive()
        assert too_large["id"] == 7, too_large
        assert too_large["error"]["code"] == -32600
        assert "over the line limit" in too_large["error"]["message"]
        assert (await peer.receive())["id"] == 8


class FilesClientV1(ClientV1):
    """Serves `fs/read_text_file` (v1 has it; v2 removed it)."""

    async def fs_read_text_file(self, params: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=f"text of {params.path}")


V1_PERMISSION = {
    "sessionId": SESSION,
    "toolCall": {"toolCallId": "call_1"},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
}
READ_FILE = {"sessionId": SESSION, "path": "/repo/a.txt"}
NOT_FOUND = {"code": -32601, "message": "Method not found", "data": {"method": "fs/read_text_file"}}
AGENT_REQUESTS = {  # (version, method) -> (params, what the client answers)
    (2, "session/request_permission"): (
        msgspec.to_builtins(PERMISSION_REQUEST),
        {"result": {"outcome": {"outcome": "selected", "optionId": "allow"}}},
    ),
    (1, "session/request_permission"): (
        V1_PERMISSION,
        {"result": {"outcome": {"outcome": "selected", "optionId": "allow"}}},
    ),
    (1, "fs/read_text_file"): (READ_FILE, {"result": {"content": "text of /repo/a.txt"}}),
    # removed in v2: "the method does not exist or is not available" (schema.md, -32601)
    (2, "fs/read_text_file"): (READ_FILE, {"error": NOT_FOUND}),
}


async def answer_after_initialize(version: int, method: str, *, same_read: bool) -> Any:
    """What the client answers the agent's request of `method`, written in the same write as
    the `initialize` answer (one read) or once `initialize` returned."""
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    factories: dict[str, Any] = {"v2": ClientV2} if version == 2 else {"v1": FilesClientV1}
    initialized = anyio.Event()
    async with connect(client_end, **factories) as conn, anyio.create_task_group() as nursery:

        async def initialize() -> None:
            await conn.initialize(INIT_V2 if version == 2 else INIT_V1)
            initialized.set()

        nursery.start_soon(initialize)
        init = await peer.receive()
        result = RAW_INIT_V2 if version == 2 else {"protocolVersion": 1}
        answer = msgspec.json.encode(response(init["id"], result)) + b"\n"
        line = msgspec.json.encode(request(5, method, AGENT_REQUESTS[version, method][0])) + b"\n"
        if same_read:
            await peer.stream.send_all(answer + line)
        else:
            await peer.stream.send_all(answer)
            await initialized.wait()
            await peer.stream.send_all(line)
        with anyio.fail_after(5):
            reply = await peer.receive()
        nursery.cancel_scope.cancel()
    return reply


@pytest.mark.parametrize(("version", "method"), AGENT_REQUESTS)
async def test_a_request_read_with_the_initialize_answer_is_answered_as_one_read_after_it(
    version: int, method: str
) -> None:
    """By the negotiated version's handlers, as the updates of that read (the reader lets
    initialize's caller switch first), not by the bootstrap's, which answers every request
    -32600 "not initialized yet"."""
    together = await answer_after_initialize(version, method, same_read=True)
    apart = await answer_after_initialize(version, method, same_read=False)
    assert together == apart == {"jsonrpc": "2.0", "id": 5, **AGENT_REQUESTS[version, method][1]}


async def test_a_request_of_another_session_is_not_held(v2_surface: AnySurface) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        async with conn.subscribe("sess_other"):
            await peer.send(chunk_notification("sess_other", "unread"), permission_line(9))
            assert (await peer.receive())["id"] == 9  # PERMISSION_REQUEST is for sess_1


def test_example_client_prints_the_permission_after_the_tool_call_before_it() -> None:
    command = [sys.executable, "-m", "acpwire.fixtures.client", "--"]
    agent = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
    out = subprocess.run(
        [*command, *agent],
        env={**PYTHONPATH, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.splitlines()
    first_turn = out[: out.index("turn ended: end_turn")]
    steps = [line.strip() for line in first_turn if line.startswith("  ")]
    accepted = next(i for i, s in enumerate(steps) if s.startswith("prompt accepted"))
    pending = next(i for i, s in enumerate(steps) if s.endswith(": pending"))
    asked = next(i for i, s in enumerate(steps) if s.startswith("permission asked"))
    assert accepted < pending < asked, steps


# --------------------------------------------------------------------------- item 7: exceptions

CRASH_ON_FIRST_LINE = "import sys; sys.stdin.readline(); sys.stderr.write('boom\\n'); sys.exit(3)"


async def test_peer_exited_leaves_open_agent_as_itself() -> None:
    with pytest.raises(PeerExited) as caught:
        async with open_agent(python(CRASH_ON_FIRST_LINE), v2=ClientV2) as conn:
            await conn.initialize(INIT_V2)
    assert caught.value.exit_code == 3


async def test_an_error_of_the_block_leaves_connect_as_itself() -> None:
    _, client_end = memory_stream_pair()
    with pytest.raises(KeyError) as caught:
        async with connect(client_end, v2=ClientV2):
            raise KeyError("mine")
    assert caught.value.args == ("mine",)
    assert not hasattr(caught.value, "__notes__")


async def test_an_exception_group_of_the_callers_own_is_kept_whole() -> None:
    _, client_end = memory_stream_pair()
    own = ExceptionGroup("mine", [KeyError("a"), KeyError("b")])
    with pytest.raises(ExceptionGroup) as caught:
        async with connect(client_end, v2=ClientV2):
            raise own
    assert caught.value is own


def group(*errors: BaseException) -> BaseExceptionGroup[BaseException]:
    return BaseExceptionGroup("nursery", list(errors))


def raised_from(error: BaseException) -> BaseException:
    with pytest.raises(BaseException) as caught, SingleException():
        raise error
    return caught.value


@pytest.mark.parametrize(
    "cancelled",
    [trio.Cancelled._create(), asyncio.CancelledError()],  # type: ignore[attr-defined]
    ids=["Cancelled", "CancelledError"],
)
def test_single_exception_skips_cancellations_and_keeps_the_others_reachable(
    cancelled: BaseException,
) -> None:
    first, second = ValueError("first"), TypeError("second")
    error = raised_from(group(cancelled, group(first), second))
    assert error is first
    assert isinstance(error.__context__, BaseExceptionGroup)
    assert error.__context__.exceptions == (second,)
    assert "TypeError('second')" in error.__notes__[0]


def test_single_exception_prefers_keyboard_interrupt_and_keeps_a_lone_errors_context() -> None:
    interrupt = KeyboardInterrupt()
    assert raised_from(group(ValueError("x"), interrupt)) is interrupt
    cause = OSError("cause")
    lone = RuntimeError("lone")
    lone.__context__ = cause
    assert raised_from(group(lone)).__context__ is cause
    assert not hasattr(lone, "__notes__")


# --------------------------------------------------------------------------- item 8: types


async def test_the_v2_view_gives_the_typed_answer_peer_and_updates(v2_surface: AnySurface) -> None:
    async with raw_agent(client=stream_reading(v2_surface), surface=v2_surface) as (conn, peer):
        view = conn.v2
        types = module(v2_surface)
        assert view.initialize_response == types.InitializeResponse(
            protocol_version=2, info=types.Implementation(name="raw", version="0")
        )
        assert view.peer is conn.v2_agent
        async with view.subscribe("sess_1") as updates:
            await peer.send(chunk_notification("sess_1", "typed"))
            update = await updates.__anext__()
        assert isinstance(update, types.AgentMessageChunk)


TYPED_CLIENT = """
from typing import assert_type
import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acpwire.client import ClientConnection, V1UnknownSessionUpdate

async def use(conn: ClientConnection) -> None:
    init = await conn.initialize(v2.InitializeRequest(protocol_version=2, info=v2.Implementation(name="t", version="0")))
    assert_type(init, v2.InitializeResponse | v1.InitializeResponse)
    init1 = await conn.initialize(v1.InitializeRequest(protocol_version=1), timeout=5)
    assert_type(init1, v1.InitializeResponse)
    assert_type(conn.v2.initialize_response, v2.InitializeResponse)
    session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
    async with conn.v2.subscribe(session.session_id) as updates:
        async for update in updates:
            assert_type(update, v2.SessionUpdate)
            update.no_such_field
    async with conn.v1.subscribe("s") as updates1:
        async for update1 in updates1:
            assert_type(update1, v1.SessionUpdate | V1UnknownSessionUpdate)
"""


def test_a_client_using_the_views_is_checked_by_mypy_strict(tmp_path: Path) -> None:
    errors = mypy_strict_errors(TYPED_CLIENT, tmp_path)
    # the one deliberate mistake, reported for each variant of v2.SessionUpdate:
    assert all(":17: error:" in e and '"no_such_field"' in e for e in errors), errors
    known_variants = typing.get_args(typing.get_args(v2.SessionUpdate)[0])
    assert len(errors) == len(known_variants) + 1  # + UnknownSessionUpdate


SILENT_AGENT = "import sys, time; sys.stderr.write('loading weights...\\n'); time.sleep(30)"


async def test_initialize_times_out_naming_the_agent_and_its_stderr() -> None:
    async with open_agent(python(SILENT_AGENT), v2=ClientV2) as conn:
        with pytest.raises(InitializeTimeout) as caught:
            await conn.initialize(INIT_V2, timeout=0.5)
    message = str(caught.value)
    assert "time.sleep(30)" in message  # the command line
    assert "loading weights..." in message
    assert "timeout=" in message


# --------------------------------------------------------------------------- item 9: misuse


async def test_the_agent_before_initialize_says_to_initialize() -> None:
    _, client_end = memory_stream_pair()
    async with connect(client_end, v2=ClientV2) as conn:
        with pytest.raises(NotInitialized, match=r"await conn.initialize\("):
            conn.v2_agent  # noqa: B018
        with pytest.raises(NotInitialized):
            await conn.cancel("sess_1")


CONNECTION_API = {
    "initialize",
    "protocol_version",
    "v2",
    "v1",
    "v2_agent",
    "v1_agent",
    "subscribe",
    "cancel",
    "peer",
    "client",
    "closed",
    "agent_pid",
    "extensions",
}


async def test_the_connection_exposes_only_its_documented_api() -> None:
    async with raw_agent(client=ClientV2) as (conn, peer):
        assert {name for name in dir(conn) if not name.startswith("_")} == CONNECTION_API
        assert all(getattr(ClientConnection, name).__doc__ for name in CONNECTION_API)
        assert conn.peer == "the agent" and isinstance(conn.client, ClientV2)
        with pytest.raises(AttributeError):
            conn.peer = "read-only"  # type: ignore[misc]
        assert not conn.closed
        await peer.stream.aclose()
        await until(lambda: conn.closed)


async def test_the_client_before_initialize_says_to_initialize() -> None:
    _, client_end = memory_stream_pair()
    async with connect(client_end, v2=ClientV2) as conn:
        with pytest.raises(NotInitialized, match=r"await conn.initialize\("):
            conn.client  # noqa: B018


async def test_the_v1_peer_on_a_v2_connection_says_to_use_v2() -> None:
    async with raw_agent(client=ClientV2) as (conn, _):
        with pytest.raises(ProtocolMismatch, match=r"negotiated protocol version 2.*`conn\.v2`"):
            conn.v1_agent  # noqa: B018


@pytest.mark.parametrize(
    ("factories", "fix"),
    [
        (
            {"v2": ClientV2(None)},
            r"got an instance of ClientV2.*pass the class itself \(v2=ClientV2\)",
        ),
        ({"v2": ClientV1}, r"ClientV1 is a v1 implementation.*pass it as v1=ClientV1"),
        ({"v1": "ClientV1"}, r"pass a acp_schema\.v1\.ClientBase subclass"),
        ({}, r"pass v2=MyClient"),
    ],
    ids=["instance", "wrong-version", "not-callable", "none"],
)
async def test_a_wrong_factory_fails_at_once_naming_the_fix(
    factories: dict[str, Any], fix: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=fix):
        async with open_agent(["/nonexistent/agent"], **factories):
            raise AssertionError("not reached")


async def test_a_factory_returning_something_else_fails_initialize() -> None:
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    async with connect(client_end, v2=lambda agent: object()) as conn:  # type: ignore[arg-type,return-value]
        with pytest.raises(TypeError, match=r"factory returned a object: .*subclass acp_schema"):
            await initialized_by(peer, conn, RAW_INIT_V2)


# --------------------------------------------------------------------------- unstable surfaces


async def test_a_client_on_the_unstable_surface_is_served_its_draft_methods() -> None:
    """A ClientBase of acp_schema.v2.unstable gets its draft methods (mcp/message) routed,
    not -32601; the surface is read from the class it subclasses."""
    import acp_schema.v2.unstable as v2u

    seen: list[str] = []

    class UnstableClient(v2u.ClientBase):
        def __init__(self, agent: v2u.AgentPeer) -> None:
            self.agent = agent

        async def mcp_message(self, params: v2u.MessageMcpRequest) -> v2u.MessageMcpResponse:
            seen.append(params.method)
            return v2u.MessageMcpResponse(result={"ok": True})

    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    async with connect(client_end, v2=UnstableClient) as conn:
        await initialized_by(peer, conn, RAW_INIT_V2)
        mcp = {"serverId": "srv", "requestId": "r1", "method": "tools/list"}
        await peer.send(request(9, "mcp/message", mcp))
        assert await peer.receive() == response(9, {"result": {"ok": True}})
    assert seen == ["tools/list"]


# --------------------------------------------------------------------------- every surface


async def test_cancel_sends_session_cancel_on_every_surface(surface: AnySurface) -> None:
    """Was: a client on an unstable surface sent nothing (`conn.cancel` checked the peer
    against the stable `AgentPeer` classes)."""
    async with raw_agent(surface=surface) as (conn, peer):
        await conn.cancel(SESSION)
        with anyio.fail_after(2):
            assert await peer.receive() == notification("session/cancel", {"sessionId": SESSION})


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"protocolVersion": 2}, "missing required field `info` - at `$.result` (as protocol"),
        (
            {**RAW_INIT_V2, "info": {"name": 5}},
            "Expected `str`, got `int` - at `$.result.info.name`",
        ),
        ({"protocolVersion": "2"}, "Expected `int`, got `str` - at `$.result.protocolVersion`"),
    ],
    ids=["v2-without-info", "wrong-type", "no-version"],
)
async def test_an_initialize_answer_that_does_not_fit_is_an_invalid_response(
    answer: dict[str, Any], reason: str
) -> None:
    """Was: the decoder's own `msgspec.ValidationError` left `initialize`."""
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(agent_end)
    async with connect(client_end, v2=ClientV2) as conn:
        with pytest.raises(InvalidResponse) as caught:
            await initialized_by(peer, conn, answer)
        assert caught.value.method == "initialize" and reason in caught.value.reason
        assert str(caught.value).startswith("invalid response to initialize: ")
        with pytest.raises(NotInitialized):
            conn.v2  # noqa: B018
