"""A program pays only for the event loop it runs on (issue 18): importing and running acpwire
on asyncio imports no trio; importing it in a trio program imports neither asyncio nor anyio."""

from __future__ import annotations

import textwrap

from helpers.processes import last_line_of

ASYNCIO_PROGRAM = textwrap.dedent(
    """
    import asyncio
    import sys

    import acp_schema.v2 as v2
    from acpwire import connect, serve_agent
    from acpwire.testing import memory_stream_pair


    class Agent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.client = client

        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
            info = v2.Implementation(name="agent", version="1")
            return v2.InitializeResponse(protocol_version=2, info=info)

        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            return v2.NewSessionResponse(session_id="s1")


    class Client(v2.ClientBase):
        def __init__(self, agent: v2.AgentPeer) -> None:
            self.agent = agent


    async def main() -> None:
        client_side, agent_side = memory_stream_pair()
        served = asyncio.create_task(serve_agent(Agent, stream=agent_side))
        async with connect(client_side, v2=Client) as conn:
            info = v2.Implementation(name="test", version="1")
            await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
            session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
            assert session.session_id == "s1"
        await client_side.aclose()
        await served


    asyncio.run(main())
    print(sorted(m for m in ("trio", "anyio", "asyncio") if m in sys.modules))
    """
)


def test_an_asyncio_program_serving_and_calling_an_agent_imports_no_trio() -> None:
    assert last_line_of(ASYNCIO_PROGRAM) == "['anyio', 'asyncio']"


def test_importing_acpwire_in_an_asyncio_program_imports_no_trio() -> None:
    program = "import asyncio, sys\nimport acpwire\nprint('trio' in sys.modules)"
    assert last_line_of(program) == "False"


def test_importing_acpwire_in_a_trio_program_imports_neither_asyncio_nor_anyio() -> None:
    program = (
        "import sys, trio\nimport acpwire, acpwire.agent, acpwire.client, acpwire.streams\n"
        "print(sorted(m for m in ('asyncio', 'anyio') if m in sys.modules))"
    )
    assert last_line_of(program) == "[]"
