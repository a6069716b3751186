"""Serving agents remotely: the RFD's Streamable HTTP and WebSocket transport as an ASGI 3
application (`agent_app`), run by Hypercorn (`serve_remote`) or any ASGI server, with its
checks and limits (`RemoteOptions`, `bearer_token`, `Denied`, `Request`) and resumable
streams (`ResumeOptions`).

The application itself needs nothing beyond acpwire; `serve_remote` needs the `remote` extra
(`pip install 'acpwire[remote]'`).
"""

from .app import AgentApp, agent_app
from .guard import Authorize, Denied, Request, bearer_token
from .options import RemoteOptions, ResumeOptions
from .serving import serve_remote

__all__ = [
    "AgentApp",
    "Authorize",
    "Denied",
    "RemoteOptions",
    "Request",
    "ResumeOptions",
    "agent_app",
    "bearer_token",
    "serve_remote",
]
