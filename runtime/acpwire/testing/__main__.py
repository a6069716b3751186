"""`python -m acpwire.testing SCENARIO.json [--record FILE] [--loop trio|asyncio]`: a fake
agent over stdio playing a scenario (`acpwire.testing.AgentScenario` as JSON), for a client
that starts its agent as a command. `FakeAgent.command()` builds this command line."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import anyio

from acpwire.streams import stdio_stream

from .fake_agent import FakeAgent, recording_to
from .scenario import AgentScenario, ScenarioError
from .wire import RecordingStream


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m acpwire.testing", description=__doc__)
    parser.add_argument("scenario", type=Path, help="the scenario, a JSON file")
    parser.add_argument("--record", type=Path, help="append every line exchanged to this file")
    parser.add_argument("--loop", choices=("trio", "asyncio"), default="trio")
    args = parser.parse_args(argv)
    try:
        agent = FakeAgent(AgentScenario.parse(args.scenario))
    except ScenarioError as exc:
        parser.error(str(exc))
    stream = stdio_stream()
    served = RecordingStream(stream, recording_to(args.record)) if args.record else stream
    anyio.run(functools.partial(agent.serve, served), backend=args.loop)


if __name__ == "__main__":
    main()
