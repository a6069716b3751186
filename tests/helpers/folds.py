"""Session updates written as the JSON an agent sends, decoded with a surface's client codec
and folded into a fresh `SessionState` / `V1SessionState` (the fold tests state wire behaviour
on each surface of a version: `fold(v2_surface, ...)`)."""

from __future__ import annotations

from typing import Any

from helpers.surfaces import AnySurface, decode_update, state_for


def decode(surface: AnySurface, update: dict[str, Any]) -> Any:
    """`update` (a `session/update`'s update object) decoded by `surface`'s client codec."""
    return decode_update(surface, update)


def fold(surface: AnySurface, *updates: dict[str, Any]) -> Any:
    """A fresh state of `surface`'s version with `updates` folded in (a `SessionState` for a
    v2 surface, a `V1SessionState` for a v1 one)."""
    state = state_for(surface)
    for update in updates:
        state.apply(decode_update(surface, update))
    return state


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunk(tag: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": tag, "messageId": message_id, "content": text(value)}
