"""`serve_remote`: run an `agent_app` under Hypercorn on the running loop (trio or asyncio),
HTTP/1.1 and HTTP/2 (cleartext by prior knowledge or upgrade, or TLS with ALPN) and
WebSocket on one port; and the command line of the examples (`--bind`, `--certfile`, ...).

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable, Sequence

from ..._loop import current_loop
from ...streams.extra import remote_module
from .app import AgentApp

WEBSOCKET_PING_INTERVAL = 20.0
"""Seconds between the server's WebSocket pings (Hypercorn sends them; ASGI apps cannot)."""

DEFAULT_BIND = "127.0.0.1:8000"


async def serve_remote(
    app: AgentApp,
    *,
    bind: str | Sequence[str] = DEFAULT_BIND,
    certfile: str | None = None,
    keyfile: str | None = None,
    websocket_ping_interval: float | None = WEBSOCKET_PING_INTERVAL,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    access_log: bool = False,
) -> None:
    """Serve `app` with Hypercorn until cancelled, `shutdown_trigger()` returns, or (asyncio,
    no trigger) SIGINT/SIGTERM.

    `bind`: `host:port` (or several; `fd://N` for an inherited socket, `unix:path`);
    `certfile` and `keyfile` (PEM) turn TLS on, and with it HTTP/2 by ALPN (cleartext HTTP/2
    works by prior knowledge). A `bind` on an address other than loopback serves the
    network: set `RemoteOptions.authorize` for that.
    """
    config_module = remote_module("hypercorn.config", "serve_remote")
    config = config_module.Config()
    config.bind = [bind] if isinstance(bind, str) else list(bind)
    config.certfile = certfile
    config.keyfile = keyfile
    config.websocket_ping_interval = websocket_ping_interval
    config.websocket_max_message_size = app.remote.max_message_bytes
    config.accesslog = logging.getLogger("hypercorn.access") if access_log else None
    if current_loop().name == "trio":
        serve = remote_module("hypercorn.trio", "serve_remote").serve
    else:
        serve = remote_module("hypercorn.asyncio", "serve_remote").serve
    await serve(app, config, shutdown_trigger=shutdown_trigger)


def main(app: AgentApp, argv: Sequence[str] | None = None, *, description: str = "") -> None:
    """`python -m <module>`: serve `app` with the command line's bind, TLS files and loop."""
    parser = argparse.ArgumentParser(description=description or "Serve an ACP agent remotely.")
    parser.add_argument("--bind", action="append", help=f"host:port (default {DEFAULT_BIND})")
    parser.add_argument("--certfile", help="TLS certificate (PEM): HTTPS, HTTP/2 by ALPN")
    parser.add_argument("--keyfile", help="the certificate's private key (PEM)")
    parser.add_argument("--loop", choices=("trio", "asyncio"), default="trio")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    async def run() -> None:
        await serve_remote(
            app, bind=args.bind or DEFAULT_BIND, certfile=args.certfile, keyfile=args.keyfile
        )

    if args.loop == "trio":
        import trio

        trio.run(run)
    else:
        import asyncio

        asyncio.run(run())
