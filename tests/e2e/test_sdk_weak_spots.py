"""Where the official ACP SDKs are weak, done right here, end to end over real endpoints:

- a JSON-RPC batch is answered per spec (one array) instead of crashing the connection;
- a line that is not JSON gets -32700 (id null) instead of silence, and serving goes on;
- `_meta` keys can't collide with handler parameters or fields (params are never splatted
  into keyword arguments: `_meta` decodes into the struct's `meta` dict);
- the spawn helper keeps the caller's environment and drains the agent's stderr.
"""

from __future__ import annotations

import tracemalloc
import uuid
from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v2 as v2
from acpwire.client import connect, open_agent
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.streams import spawn_agent
from helpers.clients import ClientV2
from helpers.constants import INIT_V2
from helpers.processes import SOURCE_PATH, loop_script, python
from helpers.raw import notification, request, response
from helpers.serving import initialized_raw, raw_agent, raw_client

pytestmark = pytest.mark.usefixtures("loop")

PARSE_ERROR = -32700


def parse_error(message: Any) -> bool:
    """An error with id null and -32700 (or, for a batch, an array of just that)."""
    if isinstance(message, list) and len(message) == 1:
        message = message[0]
    return message["id"] is None and message["error"]["code"] == PARSE_ERROR


def chunk(session_id: str, text: str, meta: Any = None) -> dict[str, Any]:
    update = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": text},
    }
    params: dict[str, Any] = {"sessionId": session_id, "update": update}
    if meta is not None:
        params["_meta"] = meta
    return notification("session/update", params)


# --------------------------------------------------------------------------- batches


async def test_agent_answers_a_mixed_batch_with_one_array_and_keeps_serving() -> None:
    async with raw_client() as peer:
        await initialized_raw(peer)
        batch = [
            request(10, "session/new", {"cwd": "/a"}),
            notification("session/cancel", {"sessionId": "sess_1"}),  # no entry in the answer
            {"jsonrpc": "2.0", "id": 11},  # neither a request nor a response
            request(12, "nope/nothing", {}),
            request(13, "session/new", {"cwd": 5}),
            42,
            notification("_acme/unknown"),
            request("s", "session/new", {"cwd": "/b"}),
        ]
        await peer.send(batch)
        with anyio.fail_after(2):
            answer = await peer.receive()
        assert isinstance(answer, list) and len(answer) == 6  # one entry per request
        results = {e["id"]: e["result"] for e in answer if "result" in e}
        errors = sorted((str(e["id"]), e["error"]["code"]) for e in answer if "error" in e)
        assert sorted(r["sessionId"] for r in results.values()) == ["sess_1", "sess_2"]
        assert set(results) == {10, "s"}
        # invalid entries are answered with id null, as the ACP transports page says
        assert errors == [("12", -32601), ("13", -32602), ("None", -32600), ("None", -32600)]
        await peer.expect_silence()
        assert (await peer.call(14, "session/new", {"cwd": "/c"}))["result"] == {
            "sessionId": "sess_3"
        }


async def test_agent_answers_an_all_invalid_or_empty_batch_and_keeps_serving() -> None:
    async with raw_client() as peer:
        await initialized_raw(peer)
        await peer.send(b"[]")
        assert (await peer.receive())["error"]["code"] == -32600  # one error, not an array
        await peer.send(b"[1, [], {}]")
        assert [e["error"]["code"] for e in await peer.receive()] == [-32600] * 3
        await peer.send(b'[{"jsonrpc": "2.0", "method": "session/new", "id": 1')  # cut short
        assert parse_error(await peer.receive())
        assert "result" in await peer.call(2, "session/new", {"cwd": "/"})


async def test_client_handles_a_batch_from_the_agent() -> None:
    """An update and a permission request in one batch: the update reaches the subscriber,
    the permission request is answered in an array of its own."""
    async with raw_agent(client=ClientV2) as (conn, peer):
        ask = request(
            "p1",
            "session/request_permission",
            msgspec.to_builtins(
                v2.RequestPermissionRequest(
                    session_id="sess_1",
                    title="ok?",
                    subject=v2.ToolCallPermissionSubject(
                        tool_call=v2.ToolCallUpdate(tool_call_id="c")
                    ),
                    options=[v2.PermissionOption(option_id="allow", name="A", kind="allow_once")],
                )
            ),
        )
        async with conn.subscribe("sess_1") as updates:
            await peer.send([chunk("sess_1", "one"), ask, chunk("sess_1", "two")])
            with anyio.fail_after(2):  # (the request waits until "one" was taken)
                texts = [(await updates.__anext__()).content.text for _ in range(2)]
                answer = await peer.receive()
        assert answer == [response("p1", {"outcome": {"outcome": "selected", "optionId": "allow"}})]
        assert texts == ["one", "two"]


async def test_client_takes_answers_to_its_requests_in_one_batch() -> None:
    async with raw_agent(client=ClientV2) as (conn, peer):
        results: dict[str, str] = {}

        async def new(cwd: str) -> None:
            new = await conn.v2_agent.session_new(v2.NewSessionRequest(cwd=cwd))
            results[cwd] = new.session_id

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(new, "/a")
            nursery.start_soon(new, "/b")
            asked = [await peer.receive(), await peer.receive()]
            await peer.send(
                [response(m["id"], {"sessionId": "for " + m["params"]["cwd"]}) for m in asked]
            )
        assert results == {"/a": "for /a", "/b": "for /b"}


# --------------------------------------------------------------------------- invalid lines

NOT_JSON = [
    b"{not json",
    b"\xff\xfe",
    b'{"jsonrpc": "2.0", "id": 1, "method": "session/new"',
    b'{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}} trailing',
    b"nul\x00l",
    b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "session/new"}',  # lone surrogate
]

# Invalid UTF-8 makes a line invalid JSON text (RFC 8259 section 8.1): -32700.
AGENT_UTF8 = [
    b'{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/\xff"}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "\xc3("}',
    b'[{"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "\xed\xa0\x80"}}]',
]
CLIENT_UTF8 = [
    msgspec.json.encode(chunk("sess_1", "TEXT")).replace(b"TEXT", b"caf\xe9"),
    b'{"jsonrpc": "2.0", "id": 1, "method": "\xc3("}',
    b"[" + msgspec.json.encode(chunk("sess_1", "TEXT")).replace(b"TEXT", b"\xed\xa0\x80") + b"]",
]


def utf8_cases(lines: list[bytes]) -> list[Any]:
    return lines


@pytest.mark.parametrize(
    "line",
    [
        *NOT_JSON,
        *utf8_cases(AGENT_UTF8),
    ],
)
async def test_agent_answers_a_line_that_is_not_json_with_parse_error(line: bytes) -> None:
    async with raw_client() as peer:
        await initialized_raw(peer)
        await peer.send(line)
        with anyio.fail_after(2):
            assert parse_error(await peer.receive())
            assert "result" in await peer.call(2, "session/new", {"cwd": "/"})


@pytest.mark.parametrize(
    "line",
    [
        *NOT_JSON,
        *utf8_cases(CLIENT_UTF8),
    ],
)
async def test_client_answers_a_line_that_is_not_json_with_parse_error(line: bytes) -> None:
    async with raw_agent(client=ClientV2) as (conn, peer):
        async with conn.subscribe("sess_1") as updates:
            await peer.send(line)
            with anyio.fail_after(2):
                assert parse_error(await peer.receive())
                await peer.send(chunk("sess_1", "still here"))
                assert (await updates.__anext__()).content.text == "still here"


@pytest.mark.parametrize("line", [b'"just a string"', b"42", b"null", b"true", b'{"id": 1}'])
async def test_json_that_is_no_message_is_invalid_request_not_silence(line: bytes) -> None:
    async with raw_client() as peer:
        await initialized_raw(peer)
        await peer.send(line)
        answer = await peer.receive()
        assert answer["error"]["code"] == -32600
        assert answer["id"] in (None, 1)


# --------------------------------------------------------------------------- _meta

COLLIDING = {
    "sessionId": "from-meta",
    "cwd": "/from-meta",
    "prompt": "from-meta",
    "self": 1,
    "params": 2,
    "cls": 3,
    "call": 4,
    "kwargs": 5,
    "_meta": 6,
    "session_id": "from-meta",
}


class RecordingAgent(EchoAgentV2):
    seen: list[Any]

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        type(self).seen.append(params)
        return await super().session_new(params)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        type(self).seen.append(params)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        type(self).seen.append(params)
        return v2.PromptResponse(message_id="user_1")


async def test_meta_keys_named_like_fields_or_parameters_stay_in_meta() -> None:
    RecordingAgent.seen = []
    async with raw_client(RecordingAgent) as peer:
        await initialized_raw(peer)
        new = await peer.call(1, "session/new", {"cwd": "/real", "_meta": COLLIDING})
        assert new["result"] == {"sessionId": "sess_1"}
        await peer.send(notification("session/cancel", {"sessionId": "sess_1", "_meta": COLLIDING}))
        prompt = {
            "sessionId": "sess_1",
            "prompt": [{"type": "text", "text": "real"}],
            "_meta": COLLIDING,
            # top-level keys named like Python parameters are unknown fields: ignored
            "self": "x",
            "params": "y",
            "meta": {"not": "_meta"},
            "session_id": "snake",
        }
        assert (await peer.call(2, "session/prompt", prompt))["result"] == {"messageId": "user_1"}
    created, cancelled, prompted = RecordingAgent.seen
    assert created == v2.NewSessionRequest(cwd="/real", meta=COLLIDING)
    assert cancelled == v2.CancelSessionNotification(session_id="sess_1", meta=COLLIDING)
    assert prompted.session_id == "sess_1"
    assert prompted.prompt == [v2.TextContent(text="real")]
    assert prompted.meta == COLLIDING
    # and it goes back out under its wire name
    assert msgspec.json.decode(msgspec.json.encode(cancelled))["_meta"] == COLLIDING


async def test_meta_session_id_does_not_stand_in_for_a_missing_one() -> None:
    async with raw_client(RecordingAgent) as peer:
        await initialized_raw(peer)
        answer = await peer.call(1, "session/prompt", {"prompt": [], "_meta": COLLIDING})
        assert answer["error"]["code"] == -32602


async def test_client_routes_updates_by_their_session_id_not_by_meta() -> None:
    async with raw_agent(client=ClientV2) as (conn, peer):
        async with conn.subscribe("sess_1") as real, conn.subscribe("from-meta") as decoy:
            await peer.send(chunk("sess_1", "for sess_1", meta=COLLIDING))
            await peer.send(chunk("from-meta", "for from-meta"))
            with anyio.fail_after(2):
                assert (await real.__anext__()).content.text == "for sess_1"
                assert (await decoy.__anext__()).content.text == "for from-meta"
        logged = conn.client.log
        assert [u.content.text for u in logged] == ["for sess_1", "for from-meta"]


# --------------------------------------------------------------------------- spawning

# A real acpwire agent (on the loop argv[1] names) that prints two variables to stderr and
# reports them in its name.
ENV_AGENT = loop_script("""
import os, sys
import acp_schema.v2 as v2
from acpwire.agent import serve_agent
from acpwire.fixtures.echo_agent import EchoAgentV2

found = [os.environ.get(name, "-") for name in ("ACPWIRE_UNIQUE", "ACPWIRE_OVERRIDDEN")]
print("env " + " ".join(found), file=sys.stderr, flush=True)

class Agent(EchoAgentV2):
    async def initialize(self, params):
        response = await super().initialize(params)
        response.info.name = " ".join(found)
        return response

run_on(sys.argv[1], lambda: serve_agent(Agent))
""")


async def test_spawned_agent_inherits_the_environment_and_env_overrides_it(
    loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    unique = f"unique-{uuid.uuid4()}"
    monkeypatch.setenv("ACPWIRE_UNIQUE", unique)
    monkeypatch.setenv("ACPWIRE_OVERRIDDEN", "parent")
    monkeypatch.setenv("PYTHONPATH", SOURCE_PATH)  # the agent imports acpwire only if inherited
    lines: list[str] = []
    async with spawn_agent([*python(ENV_AGENT), loop], forward_stderr=lines.append) as agent:
        async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
            with anyio.fail_after(5):
                init = await conn.initialize(INIT_V2)
    assert init.info.name == f"{unique} parent"
    assert lines == [f"env {unique} parent"]
    async with open_agent(
        [*python(ENV_AGENT), loop], v2=ClientV2, env={"ACPWIRE_OVERRIDDEN": "child"}
    ) as conn:
        with anyio.fail_after(5):
            init = await conn.initialize(INIT_V2)
    assert init.info.name == f"{unique} child"


# Writes `size` bytes to stderr (in lines, or as one line) before it answers initialize.
STDERR_FLOOD = """
import json, sys
size, mode = int(sys.argv[1]), sys.argv[2]
if mode == "lines":
    for i in range(size // 100):
        sys.stderr.write(f"{i:08d} " + "e" * 90 + "\\n")
else:
    sys.stderr.write("e" * size)
sys.stderr.flush()
init = json.loads(sys.stdin.readline())
result = {"protocolVersion": 2, "info": {"name": "chatty", "version": "0"}}
print(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": result}), flush=True)
sys.stdin.read()
"""


async def test_agent_writing_megabytes_to_stderr_before_initialize_does_not_deadlock() -> None:
    size = 2 * 1024 * 1024  # far past a 64 kB pipe buffer
    lines: list[str] = []
    command = [*python(STDERR_FLOOD), str(size), "lines"]
    async with spawn_agent(command, forward_stderr=lines.append) as agent:
        async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
            with anyio.fail_after(5):
                init = await conn.initialize(INIT_V2)
    assert init.info.name == "chatty"
    assert len(lines) == size // 100  # every line forwarded, in order
    assert [int(line.split()[0]) for line in lines[:: len(lines) // 50]] == list(
        range(0, size // 100, len(lines) // 50)
    )
    assert len(agent.stderr_tail) == 40


async def test_open_agent_forwards_megabytes_of_stderr_without_deadlock(
    capfd: pytest.CaptureFixture[str],
) -> None:
    command = [*python(STDERR_FLOOD), str(1024 * 1024), "lines"]
    async with open_agent(command, v2=ClientV2) as conn:
        with anyio.fail_after(5):
            assert (await conn.initialize(INIT_V2)).info.name == "chatty"
    assert capfd.readouterr().err.count("\n") >= 1024 * 1024 // 100


async def test_stderr_without_newlines_is_drained_in_bounded_memory() -> None:
    size = 8 * 1024 * 1024
    command = [*python(STDERR_FLOOD), str(size), "one-line"]
    tracemalloc.start()
    try:
        async with spawn_agent(command, forward_stderr=None) as agent:
            async with connect(agent.stream, v2=ClientV2, closed_reason=agent.exited) as conn:
                with anyio.fail_after(5):
                    await conn.initialize(INIT_V2)  # the agent wrote it all before answering
                await anyio.sleep(0.2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"\nLIMIT stderr line of {size >> 20} MB: tracemalloc peak {peak / 2**20:.1f} MB")
    assert peak < 2 * 1024 * 1024
    assert sum(map(len, agent.stderr_tail)) <= 64 * 1024
