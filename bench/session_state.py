"""Session state benchmark: folding a recorded stream of session updates into a session's state.

The corpus's `session/update` lines (bench/corpus.py, the make_streams traffic) are decoded
once before timing and cut into sessions of SESSION_UPDATES consecutive updates (a turn or a
few); each case folds every session into a fresh state. (SessionAccumulator.apply deep-copies
the whole state into a snapshot on every update, so its cost per update grows with the
session: over the corpus as one 20,000-update session it takes ~25 ms per update; fixed-size
sessions keep the comparison about equal states, and the run in minutes.)

  v1  acpwire V1SessionState.apply      per update
  v1  acpwire apply + snapshot()        per update (what a UI re-rendering every update pays)
  v1  SDK SessionAccumulator.apply      per update (acp.contrib; it takes a snapshot each time)
  v2  acpwire SessionState.apply        per update
  v2  acpwire apply + snapshot()        per update
  v2  decode                            v2.CLIENT_CODEC.decode of the same lines (the yardstick)

The SDK (schema v1.19.0) rejects the corpus's v1 `notice`/`compaction_*` updates, so the v1
cases run on the subset it reads, acpwire alike. Rounds are interleaved (every case once per
round); figures are medians per update with the spread (max - min) / median. Memory per
session: tracemalloc's growth while folding one session's updates into a state (the decoded
updates already exist, so this is what the state itself holds on to).

    python bench/session_state.py           # full run; writes bench/results/session_state.txt
    python bench/session_state.py --quick   # smoke run
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (ROOT / "generated", ROOT / "runtime", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import corpus as corpus_mod  # noqa: E402
from report import RESULTS, Sampled, publish  # noqa: E402

from acp_schema import v1, v2  # noqa: E402
from acpwire.client import SessionState, V1SessionState  # noqa: E402

SESSION_UPDATES = 100
TARGET_VS_SDK = 10.0  # acpwire apply at least this many times faster than SessionAccumulator
TARGET_VS_DECODE = 1.0  # applying an update costs no more than decoding it


@dataclass
class Case(Sampled):
    name: str
    run: Callable[[], int]
    samples: list[float] = field(default_factory=list)


def update_lines(lines: list[bytes]) -> list[bytes]:
    return [line for line in lines if b'"session/update"' in line]


def sdk_notifications(lines: list[bytes]) -> tuple[list[Any], list[bytes]]:
    """The SDK's SessionNotification for each line it reads, and those lines."""
    from acp import schema
    from pydantic import ValidationError

    read, kept = [], []
    for line in lines:
        try:
            read.append(schema.SessionNotification.model_validate(json.loads(line)["params"]))
        except ValidationError:
            continue
        kept.append(line)
    return read, kept


def sessions(updates: list[Any]) -> list[list[Any]]:
    return [updates[i : i + SESSION_UPDATES] for i in range(0, len(updates), SESSION_UPDATES)]


def fold(state_class: Callable[[], Any], updates: list[Any], snapshot: bool) -> Callable[[], int]:
    def run() -> int:
        for session in sessions(updates):
            state = state_class()
            apply = state.apply
            if snapshot:
                take = state.snapshot
                for update in session:
                    apply(update)
                    take()
            else:
                for update in session:
                    apply(update)
        return len(updates)

    return run


def sdk_fold(notifications: list[Any]) -> Callable[[], int]:
    from acp.contrib import SessionAccumulator

    def run() -> int:
        for session in sessions(notifications):
            accumulator = SessionAccumulator()
            for notification in session:
                accumulator.apply(notification)
        return len(notifications)

    return run


def decode(codec: Any, lines: list[bytes]) -> Callable[[], int]:
    def run() -> int:
        for line in lines:
            codec.decode(line)
        return len(lines)

    return run


def memory(run_state: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    state = run_state()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del state
    return size


def check(v1_updates: list[Any], v2_updates: list[Any], sdk_updates: list[Any]) -> None:
    """Before timing, session by session: both folds saw every variant (no update left as
    unknown) and the v1 fold agrees with the SDK on the tool calls' final status and the
    agent's text."""
    from acp.contrib import SessionAccumulator

    for session in sessions(v2_updates):
        v2_state = SessionState()
        for update in session:
            v2_state.apply(update)
        assert not v2_state.unknown
    for ours_session, sdk_session in zip(sessions(v1_updates), sessions(sdk_updates), strict=True):
        v1_state = V1SessionState()
        for update in ours_session:
            v1_state.apply(update)
        assert not v1_state.unknown
        accumulator = SessionAccumulator()
        for notification in sdk_session:
            accumulator.apply(notification)
        sdk_snapshot = accumulator.snapshot()
        ours = {key: call.status for key, call in v1_state.tool_calls.items()}
        theirs = {key: view.status or "pending" for key, view in sdk_snapshot.tool_calls.items()}
        assert ours == theirs, "tool call status differs from the SDK's"
        our_text = "".join(m.text() for m in v1_state.messages.values() if m.role == "agent")
        sdk_text = "".join(
            c.content.text for c in sdk_snapshot.agent_messages if hasattr(c.content, "text")
        )
        assert our_text == sdk_text, "agent text differs from the SDK's"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (seconds)")
    args = parser.parse_args()
    messages, rounds = (2000, 3) if args.quick else (10000, 7)

    v1_lines = update_lines(corpus_mod.load("v1", messages).lines)
    v2_lines = update_lines(corpus_mod.load("v2", messages).lines)
    sdk_updates, v1_lines = sdk_notifications(v1_lines)
    v1_updates = [v1.CLIENT_CODEC.decode(line).params.update for line in v1_lines]
    v2_updates = [v2.CLIENT_CODEC.decode(line).params.update for line in v2_lines]

    check(v1_updates, v2_updates, sdk_updates)

    cases = [
        Case("v1 acpwire apply", fold(V1SessionState, v1_updates, snapshot=False)),
        Case("v1 acpwire apply + snapshot", fold(V1SessionState, v1_updates, snapshot=True)),
        Case("v1 SDK SessionAccumulator.apply", sdk_fold(sdk_updates)),
        Case("v2 acpwire apply", fold(SessionState, v2_updates, snapshot=False)),
        Case("v2 acpwire apply + snapshot", fold(SessionState, v2_updates, snapshot=True)),
        Case("v2 decode (CLIENT_CODEC)", decode(v2.CLIENT_CODEC, v2_lines)),
    ]
    gc.collect()
    gc.freeze()  # the prepared updates: their collections are billed to no case
    for _ in range(rounds):
        for case in cases:
            start = time.perf_counter()
            n = case.run()
            case.samples.append((time.perf_counter() - start) / n * 1e6)

    by_name = {case.name: case for case in cases}
    vs_sdk = statistics.median(
        s / a
        for s, a in zip(
            by_name["v1 SDK SessionAccumulator.apply"].samples,
            by_name["v1 acpwire apply"].samples,
            strict=True,
        )
    )
    vs_decode = statistics.median(
        d / a
        for d, a in zip(
            by_name["v2 decode (CLIENT_CODEC)"].samples,
            by_name["v2 acpwire apply"].samples,
            strict=True,
        )
    )
    one = slice(0, SESSION_UPDATES)
    mem = {
        "v1 acpwire": memory(fold_state(V1SessionState, v1_updates[one])),
        "v1 SDK SessionAccumulator": memory(sdk_state(sdk_updates[one])),
        "v2 acpwire": memory(fold_state(SessionState, v2_updates[one])),
    }

    out = [
        f"session state, {'quick' if args.quick else 'full'} run: "
        f"v1 {len(v1_updates)} updates (the SDK-readable subset), v2 {len(v2_updates)} updates, "
        f"in sessions of {SESSION_UPDATES} updates, {rounds} interleaved rounds",
        f"python {platform.python_version()}, msgspec {metadata.version('msgspec')}, "
        f"agent-client-protocol {metadata.version('agent-client-protocol')}",
        "",
        f"  {'case':40} {'µs/update':>10} {'spread':>7}",
    ]
    out += [f"  {c.name:40} {c.median:10.3f} {c.spread * 100:6.1f}%" for c in cases]
    out += [
        "",
        f"  SDK ÷ acpwire (v1 apply):     {vs_sdk:7.1f}x   (target >= {TARGET_VS_SDK:.0f}x)",
        f"  decode ÷ apply (v2):          {vs_decode:7.2f}x   (target >= {TARGET_VS_DECODE:.0f}x)",
        "",
        f"  memory held by one session's state ({SESSION_UPDATES} updates, tracemalloc):",
    ]
    out += [f"    {name:30} {size / 1e3:10.1f} kB" for name, size in mem.items()]
    publish("\n".join(out), RESULTS / f"session_state{'-quick' if args.quick else ''}.txt")


def fold_state(state_class: Callable[[], Any], updates: list[Any]) -> Callable[[], Any]:
    def run() -> Any:
        state = state_class()
        for update in updates:
            state.apply(update)
        return state

    return run


def sdk_state(notifications: list[Any]) -> Callable[[], Any]:
    from acp.contrib import SessionAccumulator

    def run() -> Any:
        accumulator = SessionAccumulator()
        for notification in notifications:
            accumulator.apply(notification)
        return accumulator

    return run


if __name__ == "__main__":
    main()
