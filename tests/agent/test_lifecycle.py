"""The v2 prompt lifecycle helpers (PromptTurns, Turn) and V1PromptTurns, checked on the wire:
an agent served by serve_agent over an in-memory stream, driven with raw JSON lines, the exact
order of the lines asserted. Races are written in ONE send_all so they arrive in one chunk.
The schedulers' tests run on each surface of their version (`v2_surface`, `v1_surface`).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar, get_args, get_type_hints

import anyio
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import tag_of
from acpwire.agent import (
    CustomStopReason,
    PromptTurns,
    RunState,
    StopReason,
    Turn,
    V1PromptTurns,
)
from helpers.agents import echo_agent
from helpers.constants import SESSION
from helpers.lines import (
    accepted,
    is_permission_request,
    prompt,
    state,
    text_block,
    update,
    user_message,
)
from helpers.paths import ROOT
from helpers.raw import RawPeer, error_response, notification, receive, request, response
from helpers.serving import session
from helpers.surfaces import AnySurface

pytestmark = pytest.mark.usefixtures("loop")


class Scripted:
    """Work chosen by the prompt's text: `wait` blocks until cancelled, `ask N` asks N
    permissions at once and ends when all are answered, `return R` ends with stop reason R,
    anything else ends at once. It advertises image prompts only. The handlers of an agent
    class that subclasses a v2 `AgentBase` too (`scripted(surface)`), answering with
    `types`."""

    types: ClassVar[Any] = v2
    prompt_capabilities: v2.PromptCapabilities | None = None

    def __init__(self, client: v2.ClientPeer) -> None:
        self.turns = PromptTurns(client, prompt_capabilities=self.prompt_capabilities)

    async def initialize(self, params: v2.InitializeRequest) -> Any:
        types = self.types
        prompt = types.PromptCapabilities(image=types.PromptImageCapabilities())
        return types.InitializeResponse(
            protocol_version=2,
            info=types.Implementation(name="scripted", version="0"),
            capabilities=types.AgentCapabilities(session=types.SessionCapabilities(prompt=prompt)),
        )

    async def session_new(self, params: v2.NewSessionRequest) -> Any:
        return self.types.NewSessionResponse(session_id=SESSION)

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return await self.turns.close(params.session_id)

    async def work(self, turn: Turn) -> StopReason | CustomStopReason:
        block: Any = turn.prompt[0]
        text = block.text if tag_of(block) == "text" else ""
        if text == "wait":
            await anyio.sleep_forever()
        if text.startswith("ask "):
            async with anyio.create_task_group() as nursery:
                for i in range(int(text.split()[1])):
                    nursery.start_soon(turn.request_permission, permission(f"call_{i}"))
        if text.startswith("return "):
            returned: Any = text.removeprefix("return ")  # what an untyped agent might return
            if returned == "nothing":
                returned = None
            return returned  # type: ignore[no-any-return]
        return "end_turn"


class ScriptedAgent(Scripted, v2.AgentBase):
    pass


@functools.cache
def scripted(surface: AnySurface, explicit_audio: bool = False) -> type[Any]:
    """The scripted agent on `surface` (one of v2's); with `explicit_audio` it advertises audio
    to PromptTurns itself (as an agent not served by serve_agent does)."""
    attributes: dict[str, Any] = {"types": surface.module}
    if explicit_audio:
        attributes["prompt_capabilities"] = v2.PromptCapabilities(
            audio=v2.PromptAudioCapabilities()
        )
    return type(f"Scripted_{surface.label}", (Scripted, surface.agent_base), attributes)


def permission(call_id: str) -> v2.RequestPermissionRequest:
    return v2.RequestPermissionRequest(
        session_id=SESSION,
        title="Run it?",
        subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallUpdate(tool_call_id=call_id)),
        options=[v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
    )


# --------------------------------------------------------------------------- wire helpers


async def send_at_once(peer: RawPeer, *messages: Any) -> None:
    """Write the messages in one send_all: the agent reads them in one chunk."""
    await peer.stream.send_all(b"".join(msgspec.json.encode(m) + b"\n" for m in messages))


def cancel() -> dict[str, Any]:
    return notification("session/cancel", {"sessionId": SESSION})


def close(id: Any) -> dict[str, Any]:
    return request(id, "session/close", {"sessionId": SESSION})


def cancelled(id: Any) -> dict[str, Any]:
    return error_response(id, -32800, "Request cancelled")


async def started(peer: RawPeer, id: Any, text: str, message_id: str) -> None:
    """Send a prompt and read its acceptance, user message and `running`."""
    await peer.send(prompt(id, text))
    assert await receive(peer, 3) == [
        accepted(id, message_id),
        user_message(message_id, text),
        state("running"),
    ]


async def asking(peer: RawPeer, id: Any, text: str, message_id: str) -> list[Any]:
    """Start a turn that asks for permission; returns the permission requests."""
    await started(peer, id, text, message_id)
    assert await peer.receive() == state("requires_action")
    asks = await receive(peer, int(text.split()[1]))
    assert all(is_permission_request(ask) for ask in asks)
    return asks


def allow(ask: dict[str, Any]) -> dict[str, Any]:
    return response(ask["id"], {"outcome": {"outcome": "selected", "optionId": "allow"}})


# --------------------------------------------------------------------------- session/close


async def test_close_mid_turn_sends_the_idle_cancelled_before_the_close_response(
    v2_surface: AnySurface,
) -> None:
    async with session(scripted(v2_surface)) as peer:
        await started(peer, 1, "wait", "user_1")
        await peer.send(close(2))
        assert await receive(peer, 2) == [state("idle", "cancelled"), response(2, {})]
        await peer.expect_silence()


async def test_close_answers_a_held_prompt_minus_32800_and_nothing_follows_its_response(
    v2_surface: AnySurface,
) -> None:
    async with session(scripted(v2_surface)) as peer:
        await started(peer, 1, "wait", "user_1")
        await peer.send(prompt(2, "held"))
        await peer.expect_silence()  # held while the turn runs
        await peer.send(close(3))
        lines = await receive(peer, 3)
        # Prompt responses need not precede the close response; the turn's idle must.
        assert cancelled(2) in lines
        lines.remove(cancelled(2))
        assert lines == [state("idle", "cancelled"), response(3, {})]
        await peer.expect_silence()


async def test_close_in_the_same_write_as_a_prompt_answers_the_prompt_minus_32800(
    v2_surface: AnySurface,
) -> None:
    for _ in range(10):  # the two handlers run in either order
        async with session(scripted(v2_surface)) as peer:
            await send_at_once(peer, prompt(1, "wait"), close(2))
            assert sorted(await receive(peer, 2), key=str) == sorted(
                [cancelled(1), response(2, {})], key=str
            )
            await peer.expect_silence()


async def test_close_of_an_idle_or_unknown_session_just_succeeds(v2_surface: AnySurface) -> None:
    async with session(scripted(v2_surface)) as peer:
        await started(peer, 1, "hi", "user_1")
        assert await peer.receive() == state("idle", "end_turn")
        assert await peer.call(2, "session/close", {"sessionId": SESSION}) == response(2, {})
        assert await peer.call(3, "session/close", {"sessionId": "nope"}) == response(3, {})
        await peer.expect_silence()


# --------------------------------------------------------------------------- session/cancel


async def test_cancel_in_the_same_write_as_the_prompt_cancels_the_prompt(
    v2_surface: AnySurface,
) -> None:
    async with session(scripted(v2_surface)) as peer:
        await send_at_once(peer, prompt(1, "wait"), cancel())
        assert await peer.receive() == cancelled(1)
        await peer.expect_silence()


async def test_a_late_cancel_does_not_cancel_the_next_prompt(v2_surface: AnySurface) -> None:
    async with session(scripted(v2_surface)) as peer:
        await started(peer, 1, "hi", "user_1")
        assert await peer.receive() == state("idle", "end_turn")
        await send_at_once(peer, cancel(), prompt(2, "hi"))
        assert await receive(peer, 4) == [
            accepted(2, "user_2"),
            user_message("user_2", "hi"),
            state("running"),
            state("idle", "end_turn"),
        ]


async def test_cancel_answers_held_prompts_minus_32800(v2_surface: AnySurface) -> None:
    async with session(scripted(v2_surface)) as peer:
        await started(peer, 1, "wait", "user_1")
        await send_at_once(peer, prompt(2, "held"), cancel())
        assert sorted(await receive(peer, 2), key=str) == sorted(
            [state("idle", "cancelled"), cancelled(2)], key=str
        )
        await peer.expect_silence()


async def test_permission_answered_cancelled_with_session_cancel_in_one_write_ends_cancelled(
    v2_surface: AnySurface,
) -> None:
    for _ in range(10):
        async with session(echo_agent(v2_surface)) as peer:
            await peer.send(prompt(1, "hello"))
            lines = await receive(peer, 6)
            ask = lines[-1]
            assert is_permission_request(ask) and lines[4] == state("requires_action")
            answer = response(ask["id"], {"outcome": {"outcome": "cancelled"}})
            await send_at_once(peer, answer, cancel())
            call_id = ask["params"]["subject"]["toolCall"]["toolCallId"]
            failed = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
            assert await receive(peer, 2) == [
                update({**failed, "status": "failed"}),
                state("idle", "cancelled"),  # was end_turn: the work returned it
            ]
            await peer.expect_silence()


# --------------------------------------------------------------------------- states


async def test_two_pending_permissions_keep_requires_action_until_both_are_answered(
    v2_surface: AnySurface,
) -> None:
    async with session(scripted(v2_surface)) as peer:
        first, second = await asking(peer, 1, "ask 2", "user_1")
        await peer.send(allow(first))
        await peer.expect_silence()  # was `running` while the second still blocked
        await peer.send(allow(second))
        assert await receive(peer, 2) == [state("running"), state("idle", "end_turn")]


async def test_a_prompt_during_a_turn_is_held_until_the_turn_reported_idle(
    v2_surface: AnySurface,
) -> None:
    async with session(scripted(v2_surface)) as peer:
        for turn in range(10):  # the old superseding order raced: 2 of 10 runs
            first, second = f"user_{2 * turn + 1}", f"user_{2 * turn + 2}"
            (ask,) = await asking(peer, f"a{turn}", "ask 1", first)
            await peer.send(prompt(f"b{turn}", "next"))
            await peer.expect_silence(0.02)  # held: not inserted, the first turn goes on
            await peer.send(allow(ask))
            assert await receive(peer, 6) == [
                state("running"),
                state("idle", "end_turn"),
                accepted(f"b{turn}", second),
                user_message(second, "next"),
                state("running"),
                state("idle", "end_turn"),
            ]


# --------------------------------------------------------------------------- stop reasons


@pytest.mark.parametrize(("returned", "named"), [("end_trun", "'end_trun'"), ("nothing", "None")])
async def test_a_stop_reason_without_underscore_ends_the_turn_with_error(
    returned: str, named: str
) -> None:
    async with session(ScriptedAgent) as peer:
        await started(peer, 1, f"return {returned}", "user_1")
        idle = await peer.receive()
        error = idle["params"]["update"].pop("error")
        assert idle == state("idle", "error")
        assert error["code"] == -32603
        assert named in error["message"] and "begin with '_'" in error["message"]


async def test_custom_stop_reasons_beginning_with_underscore_go_out() -> None:
    async with session(ScriptedAgent) as peer:
        await started(peer, 1, "return _paused", "user_1")
        assert await peer.receive() == state("idle", "_paused")
    assert CustomStopReason("_paused") == "_paused"
    with pytest.raises(ValueError, match=r"MUST begin with '_'.*'_paused'"):
        CustomStopReason("paused")


def test_the_literals_are_the_generated_state_update_values() -> None:
    hints = get_type_hints(v2.SessionStateUpdate, include_extras=True)

    def strings(annotation: Any) -> set[str]:
        """Every string literal inside an annotation (through unions and Annotated)."""
        found = {a for a in get_args(annotation) if isinstance(a, str)}
        for arg in get_args(annotation):
            found |= strings(arg)
        return found

    assert strings(hints["stop_reason"]) == set(get_args(StopReason))
    assert strings(hints["state"]) == set(get_args(RunState))


AGENT_CODE_WITH_TYPOS = """
from acpwire import CustomStopReason, StopReason, Turn


async def typos(turn: Turn) -> StopReason | CustomStopReason:
    await turn.state("runing")
    return "end_trun"


async def fine(turn: Turn) -> StopReason | CustomStopReason:
    await turn.state("requires_action")
    return CustomStopReason("_paused") if turn.prompt else "end_turn"
"""


def test_stop_reason_and_state_typos_are_mypy_errors(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT_CODE_WITH_TYPOS)
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(agent),
        ],
        env={**os.environ, "MYPYPATH": f"{ROOT / 'generated'}{os.pathsep}{ROOT / 'runtime'}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["6", "7"], checked.stdout
    assert "'runing'" in errors[0] and "'end_trun'" in errors[1]


# --------------------------------------------------------------------------- prompt content


@pytest.mark.parametrize(
    ("block", "admitted"),
    [
        ({"type": "image", "data": "AA==", "mimeType": "image/png"}, True),  # advertised
        ({"type": "resource_link", "name": "a", "uri": "file:///a"}, True),  # baseline
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, False),
        ({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}, False),
        ({"type": "_vendor_block", "x": 1}, False),
    ],
)
async def test_prompt_content_outside_the_advertised_capabilities_is_minus_32602(
    v2_surface: AnySurface, block: dict[str, Any], admitted: bool
) -> None:
    async with session(scripted(v2_surface)) as peer:
        params = {"sessionId": SESSION, "prompt": [text_block("hi"), block]}
        reply = await peer.call(1, "session/prompt", params)
        if admitted:
            assert reply == accepted(1, "user_1")
        else:
            assert reply["error"]["code"] == -32602
            assert f"'{block['type']}'" in reply["error"]["message"]
            assert "prompt capabilities" in reply["error"]["message"]
            await peer.expect_silence()  # not inserted: no user message, no state


async def test_prompt_capabilities_can_be_given_explicitly(v2_surface: AnySurface) -> None:
    async with session(scripted(v2_surface, explicit_audio=True)) as peer:
        audio = {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}
        params = {"sessionId": SESSION, "prompt": [audio]}
        assert await peer.call(1, "session/prompt", params) == accepted(1, "user_1")
        assert (await receive(peer, 3))[2] == state("idle", "end_turn")
        image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
        reply = await peer.call(2, "session/prompt", {"sessionId": SESSION, "prompt": [image]})
        assert reply["error"]["code"] == -32602


# --------------------------------------------------------------------------- v1


async def test_v1_cancel_in_the_same_write_as_the_prompt_answers_it_cancelled(
    v1_surface: AnySurface,
) -> None:
    async with session(v1_agent=echo_agent(v1_surface)) as peer:
        await send_at_once(peer, prompt(1, "hello"), cancel())
        assert await peer.receive() == response(1, {"stopReason": "cancelled"})
        await peer.expect_silence()


async def test_v1_close_mid_turn_answers_the_prompt_cancelled_before_the_close_response(
    v1_surface: AnySurface,
) -> None:
    async with session(v1_agent=echo_agent(v1_surface)) as peer:
        await peer.send(prompt(1, "hello"))
        tool_call, ask = await receive(peer, 2)
        assert tool_call["method"] == "session/update" and is_permission_request(ask)
        await peer.send(close(2))
        assert await receive(peer, 3) == [
            notification("$/cancel_request", {"requestId": ask["id"]}),
            response(1, {"stopReason": "cancelled"}),
            response(2, {}),
        ]
        await peer.expect_silence()


async def test_v1_cancelled_work_that_returns_is_answered_cancelled() -> None:
    turns = V1PromptTurns()
    cancelled_work = anyio.Event()

    async def work() -> v1.StopReason:
        turns.cancel(SESSION)
        cancelled_work.set()
        return "end_turn"  # without a checkpoint: the cancellation never raised

    assert await turns.run(SESSION, work) == "cancelled"
    assert cancelled_work.is_set()
