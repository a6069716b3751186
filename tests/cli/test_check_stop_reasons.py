"""`turn.stop-reason-known` by version: v2 takes the protocol's stop reasons and custom ones
beginning with `_` (the schema's `IdleStateUpdate` "other" variant); v1's `StopReason` is a
closed set, so `_custom` fails there. Judged on a turn's end line, no agent needed."""

from __future__ import annotations

import json

import pytest

from acpwire.cli.check_peer import Incoming, JsonObject, Transcript
from acpwire.cli.check_turns import Turn, TurnJudge
from acpwire.cli.check_verdicts import Verdicts


def judged(version: int, stop_reason: str) -> tuple[str, str]:
    """The status and reason of turn.stop-reason-known for a turn ending `stop_reason`."""
    message: JsonObject
    if version >= 2:
        update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason}
        message = {"jsonrpc": "2.0", "method": "session/update"}
        message["params"] = {"sessionId": "sess_1", "update": update}
    else:
        message = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": stop_reason}}
    end = Incoming(message, Transcript().add(1, False, json.dumps(message)))
    verdicts = Verdicts()
    TurnJudge(verdicts, version).wire(Turn("sess_1", version, end=end))
    verdict = next(v for v in verdicts.table(version) if v.rule.id == "turn.stop-reason-known")
    return verdict.status.value, verdict.reason


@pytest.mark.parametrize(
    ("version", "stop_reason", "expected"),
    [
        (2, "end_turn", ("pass", "stop reason 'end_turn'")),
        (2, "error", ("pass", "stop reason 'error'")),
        (2, "_paused", ("pass", "stop reason '_paused' (a custom one: v2 allows `_`)")),
        (2, "paused", ("fail", "stop reason 'paused', not one of v2's nor beginning with `_`")),
        (1, "refusal", ("pass", "stop reason 'refusal'")),
        (1, "_paused", ("fail", "stop reason '_paused', not one of v1's (v1 has no custom ones)")),
        (1, "error", ("fail", "stop reason 'error', not one of v1's (v1 has no custom ones)")),
    ],
)
def test_stop_reasons_by_version(version: int, stop_reason: str, expected: tuple[str, str]) -> None:
    assert judged(version, stop_reason) == expected
