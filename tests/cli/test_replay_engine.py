"""`acpwire replay`'s engine in this process, on both loops: hand-written traces played
against a peer written as raw lines over an in-memory stream (ids remapped, chunk runs,
late, missing, unexpected and non-JSON messages)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acpwire.cli.replay_engine import Replayer
from acpwire.cli.replay_script import Side, read_script
from acpwire.testing import MemoryStream, memory_stream_pair
from helpers.traces import chunk, request, result, write_trace

pytestmark = pytest.mark.usefixtures("loop")

Peer = Callable[["Lines"], Awaitable[None]]
PROMPT = request(1, "session/prompt", {"sessionId": "s1", "prompt": []})
CANCEL = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}


class Lines:
    """The live peer's end: JSON lines sent and read."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream
        self.pending = b""

    async def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        await self.stream.send_all(line.encode() + b"\n")

    async def read(self) -> dict[str, Any]:
        while b"\n" not in self.pending:
            data = await self.stream.receive_some()
            assert data, "the replay closed the connection"
            self.pending += data
        line, _, self.pending = self.pending.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message


async def play(
    tmp_path: Path,
    messages: list[tuple[str, Any]],
    plays: Side,
    peer: Peer,
    *,
    strict: bool = False,
    timeout: float = 0.5,
) -> list[str]:
    """The divergences of playing `plays` of `messages` against `peer` (which closes its end
    when it returns)."""
    script = read_script(write_trace(tmp_path / "t.trace", messages))
    replayer = Replayer(script, plays, strict=strict, timeout=timeout, end_wait=2.0)
    ours, theirs = memory_stream_pair()

    async def live() -> None:
        await peer(Lines(theirs))
        await theirs.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(live)
        divergences = await replayer.run(ours)
    return [str(divergence) for divergence in divergences]


async def test_as_agent_responses_take_the_live_request_id(tmp_path: Path) -> None:
    recorded = [
        ("client", PROMPT),
        ("agent", chunk("a")),
        ("agent", result(1, {"stopReason": "end_turn"})),
    ]

    async def client(lines: Lines) -> None:
        await lines.send({**PROMPT, "id": "live-7"})
        assert (await lines.read())["params"]["update"]["content"]["text"] == "a"
        assert await lines.read() == result("live-7", {"stopReason": "end_turn"})  # type: ignore[arg-type]

    assert await play(tmp_path, recorded, "agent", client) == []


async def test_a_run_of_chunks_matches_any_number_by_shape(tmp_path: Path) -> None:
    recorded = [
        ("client", PROMPT),
        ("agent", chunk("a")),
        ("agent", chunk("b")),
        ("agent", chunk("c")),
        ("agent", result(1, {"stopReason": "end_turn"})),
    ]

    async def agent(lines: Lines) -> None:
        prompt = await lines.read()
        await lines.send(chunk("one"))
        await lines.send(chunk("two"))
        await lines.send(result(prompt["id"], {"stopReason": "end_turn"}))

    assert await play(tmp_path, recorded, "client", agent) == []
    assert await play(tmp_path, recorded, "client", agent, strict=True) == [
        "line 3 (agent session/update agent_message_chunk): different: "
        "$.params.update.content.text: 'a' recorded, 'one' live",
        "line 4 (agent session/update agent_message_chunk): different: "
        "$.params.update.content.text: 'b' recorded, 'two' live",
        "line 5 (agent session/update agent_message_chunk): missing: the peer closed the "
        "connection first",
    ]


async def test_late_missing_and_different(tmp_path: Path) -> None:
    recorded = [
        ("client", PROMPT),
        ("agent", chunk("a")),
        ("client", CANCEL),
        ("agent", result(1, {"stopReason": "cancelled"})),
        ("agent", request(0, "fs/read_text_file", {"sessionId": "s1", "path": "/a"})),
    ]

    async def agent(lines: Lines) -> None:
        prompt = await lines.read()
        assert await lines.read() == CANCEL  # sent once the chunk was overdue
        await lines.send(chunk("a"))
        await lines.send(result(prompt["id"], {"stopReason": "cancelled", "extra": 1}))

    assert await play(tmp_path, recorded, "client", agent) == [
        "line 3 (agent session/update agent_message_chunk): late: recorded before line 4, "
        "came after it",
        "line 5 (agent session/prompt response): different: $.result.extra: live, not recorded",
        "line 6 (agent fs/read_text_file): missing: the peer closed the connection first",
    ]


async def test_unexpected_requests_are_answered_and_lines_not_json_reported(
    tmp_path: Path,
) -> None:
    recorded = [("client", PROMPT), ("agent", result(1, {"stopReason": "end_turn"}))]

    async def client(lines: Lines) -> None:
        for number in range(3):
            await lines.send(request(number, "session/list", {}))
            answer = await lines.read()
            assert (answer["id"], answer["error"]["code"]) == (number, -32603)
        await lines.send("Traceback (most recent call last):")
        await lines.send(PROMPT)
        assert await lines.read() == result(1, {"stopReason": "end_turn"})

    assert await play(tmp_path, recorded, "agent", client) == [
        "before any recorded line (client session/list): unexpected (3 in a row): nothing "
        'recorded matches it: {"jsonrpc":"2.0","id":0,"method":"session/list","params":{}}',
        "before any recorded line (client line): not JSON: Traceback (most recent call last):",
    ]


async def test_a_request_is_matched_by_shape_among_those_of_its_method(tmp_path: Path) -> None:
    text_prompt = request(
        1, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]}
    )
    empty_prompt = request(2, "session/prompt", {"sessionId": "s1", "prompt": []})
    recorded = [
        ("client", text_prompt),
        ("client", empty_prompt),
        ("agent", result(2, {"stopReason": "refusal"})),
        ("agent", result(1, {"stopReason": "end_turn"})),
    ]

    async def client(lines: Lines) -> None:
        await lines.send({**empty_prompt, "id": 10})  # the second recorded one, first
        await lines.send({**text_prompt, "id": 11})
        assert await lines.read() == result(10, {"stopReason": "refusal"})
        assert await lines.read() == result(11, {"stopReason": "end_turn"})

    assert await play(tmp_path, recorded, "agent", client) == []


async def test_a_request_coming_late_gets_its_recorded_answer(tmp_path: Path) -> None:
    permission = {"sessionId": "s1", "options": []}
    allowed = {"outcome": {"outcome": "selected", "optionId": "yes"}}
    recorded = [
        ("client", PROMPT),
        ("agent", request(0, "session/request_permission", permission)),
        ("client", result(0, allowed)),
        ("agent", result(1, {"stopReason": "end_turn"})),
    ]

    async def agent(lines: Lines) -> None:
        prompt = await lines.read()
        await anyio.sleep(1.5)  # the replay waits 1 s, then goes on (and waits 1 s more)
        await lines.send(request(5, "session/request_permission", permission))
        assert await lines.read() == result(5, allowed)
        await lines.send(result(prompt["id"], {"stopReason": "end_turn"}))

    assert await play(tmp_path, recorded, "client", agent, timeout=1.0) == [
        "line 3 (agent session/request_permission): late: recorded before line 4, came after it"
    ]


async def test_the_peers_first_message_may_take_longer(tmp_path: Path) -> None:
    script = read_script(
        write_trace(tmp_path / "t.trace", [("client", PROMPT), ("agent", result(1, {}))])
    )
    for first_wait, expected in (
        (
            None,
            [
                "line 3 (agent session/prompt response): late: recorded by the end of the script, came after it"
            ],
        ),
        (3.0, []),
    ):
        replayer = Replayer(script, "client", timeout=0.3, first_wait=first_wait, end_wait=2.0)
        ours, theirs = memory_stream_pair()

        async def agent(lines: Lines) -> None:
            prompt = await lines.read()
            await anyio.sleep(1.0)  # starting
            await lines.send(result(prompt["id"], {}))
            await lines.stream.aclose()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent, Lines(theirs))
            divergences = await replayer.run(ours)
        assert [str(divergence) for divergence in divergences] == expected


async def test_the_replay_closes_after_the_peer_when_the_recording_says_so(
    tmp_path: Path,
) -> None:
    recorded = [
        ("client", PROMPT),
        ("agent", result(1, {"stopReason": "end_turn"})),
        ("client", "eof"),
        ("agent", "eof"),
    ]

    async def client(lines: Lines) -> None:
        await lines.send(PROMPT)
        assert await lines.read() == result(1, {"stopReason": "end_turn"})
        with anyio.move_on_after(0.5) as waited:
            await lines.stream.receive_some()  # EOF would end this at once
        assert waited.cancelled_caught, "the replay closed before the client did"

    assert await play(tmp_path, recorded, "agent", client) == []


async def test_an_answer_recorded_before_its_question_is_paired_with_it(tmp_path: Path) -> None:
    """A trace whose tap recorded a line after forwarding it could put the answer first."""
    recorded = [("agent", result(1, {"stopReason": "end_turn"})), ("client", PROMPT)]

    async def client(lines: Lines) -> None:
        await lines.send({**PROMPT, "id": 9})
        assert await lines.read() == result(9, {"stopReason": "end_turn"})

    assert await play(tmp_path, recorded, "agent", client) == []
