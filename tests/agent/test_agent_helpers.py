"""The agent's turn helpers (tool calls, content, permission, diffs) checked on the wire: an
agent served over an in-memory stream, driven with raw JSON lines, for v2 and v1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_schema.v2 as v2
from acpwire.agent import (
    AgentTurn,
    CustomStopReason,
    PromptTurns,
    StopReason,
    Turn,
    git_patch,
    serve_agent,
    turn_agents,
    v1_diff,
    v2_diff,
)
from acpwire.testing import memory_stream_pair
from helpers.constants import RAW_INIT_V1, SESSION
from helpers.lines import (
    accepted,
    is_permission_request,
    new_session,
    on,
    prompt,
    selected,
    state,
    text_block,
    update,
    user_message,
)
from helpers.paths import ROOT
from helpers.raw import RawPeer, receive, request, response
from helpers.serving import served_tool_agent, session

pytestmark = pytest.mark.usefixtures("loop")

# --------------------------------------------------------------------------- diffs


def test_v2_diff_of_a_modified_file_is_the_spec_example() -> None:
    path = "/home/user/project/src/config.json"
    diff = v2_diff(path, '{\n  "debug": false\n}\n', '{\n  "debug": true\n}\n')
    assert v2.encode_message(diff) == (
        b'{"type":"diff","changes":[{"operation":"modify","path":"/home/user/project/src/config.json",'
        b'"fileType":"text"}],"patch":{"format":"git_patch","text":"diff --git '
        b"/home/user/project/src/config.json /home/user/project/src/config.json\\n--- "
        b"/home/user/project/src/config.json\\n+++ /home/user/project/src/config.json\\n"
        b'@@ -1,3 +1,3 @@\\n {\\n-  \\"debug\\": false\\n+  \\"debug\\": true\\n }\\n"}}'
    )


def test_v2_diff_names_added_and_deleted_files_and_has_no_patch_without_a_change() -> None:
    assert isinstance(v2_diff("/r/new.py", None, "x\n").changes[0], v2.AddDiffChange)
    assert isinstance(v2_diff("/r/old.py", "x\n", None).changes[0], v2.DeleteDiffChange)
    assert v2_diff("/r/same.py", "x\n", "x\n").patch is None


def test_v1_diff_carries_path_old_and_new_text() -> None:
    diff = v1_diff("/r/a.py", None, "new\n")
    assert (diff.path, diff.old_text, diff.new_text) == ("/r/a.py", None, "new\n")


def test_a_relative_diff_path_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match="MUST be absolute"):
        v2_diff("src/a.py", "a", "b")


@pytest.mark.parametrize("name", ["plain.txt", "with space.txt", 'quo"te é.txt'])
def test_git_applies_the_patch(tmp_path: Path, name: str) -> None:
    """Modify (last line without newline on one side), create and delete, as `git apply`
    reads them: the patch text is valid `git_patch` with absolute, quoted paths."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    changed, created, deleted = tmp_path / name, tmp_path / f"new {name}", tmp_path / "gone"
    changed.write_text("a\nb\nc")
    deleted.write_text("x\n")
    patch = (
        git_patch(str(changed), "a\nb\nc", "a\nB\nc\n")
        + git_patch(str(created), None, "hello\nworld")
        + git_patch(str(deleted), "x\n", None)
    )
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(["git", "apply", "--unsafe-paths", "-p0", "p.diff"], cwd=tmp_path, check=True)
    assert changed.read_text() == "a\nB\nc\n"
    assert created.read_text() == "hello\nworld"
    assert not deleted.exists()


# --------------------------------------------------------------------------- v2 tool calls


class ToolAgent(v2.AgentBase):
    """Its work makes one tool call with every helper, asks permission for it and ends."""

    def __init__(self, client: v2.ClientPeer) -> None:
        self.turns = PromptTurns(client)

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(
            protocol_version=2, info=v2.Implementation(name="t", version="0")
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id=SESSION)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        return await self.turns.start(params, self.work)

    async def work(self, turn: Turn) -> StopReason | CustomStopReason:
        return await edit_work(turn)


async def edit_work(turn: AgentTurn) -> StopReason:
    """One tool call with every helper, written once for both versions."""
    call = await turn.tool_call("Edit", kind="edit", locations=["/r/a.py", ("/r/b.py", 3)])
    if await call.request_permission("Edit a.py?") != "allow":
        return "refusal"
    await call.update(status="in_progress", raw_input={"path": "/r/a.py"})
    await call.stream("editing")
    await call.diff("/r/a.py", "a\n", "b\n")
    await call.update(status="completed", title=None, raw_output=None)
    return "end_turn"


def tool_update(**fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": "call_user_1_0", **fields})


def content_chunk(content: dict[str, Any]) -> dict[str, Any]:
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_user_1_0"}
    return update({**chunk, "content": content})


async def start_tool_turn(peer: RawPeer) -> dict[str, Any]:
    """Prompt the tool agent; returns its permission request."""
    await peer.send(prompt(1, "go"))
    assert await receive(peer, 4) == [
        accepted(1, "user_1"),
        user_message("user_1", "go"),
        state("running"),
        tool_update(
            title="Edit",
            kind="edit",
            status="pending",
            locations=[{"path": "/r/a.py"}, {"path": "/r/b.py", "line": 3}],
        ),
    ]
    assert await peer.receive() == state("requires_action")
    ask: dict[str, Any] = await peer.receive()
    assert ask["method"] == "session/request_permission"
    return ask


async def test_v2_tool_call_helpers_send_one_update_each() -> None:
    async with session(ToolAgent) as peer:
        ask = await start_tool_turn(peer)
        assert ask["params"] == {
            "sessionId": SESSION,
            "title": "Edit a.py?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_user_1_0"}},
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        }
        await peer.send(
            response(ask["id"], {"outcome": {"outcome": "selected", "optionId": "allow"}})
        )
        diff = json.loads(v2.encode_message(v2_diff("/r/a.py", "a\n", "b\n")))
        assert await receive(peer, 6) == [
            state("running"),
            tool_update(status="in_progress", rawInput={"path": "/r/a.py"}),
            content_chunk({"type": "content", "content": {"type": "text", "text": "editing"}}),
            content_chunk(diff),
            tool_update(status="completed", title=None, rawOutput=None),
            state("idle", "end_turn"),
        ]


async def test_v2_permission_cancelled_by_the_client_is_none() -> None:
    async with session(ToolAgent) as peer:
        ask = await start_tool_turn(peer)
        await peer.send(response(ask["id"], {"outcome": {"outcome": "cancelled"}}))
        assert await receive(peer, 2) == [state("running"), state("idle", "refusal")]


# --------------------------------------------------------------------------- one work, v1 and v2


NEW_TEXT = "first line\nhello\n"


def options() -> list[dict[str, str]]:
    return [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]


async def test_the_tool_agent_example_over_v2() -> None:
    async with served_tool_agent(2) as peer:
        sid = await new_session(peer, 2)
        await peer.send(
            request(1, "session/prompt", {"sessionId": sid, "prompt": [text_block("hello")]})
        )
        call = {"sessionUpdate": "tool_call_update", "toolCallId": "call_user_1_1"}
        assert await receive(peer, 6) == [
            response(1, {"messageId": "user_1"}),
            on(
                sid,
                {
                    "sessionUpdate": "user_message",
                    "messageId": "user_1",
                    "content": [text_block("hello")],
                },
            ),
            on(sid, {"sessionUpdate": "state_update", "state": "running"}),
            on(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "agent_user_1_0",
                    "content": text_block("I will add your prompt to notes.txt."),
                },
            ),
            on(
                sid,
                {
                    **call,
                    "title": "Append to notes.txt",
                    "kind": "edit",
                    "status": "pending",
                    "locations": [{"path": "/repo/notes.txt"}],
                },
            ),
            on(sid, {"sessionUpdate": "state_update", "state": "requires_action"}),
        ]
        ask = await peer.receive()
        assert ask["params"] == {
            "sessionId": sid,
            "title": "Append to notes.txt?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_user_1_1"}},
            "options": options(),
        }
        await peer.send(selected(ask, "allow"))
        diff = json.loads(v2.encode_message(v2_diff("/repo/notes.txt", "first line\n", NEW_TEXT)))
        assert await receive(peer, 5) == [
            on(sid, {"sessionUpdate": "state_update", "state": "running"}),
            on(sid, {**call, "status": "in_progress"}),
            on(
                sid,
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "call_user_1_1",
                    "content": diff,
                },
            ),
            on(sid, {**call, "status": "completed"}),
            on(sid, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        ]


async def test_the_tool_agent_example_over_v1() -> None:
    async with served_tool_agent(1) as peer:
        sid = await new_session(peer, 1)
        await peer.send(
            request(1, "session/prompt", {"sessionId": sid, "prompt": [text_block("hello")]})
        )
        assert await receive(peer, 2) == [
            on(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": text_block("I will add your prompt to notes.txt."),
                },
            ),
            on(
                sid,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "call_turn_1_0",
                    "title": "Append to notes.txt",
                    "kind": "edit",
                    "status": "pending",
                    "locations": [{"path": "/repo/notes.txt"}],
                },
            ),
        ]
        ask = await peer.receive()
        assert ask["params"] == {
            "sessionId": sid,
            "toolCall": {"toolCallId": "call_turn_1_0"},
            "options": options(),
        }
        await peer.send(selected(ask, "allow"))
        call = {"sessionUpdate": "tool_call_update", "toolCallId": "call_turn_1_0"}
        diff = {
            "type": "diff",
            "path": "/repo/notes.txt",
            "oldText": "first line\n",
            "newText": NEW_TEXT,
        }
        assert await receive(peer, 4) == [
            on(sid, {**call, "status": "in_progress"}),
            on(sid, {**call, "content": [diff]}),
            on(sid, {**call, "status": "completed"}),
            response(1, {"stopReason": "end_turn"}),
        ]


async def test_a_rejected_permission_fails_the_tool_call_in_both_versions() -> None:
    for version, call_id in ((2, "call_user_1_1"), (1, "call_turn_1_0")):
        async with served_tool_agent(version) as peer:
            sid = await new_session(peer, version)
            await peer.send(
                request(1, "session/prompt", {"sessionId": sid, "prompt": [text_block("x")]})
            )
            while not is_permission_request(ask := await peer.receive()):
                pass
            await peer.send(selected(ask, "reject"))
            failed = on(
                sid,
                {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"},
            )
            if version == 1:
                assert await receive(peer, 2) == [failed, response(1, {"stopReason": "end_turn"})]
            else:
                assert await receive(peer, 3) == [
                    on(sid, {"sessionUpdate": "state_update", "state": "running"}),
                    failed,
                    on(
                        sid,
                        {
                            "sessionUpdate": "state_update",
                            "state": "idle",
                            "stopReason": "end_turn",
                        },
                    ),
                ]


async def v1_work_returning(turn: AgentTurn) -> StopReason | CustomStopReason:
    return CustomStopReason("_mine")


async def test_a_v1_turn_ending_with_a_stop_reason_v1_lacks_answers_minus_32603() -> None:
    agent_v2, agent_v1 = turn_agents(v1_work_returning, name="a", version="1")
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(
            partial(serve_agent, agent_v2, v1=agent_v1, stream=agent_end, check_outgoing=True)
        )
        peer = RawPeer(client_end)
        await peer.call("init", "initialize", RAW_INIT_V1)
        sid = await new_session(peer, 1)
        reply = await peer.call(
            1, "session/prompt", {"sessionId": sid, "prompt": [text_block("x")]}
        )
        assert reply["error"]["code"] == -32603
        assert "'_mine', which v1 does not have" in reply["error"]["message"]
        nursery.cancel_scope.cancel()


def test_the_tool_agent_example_runs_over_stdio() -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'generated'}{os.pathsep}{ROOT / 'runtime'}"}
    line = json.dumps(request(1, "initialize", RAW_INIT_V1)) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "acpwire.examples.tool_agent"],
        input=line,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    result = json.loads(done.stdout)["result"]
    assert result["agentInfo"]["name"] == "tool-agent"
    assert result["agentCapabilities"]["loadSession"] is True


async def test_v1_tool_call_helpers_send_the_whole_content_so_far() -> None:
    agent_v2, agent_v1 = turn_agents(edit_work, name="a", version="1")
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(
            partial(serve_agent, agent_v2, v1=agent_v1, stream=agent_end, check_outgoing=True)
        )
        peer = RawPeer(client_end)
        await peer.call("init", "initialize", RAW_INIT_V1)
        sid = await new_session(peer, 1)
        await peer.send(
            request(1, "session/prompt", {"sessionId": sid, "prompt": [text_block("x")]})
        )
        call = {"toolCallId": "call_turn_1_0"}
        locations = [{"path": "/r/a.py"}, {"path": "/r/b.py", "line": 3}]
        created = {"sessionUpdate": "tool_call", **call, "title": "Edit", "kind": "edit"}
        assert await peer.receive() == on(
            sid, {**created, "status": "pending", "locations": locations}
        )
        ask = await peer.receive()
        assert ask["params"] == {"sessionId": sid, "toolCall": call, "options": options()}
        await peer.send(selected(ask, "allow"))
        text = {"type": "content", "content": text_block("editing")}
        diff = {"type": "diff", "path": "/r/a.py", "oldText": "a\n", "newText": "b\n"}
        patch = {"sessionUpdate": "tool_call_update", **call}
        assert await receive(peer, 5) == [
            on(sid, {**patch, "status": "in_progress", "rawInput": {"path": "/r/a.py"}}),
            on(sid, {**patch, "content": [text]}),
            on(sid, {**patch, "content": [text, diff]}),
            on(sid, {**patch, "status": "completed", "title": None, "rawOutput": None}),
            response(1, {"stopReason": "end_turn"}),
        ]
        nursery.cancel_scope.cancel()
