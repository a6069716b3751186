"""How the connection fails visibly: requests received before the input ended are still
answered; a non-JSON line is logged; a handler's wrong result is this side's -32603 and the
caller's `InvalidResponse`; an error the peer answered a nested request with is not the
outer request's error.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from acpwire._wire.connection import Connection
from acpwire._wire.dispatch import handler_dispatch
from acpwire._wire.jsonrpc import Call
from acpwire.agent import serve_agent
from acpwire.client import connect, open_agent
from acpwire.client.permissions import PERMISSION
from acpwire.errors import ConnectionClosed, InvalidResponse, PeerError, RpcError
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2
from acpwire.testing import memory_stream_pair
from helpers.connection import Served, serving
from helpers.constants import PERMISSION_REQUEST
from helpers.loops import until
from helpers.processes import SOURCE_PATH
from helpers.raw import RawPeer, error_response, request, response

pytestmark = pytest.mark.usefixtures("loop")


class Gated:
    """Extension handlers: `_wait` answers "released" once the gate opens, `_wait_then_ask`
    then asks the peer for permission."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.gate = anyio.Event()
        self.started: list[Any] = []
        self.nested_errors: list[ConnectionClosed] = []

    async def __call__(self, call: Call) -> Any:
        self.started.append(call.id)
        await self.gate.wait()
        if call.method == "_wait_then_ask":
            try:
                await self.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
            except ConnectionClosed as exc:
                self.nested_errors.append(exc)
                raise
        return "released"


@asynccontextmanager
async def gated(**options: Any) -> AsyncIterator[tuple[Served, Gated]]:
    async with serving(Gated, **options) as s:
        assert isinstance(s.connection.dispatch, Gated)
        yield s, s.connection.dispatch


def input_ended(id: Any, grace: float) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": RpcError.input_ended(grace).to_wire()}


# --------------------------------------------------------------------------- EOF, item 3


async def test_requests_in_flight_when_the_input_ends_are_still_answered() -> None:
    async with gated(max_concurrent_requests=1) as (s, handlers):
        await s.peer.send(request(1, "_wait"), request(2, "_wait"))  # 2 waits in the backlog
        await until(lambda: handlers.started == [1])
        await s.peer.stream.send_eof()
        await until(lambda: s.connection.closed)
        assert not s.stopped.is_set()
        handlers.gate.set()
        with anyio.fail_after(2):
            assert [await s.peer.receive(), await s.peer.receive()] == [
                response(1, "released"),
                response(2, "released"),
            ]
            await s.stopped.wait()


async def test_past_the_grace_period_the_rest_are_answered_the_input_ended() -> None:
    async with gated(max_concurrent_requests=1, eof_grace_period=0.05) as (s, handlers):
        await s.peer.send(request(1, "_wait"), request(2, "_wait"))
        await until(lambda: handlers.started == [1])
        await s.peer.stream.send_eof()
        with anyio.fail_after(2):
            assert [await s.peer.receive(), await s.peer.receive()] == [
                input_ended(1, 0.05),
                input_ended(2, 0.05),
            ]
            await s.stopped.wait()


async def test_when_no_answer_can_be_written_run_does_not_wait_for_the_grace_period() -> None:
    async with gated(eof_grace_period=60) as (s, handlers):
        await s.peer.send(request(1, "_wait"))
        await until(lambda: handlers.started == [1])
        await s.peer.stream.aclose_receiving()  # the peer stops reading
        await s.peer.send(b"not json")  # so this answer cannot be written
        await until(lambda: s.connection.closed)
        await s.peer.stream.send_eof()
        await until(s.stopped.is_set, seconds=1)


async def test_a_nested_request_after_the_input_ended_fails_but_its_request_is_answered() -> None:
    async with gated() as (s, handlers):
        await s.peer.send(request(1, "_wait_then_ask"))
        await until(lambda: handlers.started == [1])
        await s.peer.stream.send_eof()
        await until(lambda: s.connection.closed)
        handlers.gate.set()
        with anyio.fail_after(2):
            answer = await s.peer.receive()
            await s.stopped.wait()
    assert len(handlers.nested_errors) == 1
    assert answer["id"] == 1 and answer["error"]["code"] == -32603
    assert "ConnectionClosed" in answer["error"]["message"]


def agent_lines(*messages: Any) -> bytes:
    return b"".join(msgspec.json.encode(m) + b"\n" for m in messages)


def run_echo_agent(stdin: bytes) -> list[Any]:
    """What `printf <stdin> | python -m acpwire.fixtures.echo_agent` prints, decoded."""
    done = subprocess.run(
        [sys.executable, "-m", "acpwire.fixtures.echo_agent"],
        input=stdin,
        capture_output=True,
        timeout=20,
        env={**os.environ, "PYTHONPATH": SOURCE_PATH},
        check=True,
    )
    return [msgspec.json.decode(line) for line in done.stdout.splitlines()]


class Pipes:
    """A process's stdin and stdout (anyio streams) with the stream methods RawPeer uses."""

    def __init__(self, stdin: anyio.abc.ByteSendStream, stdout: anyio.abc.ByteReceiveStream):
        self.stdin = stdin
        self.stdout = stdout

    async def send_all(self, data: bytes) -> None:
        await self.stdin.send(data)

    async def receive_some(self, max_bytes: int = 65536) -> bytes:
        try:
            return await self.stdout.receive(max_bytes)
        except anyio.EndOfStream:
            return b""

    async def aclose(self) -> None:
        await self.stdin.aclose()
        await self.stdout.aclose()


INITIALIZE = request(1, "initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "1"}})


def test_a_piped_initialize_is_answered_by_the_agent_process() -> None:
    (answer,) = run_echo_agent(agent_lines(INITIALIZE))
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 2


async def test_a_prompt_whose_permission_request_comes_after_the_input_ended_is_answered() -> None:
    """The v1 agent process (its prompt's answer waits for the turn) asks for permission
    after its stdin closed: that request fails at once (no answer could be read), the prompt
    is still answered, and the process exits."""
    process = await anyio.open_process(
        [sys.executable, "-m", "acpwire.fixtures.echo_agent"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        env={**os.environ, "PYTHONPATH": SOURCE_PATH},
    )
    assert process.stdin is not None and process.stdout is not None
    peer = RawPeer(Pipes(process.stdin, process.stdout))
    try:
        with anyio.fail_after(8):
            assert (await peer.call(1, "initialize", {"protocolVersion": 1}))["id"] == 1
            created = await peer.call(2, "session/new", {"cwd": "/repo", "mcpServers": []})
            assert created["result"]["sessionId"] == "sess_1"
            prompt = {"sessionId": "sess_1", "prompt": [{"type": "text", "text": "hi"}]}
            await peer.send(request(3, "session/prompt", prompt))
            await process.stdin.aclose()
            messages = []
            while not messages or messages[-1].get("id") != 3:
                messages.append(await peer.receive())
            assert await process.wait() == 0
    finally:
        if process.returncode is None:  # (asyncio's kill() raises once it has exited)
            process.kill()
    assert messages[-1]["error"]["code"] == -32603
    assert "ConnectionClosed" in messages[-1]["error"]["message"]


# --------------------------------------------------------------------------- non-JSON lines, 9


async def test_a_non_json_line_is_logged_naming_the_peer(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    async with gated(peer="my-agent --fast") as (s, _):
        await s.peer.send(b"Loading model weights...")
        answer = await s.peer.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert "my-agent --fast" in message
    assert "'Loading model weights...'" in message
    # a connection not told its peer's side gives the advice that holds for both
    assert message.endswith("Only JSON-RPC messages may be written to the protocol stream.")


async def test_a_flood_of_non_json_lines_is_quoted_a_few_times_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    long_line = b"x" * 10_000
    async with gated() as (s, _):
        await s.peer.send(b"\n".join([long_line] * 1000))
        for _ in range(1000):
            assert (await s.peer.receive())["error"]["code"] == -32700
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 + 3  # three quoted, then counts at 10, 100 and 1000
    assert all(len(m) < 400 for m in messages)  # quoted in part
    assert "10000 bytes" in messages[0]
    assert "1000 lines that are not JSON" in messages[-1]


async def test_an_error_answering_no_request_is_logged_with_its_code_and_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The peer could not read a line of ours (so it cannot say which): nothing waits for
    that answer, and it must not vanish silently."""
    caplog.set_level(logging.WARNING, logger="acpwire")
    async with serving() as s:
        await s.peer.send(error_response(None, -32700, "Parse error: unexpected end of input"))
        assert await s.peer.call(1, "_echo", "after") == response(1, "after")
    (record,) = caplog.records
    assert (record.name, record.levelno) == ("acpwire", logging.WARNING)
    assert record.getMessage() == (
        "the peer answered a message it could not identify (id null): "
        "error -32700: Parse error: unexpected end of input"
    )


async def test_a_flood_of_answers_to_no_request_is_quoted_a_few_times_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire")
    peer = "agent `printf %s%d`"  # a name that is no format for the log's count
    async with serving(peer=peer) as s:
        await s.peer.send(*(error_response(None, -32700, "Parse error") for _ in range(100)))
        assert await s.peer.call(1, "_echo", "after") == response(1, "after")
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3 + 2  # three quoted, then counts at 10 and 100
    assert messages[0].startswith(f"{peer} answered a message it could not identify")
    assert messages[-1].startswith(f"{peer} has answered 100 messages it could not identify")


async def test_the_agent_side_calls_its_peer_the_client(caplog: pytest.LogCaptureFixture) -> None:
    ours, theirs = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(partial(serve_agent, EchoAgentV2, stream=ours))
        peer = RawPeer(theirs)
        await peer.send(b"Loading model weights...")
        assert (await peer.receive())["error"]["code"] == -32700
        nursery.cancel_scope.cancel()
    (record,) = caplog.records
    message = record.getMessage()
    assert message.startswith("the client wrote a line that is not JSON")
    assert message.endswith(
        "Clients must send JSON-RPC messages only (over stdio: to the agent's stdin, one a line)."
    )
    assert "stderr" not in message  # the advice for agents is not the client's


async def test_the_client_side_names_the_agent_command(caplog: pytest.LogCaptureFixture) -> None:
    command = [sys.executable, "-c", "print('Loading model weights...')"]
    async with open_agent(command, v2=lambda agent: v2.ClientBase()) as conn:
        with pytest.raises(ConnectionClosed):
            info = v2.Implementation(name="t", version="1")
            await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
    (record,) = [r for r in caplog.records if "not JSON" in r.getMessage()]
    message = record.getMessage()
    assert message.startswith(f"agent `{shlex.join(command)}` wrote a line that is not JSON")
    assert message.endswith(
        "Agents must send JSON-RPC messages only (over stdio: on stdout) and log to stderr."
    )


# --------------------------------------------------------------------------- wrong results, 9


class WrongAgent(v2.AgentBase):
    """Handlers with the bugs people make, and legitimate ones next to them."""

    async def session_new(self, params: v2.NewSessionRequest) -> Any:
        return {
            "/wrong-class": v2.PromptResponse(message_id="m"),
            "/dict": {"sessionId": "s"},
            "/none": None,
        }[params.cwd]

    async def session_close(self, params: v2.CloseSessionRequest) -> Any:
        return None  # the result has no required field: None stands for `{}`

    def session_delete(self, params: v2.DeleteSessionRequest) -> Any:  # not `async def`
        return v2.DeleteSessionResponse()

    async def session_list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        return v2.ListSessionsResponse(sessions=[])


def wrong_agent(connection: Connection) -> Callable[[Call], Awaitable[Any] | None]:
    return handler_dispatch(WrongAgent(), v2.AgentBase)


@pytest.mark.parametrize(
    ("cwd", "got"),
    [("/wrong-class", "a PromptResponse"), ("/dict", "a dict"), ("/none", "None")],
)
async def test_a_wrong_result_is_logged_here_and_answered_internal_error(
    cwd: str, got: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving(wrong_agent) as s:
        answer = await s.peer.call(1, "session/new", {"cwd": cwd})
    expected = f"the handler `session_new` of session/new returned {got}; "
    expected += "it must return a NewSessionResponse"
    assert answer == error_response(1, -32603, f"Internal error: {expected}")
    (record,) = caplog.records
    assert record.levelno == logging.ERROR and record.getMessage() == expected


class StableAnswersOnTheUnstableSurface(v2u.AgentBase):
    async def session_new(self, params: v2u.NewSessionRequest) -> Any:
        return v2.NewSessionResponse(session_id="s")  # the stable class: not this surface's


async def test_a_result_class_of_another_surface_is_named_with_its_surface(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Was: "returned a NewSessionResponse; it must return a NewSessionResponse"."""

    def dispatch(connection: Connection) -> Callable[[Call], Awaitable[Any] | None]:
        return handler_dispatch(StableAnswersOnTheUnstableSurface(), v2u.AgentBase)

    async with serving(dispatch, v2u.AGENT_CODEC) as s:
        answer = await s.peer.call(1, "session/new", {"cwd": "/"})
    expected = (
        "the handler `session_new` of session/new returned a NewSessionResponse of "
        "acp_schema.v2; it must return a NewSessionResponse of acp_schema.v2.unstable"
    )
    assert answer == error_response(1, -32603, f"Internal error: {expected}")
    assert caplog.records[0].getMessage() == expected


async def test_none_answers_a_method_whose_result_has_no_required_field_with_empty() -> None:
    async with serving(wrong_agent) as s:
        assert await s.peer.call(1, "session/close", {"sessionId": "s"}) == response(1, {})
        assert await s.peer.call(2, "session/list", {}) == response(2, {"sessions": []})


async def test_a_handler_that_is_not_async_is_named_as_such(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serving(wrong_agent) as s:
        answer = await s.peer.call(1, "session/delete", {"sessionId": "s"})
    assert answer["error"]["code"] == -32603
    message = answer["error"]["message"]
    assert "`session_delete` of session/delete returned a DeleteSessionResponse" in message
    assert "make it `async def`" in caplog.records[0].getMessage()


class Elicitor(v2.ClientBase):
    async def elicitation_create(self, params: Any) -> Any:
        return v2.DeclineElicitationResponse()


async def test_a_variant_of_a_union_result_is_a_right_result() -> None:
    def dispatch(connection: Connection) -> Callable[[Call], Awaitable[Any] | None]:
        return handler_dispatch(Elicitor(), v2.ClientBase)

    params = {
        "mode": "url",
        "elicitationId": "e",
        "url": "https://x",
        "message": "m",
        "sessionId": "s",
    }
    async with serving(dispatch, v2.CLIENT_CODEC) as s:
        answer = await s.peer.call(1, "elicitation/create", params)
    assert answer == response(1, {"action": "decline"})


async def answer_the_request_with(peer: RawPeer, answer: dict[str, Any]) -> None:
    asked = await peer.receive()
    await peer.send({**answer, "id": asked["id"]})


async def test_an_invalid_response_raises_invalid_response_at_the_caller() -> None:
    async with gated() as (s, _):
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(answer_the_request_with, s.peer, response(None, {"x": 1}))
            with pytest.raises(InvalidResponse) as caught:
                await s.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    assert not isinstance(caught.value, RpcError)
    assert caught.value.method == "session/request_permission"
    assert "missing required field `outcome`" in caught.value.reason


async def test_an_answer_over_the_line_limit_fails_its_request_and_serving_goes_on() -> None:
    big = {"outcome": {"outcome": "cancelled"}, "_meta": {"pad": "x" * 500}}
    async with gated(max_line_bytes=300) as (s, handlers):
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(answer_the_request_with, s.peer, response(None, big))
            with pytest.raises(InvalidResponse) as caught:
                await s.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
        assert caught.value.method == "session/request_permission"
        assert "over the line limit: raise max_line_bytes" in caught.value.reason
        handlers.gate.set()
        assert await s.peer.call(1, "_wait") == response(1, "released")  # nothing sent before


# --------------------------------------------------------------------------- nested failures, 11


class Asker:
    """`_ask` asks the peer for permission; `_refuse` raises an RpcError of its own."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def __call__(self, call: Call) -> Any:
        if call.method == "_refuse":
            raise RpcError(-32002, "Resource not found", {"uri": "file:///nope"})
        answer = await self.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
        return msgspec.to_builtins(answer)


async def test_an_error_answering_a_nested_request_is_an_internal_error_keeping_it() -> None:
    async with serving(Asker) as s:
        await s.peer.send(request(7, "_ask"))
        asked = await s.peer.receive()
        assert asked["method"] == "session/request_permission"
        refusal = error_response(asked["id"], -32601, "Method not found", {"method": "x"})
        await s.peer.send(refusal)
        answer = await s.peer.receive()
    assert answer == error_response(
        7,
        -32603,
        "Internal error: session/request_permission failed: Method not found (-32601)",
        {"method": "session/request_permission", "error": refusal["error"]},
    )


async def test_an_rpc_error_the_handler_raises_itself_is_still_its_answer() -> None:
    async with serving(Asker) as s:
        answer = await s.peer.call(7, "_refuse")
    assert answer == error_response(7, -32002, "Resource not found", {"uri": "file:///nope"})


async def test_the_caller_of_a_refused_request_gets_a_peer_error_that_is_an_rpc_error() -> None:
    async with gated() as (s, _):
        async with anyio.create_task_group() as nursery:
            refusal = error_response(None, -32601, "Method not found")
            nursery.start_soon(answer_the_request_with, s.peer, refusal)
            with pytest.raises(RpcError) as caught:
                await s.connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    assert isinstance(caught.value, PeerError)
    assert caught.value.method == "session/request_permission" and caught.value.code == -32601


class ClientWithoutPermissions(v1.ClientBase):
    """Answers `session/request_permission` with -32601: it does not implement it."""

    def __init__(self, agent: v1.AgentPeer) -> None:
        self.agent = agent

    async def session_update(self, params: v1.SessionNotification) -> None:
        pass


async def test_the_client_reads_the_prompt_failed_not_that_prompting_is_not_found() -> None:
    """The issue's case end to end: the echo agent's prompt asks for permission, the client
    answers "Method not found"; that was the prompt's error, verbatim."""
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(partial(serve_agent, v1=EchoAgentV1, stream=agent_end))
        async with connect(client_end, v1=ClientWithoutPermissions) as conn:
            init = v1.InitializeRequest(protocol_version=1)
            await conn.initialize(init)
            agent = conn.v1_agent
            session = await agent.session_new(v1.NewSessionRequest(cwd="/repo", mcp_servers=[]))
            prompt = v1.PromptRequest(
                session_id=session.session_id, prompt=[v1.TextContent(text="hi")]
            )
            with pytest.raises(PeerError) as caught:
                await agent.session_prompt(prompt)
        nursery.cancel_scope.cancel()
    assert caught.value.method == "session/prompt" and caught.value.code == -32603
    assert caught.value.data == {
        "method": "session/request_permission",
        "error": {"code": -32601, "message": "Method not found", "data": {"method": PERMISSION}},
    }
