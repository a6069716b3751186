"""An agent with a tool call, a diff and permission, for ACP v2 and v1 with the same code:
`python -m acpwire.examples.tool_agent`. It proposes to append the prompt to /repo/notes.txt,
asks permission, and shows the diff (a demo: no file is read or written)."""

import trio

from acpwire import AgentTurn, StopReason, serve_turns


async def work(turn: AgentTurn) -> StopReason:
    path, old = "/repo/notes.txt", "first line\n"
    new = old + turn.prompt_text + "\n"
    await turn.say("I will add your prompt to notes.txt.")
    call = await turn.tool_call("Append to notes.txt", kind="edit", locations=[path])
    if await call.request_permission("Append to notes.txt?") != "allow":
        await call.update(status="failed")
        return "end_turn"
    await call.update(status="in_progress")
    await call.diff(path, old, new)
    await call.update(status="completed")
    return "end_turn"


if __name__ == "__main__":
    trio.run(lambda: serve_turns(work, name="tool-agent", version="1.0"))
