"""How `acpwire replay` (and `acpwire.testing.FakeAgent.from_trace`) tells whether a live
message is the one recorded: the matching rule, in one place.

By shape (the default): the same JSON types and the same object keys, all the way down, and
the same values where a value is part of the protocol's structure (`VALUE_KEYS`: the keys
the schema uses to tell variants apart or whose values it enumerates, `sessionUpdate`,
`type`, `outcome`, `stopReason`, `state`, `kind`, `status`, error `code`, ...). Other values
(text, titles, paths, numbers, timestamps) may differ, `_meta` is not compared, and an array
matches when each live item has the shape of a recorded one and each recorded item's shape
is among the live ones (their counts may differ; empty matches only empty).

Strict (`--strict`): the values too, and arrays item by item.

Either way, the values of keys ending in `Id` (`sessionId`, `messageId`, `toolCallId`,
`terminalId`, ...) are ids the peer chose: the first live value seen for a recorded one is
remembered (`IdMap`) and substituted in what the replay sends afterwards; with `--strict` a
later different one is a divergence. JSON-RPC `id`s are never compared (each side's requests
are numbered by the live connection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import acp_schema.v2.methods as v2_methods

__all__ = ["VALUE_KEYS", "IdMap", "differences", "kind_of", "substituted"]

VALUE_KEYS = frozenset(
    {
        "action",
        "category",
        "code",
        "fileType",
        "format",
        "jsonrpc",
        "kind",
        "method",
        "mode",
        "operation",
        "outcome",
        "priority",
        "severity",
        "sessionUpdate",
        "state",
        "status",
        "stopReason",
        "theme",
        "type",
    }
)
"""The keys whose values are compared even by shape: those the schema (v1 and v2) uses as a
union's tag or types as an enumeration (tests/cli/test_replay_match.py derives them)."""

MAX_DIFFERENCES = 3
"""How many differences one message reports (the first ones, in key order)."""


class IdMap:
    """Recorded ids (values of `...Id` keys) -> the live ones the peer chose instead."""

    def __init__(self) -> None:
        self.live: dict[str, str] = {}

    def see(self, recorded: str, live: str) -> str | None:
        """Remember `recorded` -> `live` (the first pairing wins); a difference when the
        recorded id was paired with another live one before."""
        known = self.live.setdefault(recorded, live)
        if known != live:
            return f"{recorded!r} was {known!r} live before, now {live!r}"
        return None


def is_id_key(key: str) -> bool:
    return key.endswith("Id")


def kind_of(message: Mapping[str, Any]) -> str:
    """What a request or notification is, for matching: its method, and for `session/update`
    the update's `sessionUpdate` (`session/update agent_message_chunk`)."""
    method = str(message.get("method"))
    if method == v2_methods.SESSION_UPDATE.name:
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict) and "sessionUpdate" in update:
            return f"{method} {update['sessionUpdate']}"
    return method


def differences(
    recorded: Any, live: Any, *, strict: bool = False, ids: IdMap | None = None
) -> list[str]:
    """How `live` differs from `recorded` (empty: it matches), each as `$.path: what`, at
    most `MAX_DIFFERENCES`. `ids` learns the ids met on the way (None: learn nothing)."""
    found: list[str] = []
    _compare(recorded, live, "$", found, strict, ids)
    return found[:MAX_DIFFERENCES]


def substituted(value: Any, ids: IdMap) -> Any:
    """`value` (a recorded message the replay sends) with the recorded ids the live peer
    replaced by its own."""
    if isinstance(value, dict):
        return {
            key: (
                ids.live.get(item, item)
                if is_id_key(key) and isinstance(item, str)
                else substituted(item, ids)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [substituted(item, ids) for item in value]
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _compare(
    recorded: Any, live: Any, path: str, found: list[str], strict: bool, ids: IdMap | None
) -> None:
    if len(found) >= MAX_DIFFERENCES:
        return
    recorded_type, live_type = _json_type(recorded), _json_type(live)
    if recorded_type != live_type:
        found.append(f"{path}: {recorded_type} recorded, {live_type} live")
    elif recorded_type == "object":
        _compare_objects(recorded, live, path, found, strict, ids)
    elif recorded_type == "array":
        _compare_arrays(recorded, live, path, found, strict, ids)
    elif strict and recorded != live:
        found.append(f"{path}: {_short(recorded)} recorded, {_short(live)} live")


def _compare_objects(
    recorded: dict[str, Any],
    live: dict[str, Any],
    path: str,
    found: list[str],
    strict: bool,
    ids: IdMap | None,
) -> None:
    ignored = set() if strict else {"_meta"}
    for key in recorded:
        if key not in live and key not in ignored:
            found.append(f"{path}.{key}: recorded, missing live")
    for key in live:
        if key not in recorded and key not in ignored:
            found.append(f"{path}.{key}: live, not recorded")
    for key, value in recorded.items():
        if key not in live or key in ignored:
            continue
        other = live[key]
        if is_id_key(key) and isinstance(value, str) and isinstance(other, str):
            clash = ids.see(value, other) if ids is not None else None
            if strict and clash is not None:
                found.append(f"{path}.{key}: {clash}")
        elif key in VALUE_KEYS and not isinstance(value, dict | list) and value != other:
            found.append(f"{path}.{key}: {_short(value)} recorded, {_short(other)} live")
        else:
            _compare(value, other, f"{path}.{key}", found, strict, ids)


def _compare_arrays(
    recorded: list[Any],
    live: list[Any],
    path: str,
    found: list[str],
    strict: bool,
    ids: IdMap | None,
) -> None:
    if strict or not recorded or not live:
        if len(recorded) != len(live):
            found.append(f"{path}: {len(recorded)} items recorded, {len(live)} live")
            return
        for number, (one, other) in enumerate(zip(recorded, live, strict=True)):
            _compare(one, other, f"{path}[{number}]", found, strict, ids)
        return
    for number, item in enumerate(live):
        if not any(_fits(one, item) for one in recorded):
            # the recorded item at the same place (or the last) says what differs
            _compare(
                recorded[min(number, len(recorded) - 1)],
                item,
                f"{path}[{number}]",
                found,
                False,
                None,
            )
    for number, one in enumerate(recorded):
        if not any(_fits(one, item) for item in live):
            found.append(f"{path}[{number}]: the recorded item's shape is not among the live ones")
    if ids is not None and len(recorded) == len(live):
        for one, other in zip(recorded, live, strict=True):
            _compare(one, other, path, [], False, ids)  # learn the ids, item by item


def _fits(recorded: Any, live: Any) -> bool:
    found: list[str] = []
    _compare(recorded, live, "$", found, False, None)
    return not found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
