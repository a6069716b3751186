"""Names the public packages export but import on first use (PEP 562), so that `import acpwire`
pays nothing for what most programs never touch: serving and connecting over the network
(hmac, hashlib, ipaddress, urllib.parse and the ASGI application), the durable session
stores (sqlite3, pathlib, queue and a writer thread's machinery), `serve_turns` with its
session stores (and the protocol's session-update types they keep), and spawning an agent
process or reconnecting (what a client does, never an agent).

`ON_FIRST_USE` is the one table of those names and their home modules. A package lists such a
name in `__all__`, imports it under `if TYPE_CHECKING:` for type checkers, and installs
`exports(__name__, renamed)` as its `__getattr__` and `__dir__`: the first use imports the
home module and keeps the object in the package, so `from acpwire import agent_app`, `dir()`
and `import *` work as if it had been imported eagerly.

`acpwire` itself imports the client side the same way (`exports(..., rest_from=CLIENT)`): the
names it exports from `acpwire.client` are imported with that package on first use, so an
agent (`from acpwire import serve_agent`) never imports the client (its connection, turns,
session-state fold and permissions, and the protocol areas only they use).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

from ._moved import renamed_name

_REMOTE = "acpwire.agent.remote"
_STORES = "acpwire.agent.stores"
_SESSIONS = "acpwire.agent.sessions"
_SPAWN = "acpwire.streams.agent_process"
CLIENT = "acpwire.client"

ON_FIRST_USE: dict[str, str] = {
    "AgentApp": _REMOTE,
    "Denied": _REMOTE,
    "RemoteOptions": _REMOTE,
    "Request": _REMOTE,
    "ResumeOptions": _REMOTE,
    "agent_app": _REMOTE,
    "bearer_token": _REMOTE,
    "serve_remote": _REMOTE,
    "RedisSessionStore": _STORES,
    "MemorySessionStore": _SESSIONS,
    "SavingSessionStore": _SESSIONS,
    "SessionStore": _SESSIONS,
    "StoredSession": _SESSIONS,
    "serve_turns": _SESSIONS,
    "turn_agents": _SESSIONS,
    "SqliteSessionStore": _STORES,
    "open_remote": "acpwire.client.remote",
    "AgentProcess": _SPAWN,
    "spawn_agent": _SPAWN,
    "Child": "acpwire.streams.child",
    "Reconnect": "acpwire.streams.reconnect",
}
"""Exported name -> the module defining it, imported when the name is first used."""

CLIENT_RENAMED = {
    "V2Factory": "ClientFactory",
    "V1Factory": "V1ClientFactory",
    "V2Connection": "Negotiated",
    "V1Connection": "V1Negotiated",
    "V2Event": "TurnEvent",
    "V1Event": "V1TurnEvent",
    "V2TurnEvents": "TurnEvents",
}
"""The names `acpwire.client` had in earlier releases -> their names now: they still resolve
(there, and in `acpwire` those it exports), with a DeprecationWarning, until the next release
(one version-naming rule: no prefix for v2, `V1` for v1). Here, not in the client package:
`acpwire` needs them without importing it."""


def exports(
    package: str, renamed: Mapping[str, str], rest_from: str | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A `__getattr__` and a `__dir__` for `package` (already in `sys.modules`, its `__all__`
    defined): a name of its `__all__` found in `ON_FIRST_USE` is imported from its home on
    first use and set on the package, any other name of its `__all__` from `rest_from` (if
    given; the package's attribute naming that module imports it too, as importing it used
    to, so `import acpwire; acpwire.client.load` still works); an old name (a key of `renamed`, the new name its value) warns and gives the new
    object (`_moved.renamed_name`); any other raises AttributeError."""
    module = sys.modules[package]

    def __getattr__(name: str) -> object:
        if rest_from is not None and name == rest_from.rpartition(".")[2]:
            return importlib.import_module(rest_from)  # the import sets it on the package
        home = ON_FIRST_USE.get(name, rest_from)
        if home is None or name not in module.__all__:
            return renamed_name(package, renamed, name)
        value = getattr(importlib.import_module(home), name)
        setattr(module, name, value)  # later uses are a plain attribute read
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *module.__all__})

    return __getattr__, __dir__
