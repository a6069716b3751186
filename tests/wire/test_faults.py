"""Faults: peers that exit mid-stream, broken pipes, agents crashing mid-turn, cancellation
storms, cancels at awkward moments, and many sessions at once on one connection.

Complements wire/test_connection.py / e2e/test_endpoints.py (which cover the single,
in-memory cases of each): here the peers are real subprocesses and sockets, and the cases are
the messy ones.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import socket
from typing import Any

import anyio
import anyio.abc
import pytest

import acp_schema.v2 as v2
from acpwire._wire.connection import Connection
from acpwire._wire.options import ConnectionOptions
from acpwire.agent import serve_agent
from acpwire.agent.endpoint import AgentEndpoint
from acpwire.client import connect, open_agent
from acpwire.errors import ConnectionClosed, PeerExited
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.streams import spawn_agent
from acpwire.testing import memory_stream_pair
from helpers.clients import (
    ClientV1,
    ClientV2,
    HoldingClientV2,
    describe,
    new_v1_session,
    new_v2_session,
    prompt_v1,
    prompt_v2,
    until_idle,
    until_state,
)
from helpers.connection import serving
from helpers.constants import INIT_V2, RAW_INIT_V2
from helpers.constants import PERMISSION_REQUEST as PERMISSION
from helpers.lines import chunk_notification
from helpers.loops import until, wait_all_tasks_blocked
from helpers.processes import PYTHONPATH, loop_script, python
from helpers.raw import CANCELLED, RawPeer, cancel_request, notification, request, response
from helpers.serving import messages, pair

pytestmark = pytest.mark.usefixtures("loop")

# --------------------------------------------------------------------------- the peer exits

# Answers initialize, reads the client's next N requests (never answering them), streams
# three updates, (with "cut": cuts the fourth off mid-line) and exits with code 0.
EXITS_MID_STREAM = f"""
import json, sys
def send(text): sys.stdout.write(text); sys.stdout.flush()
init = json.loads(sys.stdin.readline())
send(json.dumps({{"jsonrpc": "2.0", "id": init["id"], "result": {RAW_INIT_V2!r}}}) + "\\n")
for _ in range(int(sys.argv[1])):
    sys.stdin.readline()
for i in range(3):
    send(json.dumps({chunk_notification("sess_1", "TEXT")!r}).replace("TEXT", str(i)) + "\\n")
if sys.argv[2] == "cut":
    send('{{"jsonrpc": "2.0", "method": "session/upd')
sys.stderr.write("leaving\\n")
"""


@pytest.mark.parametrize("cut", [False, True], ids=["between-lines", "mid-line"])
async def test_agent_exiting_mid_stream_fails_every_pending_request_and_subscription(
    cut: bool,
) -> None:
    pending = 5
    command = [*python(EXITS_MID_STREAM), str(pending), "cut" if cut else "whole"]
    async with open_agent(command, v2=ClientV2) as conn:
        await conn.initialize(INIT_V2)
        failures: list[BaseException] = []
        received: list[str] = []

        async def call(i: int) -> None:
            try:
                await conn.v2_agent.session_new(v2.NewSessionRequest(cwd=f"/{i}"))
            except ConnectionClosed as exc:
                failures.append(exc)

        ended: list[BaseException] = []
        with anyio.fail_after(5):
            async with conn.subscribe("sess_1") as updates, anyio.create_task_group() as nursery:
                for i in range(pending):
                    nursery.start_soon(call, i)
                try:
                    async for update in updates:  # raises once the agent is gone
                        received.append(update.content.text)
                except ConnectionClosed as exc:
                    ended.append(exc)
        assert received == ["0", "1", "2"]
        assert len(ended) == 1
        assert len(failures) == pending
        assert conn.closed
        with pytest.raises(ConnectionClosed):  # and anything later fails at once
            await conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/late"))
        if not cut:  # (mid-line: see test_agent_death_noticed_by_a_failed_write_...)
            assert all(isinstance(f, PeerExited) for f in [*failures, *ended]), failures
            assert {(f.exit_code, f.stderr_tail) for f in failures} == {(0, "leaving")}


# Answers initialize, sends more updates than a subscriber buffers (but few enough to fit in
# the client's buffers and the pipe, so it is not blocked itself), and exits with code 9.
FLOODS_AND_DIES = f"""
import json, sys
init = json.loads(sys.stdin.readline())
print(json.dumps({{"jsonrpc": "2.0", "id": init["id"], "result": {RAW_INIT_V2!r}}}), flush=True)
update = json.dumps({chunk_notification("sess_1", "x")!r})
sys.stdout.write((update + "\\n") * 1300)
sys.stdout.flush()
sys.stderr.write("died after the flood\\n")
sys.exit(9)
"""


async def test_agent_death_noticed_by_a_failed_write_still_reports_exit_code_and_stderr() -> None:
    async with spawn_agent(python(FLOODS_AND_DIES), forward_stderr=None) as agent:
        async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
            async with conn.subscribe("sess_1"):  # ... which nobody reads yet
                await conn.initialize(INIT_V2)
                with anyio.fail_after(3):
                    await agent.process.wait()
                    with pytest.raises(ConnectionClosed) as caught:
                        await conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/"))
    assert isinstance(caught.value, PeerExited), repr(caught.value)
    assert caught.value.exit_code == 9
    assert caught.value.stderr_tail == "died after the flood"


@pytest.mark.parametrize("moment", ["waiting-for-permission", "streaming"])
async def test_client_vanishing_mid_turn_ends_serve_agent_cleanly(moment: str) -> None:
    """The agent side: the client goes away while a turn waits on permission, or streams."""
    agent_end, client_end = memory_stream_pair()
    peer = RawPeer(client_end)
    returned = anyio.Event()

    async def agent() -> None:
        await serve_agent(EchoAgentV2, stream=agent_end)  # must return, not raise
        returned.set()

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(agent)
        await peer.call(0, "initialize", {"protocolVersion": 2, "info": RAW_INIT_V2["info"]})
        session = (await peer.call(1, "session/new", {"cwd": "/"}))["result"]["sessionId"]
        text = "hello" if moment == "waiting-for-permission" else "stream 100000"
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        await peer.send(request(2, "session/prompt", prompt))
        wanted = "session/request_permission" if moment == "waiting-for-permission" else None
        while True:
            message = await peer.receive()
            if wanted is None and message.get("method") == "session/update":
                update = message["params"]["update"]
                if update["sessionUpdate"] == "agent_message_chunk":
                    break  # the outbox fills up while we read no more
            if wanted is not None and message.get("method") == wanted:
                break
        await peer.stream.send_all(b'{"jsonrpc": "2.0", "id": 0, "res')  # and dies mid-line
        await peer.close()
        with anyio.fail_after(2):
            await returned.wait()


# --------------------------------------------------------------------------- broken pipes

# Answers initialize, then closes its stdin (the client's writes now hit a closed pipe) and
# lingers a moment before exiting.
CLOSES_STDIN = f"""
import json, os, sys, time
init = json.loads(sys.stdin.readline())
print(json.dumps({{"jsonrpc": "2.0", "id": init["id"], "result": {RAW_INIT_V2!r}}}), flush=True)
os.close(0)
print("stdin closed", file=sys.stderr, flush=True)
time.sleep(0.5)
"""


async def test_writing_to_an_agent_that_closed_its_stdin_fails_calls_and_does_not_hang() -> None:
    async with spawn_agent(python(CLOSES_STDIN), forward_stderr=None) as agent:
        async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
            await conn.initialize(INIT_V2)
            await until(lambda: "stdin closed" in agent.stderr_tail)
            with anyio.fail_after(3):
                with pytest.raises(ConnectionClosed):  # EPIPE: no answer will ever come
                    await conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/"))
                with pytest.raises(ConnectionClosed):
                    await conn.cancel("sess_1")  # a notification fails the same way
                assert conn.closed


async def test_peer_closing_while_a_large_write_is_in_flight() -> None:
    """A socket peer that stops reading, then closes: the writer blocked mid-send_all wakes
    with the error, every sender and the pending request fail, and run() returns."""
    ours, theirs = socket.socketpair()
    stream = await anyio.abc.SocketStream.from_socket(ours)

    async def echo(call: Any) -> Any:
        return None

    connection = Connection(
        stream, v2.AGENT_CODEC, echo, options=ConnectionOptions(max_buffered_bytes=256 * 1024)
    )
    failures: list[BaseException] = []
    update = v2.UpdateSessionNotification(
        session_id="s",
        update=v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x" * 4000)),
    )

    async def flood() -> None:
        try:
            while True:
                await connection.notify(v2.SESSION_UPDATE, update)
        except ConnectionClosed as exc:
            failures.append(exc)

    async def ask() -> None:
        try:
            await connection.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION)
        except ConnectionClosed as exc:
            failures.append(exc)

    stopped = anyio.Event()

    async def run() -> None:
        await connection.run()
        stopped.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run)
            for _ in range(3):
                nursery.start_soon(flood)
            nursery.start_soon(ask)
            await wait_all_tasks_blocked(cushion=0.02)  # the kernel buffer is full
            assert connection._outbox._queued >= 256 * 1024 and not failures
            assert theirs.recv(1000)  # read a little (no wait: it is there), then go away
            theirs.close()
            await stopped.wait()
    assert len(failures) == 4
    assert connection.closed


# --------------------------------------------------------------------------- crashes mid-turn

# An echo agent (v2 and v1) on the loop named by argv[2], whose turn streams three chunks, logs
# 100 lines to stderr and dies: with exit code 7, or killed by SIGKILL.
CRASHES_MID_TURN = loop_script("""
import os, signal, sys
from acpwire.agent import serve_agent
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2

def die():
    for i in range(100):
        print(f"log line {i}", file=sys.stderr)
    print("fatal: out of cheese", file=sys.stderr, flush=True)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(7)

class V2(EchoAgentV2):
    async def echo(self, turn):
        for i in range(3):
            await turn.say(f"chunk {i} ")
        await anyio.sleep(0.1)  # let the writer send them
        die()

class V1(EchoAgentV1):
    async def echo(self, session_id, text):
        for i in range(3):
            await self.say(session_id, f"chunk {i} ")
        await anyio.sleep(0.1)
        die()

run_on(sys.argv[2], lambda: serve_agent(V2, v1=V1))
""")


@pytest.mark.parametrize(("how", "exit_code"), [("exit", 7), ("kill", -signal.SIGKILL)])
async def test_v2_agent_crashing_mid_turn_reports_exit_code_and_stderr_tail(
    loop: str, how: str, exit_code: int
) -> None:
    command = [*python(CRASHES_MID_TURN), how, loop]
    async with open_agent(command, v2=ClientV2, env=PYTHONPATH) as conn:
        session_id = await new_v2_session(conn)
        seen: list[str] = []
        with anyio.fail_after(5):
            with pytest.raises(PeerExited) as raised:  # by the subscription, after its updates
                async with conn.subscribe(session_id) as updates:
                    await conn.v2_agent.session_prompt(prompt_v2(session_id, "hi"))
                    async for update in updates:
                        seen.append(describe(update))
            with pytest.raises(PeerExited) as caught:  # and by any later call
                await conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/"))
    assert raised.value is caught.value
    assert seen == [
        "user_message",
        "state running",
        "chunk chunk 0",
        "chunk chunk 1",
        "chunk chunk 2",
    ]
    assert caught.value.exit_code == exit_code
    tail = caught.value.stderr_tail.splitlines()
    assert len(tail) == 40  # the tail only: STDERR_TAIL_LINES
    assert tail[-2:] == ["log line 99", "fatal: out of cheese"]


async def test_v1_agent_crashing_mid_turn_fails_the_pending_prompt(loop: str) -> None:
    command = [*python(CRASHES_MID_TURN), "exit", loop]
    async with open_agent(command, v1=ClientV1, env=PYTHONPATH) as conn:
        session_id = await new_v1_session(conn)
        with anyio.fail_after(5), pytest.raises(PeerExited) as caught:
            await conn.v1_agent.session_prompt(prompt_v1(session_id, "hi"))
    assert caught.value.exit_code == 7
    assert "fatal: out of cheese" in caught.value.stderr_tail
    assert [describe(u) for u in conn.client.log] == [f"chunk chunk {i}" for i in range(3)]


# The agent starts a helper that inherits its stdout (as a shell wrapper, an MCP server or a
# language server launched carelessly would), reports the helper's pid, and crashes.
CRASHES_LEAVING_A_HELPER = """
import subprocess, sys
sys.stdin.readline()
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"],
                          stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"helper {helper.pid}", file=sys.stderr, flush=True)
sys.exit(5)
"""


async def test_crashed_agent_is_noticed_even_when_a_helper_keeps_its_stdout_open() -> None:
    helper = 0
    outcome: list[BaseException] = []
    try:
        async with spawn_agent(python(CRASHES_LEAVING_A_HELPER), forward_stderr=None) as agent:
            async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
                with anyio.move_on_after(1.5):
                    try:
                        await conn.initialize(INIT_V2)
                    except ConnectionClosed as exc:
                        outcome.append(exc)
                helper = next(
                    int(line.split()[1]) for line in agent.stderr_tail if line.startswith("helper")
                )
                assert agent.process.returncode == 5
                assert outcome, "initialize still hangs 1.5 s after the agent exited"
                assert isinstance(outcome[0], PeerExited) and outcome[0].exit_code == 5
    finally:
        if helper:
            try:
                os.kill(helper, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --------------------------------------------------------------------------- cancellation storms


@pytest.mark.parametrize("slots", [1000, 16], ids=["unbounded", "16-slots"])
async def test_cancellation_storm_every_request_still_gets_exactly_one_response(
    slots: int,
) -> None:
    """$/cancel_request for unknown, finished, in-flight, queued, future and malformed ids,
    duplicated and sent as requests too, interleaved with real traffic and stray answers."""
    rng = random.Random(5)
    total = 600
    plan: dict[int, str] = {i: rng.choice(["_echo", "_wait"]) for i in range(total)}
    cancelled_after: set[int] = set()  # ids that got a cancel after their request was sent
    cancel_calls: list[str] = []
    lines: list[Any] = []
    for i, method in plan.items():
        lines.append(request(i, method, i if method == "_echo" else None))
        for _ in range(rng.randrange(4)):
            kind = rng.choice(["unknown", "earlier", "self", "future", "malformed", "as-request"])
            if kind == "unknown":
                lines.append(cancel_request(rng.choice([10**9 + i, f"nope-{i}", None])))
            elif kind == "earlier":  # finished, in flight or queued by now
                target = rng.randrange(i + 1)
                lines.append(cancel_request(target))
                cancelled_after.add(target)
            elif kind == "self":
                lines.extend([cancel_request(i)] * 2)
                cancelled_after.add(i)
            elif kind == "future":  # no effect on the request that comes later with that id
                lines.append(cancel_request(i + 3))
            elif kind == "malformed":
                lines.append(notification("$/cancel_request", rng.choice([{}, {"requestId": {}}])))
            else:
                cancel_calls.append(f"c{len(cancel_calls)}")
                lines.append(request(cancel_calls[-1], "$/cancel_request", {"requestId": i}))
                cancelled_after.add(i)
        if rng.random() < 0.1:
            lines.append(response(10**6 + i, "stray"))  # an answer to nothing we asked
    async with serving(max_concurrent_requests=slots) as s:
        for start in range(0, len(lines), 50):  # in bursts, as a busy client would
            await s.peer.send(*lines[start : start + 50])
            await anyio.sleep(0)
        await wait_all_tasks_blocked()
        s.handlers.gate.set()
        answers: dict[Any, list[dict[str, Any]]] = {}
        with anyio.fail_after(5):
            while sum(map(len, answers.values())) < total + len(cancel_calls):
                answer = await s.peer.receive()
                answers.setdefault(answer["id"], []).append(answer)
        await s.peer.expect_silence()
    assert sorted(map(str, answers)) == sorted(map(str, [*plan, *cancel_calls]))
    assert all(len(a) == 1 for a in answers.values())  # exactly one response each
    for cancel_id in cancel_calls:
        assert answers[cancel_id] == [response(cancel_id, None)]
    outcomes = {"released": 0, "cancelled": 0, "echoed": 0, "refused": 0}
    for i, method in plan.items():
        (answer,) = answers[i]
        if "overloaded" in answer.get("error", {}).get("message", ""):
            assert slots < total
            outcomes["refused"] += 1
        elif answer.get("error") == CANCELLED:
            assert i in cancelled_after, f"{i} was cancelled without a cancel after it"
            outcomes["cancelled"] += 1
        elif method == "_wait":
            assert i not in cancelled_after, f"the in-flight {i} was not cancelled"
            assert answer == response(i, "released")
            outcomes["released"] += 1
        else:  # an echo may finish before its cancel is read
            assert answer == response(i, i)
            outcomes["echoed"] += 1
    assert len(s.handlers.cancelled) <= outcomes["cancelled"]  # (queued ones never started)
    assert outcomes["cancelled"] and outcomes["released"] and outcomes["echoed"]
    assert bool(outcomes["refused"]) == (slots < total)
    print(f"\nSTORM slots={slots}: {len(lines)} lines, {outcomes}")
    assert s.connection.core.in_flight == frozenset()


# --------------------------------------------------------------------------- session/cancel


async def test_v2_cancel_during_a_tool_call_ends_idle_cancelled_without_completing_it() -> None:
    async with pair() as p:
        session_id = await new_v2_session(p.conn)
        async with p.conn.subscribe(session_id) as updates:
            await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "slow " * 40))
            async for update in updates:  # the tool call runs (permission was allowed) ...
                if describe(update) == "chunk slow":
                    break
            await p.conn.cancel(session_id)  # ... and is cancelled while it streams
            await until_idle(updates)
        log = [describe(item) for item in p.client.log]
        assert log[:7] == [
            "user_message",
            "state running",
            "tool_call pending",
            "state requires_action",
            "permission",
            "state running",
            "tool_call in_progress",
        ]
        assert log[-1] == "state idle cancelled"
        assert log.count("state idle cancelled") == 1
        assert "tool_call completed" not in log
        assert 0 < log.count("chunk slow") < 40
        # the session still works: the next prompt runs to the end
        async with p.conn.subscribe(session_id) as updates:
            await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "again"))
            await until_idle(updates)
        assert describe(p.client.log[-1]) == "state idle end_turn"


async def test_v2_cancel_answers_only_that_sessions_permission_request_cancelled() -> None:
    """Two sessions wait on permission; cancelling one leaves the other's request pending."""
    async with pair(client_v2=HoldingClientV2) as p:
        await p.conn.initialize(INIT_V2)
        new = v2.NewSessionRequest(cwd="/repo")
        first = (await p.conn.v2_agent.session_new(new)).session_id
        second = (await p.conn.v2_agent.session_new(new)).session_id
        async with p.conn.subscribe(first) as one, p.conn.subscribe(second) as two:
            for session_id in (first, second):
                await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "hello"))
            await until_state(one, "requires_action")
            await until_state(two, "requires_action")
            await until(lambda: sum(describe(i) == "permission" for i in p.client.log) == 2)
            await p.conn.cancel(first)
            await until_idle(one)
            await wait_all_tasks_blocked()
            sent = messages(p.wire.sent)
            answered = {m["id"]: m for m in sent if "method" not in m}
            asked = {
                m["params"]["sessionId"]: m["id"]
                for m in messages(p.wire.received)
                if m.get("method") == "session/request_permission"
            }
            assert answered[asked[first]] == response(
                asked[first], {"outcome": {"outcome": "cancelled"}}
            )
            assert asked[second] not in answered  # still waiting for the user
            await p.conn.cancel(second)
            await until_idle(two)
        idles = [describe(i) for i in p.client.log if describe(i).startswith("state idle")]
        assert idles == ["state idle cancelled", "state idle cancelled"]


class GatedClientV2(ClientV2):
    """Answers a permission request with `allow` once its `gate` opens."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self.gate = anyio.Event()

    async def session_request_permission(self, params: Any) -> Any:
        self.log.append(params)
        self.asked.set()
        await self.gate.wait()
        outcome = v2.SelectedPermissionOutcome(option_id="allow")
        return v2.RequestPermissionResponse(outcome=outcome)


@pytest.mark.parametrize("first", ["allow", "cancel"])
async def test_v2_cancel_racing_the_permission_answer_ends_the_turn_once(first: str) -> None:
    """The user allows at the very moment they cancel: one answer, one idle, nothing stuck."""
    endpoints: list[AgentEndpoint] = []

    async def serve(agent: Any, *, v1: Any, stream: Any) -> None:
        endpoints.append(AgentEndpoint({2: agent}))
        await endpoints[-1].serve(stream)

    async with pair(client_v2=GatedClientV2, serve=serve) as p:
        session_id = await new_v2_session(p.conn)
        async with p.conn.subscribe(session_id) as updates:
            await p.conn.v2_agent.session_prompt(prompt_v2(session_id, "slow hello"))
            await until_state(updates, "requires_action")
            await p.client.asked.wait()
            if first == "allow":
                p.client.gate.set()  # the handler is woken, but has not run yet ...
                await p.conn.cancel(session_id)  # ... when the cancel goes out
            else:
                await p.conn.cancel(session_id)
                p.client.gate.set()
            await until_idle(updates)
            await wait_all_tasks_blocked()
        idles = [d for d in map(describe, p.client.log) if d.startswith("state idle")]
        assert idles in (["state idle cancelled"], ["state idle end_turn"])
        asked = next(
            m for m in messages(p.wire.received) if m.get("method") == "session/request_permission"
        )
        answers = [m for m in messages(p.wire.sent) if "method" not in m and m["id"] == asked["id"]]
        assert len(answers) == 1
        assert p.conn._connection.core.in_flight == frozenset()
        (endpoint,) = endpoints
        assert endpoint.connection is not None
        assert endpoint.connection.core.in_flight == frozenset()
        assert endpoint.connection._waiting == {}


# --------------------------------------------------------------------------- many sessions


async def test_twenty_sessions_prompting_at_once_get_their_updates_in_order() -> None:
    sessions = 20
    chunks = 300
    words = [f"w{n}" for n in range(8)]
    async with pair() as p:
        await p.conn.initialize(INIT_V2)
        ids = [
            (await p.conn.v2_agent.session_new(v2.NewSessionRequest(cwd=f"/{i}"))).session_id
            for i in range(sessions)
        ]
        seen: dict[str, list[str]] = {}

        async def run(index: int, session_id: str) -> None:
            # even sessions blast numbered chunks, odd ones ask permission, then stream slowly
            text = f"stream {chunks}" if index % 2 == 0 else "slow " + " ".join(words)
            got = seen[session_id] = []
            async with p.conn.subscribe(session_id) as updates:
                await p.conn.v2_agent.session_prompt(prompt_v2(session_id, text))
                async for update in updates:
                    got.append(describe(update))
                    if got[-1].startswith("state idle"):
                        return

        with anyio.fail_after(8):
            async with anyio.create_task_group() as nursery:
                for index, session_id in enumerate(ids):
                    nursery.start_soon(run, index, session_id)
    for index, session_id in enumerate(ids):
        got = seen[session_id]
        if index % 2 == 0:
            expected = [
                "user_message",
                "state running",
                *(f"chunk chunk {n}" for n in range(chunks)),
                "state idle end_turn",
            ]
        else:
            expected = [
                "user_message",
                "state running",
                "tool_call pending",
                "state requires_action",
                "state running",
                "tool_call in_progress",
                "chunk slow",
                *(f"chunk {word}" for word in words),
                "tool_call_content",
                "tool_call completed",
                "state idle end_turn",
            ]
        assert got == expected, session_id
    # and the sessions really were interleaved on the wire
    order = [
        m["params"]["sessionId"]
        for m in messages(p.wire.received)
        if m.get("method") == "session/update"
    ]
    switches = sum(a != b for a, b in itertools.pairwise(order))
    assert len(order) == sum(map(len, seen.values()))
    assert switches > 5 * sessions
