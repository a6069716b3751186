"""acpwire's echo agent served over the network behind a bearer token (`sesame`), for
`acpwire check --url --header`'s test: prints `{"url": ...}`, serves until terminated."""

from __future__ import annotations

import functools
import json

import trio

from acpwire import RemoteOptions, agent_app, bearer_token, serve_remote
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2


async def main() -> None:
    app = agent_app(
        EchoAgentV2, v1=EchoAgentV1, remote=RemoteOptions(authorize=bearer_token("sesame"))
    )
    async with trio.open_nursery() as nursery:
        [url] = await nursery.start(functools.partial(serve_remote, app, bind="127.0.0.1:0"))
        print(json.dumps({"url": url}), flush=True)


if __name__ == "__main__":
    trio.run(main)
