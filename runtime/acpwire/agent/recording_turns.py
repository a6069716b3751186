"""The turns that record every update they send (a session store's `recorder`): defined
apart from `Turn` and `V1Turn`, imported only by a scheduler given a recorder, so an agent
without one does not define them at start (two dataclasses: ~5M instructions, cold start).

A store's recorder is typed for the stable surface's updates (the `SessionStore` protocol that
users implement); an agent on an unstable surface records that surface's updates, of the same
wire form, which acpwire's stores keep and give back as they are."""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import acp_schema.v1 as v1
import acp_schema.v2 as acp

from .turns import Record, Turn, V1Turn

if TYPE_CHECKING:
    from .turns import V1Update, V2Update


def _ignore(update: acp.SessionUpdate | v1.SessionUpdate) -> None:
    pass


@dataclass
class _RecordingTurn(Turn):
    """A Turn that records every update it sends (only built when a recorder is given, so
    the plain Turn's send path stays as it is)."""

    _record: Record = _ignore

    def update(self, update: V2Update) -> Coroutine[Any, Any, None]:
        self._record(update)  # type: ignore[arg-type]  # see the module's docstring
        # Turn.update inlined: this is the send path of every say() (super() costs a frame).
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)  # type: ignore[arg-type]
        )


@dataclass
class _RecordingV1Turn(V1Turn):
    _record: Record = _ignore

    def update(self, update: V1Update) -> Coroutine[Any, Any, None]:
        self._record(update)  # type: ignore[arg-type]  # see the module's docstring
        # V1Turn.update inlined: this is the send path of every say() (super() costs a frame).
        return self.client.session_update(
            v1.SessionNotification(session_id=self.session_id, update=update)  # type: ignore[arg-type]
        )
