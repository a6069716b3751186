"""The hello agent, changed for `acpwire replay`'s tests: `python different_agent.py shape`
answers `session/new` with a key the recording lacks (`availableCommands`) and greets
without asking permission first; `python different_agent.py text` greets with other words
(the same shapes: a difference only `--strict` sees)."""

from __future__ import annotations

import sys

import trio

from acp_schema import v2
from acpwire import StopReason, Turn, serve_agent
from acpwire.examples.hello_agent import HelloAgent


class ShapeChanged(HelloAgent):
    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        response = await super().session_new(params)
        response.available_commands = []
        return response

    async def greet(self, turn: Turn) -> StopReason:
        for word in ("Hello", "from", "acpwire!"):
            await turn.say(word + " ")
        return "end_turn"


class TextChanged(HelloAgent):
    async def greet(self, turn: Turn) -> StopReason:
        await turn.request_permission(
            v2.RequestPermissionRequest(
                session_id=turn.session_id,
                title="Say hello?",
                options=[
                    v2.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                    v2.PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
        )
        for word in ("Good", "day", "acpwire!"):
            await turn.say(word + " ")
        return "end_turn"


if __name__ == "__main__":
    trio.run(serve_agent, {"shape": ShapeChanged, "text": TextChanged}[sys.argv[1]])
