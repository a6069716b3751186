"""`FakeAgent.from_trace`: a client under test against the agent's side of a recorded trace,
in this process on either loop and as a command, with where the client diverged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_schema import v2
from acpwire import PeerError, connect
from acpwire.examples.hello_client import HelloClient, main
from acpwire.testing import FakeAgent, ScenarioError
from helpers.processes import PYTHONPATH
from helpers.traces import record_hello_trace

pytestmark = pytest.mark.usefixtures("loop")


@pytest.fixture(scope="module")
def hello_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_hello_trace(tmp_path_factory.mktemp("fake_replay") / "hello.trace")


async def hello_session(agent: FakeAgent, *, close: bool = True) -> list[str]:
    """The hello client's session, over `agent.connected()`: the text it was sent."""
    said = []
    async with agent.connected() as stream, connect(stream, v2=HelloClient) as conn:
        info = v2.Implementation(name="test-client", version="1")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
        async with conn.v2.subscribe(session.session_id) as updates:
            prompt = v2.PromptRequest(
                session_id=session.session_id, prompt=[v2.TextContent(text="Hi")]
            )
            await conn.v2.peer.session_prompt(prompt)
            async for update in updates:
                if isinstance(update, v2.AgentMessageChunk):
                    said.append(update.content.text)  # type: ignore[union-attr]
                if isinstance(update, v2.SessionStateUpdate) and update.state == "idle":
                    break
        prompt.session_id = "no-such-session"
        with pytest.raises(PeerError) as refused:
            await conn.v2.peer.session_prompt(prompt)
        assert refused.value.code == -32002  # the recorded error, replayed
        if close:
            await conn.v2.peer.session_close(v2.CloseSessionRequest(session_id=session.session_id))
    return said


async def test_a_client_following_the_recording(hello_trace: Path) -> None:
    agent = FakeAgent.from_trace(hello_trace)
    assert await hello_session(agent) == ["Hello ", "from ", "acpwire! "]
    assert agent.divergences == []
    assert agent.wire.methods() == [
        "initialize",
        "session/new",
        "session/prompt",
        "session/prompt",
        "session/close",
    ]


async def test_a_client_leaving_a_request_out(hello_trace: Path) -> None:
    agent = FakeAgent.from_trace(hello_trace, timeout=2)
    await hello_session(agent, close=False)
    assert [str(d) for d in agent.divergences] == [
        "line 20 (client session/close): missing: the peer closed the connection first"
    ]


async def test_a_request_matching_nothing_is_answered_and_reported(hello_trace: Path) -> None:
    agent = FakeAgent.from_trace(hello_trace, timeout=2)
    async with agent.connected() as stream, connect(stream, v2=HelloClient) as conn:
        info = v2.Implementation(name="test-client", version="1")
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
        with pytest.raises(PeerError) as refused:
            await conn.v2.peer.session_list(v2.ListSessionsRequest())
    assert refused.value.code == -32603
    assert "no session/list request of this shape" in refused.value.message
    assert str(agent.divergences[0]).startswith(
        "after line 3 (client session/list): unexpected: nothing recorded matches it: "
        '{"jsonrpc":"2.0","id":1,"method":"session/list"'
    )


async def test_as_a_command(hello_trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = FakeAgent.from_trace(hello_trace)
    await main(agent.command())  # the hello client starts `acpwire replay ... --as agent`
    out, err = capsys.readouterr()
    assert "agent: acpwire! " in out
    assert err.splitlines()[-1] == "no divergence"  # the replay's report, on its stderr


def test_a_file_that_is_no_trace(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    with pytest.raises(ScenarioError, match=r"notes\.txt: not an acpwire trace"):
        FakeAgent.from_trace(notes)


def test_importing_acpwire_testing_loads_nothing_of_the_command() -> None:
    code = (
        "import sys, acpwire.testing; "
        "print(sorted(m for m in sys.modules if m.split('.')[:2] == ['acpwire', 'cli'])); "
        "from acpwire.testing import Divergence; print(Divergence.__module__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **PYTHONPATH},
    )
    assert done.stdout.splitlines() == ["[]", "acpwire.cli.replay_engine"]
