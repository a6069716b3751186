"""Remote interop as real processes: the official TypeScript SDK 2.4.0's experimental clients
(`createHttpStream`, `createWebSocketStream` with the `ws` package) against acpwire's
`agent_app` serving the echo agent, on each test loop (v2; the scenario of
tests/interop/ts/remote_client_v2.mjs: a permission allowed, a prompt cancelled, session/close).
Fails (never skips) without node and tests/interop/ts/node_modules: `nox -s tests` installs them."""

from __future__ import annotations

import json
import shutil
from functools import partial

import anyio
import pytest

from acpwire import agent_app, serve_remote
from acpwire.fixtures.echo_agent import EchoAgentV1, EchoAgentV2
from helpers.paths import INTEROP

if shutil.which("node") is None or not (INTEROP / "ts" / "node_modules" / "ws").is_dir():
    pytest.fail("node or tests/interop/ts/node_modules missing: run `nox -s tests`", pytrace=False)

pytestmark = pytest.mark.usefixtures("loop")


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_the_typescript_client_against_our_server(transport: str) -> None:
    stop = anyio.Event()
    with anyio.fail_after(9):
        async with anyio.create_task_group() as tasks:
            app = agent_app(EchoAgentV2, v1=EchoAgentV1)
            serving = partial(serve_remote, app, bind="127.0.0.1:0", shutdown_trigger=stop.wait)
            [url] = await tasks.start(serving)
            command = ["node", "ts/remote_client_v2.mjs", "--url", url, "--transport", transport]
            done = await anyio.run_process(command, cwd=INTEROP, check=False)
            stop.set()
    out = done.stdout.decode()
    assert done.returncode == 0, f"{out}\n{done.stderr.decode()[-2000:]}"
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["protocolVersion"] == 2
    assert (summary["prompt1StopReason"], summary["prompt2StopReason"]) == ("end_turn", "cancelled")
    assert summary["permissionRequests"] >= 1 and summary["sessionClosed"] is True
