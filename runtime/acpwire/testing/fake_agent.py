"""A scripted agent to test a client (an editor integration) against: it plays an
`AgentScenario` over v2 or v1 (or the agent's side of a recorded trace, `from_trace`), in
this process (`FakeAgent.connected()`, a stream for `connect`) or as a command
(`FakeAgent.command()`, for `open_agent`), and records every line (`FakeAgent.wire`) for the
test's assertions."""

from __future__ import annotations

import collections
import functools
import itertools
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import anyio
import msgspec

from acp_schema import v1, v2
from acpwire import (
    AgentTurn,
    ConnectionOptions,
    CustomStopReason,
    PermissionChoice,
    RpcError,
    StopReason,
    ToolCallHandle,
    serve_agent,
)
from acpwire.agent import text_of, turn_agents
from acpwire.streams import ByteStream

from .background import serving
from .memory import MemoryStream, memory_stream_pair
from .scenario import (
    AGENT_REQUESTS,
    CANCELLED,
    AgentScenario,
    Ask,
    Diff,
    ErrorAnswer,
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
from .wire import Line, RecordingStream, Sender, Wire, record_line

if TYPE_CHECKING:
    from acpwire.cli.replay_engine import Divergence
    from acpwire.cli.replay_script import Script

__all__ = ["FakeAgent", "MakeFakeAgent"]

OPTIONS = ConnectionOptions(eof_grace_period=0.5, check_outgoing=True)
"""The fake agent checks what it sends against the schema; its requests in flight get half a
second once the client closed the connection."""


class FakeAgent:
    """An agent that plays `scenario` (an `AgentScenario`, or the same as a dict: checked
    here, `ScenarioError` naming the bad step) and records what the client sent.

        agent = FakeAgent({"turns": [{"steps": [{"type": "say", "text": "Hi"}]}]})
        async with agent.connected() as stream, connect(stream, v2=MyClient) as conn:
            ...                                         # in this process, either loop
        async with open_agent(agent.command(tmp_path), v2=MyClient) as conn:
            ...                                         # as a subprocess
        assert agent.wire.methods() == ["initialize", "session/new", "session/prompt"]

    The n-th `session/prompt` it receives runs the scenario's n-th turn, counted over its
    sessions and its in-process connections (each process started from `command()` counts
    from the first turn). Everything it sends is checked against the schema
    (`ConnectionOptions(check_outgoing=True)`).
    """

    def __init__(
        self, scenario: AgentScenario | Mapping[str, Any], *, directory: Path | None = None
    ) -> None:
        self.scenario = AgentScenario.parse(scenario)
        """The checked scenario."""
        self.directory = directory
        """Where `command()` writes its files when not given a directory."""
        self._lines: list[Line] = []
        self._record_files: list[Path] = []
        self._prompts = itertools.count()
        self._trace: _TraceReplay | None = None
        self._divergences: list[Divergence] = []

    @classmethod
    def from_trace(
        cls,
        path: str | Path,
        *,
        strict: bool = False,
        timeout: float = 10.0,
    ) -> FakeAgent:
        """An agent that plays the agent's side of a trace recorded by `acpwire trace`, as
        `acpwire replay FILE --as agent` does (the same matching code): it answers the
        client's requests with the recorded responses (matched by method and params shape,
        ids remapped) and sends the recorded updates and requests in recorded order, waiting
        up to `timeout` seconds for the client's messages recorded before each; `strict`
        compares values, not only shapes. Where the client under test diverged from the
        recording is in `divergences` once the connection ended (a request that matches
        nothing recorded is answered -32603). `ScenarioError` when the file is no trace.

            agent = FakeAgent.from_trace("tests/data/hello.trace")
            async with agent.connected() as stream:
                await my_client_session(stream)
            assert agent.divergences == []

        `command()` gives `acpwire replay PATH --as agent` (it reports its divergences on
        its stderr; `wire` and `divergences` see only the connections in this process).
        """
        from acpwire.cli.replay_script import read_script  # the command's code: loaded here only
        from acpwire.cli.trace_format import TraceError

        try:
            script = read_script(Path(path))
        except TraceError as error:
            raise ScenarioError(f"trace {path}: {error}") from None
        agent = cls(AgentScenario())
        agent._trace = _TraceReplay(script, strict, timeout)
        return agent

    @property
    def divergences(self) -> list[Divergence]:
        """For an agent `from_trace`: where the client diverged from the recording, over the
        connections ended so far (each `str()` says the trace line, what and how); empty for a
        scenario's agent."""
        return list(self._divergences)

    @property
    def wire(self) -> Wire:
        """Every line exchanged so far: in this process, then those the commands recorded."""
        lines = list(self._lines)
        for path in self._record_files:
            lines += Wire.read(path).lines
        return Wire(lines)

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[MemoryStream]:
        """Serve the agent in this process while the block runs; the block gets the client's
        end of the connection (for `acpwire.connect`, or your client's own stream code).
        Leaving the block closes that end; the agent is then given two seconds to finish
        before it is cancelled."""
        client_end, agent_end = memory_stream_pair()
        recording = RecordingStream(agent_end, self._record)
        async with serving(functools.partial(self.serve, recording), client_end):
            yield client_end

    def command(self, directory: Path | None = None) -> list[str]:
        """The command that runs this agent as a process (`python -m acpwire.testing`), for
        `open_agent(command, ...)` or your client's own launcher: it writes the scenario to
        `directory` (default: the one given to the constructor; created if missing), where
        the process records the lines for `wire`."""
        if self._trace is not None:
            return self._trace.command()
        directory = directory or self.directory
        if directory is None:
            raise TypeError(
                "FakeAgent.command() needs a directory for its files: pass one "
                "(agent.command(tmp_path)) or build FakeAgent(scenario, directory=...)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        number = len(self._record_files)
        scenario = directory / f"fake_agent_{number}.json"
        record = directory / f"fake_agent_{number}.wire.ndjson"
        scenario.write_bytes(msgspec.json.encode(self.scenario))
        record.unlink(missing_ok=True)
        self._record_files.append(record)
        return [sys.executable, "-m", "acpwire.testing", str(scenario), "--record", str(record)]

    async def serve(self, stream: ByteStream) -> None:
        """Serve the scenario (or play the trace) over `stream` until the client closes it
        (what `connected()` and the command run)."""
        if self._trace is not None:
            await self._trace.play(stream, self._divergences)
            return
        agent_v2, agent_v1 = _agent_classes(self.scenario, self._prompts)
        await serve_agent(
            agent_v2 if 2 in self.scenario.protocols else None,
            v1=agent_v1 if 1 in self.scenario.protocols else None,
            stream=stream,
            options=OPTIONS,
        )

    def _record(self, sender: Sender, data: bytes) -> None:
        self._lines.append(Line(sender, data))


class _TraceReplay:
    """What an agent `from_trace` plays: the trace's script and how to compare."""

    def __init__(self, script: Script, strict: bool, timeout: float) -> None:
        self.script = script
        self.strict = strict
        self.timeout = timeout

    async def play(self, stream: ByteStream, divergences: list[Divergence]) -> None:
        from acpwire.cli.replay_engine import Replayer

        replayer = Replayer(self.script, "agent", strict=self.strict, timeout=self.timeout)
        try:
            await replayer.run(stream)
        finally:
            divergences += replayer.divergences

    def command(self) -> list[str]:
        strict = ["--strict"] if self.strict else []
        return [
            *(sys.executable, "-m", "acpwire", "replay", str(self.script.path), "--as", "agent"),
            *strict,
            *("--timeout", f"{self.timeout:g}"),
        ]


MakeFakeAgent: TypeAlias = Callable[[AgentScenario | Mapping[str, Any]], FakeAgent]
"""The type of the pytest fixture `acp_fake_agent`: a scenario in, a `FakeAgent` out."""


def recording_to(path: Path) -> Callable[[Sender, bytes], None]:
    """A `record(sender, line)` that appends to `path` (what the command's `--record` does)."""
    file = path.open("ab", buffering=0)

    def record(sender: Sender, data: bytes) -> None:
        file.write(record_line(sender, data))

    return record


# -- the agent classes: serve_turns' session handling, the scenario's turns and errors


class _Script:
    """The scenario's turns, handed to prompts in the order they arrive."""

    def __init__(self, scenario: AgentScenario, prompts: Iterator[int]) -> None:
        self.scenario = scenario
        self.prompts = prompts
        self.waiting: dict[str, collections.deque[Turn]] = collections.defaultdict(
            collections.deque
        )

    def prompted(self, session_id: str, text: str) -> None:
        """Take the next turn for a prompt of `session_id` (-32603 / -32602 when the
        scenario has none left, or expected another prompt)."""
        number = next(self.prompts)
        turns = self.scenario.turns
        if number >= len(turns):
            raise RpcError.internal_error(
                f"the fake agent's scenario has {len(turns)} turn(s) and this is prompt "
                f"{number + 1}: add a turn to the scenario's `turns`"
            )
        turn = turns[number]
        if turn.expect_prompt is not None and text != turn.expect_prompt:
            raise RpcError.invalid_params(
                f"turns[{number}] expects the prompt {turn.expect_prompt!r}, got {text!r}"
            )
        self.waiting[session_id].append(turn)

    async def work(self, turn: AgentTurn) -> StopReason | CustomStopReason:
        script = self.waiting[turn.session_id].popleft()
        reason = await _run(turn, script.steps, {}) or script.stop_reason
        return _stop_reason(reason)


class _Stopped(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


async def _run(turn: AgentTurn, steps: list[Step], calls: dict[str, ToolCallHandle]) -> str | None:
    """Run `steps`; the reason of a `stop` step reached, else None."""
    for step in steps:
        match step:
            case Say():
                await turn.say(step.text)
            case ToolCall():
                calls[step.id] = await turn.tool_call(
                    step.title, kind=step.kind, locations=step.locations
                )
            case ToolUpdate():
                call = calls[step.id]
                if step.status is not None or step.title is not None:
                    await call.update(
                        status=step.status or msgspec.UNSET, title=step.title or msgspec.UNSET
                    )
                if step.output is not None:
                    await call.stream(step.output)
            case Diff():
                await calls[step.id].diff(step.path, step.old, step.new)
            case Ask():
                options = [PermissionChoice(o.id, o.name or o.id, o.kind) for o in step.options]
                choice = await calls[step.tool_call].request_permission(step.title, options)
                branch = step.then.get(CANCELLED if choice is None else choice, [])
                if (reason := await _run(turn, branch, calls)) is not None:
                    return reason
            case Sleep():
                await anyio.sleep(step.seconds)
            case WaitForCancel():
                await anyio.sleep_forever()
            case Stop():
                return step.reason
    return None


def _stop_reason(reason: str) -> StopReason | CustomStopReason:
    """The scenario's stop reason (checked when the scenario was: ACP's or `_`-prefixed)."""
    return CustomStopReason(reason) if reason.startswith("_") else cast(StopReason, reason)


def _agent_classes(
    scenario: AgentScenario, prompts: Iterator[int]
) -> tuple[type[v2.AgentBase], type[v1.AgentBase]]:
    script = _Script(scenario, prompts)
    turn_v2, turn_v1 = turn_agents(script.work, name=scenario.name, version=scenario.version)
    classes = []
    for base in (turn_v2, turn_v1):

        async def session_prompt(self: Any, params: Any, base: Any = base) -> Any:
            self.session(params.session_id)  # an unknown session: -32002, no turn taken
            script.prompted(params.session_id, text_of(params.prompt))
            return await base.session_prompt(self, params)

        namespace: dict[str, Any] = {"session_prompt": session_prompt}
        if base is turn_v2 and scenario.capabilities is not None:
            namespace["initialize"] = _answering(
                base, "capabilities", msgspec.convert(scenario.capabilities, v2.AgentCapabilities)
            )
        if base is turn_v1 and scenario.v1_capabilities is not None:
            namespace["initialize"] = _answering(
                base,
                "agent_capabilities",
                msgspec.convert(scenario.v1_capabilities, v1.AgentCapabilities),
            )
        for method, answer in scenario.errors.items():
            namespace[AGENT_REQUESTS[method]] = _failing(answer)
        classes.append(type(f"Fake{base.__name__}", (base,), namespace))
    return classes[0], classes[1]


def _answering(
    base: Any, field: str, capabilities: v2.AgentCapabilities | v1.AgentCapabilities
) -> Any:
    """An `initialize` handler answering with the scenario's capabilities."""

    async def initialize(self: Any, params: Any) -> Any:
        response = await base.initialize(self, params)
        setattr(response, field, capabilities)
        return response

    return initialize


def _failing(answer: ErrorAnswer) -> Any:
    async def handler(self: Any, params: Any) -> Any:
        raise RpcError(answer.code, answer.message, answer.data)

    return handler
