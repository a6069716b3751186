"""Who may use a remote agent: the authentication hook (`Authorize`, `bearer_token`) and the
browser checks (Host and Origin, against DNS rebinding and cross-site pages).

Every request is checked before anything else is read of it (POST, GET, DELETE and the
WebSocket upgrade alike), in this order:

1. **Host**, on a loopback connection (the server was reached at 127.0.0.0/8 or ::1): the
   `Host` must be a loopback name or address (`localhost`, `127.0.0.1`, `[::1]`, any port)
   or one of `allowed_hosts`; otherwise 403. A page on another site that rebinds its DNS
   name to 127.0.0.1 reaches the server with its own name in `Host`: refused.
2. **Origin**, when the request has one (browsers send it; other clients don't): allowed
   when it is one of `allowed_origins`, or the request's own origin (same scheme, host and
   port as `Host`), or, on a loopback connection, a loopback origin; otherwise 403. This
   keeps pages of other sites from driving the agent (WebSockets have no CORS).
3. **authorize(request)**, when given: None lets the request through, a `Denied` answers it
   with its status (401 or 403) and headers.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import ipaddress
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Request:
    """What an `Authorize` hook sees of a request."""

    method: str
    """`POST`, `GET`, `DELETE`, or `GET` for a WebSocket upgrade (`websocket` True)."""
    path: str
    """The request's path (the endpoint's, `/acp`, unless mounted elsewhere)."""
    headers: Mapping[str, str]
    """The request's headers, names in lower case (repeated ones joined with `, `)."""
    client: tuple[str, int] | None
    """The client's address, when the server knows it."""
    websocket: bool = False
    """True for the WebSocket upgrade."""


@dataclass(frozen=True)
class Denied:
    """An `Authorize` hook's refusal: `status` 401 (who are you?) or 403 (not you)."""

    status: int
    """401 or 403 (any 4xx is sent as given)."""
    reason: str
    """Sent as the response's text body."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers (`WWW-Authenticate` for a 401)."""


Authorize = Callable[[Request], Denied | Awaitable[Denied | None] | None]
"""The authentication hook: None lets the request through, a `Denied` refuses it. Plain or
`async`; it runs for every request, so keep it quick (cache what you look up)."""


def bearer_token(*tokens: str, realm: str = "acp") -> Authorize:
    """A hook that lets through requests carrying `Authorization: Bearer <token>` with one of
    `tokens` (compared in constant time); 401 otherwise, with the `WWW-Authenticate`
    challenge of RFC 6750 (`error="invalid_token"` when a wrong token was given)."""
    if not tokens or not all(tokens):
        raise ValueError("bearer_token needs at least one non-empty token")
    expected = [token.encode() for token in tokens]
    challenge = f'Bearer realm="{realm}"'

    def authorize(request: Request) -> Denied | None:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return Denied(401, "a bearer token is required", {"www-authenticate": challenge})
        token = given.strip().encode()
        if any(hmac.compare_digest(token, candidate) for candidate in expected):
            return None
        invalid = f'{challenge}, error="invalid_token"'
        return Denied(401, "the bearer token is not valid", {"www-authenticate": invalid})

    return authorize


@functools.lru_cache(maxsize=64)
def _is_loopback_host(host: str) -> bool:
    """Whether `host` names this machine. Cached: each request asks it of the address the
    client reached and of its `Host`, the same few strings every time (parsing an address
    takes several µs); the bound keeps clients sending other names from growing it."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_host(authority: str) -> str:
    """The host of `host[:port]` / `[v6]:port`."""
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


@dataclass(frozen=True)
class BrowserChecks:
    """The Host and Origin checks (see the module)."""

    allowed_origins: Collection[str] = ()
    allowed_hosts: Collection[str] = ()

    def refusal(self, headers: Mapping[str, str], *, scheme: str, server: str | None) -> str | None:
        """Why the request with `headers` is refused (403), or None. `server`: the address
        the client reached; `scheme`: `http`/`https` (`ws`/`wss` for a WebSocket)."""
        loopback = server is not None and _is_loopback_host(server)
        host = headers.get("host", "")
        if loopback and not (_is_loopback_host(_split_host(host)) or host in self.allowed_hosts):
            return (
                f"Host {host!r} is not allowed on a loopback address (DNS rebinding "
                "protection): use localhost or 127.0.0.1, or allow it (allowed_hosts)"
            )
        origin = headers.get("origin")
        if origin is None or origin in self.allowed_origins:
            return None
        parts = urlsplit(origin)
        web_scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        if parts.scheme == web_scheme and parts.netloc == host:
            return None
        if loopback and parts.hostname is not None and _is_loopback_host(parts.hostname):
            return None
        return f"Origin {origin!r} is not allowed: add it to allowed_origins to let its pages in"


async def authorized(authorize: Authorize, request: Request) -> Denied | None:
    """The hook's verdict (None: let through)."""
    verdict = authorize(request)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return verdict
