"""The probes of `acpwire check --client`'s first turn: what the scripted agent
(`check_client_agent`) sends the client to judge its JSON-RPC rules, its reading during a turn
and (v1) its capabilities."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import trio

import acp_schema.v1.methods as v1_methods
import acp_schema.v2.methods as v2_methods

from .check_peer import WireLine
from .check_turns import describe
from .check_verdicts import CapabilityProbes

if TYPE_CHECKING:
    from .check_client_agent import ScriptedAgent

__all__ = ["BURST", "UNKNOWN_METHOD", "burst", "capability_probes", "jsonrpc_probes"]

UNKNOWN_METHOD = "acpwire_check/no_such_method"
UNKNOWN_NOTIFICATION = "acpwire_check/no_such_notification"
STRING_ID = "acpwire-check-ü-1"
LARGE_ID = 2**32 + 1
NEVER_SENT_ID = 987654321
BURST = 3000
"""Updates in the burst (about 500 KB: more than any pipe or socket buffer holds)."""


async def burst(agent: ScriptedAgent, session_id: str) -> None:
    """turn.reads-updates: `BURST` updates then a request, all within the timeout; a client
    that does not read ends the run (nothing more can be judged of it)."""
    rule_id = "turn.reads-updates"
    text = "acpwire check fills the pipe. " * 5
    sent: list[WireLine] = []
    answer = None
    with trio.move_on_after(agent.timeout) as scope:
        for _ in range(BURST):
            sent.append(await agent.update(session_id, **agent.chunk(session_id, text)))
        request, answer = await agent.ask(UNKNOWN_METHOD, {})
        sent.append(request)
    if scope.cancelled_caught or answer is None:
        why = (
            f"{BURST} updates and a request not taken or answered within "
            f"{agent.timeout:g} s: the client stopped reading"
        )
        agent.verdicts.failed(rule_id, why, [*sent[:1], *sent[-1:]])
        agent.stalled = True
        agent.pending.clear()
        agent.wire.broken = True
        return
    agent.verdicts.passed(rule_id, f"{BURST} updates read, then the request answered")


async def jsonrpc_probes(agent: ScriptedAgent, session_id: str) -> None:
    """The JSON-RPC rules (and v1's capability probes): requests of an unknown method, ids,
    an unknown notification, `$/cancel_request`."""
    verdicts = agent.verdicts
    sent, answer = await agent.ask(UNKNOWN_METHOD, {})
    verdicts.judge(
        "rpc.unknown-method",
        answer is not None and answer.error_code == -32601,
        f"{UNKNOWN_METHOD} got {describe(answer)}",
        [sent, answer],
    )
    for request_id in (STRING_ID, LARGE_ID):
        sent, answer = await agent.ask(UNKNOWN_METHOD, {}, request_id)
        stray = [i for i in agent.stray if i.line.seq > sent.seq]
        got = answer or (stray[0] if stray else None)
        verdicts.judge(
            "rpc.id-echoed",
            answer is not None,
            f"sent id {request_id!r}, the response has id "
            + (repr((got.message or {}).get("id")) if got else "(no response)"),
            [sent, got],
        )
    for what, method, params in (
        ("rpc.notification-unanswered", UNKNOWN_NOTIFICATION, {}),
        ("rpc.cancel-request", v2_methods.CANCEL_REQUEST.name, {"requestId": NEVER_SENT_ID}),
    ):
        before = len(agent.stray)
        notified = await agent.notify(method, params)
        sent, answer = await agent.ask(UNKNOWN_METHOD, {})
        answered = agent.stray[before:]
        if answer is None:
            verdicts.failed(
                what, f"after {method}, the next request got no answer", [notified, sent]
            )
        else:
            verdicts.judge(
                what,
                not answered,
                f"{method} was answered"
                if answered
                else f"{method}: no response; the next request answered",
                [notified, *answered],
            )
    cancelled_id, pending = await agent.send_request(UNKNOWN_METHOD, {})
    cancel = await agent.notify(v2_methods.CANCEL_REQUEST.name, {"requestId": cancelled_id})
    with trio.move_on_after(agent.timeout):
        await pending.answered.wait()
    await trio.sleep(0.2)  # a second answer would come now
    count = len(pending.answers)
    verdicts.judge(
        "rpc.cancel-request",
        count == 1,
        f"a request then $/cancel_request for it: {count} response(s)",
        [pending.line, cancel, *pending.answers],
    )
    if agent.version < 2:
        await capability_probes(agent, session_id)


async def capability_probes(agent: ScriptedAgent, session_id: str) -> None:
    """v1: fs/read_text_file of a file that cannot exist, terminal/output of an unknown
    terminal: served exactly when advertised."""
    fs = agent.capabilities.get("fs")
    probes = {
        v1_methods.FS_READ_TEXT_FILE.name: (
            isinstance(fs, dict) and fs.get("readTextFile") is True,
            {
                "sessionId": session_id,
                "path": os.path.join(agent.missing_folder, "no-such-file.txt"),
            },
        ),
        v1_methods.TERMINAL_OUTPUT.name: (
            agent.capabilities.get("terminal") is True,
            {"sessionId": session_id, "terminalId": "term_acpwire_check_unknown"},
        ),
    }
    found = CapabilityProbes(agent.timeout)
    for method, (advertised, params) in probes.items():
        sent, answer = await agent.ask(method, params)
        found.record(method, advertised, answer, describe(answer), sent)
    found.judge(agent.verdicts)
