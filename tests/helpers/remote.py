"""Remote agents in a test: an `agent_app` served by Hypercorn in-process on the test's loop
(`served`), TLS certificates made for it (`Tls`), and raw HTTP against it (`raw_client`)."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio
import httpx
import trustme

from acpwire import serve_remote
from acpwire.agent import AgentApp


@dataclass(frozen=True)
class Tls:
    """A certificate for 127.0.0.1/localhost (`certfile`, `keyfile`) and the context that
    trusts it (`client`)."""

    certfile: str
    keyfile: str
    client: ssl.SSLContext

    @classmethod
    def make(cls, directory: Path) -> Tls:
        authority = trustme.CA()
        certificate = authority.issue_cert("127.0.0.1", "localhost")
        certfile, keyfile = directory / "cert.pem", directory / "key.pem"
        certificate.private_key_and_cert_chain_pem.write_to_path(str(certfile))
        certificate.private_key_pem.write_to_path(str(keyfile))
        context = ssl.create_default_context()
        authority.configure_trust(context)
        return cls(str(certfile), str(keyfile), context)


@contextlib.asynccontextmanager
async def served(app: AgentApp, tls: Tls | None = None) -> AsyncIterator[str]:
    """Serve `app` on a free loopback port while the block runs; yields its endpoint URL.
    Leaving the block shuts the server down gracefully."""
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        [url] = await tasks.start(
            partial(
                serve_remote,
                app,
                bind="127.0.0.1:0",
                certfile=tls.certfile if tls else None,
                keyfile=tls.keyfile if tls else None,
                shutdown_trigger=stop.wait,
            )
        )
        try:
            yield url
        finally:
            stop.set()


def raw_client(*, http2: bool = True, verify: ssl.SSLContext | bool = True) -> httpx.AsyncClient:
    """An HTTP client for requests by hand (HTTP/2 by prior knowledge unless `http2=False`)."""
    return httpx.AsyncClient(http1=not http2, http2=http2, verify=verify, timeout=5.0)
