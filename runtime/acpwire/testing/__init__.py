"""Testing an agent or a client, on trio or asyncio, in pytest or any test runner.

- **A client under test** (an editor integration) talks to a `FakeAgent` that plays an
  `AgentScenario` (plain data: a list of steps per prompt turn, errors by method) over v2 or
  v1, in this process (`agent.connected()`: a stream for `acpwire.connect`) or as a command
  (`agent.command(tmp_path)`: `python -m acpwire.testing SCENARIO.json`), and records every
  line for assertions (`agent.wire`: the methods called, the prompts, the permission answers,
  the cancels). `FakeAgent.from_trace(path)` plays the agent's side of a trace recorded by
  `acpwire trace` instead (`acpwire replay --as agent`'s code), and lists in `divergences`
  where the client left the recording.
- **An agent under test** is driven by a `FakeClient` (`async with client_for(MyAgent) as
  client`, or `client_for(command=[...])`): `await client.prompt("Hi", answers=["allow"])`
  runs one turn through acpwire's `prompt()` and returns a `TurnResult` (the stop reason,
  the events, the folded `SessionState`, the reply's text); a `ClientScenario` plays several
  prompts from data.
- **pytest**: installing acpwire registers a plugin (the `pytest11` entry point `acpwire`)
  with the fixtures `acp_fake_agent` (builds `FakeAgent`s whose commands live in the test's
  `tmp_path`) and `acp_client_for` (`client_for`). The fixtures are synchronous and what
  they give is used with `async with` inside the test, so they work with whichever plugin
  runs async tests: anyio's (`@pytest.mark.anyio`, installed with acpwire; trio and asyncio),
  pytest-trio or pytest-asyncio.
- `memory_stream_pair()`: two connected in-memory byte streams (`MemoryStream`), what the
  fakes run over, for connecting your own agent and client in one process.

```python
from acpwire import connect, serve_agent
from acpwire.testing import memory_stream_pair

client_side, agent_side = memory_stream_pair()
async with anyio.create_task_group() as tasks:
    tasks.start_soon(lambda: serve_agent(MyAgent, stream=agent_side))
    async with connect(client_side, v2=MyClient) as conn:
        await conn.initialize(...)
```
"""

from typing import TYPE_CHECKING

from .fake_agent import FakeAgent, MakeFakeAgent
from .fake_client import (
    ClientFor,
    ClientScenario,
    FakeClient,
    PromptStep,
    TurnResult,
    client_for,
)
from .memory import MemoryStream, memory_stream_pair
from .scenario import (
    AgentScenario,
    Ask,
    Diff,
    ErrorAnswer,
    Option,
    Say,
    ScenarioError,
    Sleep,
    Step,
    Stop,
    ToolCall,
    ToolUpdate,
    Turn,
    WaitForCancel,
)
from .wire import Line, Wire

if TYPE_CHECKING:
    from acpwire.cli.replay_engine import Divergence

__all__ = [
    "AgentScenario",
    "Ask",
    "ClientFor",
    "ClientScenario",
    "Diff",
    "Divergence",
    "ErrorAnswer",
    "FakeAgent",
    "FakeClient",
    "Line",
    "MakeFakeAgent",
    "MemoryStream",
    "Option",
    "PromptStep",
    "Say",
    "ScenarioError",
    "Sleep",
    "Step",
    "Stop",
    "ToolCall",
    "ToolUpdate",
    "Turn",
    "TurnResult",
    "WaitForCancel",
    "Wire",
    "client_for",
    "memory_stream_pair",
]


def __getattr__(name: str) -> object:
    """`Divergence` (`acpwire replay`'s, what `FakeAgent.divergences` holds) is imported on
    first use: `import acpwire.testing` loads nothing of the `acpwire` command."""
    if name == "Divergence":
        from acpwire.cli.replay_engine import Divergence

        globals()[name] = Divergence
        return Divergence
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
