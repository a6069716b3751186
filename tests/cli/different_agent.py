"""The hello agent, changed for `acpwire replay`'s tests: `python different_agent.py shape`
answers `session/new` with a key the recording lacks (`availableCommands`) and greets
without asking permission first; `python different_agent.py text` greets with other words
(the same shapes: a difference only `--strict` sees)."""

from __future__ import annotations

import sys
from typing import Any, cast

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


class Reworded:
    """A turn whose `say` says "Good" for "Hello" (everything else as the turn does)."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.turn, name)

    async def say(self, text: str) -> None:
        await self.turn.say(text.replace("Hello", "Good"))


class TextChanged(HelloAgent):
    async def greet(self, turn: Turn) -> StopReason:
        return await super().greet(cast(Turn, Reworded(turn)))


if __name__ == "__main__":
    trio.run(serve_agent, {"shape": ShapeChanged, "text": TextChanged}[sys.argv[1]])
