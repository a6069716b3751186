"""An agent's start imports what answering `initialize` needs, not the rest (issue 18, cold
start): when its `initialize` handler runs, a stdio agent (v2 and v1 served, its turns run by
`PromptTurns`, as a user's agent is written) has imported neither the client package nor
`serve_turns` and its stores, and of the generated bindings only the protocol areas of the
`initialize` messages (and of the error codes): no session, prompt or update types yet, and
not `difflib` (diffs import it when they build one), nor the turns that record (a scheduler
given a recorder imports them). Its
answer is written before the decoder of the requests that follow is built (that decoder imports
the session areas), and they are still decoded with it.

The time this saves is measured by bench/agents.py (agent start); this pins, deterministically,
which modules are imported."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

from bindings.test_lazy_surfaces import area_closure

from helpers.processes import PYTHONPATH, python

AGENT = textwrap.dedent(
    """
    from __future__ import annotations  # annotations naming the types import no area

    import dataclasses, functools, json, sys

    ONLY_SOME_AGENTS_USE = ("difflib",)  # the standard library's (difflib: acpwire.diffs)

    import acp_schema.v1 as v1
    import acp_schema.v2 as v2
    from acpwire import PromptTurns, V1PromptTurns, serve_agent
    from acpwire.fixtures.loops import run_main
    from acpwire.streams import stdio_stream


    def loaded() -> dict[str, list[str]]:
        ours = ("acpwire", "acp_schema", *ONLY_SOME_AGENTS_USE)
        modules = sorted(m for m in sys.modules if m.startswith(ours))
        return {"modules": modules, "dataclasses": defined_dataclasses()}


    def defined_dataclasses() -> list[str]:  # acpwire's (each costs ~1-3M instructions to define)
        return sorted(
            f"{name}.{c.__qualname__}"
            for name, module in list(sys.modules.items())
            if name.startswith("acpwire")
            for c in vars(module).values()
            if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == name
        )


    class Watched:  # stdin/stdout, reporting the modules loaded when the first answer is written

        def __init__(self) -> None:
            self.stdio = stdio_stream()
            self.written = False

        def wrote(self) -> None:
            if not self.written:
                self.written = True
                print(json.dumps(loaded()), file=sys.stderr, flush=True)

        def try_send(self, parts: list[bytes]) -> int:  # written at once (DirectWrite)
            self.wrote()
            return self.stdio.try_send(parts)

        async def send_all(self, data: bytes) -> None:
            self.wrote()
            await self.stdio.send_all(data)

        async def receive_some(self, max_bytes: int | None = None) -> bytes:
            return await self.stdio.receive_some(max_bytes)

        async def aclose(self) -> None:
            await self.stdio.aclose()


    class Agent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.turns = PromptTurns(client)

        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
            print(json.dumps(loaded()), file=sys.stderr, flush=True)
            info = v2.Implementation(name="agent", version="1")
            return v2.InitializeResponse(protocol_version=2, info=info)

        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            return v2.NewSessionResponse(session_id="s1")


    def v1_agent() -> type[v1.AgentBase]:  # its class defined (v1's handlers imported) if served

        class V1Agent(v1.AgentBase):
            def __init__(self, client: v1.ClientPeer) -> None:
                self.turns = V1PromptTurns(client)

            async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
                return v1.InitializeResponse(protocol_version=1)

            async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
                return v1.NewSessionResponse(session_id="s1")

        return V1Agent


    v1_factory = None if "--v2-only" in sys.argv else v1_agent()
    run_main(sys.argv[1], functools.partial(serve_agent, Agent, v1=v1_factory, stream=Watched()))
    """
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "test", "version": "1"}},
}

NEEDED_AREAS = sorted(
    {
        f"acp_schema.v2.{area}"
        for name in ("InitializeRequest", "InitializeResponse", "ErrorCode")
        for area in area_closure("v2", name)
    }
)
"""The v2 areas answering `initialize` needs: its messages' and the error codes' (errors)."""


SESSION_NEW = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}


Loaded = dict[str, list[str]]
"""The acpwire and acp_schema modules imported ("modules") and acpwire's dataclasses defined."""


def loaded_at_initialize(loop: str, *options: str) -> tuple[Loaded, Loaded]:
    """What the agent has loaded when its `initialize` handler runs, and when its answer is
    written, on `loop` (`--v2-only`: serving v2 alone); a `session/new` sent next is answered."""
    done = subprocess.run(
        [*python(AGENT), loop, *options],
        input=json.dumps(INITIALIZE) + "\n" + json.dumps(SESSION_NEW) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **PYTHONPATH},
    )
    assert done.returncode == 0, done.stderr
    answer, session = (json.loads(line) for line in done.stdout.splitlines())
    assert answer["id"] == 0 and answer["result"]["protocolVersion"] == 2, answer
    assert session == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, session
    reports = [line for line in done.stderr.splitlines() if line.startswith("{")]
    at_initialize, at_answer = (json.loads(line) for line in reports)  # (and a warning)
    return at_initialize, at_answer


def test_an_agent_answering_initialize_has_imported_only_what_that_needs(loop: str) -> None:
    """On each test loop (`loop`: conftest.py)."""
    loaded = loaded_at_initialize(loop)[0]["modules"]
    assert [m for m in loaded if m.startswith("acpwire.client")] == []
    assert "acpwire.agent.sessions" not in loaded
    assert "difflib" not in loaded
    assert "acpwire.agent.recording_turns" not in loaded  # PromptTurns without a recorder
    assert [m for m in loaded if m.startswith("acp_schema.v1._types.")] == []
    areas = [m for m in loaded if m.startswith("acp_schema.v2._types.")]
    assert areas == NEEDED_AREAS


def test_the_initialize_answer_is_written_before_the_next_requests_decoder_is_built(
    loop: str,
) -> None:
    """Building the decoder of the requests after `initialize` imports their areas (session,
    prompt, ...): that comes after the answer (the next request is still decoded: above)."""
    at_answer = loaded_at_initialize(loop)[1]["modules"]
    areas = [m for m in at_answer if m.startswith("acp_schema.v2._types.")]
    assert areas == NEEDED_AREAS


PUBLIC_DATACLASSES = [
    "acpwire._wire.options.ConnectionOptions",
    "acpwire.agent.capabilities.CapabilityMismatch",
    "acpwire.agent.turns.Turn",
    "acpwire.agent.turns.TurnToolCall",
    "acpwire.agent.turns.V1Turn",
    "acpwire.agent.turns.V1TurnToolCall",
]


def test_the_dataclasses_an_agent_defines_by_its_answer_are_public_ones(loop: str) -> None:
    """A dataclass costs ~1-3M instructions to define, a msgspec Struct microseconds: the
    private classes a start needs are Structs, and the turns that record (dataclasses, as
    `Turn` is) are defined only for a scheduler given a recorder. What is left are public
    classes, whose dataclass behaviour (`fields`, `replace`, `asdict`) is their API."""
    assert loaded_at_initialize(loop)[1]["dataclasses"] == PUBLIC_DATACLASSES


def test_an_agent_serving_v2_alone_imports_nothing_of_v1_but_its_package(loop: str) -> None:
    """`serve_agent`'s `V1AgentFactory` names v1's classes without importing them: an agent
    serving v2 alone imports neither v1's handlers nor its method tables (~6M instructions)."""
    modules = loaded_at_initialize(loop, "--v2-only")[1]["modules"]
    assert [m for m in modules if m.startswith("acp_schema.v1")] == ["acp_schema.v1"]
