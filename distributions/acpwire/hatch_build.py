"""acpwire's dependencies: the acp-schema range staged from schema/lock.json, plus its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

REQUIREMENT_FILE = "acp-schema-requirement.txt"  # written by codegen.release.stage_runtime
OWN_DEPENDENCIES = ["msgspec>=0.19", "trio>=0.25", "anyio>=4.11", "sniffio>=1.3"]
OPTIONAL_DEPENDENCIES = {
    # remote agents (open_remote, agent_app's serve_remote): HTTP/2 + WebSocket client, Hypercorn
    "remote": [
        "httpx[http2]>=0.28",
        "httpx-ws>=0.8",
        "wsproto>=1.2",
        "websockets>=13",
        "hypercorn>=0.17",
    ],
    # RedisSessionStore: sessions shared by several server processes
    "redis": ["redis>=5"],
    # the `acpwire show` terminal view (the command itself needs nothing more)
    "cli": ["rich>=13.7"],
    # acpwire.otel: OpenTelemetry spans per request and turn, trace context carried in _meta
    "otel": ["opentelemetry-api>=1.25"],
}


class AcpSchemaRequirement(MetadataHookInterface):
    def update(self, metadata: dict[str, Any]) -> None:
        staged = Path(self.root) / REQUIREMENT_FILE
        if not staged.is_file():
            raise FileNotFoundError(
                f"{staged} is missing: build acpwire with `nox -s dist`, which stages it"
            )
        metadata["dependencies"] = [staged.read_text().strip(), *OWN_DEPENDENCIES]
        metadata["optional-dependencies"] = OPTIONAL_DEPENDENCIES
