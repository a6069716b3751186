"""The v2 prompt lifecycle, so an agent author can't get it wrong.

    class MyAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.turns = PromptTurns(client)

        async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
            return await self.turns.start(params, self.work)

        async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
            self.turns.cancel(params.session_id)

        async def work(self, turn: Turn) -> str:
            await turn.say("Hello")
            return "end_turn"

`start` answers the prompt at once with its `messageId`, then runs the turn in the
background: `user_message` with the prompt, `state_update: running`, your work, and
`state_update: idle` with the stop reason it returns. While `turn.request_permission` waits,
the state is `requires_action`. `cancel` cancels the work (a trio cancel scope: a pending
permission request is cancelled with `$/cancel_request`) and the turn ends idle with
`cancelled`; exceptions raised by cancelled work are not reported as errors. Any other
exception ends the turn idle with the `error` stop reason.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import trio

import acp_schema.v1 as v1
import acp_schema.v2 as acp

from .connection import Connection
from .errors import ConnectionClosed

log = logging.getLogger("acpwire.lifecycle")

Work = Callable[["Turn"], Awaitable[str]]
"""A turn's work: returns its stop reason (`end_turn`, ... or a custom `_`-prefixed one)."""


@dataclass
class Turn:
    """One prompt's foreground work in a session, with helpers that send the right updates."""

    client: acp.ClientPeer
    session_id: str
    prompt: list[acp.ContentBlock]
    user_message_id: str
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _message_id: str | None = None

    def update(self, update: acp.SessionUpdate) -> Coroutine[Any, Any, None]:
        """Send a `session/update` of this session: `await turn.update(...)`."""
        return self.client.session_update(
            acp.UpdateSessionNotification(session_id=self.session_id, update=update)
        )

    def new_message_id(self, prefix: str = "msg") -> str:
        return f"{prefix}_{self.user_message_id}_{next(self._ids)}"

    def say(self, text: str) -> Coroutine[Any, Any, None]:
        """Stream one chunk of the agent's reply (chunks of one turn share a messageId).

        Like `update`, it returns the send's coroutine itself: `await turn.say(...)`."""
        if self._message_id is None:
            self._message_id = self.new_message_id("agent")
        return self.update(
            acp.AgentMessageChunk(message_id=self._message_id, content=acp.TextContent(text=text))
        )

    async def state(self, state: str, stop_reason: str | None = None) -> None:
        update = acp.StateUpdate(state=state)
        if stop_reason is not None:
            update.stop_reason = stop_reason
        await self.update(update)

    async def request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        """Ask the user; the session reports `requires_action` until the answer arrives."""
        await self.state("requires_action")
        try:
            return await self.client.session_request_permission(params)
        finally:
            # Back to running unless the turn was cancelled (then it goes straight to idle).
            # Checked before shielding: inside a shield the deadline is never -inf.
            if not _is_cancelled():
                with trio.CancelScope(shield=True):
                    await self.state("running")


def _is_cancelled() -> bool:
    return trio.current_effective_deadline() == -float("inf")


class PromptTurns:
    """Runs prompt turns in the background of the connection, one cancel scope per session."""

    def __init__(self, client: acp.ClientPeer) -> None:
        if not isinstance(client.caller, Connection):
            raise TypeError("PromptTurns needs the ClientPeer of an acpwire connection")
        self.client = client
        self.connection: Connection = client.caller
        self._active: dict[str, trio.CancelScope] = {}
        self._ids = itertools.count(1)

    async def start(self, params: acp.PromptRequest, work: Work) -> acp.PromptResponse:
        """Accept the prompt (the response carries its messageId) and run `work` after it."""
        message_id = f"user_{next(self._ids)}"
        turn = Turn(self.client, params.session_id, params.prompt, message_id)
        scope = trio.CancelScope()
        previous = self._active.get(params.session_id)
        if previous is not None:
            previous.cancel()  # a new prompt supersedes unfinished work of the same session
        self._active[params.session_id] = scope
        self.connection.nursery.start_soon(self._run, turn, scope, work)
        return acp.PromptResponse(message_id=message_id)

    def cancel(self, session_id: str) -> bool:
        """`session/cancel`: stop the session's foreground work (it then reports `cancelled`)."""
        scope = self._active.get(session_id)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _run(self, turn: Turn, scope: trio.CancelScope, work: Work) -> None:
        try:
            await self._turn(turn, scope, work)
        except ConnectionClosed:
            pass  # the client is gone: nobody to report the turn to, and no error of ours
        finally:
            if self._active.get(turn.session_id) is scope:
                del self._active[turn.session_id]

    async def _turn(self, turn: Turn, scope: trio.CancelScope, work: Work) -> None:
        stop_reason = "cancelled"
        error: str | None = None
        with scope:
            await turn.update(acp.UserMessage(message_id=turn.user_message_id, content=turn.prompt))
            await turn.state("running")
            try:
                stop_reason = await work(turn)
            except Exception as exc:
                if scope.cancel_called:
                    stop_reason = "cancelled"  # aborted work often raises; it is no error
                else:
                    log.exception("prompt turn failed")
                    stop_reason, error = "error", f"{type(exc).__name__}: {exc}"
        idle = acp.StateUpdate(state="idle", stop_reason=stop_reason)
        if error is not None:
            idle.error = acp.Error(code=acp.ErrorCodeValues.INTERNAL_ERROR, message=error)
        await turn.update(idle)


class V1PromptTurns:
    """v1 prompt turns: the `session/prompt` response itself carries the stop reason.

    `run` executes the turn inside the request and returns its stop reason; `cancel`
    (from `session/cancel`) stops it, and the prompt is answered with `cancelled`, not an
    error, whatever the aborted work raised.
    """

    def __init__(self) -> None:
        self._active: dict[str, trio.CancelScope] = {}

    async def run(
        self, session_id: str, work: Callable[[], Awaitable[v1.StopReason]]
    ) -> v1.StopReason:
        with trio.CancelScope() as scope:
            self._active[session_id] = scope
            try:
                return await work()
            except Exception:
                if not scope.cancel_called:
                    raise
            finally:
                if self._active.get(session_id) is scope:
                    del self._active[session_id]
        return "cancelled"

    def cancel(self, session_id: str) -> bool:
        scope = self._active.get(session_id)
        if scope is not None:
            scope.cancel()
        return scope is not None
